//! A hook for crash tests, compiled only with the `failpoints` feature (never in a release
//! build). With `MODELC_STORE_FAILPOINT=<name>` in the environment, an export that reaches the
//! point `<name>` inside its transaction says so on stderr and waits there, so that a test can
//! kill the process (a real child process, `SIGKILL`) at the worst moment and check that the
//! store is as it was. Without the feature, `reached` does nothing.
#![allow(clippy::print_stderr, reason = "the crash test reads this line to know when to kill")]

/// The environment variable that names the point to stop at.
pub const FAILPOINT_VAR: &str = "MODELC_STORE_FAILPOINT";

#[cfg(feature = "failpoints")]
pub(crate) fn reached(name: &str) {
    // How long a stopped export waits to be killed before it goes on.
    const WAIT: std::time::Duration = std::time::Duration::from_secs(120);
    if std::env::var(FAILPOINT_VAR).is_ok_and(|v| v == name) {
        eprintln!("modelc-store: failpoint {name} reached");
        std::thread::sleep(WAIT);
    }
}

#[cfg(not(feature = "failpoints"))]
pub(crate) fn reached(_name: &str) {}
