//! The formatter over real code: every `.cf` file of the repository's examples and, when the
//! reference material is there, of `../shared/corpus` and every conformance case. Each is
//! either refused (it has syntax errors) or formatted to the same syntax tree, and formatting
//! the result again changes nothing.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stderr, reason = "test code")]

use std::path::{Path, PathBuf};

fn cf_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            cf_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "cf") {
            out.push(path);
        }
    }
}

fn check(files: &[PathBuf]) -> (usize, usize) {
    let sources: Vec<(String, String)> =
        files.iter().filter_map(|f| Some((f.display().to_string(), std::fs::read_to_string(f).ok()?))).collect();
    check_sources(&sources)
}

/// Each `(name, source)`: refused, or formatted to the same tree and stable.
fn check_sources(sources: &[(String, String)]) -> (usize, usize) {
    let (mut formatted, mut refused) = (0, 0);
    let mut failures = Vec::new();
    for (file, source) in sources {
        match modelc_fmt::format(source) {
            Ok(once) => {
                formatted += 1;
                match modelc_fmt::format(&once) {
                    Ok(twice) if twice == once => {}
                    Ok(_) => failures.push(format!("{file}: a second run changes it")),
                    Err(error) => failures.push(format!("{file}: the formatted file fails: {error}")),
                }
            }
            Err(modelc_fmt::Error::Syntax(_)) => refused += 1,
            Err(error) => failures.push(format!("{file}: {error}")),
        }
    }
    assert!(failures.is_empty(), "{} of {} files:\n{}", failures.len(), sources.len(), failures.join("\n"));
    (formatted, refused)
}

#[test]
fn the_repository_examples_keep_their_meaning_and_are_stable() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in ["examples", "stdlib", "tests/differential", "grammar/test_data"] {
        cf_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 10, "found {}", files.len());
    let (formatted, _) = check(&files);
    assert!(formatted > 10);
}

/// `MODELC_SHARED`, or `../shared` beside the repository.
fn shared() -> Option<PathBuf> {
    let dir = std::env::var_os("MODELC_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    if dir.join("corpus").is_dir() {
        return Some(dir);
    }
    assert!(std::env::var_os("MODELC_SHARED").is_none(), "MODELC_SHARED names {} but it has no corpus", dir.display());
    None
}

#[test]
fn the_corpus_and_the_conformance_cases_keep_their_meaning_and_are_stable() {
    let Some(shared) = shared() else {
        modelc_test_skip::skip(modelc_test_skip::NO_REFERENCE_MATERIAL);
        return;
    };
    let mut files = Vec::new();
    cf_files(&shared.join("corpus"), &mut files);
    let (formatted, _) = check(&files);
    eprintln!("corpus: formatted {formatted} files");
    assert!(formatted >= 60, "{formatted}");
    // The conformance cases: one model per line of cases.jsonl.
    let cases = std::fs::read_to_string(shared.join("conformance/cases.jsonl")).unwrap();
    let sources: Vec<(String, String)> = cases
        .lines()
        .map(|line| {
            let case: serde_json::Value = serde_json::from_str(line).unwrap();
            (case["id"].as_str().unwrap().to_owned(), case["source"].as_str().unwrap().to_owned())
        })
        .collect();
    let (formatted, refused) = check_sources(&sources);
    eprintln!("conformance: formatted {formatted} cases, refused {refused} with syntax errors");
    assert_eq!(formatted + refused, sources.len());
    assert!(formatted > 400, "{formatted}");
}
