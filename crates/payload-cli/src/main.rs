//! `rke2-payload`: decode, inspect, measure, lint and redact CAPRKE2 bootstrap Secrets.

fn main() -> std::process::ExitCode {
    rke2_payload_cli::main()
}
