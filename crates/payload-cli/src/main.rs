//! `rke2-payload`: decode, inspect, measure, lint and redact CAPRKE2 bootstrap Secrets.

fn main() -> std::process::ExitCode {
    payload_cli::main()
}
