//! How a test says that it did not run, and why.
//!
//! The test harness shows a test that returned early as `ok`, and hides what it printed. A test
//! that cannot run here (no reference material, no Python, not root) calls [`skip`] instead of
//! printing: the reason goes to stderr as before and, when the test command names a log in
//! `MODELC_SKIP_LOG`, one line `test<TAB>reason` is appended to it, so that `scripts/test` can end
//! with the list of what did not run.
#![allow(
    clippy::print_stderr,
    clippy::disallowed_methods,
    reason = "test support: a skipped test says why on stderr, and finds the log in its environment"
)]

use std::fmt::Display;
use std::io::Write;
use std::path::Path;

/// The environment variable naming the file that skips are appended to.
pub const LOG_VAR: &str = "MODELC_SKIP_LOG";

/// The reason of every test that needs the shared reference material and does not find it, so
/// that the list at the end of the test command gives it one line.
pub const NO_REFERENCE_MATERIAL: &str =
    "no reference material in ../shared beside the repository (set MODELC_SHARED to where it is)";

/// Records that the running test (or the part of it named in `reason`) is skipped.
pub fn skip(reason: impl Display) {
    let test = current_test();
    let reason = reason.to_string();
    eprintln!("skipping {test}: {reason}");
    let Some(path) = std::env::var_os(LOG_VAR) else { return };
    if let Err(error) = append(Path::new(&path), &test, &reason) {
        eprintln!("could not record the skip in {}: {error}", Path::new(&path).display());
    }
}

/// Appends `test<TAB>reason` to the log at `path`. Tests of many processes append at once: one
/// `write` of one short line under `O_APPEND`. Tabs and newlines in the reason are flattened,
/// so that the log stays one skip a line.
fn append(path: &Path, test: &str, reason: &str) -> std::io::Result<()> {
    let line = format!("{test}\t{}\n", reason.replace(['\n', '\t'], " "));
    std::fs::OpenOptions::new().create(true).append(true).open(path)?.write_all(line.as_bytes())
}

/// `binary::module::test`: the test binary (its name without cargo's hash) and the test the
/// harness runs on this thread.
fn current_test() -> String {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|stem| match stem.rsplit_once('-') {
            Some((name, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => name.to_owned(),
            _ => stem,
        })
        .unwrap_or_else(|| "test".to_owned());
    match std::thread::current().name() {
        Some(name) if name != "main" => format!("{binary}::{name}"),
        _ => binary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_is_named_by_its_binary_and_its_path() {
        let name = current_test();
        assert!(name.starts_with("modelc_test_skip::"), "{name}");
        assert!(name.ends_with("tests::the_test_is_named_by_its_binary_and_its_path"), "{name}");
    }

    #[test]
    fn each_skip_is_one_line_of_the_log() {
        let dir = std::env::temp_dir().join(format!("modelc-skip-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("skips.txt");
        let _ = std::fs::remove_file(&log);
        append(&log, "suite::a", "no python3 on PATH").unwrap();
        append(&log, "suite::b", "pip said:\n\terror").unwrap();
        let text = std::fs::read_to_string(&log).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(text, "suite::a\tno python3 on PATH\nsuite::b\tpip said:  error\n");
    }
}
