//! Real code no one here wrote: every `.cf` file of the public Inmanta modules parses with zero
//! diagnostics, file by file and as a project whose module path holds them all.
#![allow(clippy::unwrap_used, reason = "test code")]

use std::path::{Path, PathBuf};

use modelc_tests::{modelc, scratch_dir, shared_dir};

fn cf_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            cf_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "cf") {
            out.push(path);
        }
    }
}

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

#[test]
fn the_corpus_checks_as_a_project() {
    let Some(shared) = shared_dir("the_corpus_checks_as_a_project") else { return };
    let project = scratch_dir("corpus-project");
    let modules = shared.join("corpus/inmanta-modules");
    std::fs::write(project.join("project.yml"), format!("name: corpus\nmodulepath: {}\n", modules.display())).unwrap();
    std::fs::write(project.join("main.cf"), "import std\nimport ip\n").unwrap();
    let out = modelc(&["check"], &project);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let checked: usize =
        out.stderr.trim().strip_prefix("checked ").unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(checked > 60, "{}", out.stderr);
}
