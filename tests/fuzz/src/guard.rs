//! Keeping the input being run where it can still be saved when the run cannot go on: a hang
//! (over the time limit) is seen by a watchdog thread, and an abort (a stack overflow, a panic
//! while panicking) by a signal handler that writes the input with `open`/`write` alone.
#![allow(
    unsafe_code,
    reason = "a signal handler may call only async-signal-safe libc functions, and reads the running input by pointer"
)]

use std::ffi::CString;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use nix::libc;

static INPUT: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static LENGTH: AtomicUsize = AtomicUsize::new(0);
/// Milliseconds since `EPOCH` when the current input started, plus one; 0 when none runs.
static STARTED: AtomicU64 = AtomicU64::new(0);
/// Where an aborted input is written: a C string leaked for the signal handler.
static ABORT_PATH: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Marks `input` as the one running. It must stay alive until [`end`].
pub fn begin(input: &[u8]) {
    INPUT.store(input.as_ptr().cast_mut(), Ordering::SeqCst);
    LENGTH.store(input.len(), Ordering::SeqCst);
    STARTED.store(epoch().elapsed().as_millis() as u64 + 1, Ordering::SeqCst);
}

pub fn end() {
    STARTED.store(0, Ordering::SeqCst);
}

/// Starts the watchdog: an input running longer than `limit` is written to `hang_path` and the
/// process exits with status 3.
pub fn watch(limit: Duration, hang_path: std::path::PathBuf) {
    let _ = std::thread::Builder::new().name("watchdog".into()).spawn(move || {
        loop {
            std::thread::sleep(Duration::from_millis(100));
            let started = STARTED.load(Ordering::SeqCst);
            if started == 0 {
                continue;
            }
            let running = epoch().elapsed().as_millis() as u64 + 1 - started;
            if running > limit.as_millis() as u64 {
                let input = current();
                let _ = std::fs::write(&hang_path, &input);
                eprintln!(
                    "HANG: an input ran over {} s; it is saved in {} ({} bytes)",
                    limit.as_secs_f64(),
                    hang_path.display(),
                    input.len()
                );
                std::process::exit(3);
            }
        }
    });
}

/// A copy of the input running now (the watchdog's view).
fn current() -> Vec<u8> {
    let (input, length) = (INPUT.load(Ordering::SeqCst), LENGTH.load(Ordering::SeqCst));
    if input.is_null() {
        return Vec::new();
    }
    // SAFETY: `begin`'s caller keeps the input alive while it runs, and a hung run never
    // returns to free it.
    unsafe { std::slice::from_raw_parts(input, length) }.to_vec()
}

/// Installs the SIGABRT handler that writes the running input to `path` before the process
/// dies (Rust aborts on a stack overflow, after printing which thread overflowed).
pub fn save_on_abort(path: &std::path::Path) {
    let Ok(c_path) = CString::new(path.as_os_str().as_encoded_bytes()) else { return };
    ABORT_PATH.store(c_path.into_raw(), Ordering::SeqCst);
    // SAFETY: installing a handler that only calls async-signal-safe functions.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_abort as *const () as usize;
        action.sa_flags = libc::SA_ONSTACK | libc::SA_RESETHAND;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGABRT, &action, std::ptr::null_mut());
    }
}

extern "C" fn on_abort(signal: libc::c_int) {
    let path = ABORT_PATH.load(Ordering::SeqCst);
    let (input, length) = (INPUT.load(Ordering::SeqCst), LENGTH.load(Ordering::SeqCst));
    if !path.is_null() && !input.is_null() && STARTED.load(Ordering::SeqCst) != 0 {
        // SAFETY: open, write and close are async-signal-safe; the input is alive (it was running).
        unsafe {
            let fd = libc::open(path, libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC, 0o644);
            if fd >= 0 {
                libc::write(fd, input.cast(), length);
                libc::close(fd);
            }
        }
        const SAID: &[u8] = b"ABORT: the input running is saved (see --out)\n";
        // SAFETY: as above.
        unsafe { libc::write(2, SAID.as_ptr().cast(), SAID.len()) };
    }
    // SA_RESETHAND restored the default action: abort again to die of the same signal.
    // SAFETY: raising a signal is async-signal-safe.
    unsafe { libc::raise(signal) };
}
