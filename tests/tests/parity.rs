//! Parity with the reference beyond the shared cases (`tests/parity/`): our own cases for each
//! language rule the issue tracker found modelc getting wrong, and models generated from a
//! fixed seed (`modelc_tests::generate`), each compiled by modelc and compared with the
//! reference's recorded result (`recorded.jsonl`, written by `scripts/record-parity`): the same
//! verdict, a fitting error on the reference's line, the same printed lines. The differences
//! that remain are listed with the result modelc gives in `tests/parity/differences.txt`, and
//! that list is kept exact. Needs no reference at test time.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::path::Path;

use modelc_tests::verdicts::{Printed, disagreement, listed_differences};
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
    collect(&cases, &mut files);
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

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "cf") {
            out.push(path);
        }
    }
}

#[test]
fn modelc_gives_the_reference_results() {
    let listed_text = std::fs::read_to_string(parity_dir().join("differences.txt")).unwrap();
    let listed = listed_differences(&listed_text);
    let cases = recorded();
    let dir = scratch_dir("parity");
    let mut failures = Vec::new();
    let mut agreeing = 0;
    for case in &cases {
        let recorded = listed.iter().find(|(id, _)| *id == case.id).map(|(_, result)| *result);
        match (disagreement(case, &dir, Printed::AnyOrder), recorded) {
            (None, None) => agreeing += 1,
            (None, Some(_)) => failures.push(format!("{}: agrees now; remove it from differences.txt", case.id)),
            (Some(why), None) => failures.push(format!("{}: {why}", case.id)),
            (Some(why), Some(result)) if why != result => {
                failures.push(format!("{}: the listed result changed; it is now\n  = {why}", case.id));
            }
            (Some(_), Some(_)) => {}
        }
    }
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(agreeing + listed.len(), cases.len(), "differences.txt lists cases that do not exist");
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
