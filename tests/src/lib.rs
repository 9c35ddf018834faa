//! Helpers for the end-to-end tests: running the CLI in-process, scratch directories, and
//! finding the shared reference material (`../shared`) when it is present.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stderr, reason = "test support code")]

pub mod catalogue;
pub mod generate;
pub mod process;
pub mod pyenv;
pub mod store_cases;
pub mod verdicts;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// What one run of `modelc` produced.
#[derive(Debug)]
pub struct Output {
    pub code: u8,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `modelc ARGS` in-process in `cwd`, with colour off unless asked for.
pub fn modelc(args: &[&str], cwd: &Path) -> Output {
    modelc_with(args, cwd, false, false)
}

/// Runs `modelc ARGS` pretending stderr is (or is not) a terminal and NO_COLOR is (not) set.
pub fn modelc_with(args: &[&str], cwd: &Path, terminal: bool, no_color: bool) -> Output {
    // In-process runs read the test process's environment: a store named there would be
    // written to, outside the tests' temporary directories.
    assert!(
        std::env::var_os("MODELC_STORE").is_none(),
        "MODELC_STORE is set: unset it to run the tests, which must not write to the store it names"
    );
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let code = {
        let mut io = modelc::Io {
            stdout: &mut stdout,
            stderr: &mut stderr,
            stderr_is_terminal: terminal,
            stdout_is_terminal: false,
            no_color,
            cwd: cwd.to_owned(),
            // The test process's own, in the temporary directory: the machine's is outside it.
            deploy_lock: Some(std::env::temp_dir().join(format!("modelc-test-{}-deploy.lock", std::process::id()))),
        };
        let argv: Vec<&str> = std::iter::once("modelc").chain(args.iter().copied()).collect();
        modelc::run(argv, &mut io)
    };
    Output { code, stdout: String::from_utf8(stdout).unwrap(), stderr: String::from_utf8(stderr).unwrap() }
}

/// Every `.cf` file below `dir` (in no particular order), appended to `out`.
pub fn cf_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            cf_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "cf") {
            out.push(path);
        }
    }
}

/// A fresh, empty directory under the system temp dir, unique to this process and call. The
/// first call of a process removes the scratch directories of test processes that have ended.
pub fn scratch_dir(name: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    static CLEANED: std::sync::Once = std::sync::Once::new();
    CLEANED.call_once(remove_scratch_of_ended_processes);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("modelc-test-{}-{name}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Removes `modelc-test-<pid>-…` directories whose process is gone (where `/proc` tells).
fn remove_scratch_of_ended_processes() {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("modelc-test-")) else { continue };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else { continue };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The shared reference material: `$MODELC_SHARED`, or `shared/` beside the repository.
/// `None` (with a message saying why the test is skipped) when it is absent. When
/// `MODELC_SHARED` names it explicitly (as `.ci/run` does when it finds `../shared`), its
/// absence fails the test instead: a suite told where its material is cannot pass by not
/// running.
pub fn shared_dir(test: &str) -> Option<PathBuf> {
    let explicit = std::env::var_os("MODELC_SHARED");
    let dir = explicit
        .clone()
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"));
    if dir.join("conformance/cases.jsonl").is_file() {
        return Some(dir);
    }
    assert!(explicit.is_none(), "{test}: MODELC_SHARED is {}, which holds no reference material", dir.display());
    eprintln!("{test}: looked for the reference material at {}", dir.display());
    modelc_test_skip::skip(modelc_test_skip::NO_REFERENCE_MATERIAL);
    None
}

/// One conformance case (`shared/conformance/cases.jsonl`).
#[derive(Debug, serde::Deserialize)]
pub struct Case {
    pub id: String,
    pub source: String,
    pub expect: String,
    #[serde(default)]
    pub error_class: Option<String>,
    #[serde(default)]
    pub error_message: Option<String>,
    #[serde(default)]
    pub error_line: Option<u32>,
    /// What the model printed, for cases that print (the reference's log lines included).
    #[serde(default)]
    pub stdout: Option<String>,
}

/// Reads every conformance case.
pub fn conformance_cases(shared: &Path) -> Vec<Case> {
    let text = std::fs::read_to_string(shared.join("conformance/cases.jsonl")).unwrap();
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The id of every code in the diagnostic registry.
pub fn registered_codes() -> Vec<String> {
    modelc::registered_codes().iter().map(|c| (*c).to_owned()).collect()
}

pub use modelc_test_pyenv::python3;

/// A list of resources as the reference's `export -j` writes it (and `compile --format
/// reference`): id → the resource, its `requires` sorted (the reference orders it arbitrarily).
pub fn exported_by_id(
    list: &str,
) -> std::collections::BTreeMap<String, std::collections::BTreeMap<String, serde_json::Value>> {
    let list: Vec<std::collections::BTreeMap<String, serde_json::Value>> = serde_json::from_str(list).unwrap();
    list.into_iter()
        .map(|mut resource| {
            if let Some(serde_json::Value::Array(requires)) = resource.get_mut("requires") {
                requires.sort_by_key(ToString::to_string);
            }
            (resource["id"].as_str().unwrap().to_owned(), resource)
        })
        .collect()
}
