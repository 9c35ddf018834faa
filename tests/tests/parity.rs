//! Parity with the reference beyond the shared cases (`tests/parity/`): our own cases for each
//! language rule the issue tracker found modelc getting wrong, and models generated from a
//! fixed seed (`modelc_tests::generate`), each compiled by modelc and compared with the
//! reference's recorded result (`recorded.jsonl`, written by `scripts/record-parity`): the same
//! verdict, a fitting error on the reference's line, the same printed lines. The differences
//! that remain are listed with the result modelc gives in `tests/parity/differences.txt`, and
//! that list is kept exact. Needs no reference at test time.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::path::Path;

use modelc_tests::verdicts::{Printed, assert_listed_differences_exact};
use modelc_tests::{Case, scratch_dir};

fn parity_dir() -> &'static Path {
    Box::leak(Path::new(env!("CARGO_MANIFEST_DIR")).join("parity").into_boxed_path())
}

fn recorded() -> Vec<Case> {
    let text = std::fs::read_to_string(parity_dir().join("recorded.jsonl")).unwrap();
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn every_case_and_generated_model_is_recorded_as_it_is_now() {
    let recorded = recorded();
    let by_id: std::collections::HashMap<&str, &Case> = recorded.iter().map(|c| (c.id.as_str(), c)).collect();
    let mut stale = Vec::new();
    let cases = parity_dir().join("cases");
    let mut files = Vec::new();
    modelc_tests::cf_files(&cases, &mut files);
    for file in &files {
        let id = file.strip_prefix(parity_dir()).unwrap().with_extension("").to_str().unwrap().to_owned();
        let source = std::fs::read_to_string(file).unwrap();
        if by_id.get(id.as_str()).is_none_or(|c| c.source != source) {
            stale.push(id);
        }
    }
    let generated = modelc_tests::generate::models(modelc_tests::generate::COUNT);
    for (id, source) in &generated {
        if by_id.get(id.as_str()).is_none_or(|c| c.source != *source) {
            stale.push(id.clone());
        }
    }
    assert!(stale.is_empty(), "not recorded, or changed since (run scripts/record-parity): {stale:?}");
    assert_eq!(recorded.len(), files.len() + generated.len(), "recorded.jsonl has cases that no longer exist");
    assert!(generated.len() >= 200);
}

#[test]
fn modelc_gives_the_reference_results() {
    let listed_text = std::fs::read_to_string(parity_dir().join("differences.txt")).unwrap();
    let dir = scratch_dir("parity");
    assert_listed_differences_exact(&recorded(), &listed_text, "differences.txt", &dir, Printed::AnyOrder);
}

/// `modelc check` rejects no model the reference accepts (it reports errors only where the code
/// certainly runs; what it cannot decide is a warning at most).
#[test]
fn check_rejects_no_model_the_reference_accepts() {
    let dir = scratch_dir("parity-check");
    let mut rejected = Vec::new();
    for case in recorded().iter().filter(|c| c.expect == "ok") {
        std::fs::write(dir.join("main.cf"), &case.source).unwrap();
        let out = modelc_tests::modelc(&["--format", "json", "check", "main.cf"], &dir);
        let diagnostics: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap();
        if let Some(error) = diagnostics.iter().find(|d| d["severity"] == "error") {
            rejected.push(format!("{}: {}: {}", case.id, error["code"], error["message"]));
        }
    }
    assert!(rejected.is_empty(), "check rejects valid models:\n{}", rejected.join("\n"));
}
