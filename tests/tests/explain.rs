//! `modelc explain`: every example an explanation gives compiles as written and produces the
//! code it explains, and `--list` names every code.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use modelc_tests::{modelc, scratch_dir};

/// Codes whose example cannot be one `.cf` file, and why (each explanation shows it otherwise).
const NOT_ONE_FILE: &[(&str, &str)] = &[
    ("E0020", "thousands of levels of nesting"),
    ("E0027", "bytes that are not UTF-8 cannot be written in a Markdown example"),
    ("E0030", "a binary file"),
    ("E0031", "more than a thousand syntax errors"),
    ("E0408", "it needs the `fs` and `mitogen` modules of a project"),
    ("W0108", "a module installed in a Python environment"),
    ("E0501", "a partial export into an empty store"),
    ("E0502", "a partial export with --delete-resource-set"),
    ("E0503", "two exports"),
    ("E0504", "two exports"),
    ("E0505", "a partial export against a stored version"),
    ("E0506", "a partial export against a stored version"),
    ("E0507", "a store that cannot be used"),
    ("E0508", "an IR file written by another tool"),
    ("E0509", "an IR file written by another tool"),
    ("E0510", "a partial export with --delete-resource-set"),
];

/// Codes whose example runs a Python plugin: skipped where no Python runs.
const NEEDS_PYTHON: &[&str] = &["E0312", "E0410", "E0411"];

/// Codes that only a partial compile reports.
const PARTIAL: &[&str] = &["E0407"];

/// Writes an example into `dir`: the text up to the first `# file: PATH` line is `main.cf`, and
/// each such line starts another file (a project with its modules under `libs/`).
fn write_example(dir: &std::path::Path, source: &str) {
    let mut files = vec![("main.cf".to_owned(), String::new())];
    for line in source.lines() {
        match line.strip_prefix("# file: ") {
            Some(path) => files.push((path.trim().to_owned(), String::new())),
            None => {
                let text = &mut files.last_mut().unwrap().1;
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    std::fs::create_dir_all(dir).unwrap();
    if files.len() > 1 {
        std::fs::write(dir.join("project.yml"), "name: example\nmodulepath: libs\n").unwrap();
    }
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// The first `cf` code block after `## Example`.
fn example(explanation: &str) -> Option<String> {
    let section = &explanation[explanation.find("## Example")?..];
    let start = section.find("```cf\n")? + "```cf\n".len();
    let end = section[start..].find("```")?;
    Some(section[start..start + end].to_owned())
}

#[test]
fn every_example_compiles_as_written_and_produces_its_code() {
    let dir = scratch_dir("explain-examples");
    let mut wrong = Vec::new();
    for code in modelc_tests::registered_codes() {
        let code = code.as_str();
        let explanation = modelc(&["explain", code], &dir).stdout;
        let exempt = NOT_ONE_FILE.iter().any(|(c, _)| *c == code);
        let Some(source) = example(&explanation) else {
            if !exempt {
                wrong.push(format!("{code}: no `cf` example"));
            }
            continue;
        };
        assert!(!exempt, "{code} is exempt but has a `cf` example: test it");
        if NEEDS_PYTHON.contains(&code) && modelc_tests::python3(&format!("the example of {code}")).is_none() {
            continue;
        }
        let example_dir = dir.join(code);
        write_example(&example_dir, &source);
        let target = if example_dir.join("project.yml").exists() { "." } else { "main.cf" };
        let mut args = vec!["--format", "json", "compile", target];
        if PARTIAL.contains(&code) {
            args.push("--partial");
        }
        let out = modelc(&args, &example_dir);
        let Ok(diagnostics) = serde_json::from_str::<Vec<serde_json::Value>>(&out.stdout) else {
            wrong.push(format!("{code}: no JSON ({})", out.stderr.trim()));
            continue;
        };
        let codes: Vec<&str> = diagnostics.iter().filter_map(|d| d["code"].as_str()).collect();
        if !codes.contains(&code) {
            wrong.push(format!("{code}: the example gives {codes:?}"));
        }
    }
    assert!(wrong.is_empty(), "{} examples are wrong:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn list_names_every_code_in_text_and_json() {
    let dir = scratch_dir("explain-list");
    let codes = modelc_tests::registered_codes();
    let text = modelc(&["explain", "--list"], &dir);
    assert_eq!(text.code, 0);
    assert_eq!(text.stdout.lines().count(), codes.len());
    assert!(text.stdout.contains("E0029  error    unclosed-block"), "{}", text.stdout);
    let json = modelc(&["--format", "json", "explain", "--list"], &dir);
    let list: Vec<serde_json::Value> = serde_json::from_str(&json.stdout).unwrap();
    let listed: Vec<&str> = list.iter().map(|c| c["code"].as_str().unwrap()).collect();
    assert_eq!(listed, codes.iter().map(String::as_str).collect::<Vec<_>>());
    // One code in JSON: its entry with the Markdown explanation.
    let one: serde_json::Value =
        serde_json::from_str(&modelc(&["--format", "json", "explain", "e0029"], &dir).stdout).unwrap();
    assert_eq!((one["name"].as_str(), one["severity"].as_str()), (Some("unclosed-block"), Some("error")));
    assert!(one["explanation"].as_str().unwrap().starts_with("# E0029"));
    assert_eq!(modelc(&["explain"], &dir).code, 2, "a code or --list");
}
