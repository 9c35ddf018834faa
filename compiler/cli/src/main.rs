//! The `modelc` binary: everything lives in the library so tests can run it in-process.
#![allow(clippy::disallowed_methods, reason = "the command line")]

/// A compile allocates and frees millions of small values; mimalloc does that several times
/// faster than the system allocator (see the `compile` benchmark).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    modelc::main()
}
