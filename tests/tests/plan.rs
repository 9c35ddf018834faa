//! `modelc plan`: what an export would change, with nothing written and no store created; its
//! exit status says whether the export would be accepted (and, with `--detailed-exitcode`,
//! whether it changes anything). The refusals are checked against the export's own verdicts in
//! `store.rs` (every store case).
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use modelc_tests::{modelc, scratch_dir};

fn model(names: &[&str]) -> String {
    let mut text = "import std::testing\n".to_owned();
    for name in names {
        text.push_str(&format!("std::testing::NullResource(name=\"{name}\")\n"));
    }
    text
}

#[test]
fn plan_says_what_an_export_would_change_and_writes_nothing() {
    let dir = scratch_dir("plan");
    std::fs::write(dir.join("main.cf"), model(&["a", "b"])).unwrap();
    // No store: everything would be added, and no store is created.
    let first = modelc(&["plan", "main.cf", "--store", "s.sqlite", "--detailed-exitcode"], &dir);
    assert_eq!(first.code, 3, "changes present: {}", first.stderr);
    assert!(first.stdout.contains("against an empty store") && first.stdout.contains("2 added"), "{}", first.stdout);
    assert!(!dir.join("s.sqlite").exists(), "plan created a store");
    assert_eq!(modelc(&["plan", "main.cf", "--store", "s.sqlite"], &dir).code, 0, "without the flag: accepted");

    assert_eq!(modelc(&["export", "main.cf", "--store", "s.sqlite"], &dir).code, 0);
    let bytes = std::fs::read(dir.join("s.sqlite")).unwrap();
    let same = modelc(&["plan", "main.cf", "--store", "s.sqlite", "--detailed-exitcode"], &dir);
    assert_eq!(same.code, 0, "{}", same.stderr);
    assert!(same.stdout.contains("would change nothing against version 1"), "{}", same.stdout);

    std::fs::write(dir.join("main.cf"), model(&["a", "c"])).unwrap();
    let changed = modelc(&["--format", "json", "plan", "main.cf", "--store", "s.sqlite", "--detailed-exitcode"], &dir);
    assert_eq!(changed.code, 3, "{}", changed.stderr);
    let document: serde_json::Value = serde_json::from_str(&changed.stdout).unwrap();
    assert_eq!(document["accepted"], true);
    assert_eq!(document["base"], 1);
    assert_eq!(document["changes"]["added"], serde_json::json!(["std::testing::NullResource[internal,name=c]"]));
    assert_eq!(document["changes"]["removed"], serde_json::json!(["std::testing::NullResource[internal,name=b]"]));
    assert_eq!(std::fs::read(dir.join("s.sqlite")).unwrap(), bytes, "plan wrote to the store");
    // A partial plan with no store has no version to build on: refused, nothing created.
    let partial = modelc(&["plan", "--partial", "main.cf", "--store", "none.sqlite"], &dir);
    assert_eq!(partial.code, 1, "{}", partial.stderr);
    assert!(partial.stderr.contains("[E0501]"), "{}", partial.stderr);
    assert!(!dir.join("none.sqlite").exists());
}
