//! `kubectl-rke2_payload`: the same program under the name kubectl looks for, so that
//! `kubectl rke2-payload inspect …` runs it.

fn main() -> std::process::ExitCode {
    rke2_payload_cli::main()
}
