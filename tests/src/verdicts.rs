//! Comparing modelc's result for a model with the reference's recorded verdict (the shared
//! conformance cases and our own parity cases): the same verdict, an error code that fits the
//! reference's error class with a label on the reference's line, the same printed lines; and the
//! lists of deliberate differences, kept exact.

use std::path::Path;

use crate::{Case, modelc};

/// How printed lines are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Printed {
    /// In the order printed.
    InOrder,
    /// As a multiset: the reference does not promise an order between independent prints.
    AnyOrder,
}

/// The diagnostic codes that fit each of the reference's error classes, static and run time.
pub fn fitting_codes(class: &str) -> &'static [&'static str] {
    match class {
        "TypeNotFoundException" => &["E0103", "E0109"],
        "MissingImportException" => &["E0104"],
        "DuplicateException" => &["E0107", "E0201", "E0202", "E0307"],
        "CycleException" => &["E0203"],
        "IndexException" => &["E0206"],
        "IndexAttributeMissingInConstructorException" => &["E0209"],
        "IndexCollisionException" => &["E0307"],
        "TypingException" => &["E0204", "E0207", "E0208", "E0210", "E0211", "E0212", "E0215", "E0217"],
        "NotFoundException" => &["E0105", "E0106", "E0110", "E0207", "E0216", "E0306"],
        "AttributeException" => &["E0210", "E0218", "E0301", "E0304", "E0305"],
        "DoubleSetException" => &["E0301"],
        "UnsetException" => &["E0302"],
        "OptionalValueException" => &["E0308"],
        "KeyException" => &["E0310"],
        "ExternalException" | "WrappingRuntimeException" => &["E0309"],
        // Several errors found at the end of the compile.
        "MultiException" => &["E0210", "E0302", "E0303", "E0306"],
        "RuntimeException" => &[
            "E0004", "E0023", "E0111", "E0205", "E0210", "E0211", "E0213", "E0214", "E0216", "E0303", "E0305", "E0309",
            "E0311",
        ],
        _ => &[],
    }
}

/// Lines the reference's logger writes to the same stream as `std::print` (`compiler  WARNING …`).
pub fn is_log_line(line: &str) -> bool {
    let mut words = line.split_whitespace();
    words.next().is_some() && words.next() == Some("WARNING")
}

/// How modelc's result for one case differs from the reference's, if it does.
pub fn disagreement(case: &Case, dir: &Path, printed: Printed) -> Option<String> {
    std::fs::write(dir.join("main.cf"), &case.source).unwrap();
    let out = modelc(&["--format", "json", "compile", "main.cf"], dir);
    let diagnostics: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap();
    let errors: Vec<&serde_json::Value> = diagnostics.iter().filter(|d| d["severity"] == "error").collect();
    let Some(class) = case.error_class.as_deref() else {
        if let Some(error) = errors.first() {
            return Some(format!("rejected ({}: {}), but the reference accepts it", error["code"], error["message"]));
        }
        assert_eq!(out.code, 0, "{}: exit code", case.id);
        // With `--format json`, printed lines go to stderr, in the order they were printed.
        let expected = case.stdout.as_deref()?;
        let mut want: Vec<&str> = expected.lines().filter(|l| !is_log_line(l)).collect();
        let mut got: Vec<&str> = out.stderr.lines().collect();
        if printed == Printed::AnyOrder {
            want.sort_unstable();
            got.sort_unstable();
        }
        return (want != got).then(|| format!("printed {got:?}, the reference prints {want:?}"));
    };
    let Some(first) = errors.first() else {
        return Some(format!("accepted, the reference rejects it ({class}: {:?})", case.error_message));
    };
    assert_eq!(out.code, 1, "{}: exit code", case.id);
    let fits = |code: &str| {
        if class == "ParserException" { code.starts_with("E00") } else { fitting_codes(class).contains(&code) }
    };
    let fitting: Vec<&&serde_json::Value> = errors.iter().filter(|e| fits(e["code"].as_str().unwrap())).collect();
    let Some(code) = fitting.first().map(|e| e["code"].as_str().unwrap()) else {
        return Some(format!("({class}) no fitting error, first is {}: {}", first["code"], first["message"]));
    };
    // A fitting error itself (not any error) must point at the reference's line.
    let lines: Vec<u64> =
        fitting.iter().flat_map(|e| e["labels"].as_array().unwrap()).map(|l| l["line"].as_u64().unwrap()).collect();
    // At the end of a file the reference names a line past the last one (see deviations.md).
    match case.error_line {
        Some(expected) if code != "E0007" && !lines.contains(&u64::from(expected)) => {
            Some(format!("({class}) errors on lines {lines:?}, the reference says {expected}"))
        }
        _ => None,
    }
}

/// The listed differences: each case id with the result modelc gives, recorded on the line
/// after it (`  = …`), which the test compares with what modelc does now.
pub fn listed_differences(text: &str) -> Vec<(&str, &str)> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).collect();
    let mut listed = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        if line.starts_with("  = ") {
            continue;
        }
        let id = line.split_whitespace().next().unwrap();
        let result = lines.get(at + 1).and_then(|l| l.strip_prefix("  = "));
        let result = result.unwrap_or_else(|| panic!("{id}: compile-differences.txt records no result (`  = …`)"));
        listed.push((id, result));
    }
    listed
}

/// Compiles every case and compares it with the reference's result, against the list of known
/// differences in `listed_text` (the file `list_name`): a case that differs must be listed with
/// the result modelc gives now, and a listed case must still differ. Panics with every
/// disagreement.
pub fn assert_listed_differences_exact(
    cases: &[Case],
    listed_text: &str,
    list_name: &str,
    dir: &Path,
    printed: Printed,
) {
    let listed = listed_differences(listed_text);
    let mut failures = Vec::new();
    let mut agreeing = 0;
    for case in cases {
        let recorded = listed.iter().find(|(id, _)| *id == case.id).map(|(_, result)| *result);
        match (disagreement(case, dir, printed), recorded) {
            (None, None) => agreeing += 1,
            (None, Some(_)) => failures.push(format!("{}: agrees now; remove it from {list_name}", case.id)),
            (Some(why), None) => failures.push(format!("{}: {why}", case.id)),
            (Some(why), Some(result)) if why != result => {
                failures.push(format!("{}: the listed result changed; it is now\n  = {why}", case.id));
            }
            (Some(_), Some(_)) => {}
        }
    }
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(agreeing + listed.len(), cases.len(), "{list_name} lists cases that do not exist");
}
