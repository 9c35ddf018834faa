//! Real code no one here wrote: every `.cf` file of the public Inmanta modules parses with zero
//! diagnostics, and `modelc check` on each module reports only what is genuinely missing.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::path::PathBuf;

use modelc_tests::{cf_files, modelc, shared_dir};

#[test]
fn every_corpus_file_parses_without_diagnostics() {
    let Some(shared) = shared_dir("every_corpus_file_parses_without_diagnostics") else { return };
    let mut files = Vec::new();
    cf_files(&shared.join("corpus/inmanta-modules"), &mut files);
    files.sort();
    assert!(files.len() >= 60, "expected the whole corpus, found {} files", files.len());
    let mut args = vec!["parse", "--format", "json"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    let out = modelc(&args, &shared);
    assert_eq!(out.stdout.trim(), "[]", "syntax diagnostics in the corpus:\n{}", out.stdout);
    assert_eq!(out.code, 0);
}

/// `modelc check` on each corpus module, with the others on its module path, reports only
/// what is really missing: plugins written in Python (E0109), a module absent from the corpus
/// (E0101), entities of an older std that the modules still use (E0103 `std::Package` …), and
/// mistakes the reference rejects too (an `int` for `std::OS.version`, a `float`; an attribute
/// `yum::Package` no longer has). The per-module summary is a snapshot, so any change shows.
#[test]
fn corpus_modules_check_with_only_genuine_problems() {
    let Some(shared) = shared_dir("corpus_modules_check_with_only_genuine_problems") else { return };
    let modules_dir = shared.join("corpus/inmanta-modules");
    let mut modules: Vec<PathBuf> =
        std::fs::read_dir(&modules_dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    modules.sort();
    let old_std = ["std::Package", "std::Service", "std::ConfigFile", "std::Directory", "std::File", "std::Symlink"];
    let mut summary = String::new();
    let mut unexpected = Vec::new();
    for module in &modules {
        let name = module.file_name().unwrap().to_str().unwrap();
        let out = modelc(&["--format", "json", "check", module.to_str().unwrap()], &shared);
        let diagnostics: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap();
        let mut counts: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
        for d in &diagnostics {
            let code = d["code"].as_str().unwrap();
            let message = d["message"].as_str().unwrap();
            *counts.entry(format!("{code}-{}", d["severity"].as_str().unwrap())).or_default() += 1;
            let genuine = d["severity"] == "warning"
                || match code {
                    "E0109" | "E0101" => true,
                    "E0103" => {
                        old_std.iter().any(|n| message.contains(&format!("`{n}`")))
                            || message.contains("`systemd::")
                            || message.contains("`std::create_fact_reference`")
                    }
                    "E0210" => message.contains("`version` of type `float`"),
                    "E0207" => message.contains("`yum::Package` has no attribute `state`"),
                    _ => false,
                };
            if !genuine {
                unexpected.push(format!("{name}: {code} {message} at {}", d["labels"][0]));
            }
        }
        let counts: Vec<String> = counts.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        summary
            .push_str(&format!("{name}: {}\n", if counts.is_empty() { "clean".to_owned() } else { counts.join(", ") }));
    }
    assert!(unexpected.is_empty(), "false errors in the corpus:\n{}", unexpected.join("\n"));
    assert!(modules.len() >= 37, "expected the whole corpus, found {} modules", modules.len());
    insta::assert_snapshot!(summary);
}
