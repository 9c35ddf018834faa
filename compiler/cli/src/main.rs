//! The `modelc` binary: everything lives in the library so tests can run it in-process.
#![allow(clippy::disallowed_methods, reason = "the command line")]

/// A compile allocates and frees millions of small values; mimalloc does that several times
/// faster than the system allocator (see the `compile` benchmark).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    return_freed_memory_at_once();
    // On a target, started by a deploy over ssh or sudo: the helper, before anything of the
    // command line (it speaks frames on its stdout, nothing else may).
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(modelc_runtime::remote::command::HELPER_ARG) {
        let status = modelc_runtime::remote::helper::main(&args[1..]);
        return std::process::ExitCode::from(u8::try_from(status).unwrap_or(1));
    }
    modelc::main()
}

/// mimalloc keeps freed pages for 10 ms before it gives them back to the system. A large compile
/// frees the engine's tables (hundreds of megabytes) and at once builds the instance graph and
/// the IR: with the delay, the process holds both, and its peak is their sum.
fn return_freed_memory_at_once() {
    /// `mi_option_purge_delay` in mimalloc.h (v2 and v3); the binding names no constant for it.
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: sets one documented option to a valid value (0: purge at once), before any other
    // thread exists; it reads and writes no memory of ours.
    #[allow(unsafe_code, reason = "one allocator option, through mimalloc's C interface")]
    unsafe {
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 0);
    }
}
