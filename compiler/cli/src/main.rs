//! The `modelc` binary: everything lives in the library so tests can run it in-process.

fn main() -> std::process::ExitCode {
    modelc::main()
}
