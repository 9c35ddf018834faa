//! The CLI's table: every command in text and in JSON mode, succeeding, refusing the model or the
//! change, and unable to run, with its exit status (0 ok, 1 refused, 2 usage or I/O). With
//! `--format json`, every command prints exactly one JSON document on stdout, whether it
//! succeeds, refuses the model or the change, or cannot run at all (a usage or I/O error); its
//! text goes to stderr. The exceptions are the language server (the protocol is its output) and
//! shell completions (a script), which refuse JSON with a usage error, itself one document.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use modelc_tests::{modelc, scratch_dir};

const MODEL: &str = "import std::testing\nstd::testing::NullResource(name=\"a\")\n";
const BROKEN: &str = "x = = 1\n";

#[test]
fn every_command_prints_one_json_document() {
    let dir = scratch_dir("json-mode");
    std::fs::write(dir.join("main.cf"), MODEL).unwrap();
    std::fs::write(dir.join("broken.cf"), BROKEN).unwrap();
    std::fs::write(dir.join("two.cf"), format!("{MODEL}std::testing::NullResource(name=\"b\")\n")).unwrap();
    let store = ["--store", "s.sqlite"];
    let with_store = |args: &[&'static str]| -> Vec<&'static str> { args.iter().copied().chain(store).collect() };
    // (arguments, expected exit status)
    let cases: Vec<(Vec<&str>, u8)> = vec![
        (vec!["parse", "main.cf"], 0),
        (vec!["parse", "broken.cf"], 1),
        (vec!["parse", "missing.cf"], 2),
        (vec!["check", "main.cf"], 0),
        (vec!["check", "broken.cf"], 1),
        (vec!["check", "missing.cf"], 2),
        (vec!["compile", "main.cf"], 0),
        (vec!["compile", "broken.cf"], 1),
        (vec!["compile", "missing.cf"], 2),
        (vec!["graph", "main.cf"], 0),
        (vec!["graph", "broken.cf"], 1),
        (vec!["versions", "--store", "none.sqlite"], 2),
        (with_store(&["export", "main.cf"]), 0),
        (with_store(&["export", "main.cf"]), 0),
        (with_store(&["export", "two.cf", "--force"]), 0),
        (with_store(&["export", "broken.cf"]), 1),
        (with_store(&["export", "--partial", "missing.cf"]), 2),
        (with_store(&["plan", "main.cf"]), 0),
        (with_store(&["plan", "broken.cf"]), 1),
        (vec!["plan", "--partial", "main.cf", "--store", "none.sqlite"], 1),
        (vec!["plan", "main.cf", "--no-such-flag"], 2),
        (with_store(&["versions"]), 0),
        (with_store(&["show"]), 0),
        (with_store(&["show", "1"]), 0),
        (with_store(&["show", "9"]), 2),
        (with_store(&["diff", "1", "2"]), 0),
        (with_store(&["prune", "--keep", "1", "--dry-run"]), 0),
        (with_store(&["status"]), 0),
        (vec!["doc"], 0),
        (vec!["doc", "std::testing"], 0),
        (vec!["doc", "nosuch", "main.cf"], 2),
        (vec!["explain", "E0001"], 0),
        (vec!["explain", "--list"], 0),
        (vec!["explain", "E9999"], 2),
        (vec!["fmt", "--check", "main.cf"], 0),
        (vec!["completions", "bash"], 2),
        (vec!["lsp"], 2),
    ];
    let mut wrong = Vec::new();
    // Text and JSON alike: the exit status follows the outcome, not the format (the two
    // exceptions refuse JSON, and print text with status 0).
    for format in ["human", "json"] {
        for (args, status) in &cases {
            // In text mode the language server would serve this process's stdin.
            if format == "human" && args[0] == "lsp" {
                continue;
            }
            let mut full = vec!["--format", format];
            full.extend(args);
            let out = modelc(&full, &dir);
            let refuses_json = matches!(args[0], "completions" | "lsp");
            let expected = if format == "human" && refuses_json { 0 } else { *status };
            if format == "json" && serde_json::from_str::<serde_json::Value>(&out.stdout).is_err() {
                wrong.push(format!("{args:?}: stdout is not one JSON document: {:?}", out.stdout));
            }
            if out.code != expected {
                wrong
                    .push(format!("{format} {args:?}: exit status {} (expected {expected}): {}", out.code, out.stderr));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_usage_error_in_json_names_what_was_wrong() {
    let dir = scratch_dir("json-usage");
    let out = modelc(&["--format", "json", "compile", "--frmat"], &dir);
    assert_eq!(out.code, 2);
    let document: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(document["error"]["kind"], "usage");
    assert_eq!(document["error"]["message"], "unexpected argument '--frmat' found");
    assert!(document["error"]["detail"].as_str().unwrap().contains("a similar argument exists: '--format'"));
    // Errors modelc finds itself have the same keys.
    let out = modelc(&["--format", "json", "compile", "missing.cf"], &dir);
    let document: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(document["error"]["message"].as_str().unwrap().contains("missing.cf does not exist"), "{document}");
    assert!(document["error"]["detail"].is_string());
}
