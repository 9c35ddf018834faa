//! The reference's verdicts on syntax: every case it rejects with a `ParserException` is
//! rejected by `modelc parse` on the line the reference names, and every case it accepts parses
//! without errors; `modelc check` rejects every static error with a fitting code and no case the
//! reference accepts.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::path::Path;

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
        } else {
            // Accepted, or rejected later than parsing: either way the syntax is valid.
            accepted += 1;
            let earlier = EARLIER_IN_MODELC.iter().any(|(id, _)| *id == case.id);
            if earlier != (!errors.is_empty() || out.code != 0) {
                let why = errors.first().map_or_else(|| "it parses now".to_owned(), |e| e["message"].to_string());
                failures.push(format!("{}: parse verdict differs from the reference's: {why}", case.id));
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
    assert_eq!((rejected, accepted), (55, 431), "the number of cases changed; update this test");
}

/// Cases the reference rejects after parsing that modelc already rejects while parsing, and why.
const EARLIER_IN_MODELC: &[(&str, &str)] = &[(
    "idx_lookup_dup_kw",
    "a keyword argument given twice is a syntax error in modelc; the reference finds it when the lookup runs",
)];

/// The diagnostic codes that fit each of the reference's error classes.
fn fitting_codes(class: &str) -> &'static [&'static str] {
    match class {
        "TypeNotFoundException" => &["E0103", "E0109"],
        "MissingImportException" => &["E0104"],
        "DuplicateException" => &["E0107", "E0201", "E0202"],
        "CycleException" => &["E0203"],
        "IndexException" => &["E0206"],
        "IndexAttributeMissingInConstructorException" => &["E0209"],
        "TypingException" => &["E0204", "E0207", "E0208", "E0210", "E0211", "E0212", "E0215", "E0217"],
        "NotFoundException" => &["E0105", "E0106", "E0110", "E0207", "E0216"],
        "AttributeException" => &["E0210", "E0218", "E0301"],
        "DoubleSetException" => &["E0301"],
        "RuntimeException" => &["E0023", "E0111", "E0205", "E0210", "E0211", "E0213", "E0214", "E0216", "E0303"],
        _ => &[],
    }
}

/// The error classes the reference raises before executing a model: `check` must reject every
/// case of these classes (the one exception is a duplicate found by an index at run time).
const STATIC_CLASSES: &[&str] = &[
    "ParserException",
    "TypeNotFoundException",
    "MissingImportException",
    "DuplicateException",
    "CycleException",
    "IndexException",
    "IndexAttributeMissingInConstructorException",
];

/// `modelc check` agrees with the reference: it rejects no model the reference accepts; it
/// rejects every model with a static error, with a code that fits the reference's class and a
/// label on the reference's line; run-time errors it cannot decide statically are listed in
/// `tests/conformance/deferred-to-execution.txt`, and that list is exact.
#[test]
fn check_verdicts_match_the_reference() {
    let Some(shared) = shared_dir("check_verdicts_match_the_reference") else { return };
    let deferred_list =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/deferred-to-execution.txt"))
            .unwrap();
    let deferred: Vec<(&str, &str)> = deferred_list
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split_once(' ').unwrap())
        .collect();
    let dir = scratch_dir("conformance-check");
    let mut failures = Vec::new();
    let mut static_rejected = 0;
    for case in conformance_cases(&shared) {
        std::fs::write(dir.join("main.cf"), &case.source).unwrap();
        let out = modelc(&["--format", "json", "check", "main.cf"], &dir);
        let diagnostics: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap();
        let errors: Vec<&serde_json::Value> = diagnostics.iter().filter(|d| d["severity"] == "error").collect();
        let Some(class) = case.error_class.as_deref() else {
            if let Some(error) = errors.first() {
                failures.push(format!("{}: rejected ({}), but the reference accepts it", case.id, error["message"]));
            }
            continue;
        };
        let listed = deferred.iter().any(|(c, id)| *id == case.id && *c == class);
        match errors.first() {
            None if listed => {}
            None => {
                failures.push(format!("{} ({class}): accepted, the reference says {:?}", case.id, case.error_message))
            }
            Some(_) if listed => failures.push(format!("{}: now rejected; remove it from the deferred list", case.id)),
            Some(first) => {
                let fits = |code: &str| {
                    if class == "ParserException" {
                        code.starts_with("E00")
                    } else {
                        fitting_codes(class).contains(&code)
                    }
                };
                // Other errors may come first (an undefined name left by syntax recovery).
                let Some(code) = errors.iter().map(|e| e["code"].as_str().unwrap()).find(|c| fits(c)) else {
                    failures.push(format!("{} ({class}): no fitting error, first is {}", case.id, first["message"]));
                    continue;
                };
                let lines: Vec<u64> = errors
                    .iter()
                    .flat_map(|e| e["labels"].as_array().unwrap())
                    .map(|l| l["line"].as_u64().unwrap())
                    .collect();
                let at_end = code == "E0007";
                if let Some(expected) = case.error_line
                    && !at_end
                    && !lines.contains(&u64::from(expected))
                {
                    failures.push(format!(
                        "{} ({class}): errors on lines {lines:?}, the reference says {expected}",
                        case.id
                    ));
                }
                if STATIC_CLASSES.contains(&class) {
                    static_rejected += 1;
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures.join("\n"));
    // 55 syntax, 17 unknown types, 10 declaration duplicates, 2 cycles, 2 index, 1 import, 1 constructor.
    assert_eq!(static_rejected, 88, "the number of static cases changed; update this test");
}
