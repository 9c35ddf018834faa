//! The reference's verdicts on syntax: every case it rejects with a `ParserException` is
//! rejected by `modelc parse` on the line the reference names, and every case it accepts parses
//! without errors. Semantic verdicts are checked by the later phases' tests.
#![allow(clippy::unwrap_used, reason = "test code")]

use modelc_tests::{conformance_cases, modelc, scratch_dir, shared_dir};

#[test]
fn parse_verdicts_match_the_reference() {
    let Some(shared) = shared_dir("parse_verdicts_match_the_reference") else { return };
    let cases = conformance_cases(&shared);
    assert!(cases.len() > 400, "the conformance file looks truncated");
    let dir = scratch_dir("conformance");
    let (mut rejected, mut accepted, mut failures) = (0, 0, Vec::new());
    for case in &cases {
        let file = dir.join(format!("{}.cf", case.id));
        std::fs::write(&file, &case.source).unwrap();
        let out = modelc(&["parse", "--format", "json", file.to_str().unwrap()], &dir);
        let diagnostics: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap();
        let errors: Vec<&serde_json::Value> = diagnostics.iter().filter(|d| d["severity"] == "error").collect();
        if case.error_class.as_deref() == Some("ParserException") {
            rejected += 1;
            let Some(first) = errors.first() else {
                failures.push(format!("{}: accepted, but the reference rejects it: {:?}", case.id, case.error_message));
                continue;
            };
            assert_eq!(out.code, 1, "{}: exit code", case.id);
            // At the end of the file the reference reports a line past the last one; we point
            // just after the last token. Everywhere else the lines agree.
            let line = first["labels"][0]["line"].as_u64().unwrap();
            if first["code"] != "E0007" && case.error_line.is_some_and(|expected| u64::from(expected) != line) {
                failures.push(format!("{}: error on line {line}, the reference says {:?}", case.id, case.error_line));
            }
        } else if case.expect == "ok" {
            accepted += 1;
            if !errors.is_empty() || out.code != 0 {
                failures.push(format!("{}: rejected, but the reference accepts it: {}", case.id, errors[0]["message"]));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases disagree:\n{}",
        failures.len(),
        rejected + accepted,
        failures.join("\n")
    );
    assert_eq!((rejected, accepted), (55, 245), "the number of syntax cases changed; update this test");
}
