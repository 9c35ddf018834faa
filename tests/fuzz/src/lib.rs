//! A mutation fuzzer that runs on stable Rust, for the parser, the checker, the formatter and
//! the language server's message loop.
//!
//! Inputs start from real `.cf` files (the repository's, and the public modules' corpus and the
//! conformance cases when `../shared` is there) and are mutated with the language's own tokens
//! ([`mutate`]). Each target ([`targets`]) runs an input in-process and reports a panic (or, for
//! the language server, an `InternalError` answer) as a failure. A build instrumented with
//! SanitizerCoverage's inline counters (`scripts/fuzz`) makes it coverage-guided ([`coverage`]):
//! an input that reaches new code joins the corpus. [`guard`] keeps the input being run where a
//! hang (more than five seconds) or an abort can still save it.
#![allow(
    clippy::disallowed_methods,
    clippy::print_stderr,
    reason = "a test tool: it reads seed files, saves failing inputs and says so on the terminal"
)]

pub mod coverage;
pub mod guard;
pub mod mutate;
pub mod rng;
pub mod targets;

use std::path::{Path, PathBuf};

/// Every `.cf` file below `dir` (sorted, so a seeded run is repeatable), skipping build output.
pub fn cf_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if name == "target" || name == "node_modules" || name.to_string_lossy().starts_with('.') {
                continue;
            }
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => pending.push(path),
                Ok(kind) if kind.is_file() && path.extension().is_some_and(|e| e == "cf") => out.push(path),
                _ => {}
            }
        }
    }
    out.sort();
    out
}

/// The repository's root (this crate is `tests/fuzz`).
pub fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The kept regression inputs of a target: `tests/fuzz/regressions/<target>/*`.
pub fn regressions(target: targets::Kind) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions").join(target.name());
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect())
        .unwrap_or_default();
    files.sort();
    files
}
