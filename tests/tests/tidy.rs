//! House rules that no compiler checks: every Rust source file opens with a `//!` doc saying
//! why it exists, and no file has trailing whitespace.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | "snapshots" | "corpus" | "artifacts" | ".git") {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_rust_file_explains_itself() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["grammar", "compiler", "runtime", "stdlib", "tests"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 20, "found only {} files", files.len());
    let mut problems = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
        // `build.rs` and binaries may open with a plain doc line; everything else with `//!`.
        if !first.starts_with("//!") {
            problems.push(format!("{}: does not start with a `//!` module doc", file.display()));
        }
        if let Some((n, _)) = text.lines().enumerate().find(|(_, l)| l.ends_with(' ') || l.ends_with('\t')) {
            problems.push(format!("{}:{}: trailing whitespace", file.display(), n + 1));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Refinement works from the type table's resolved declarations and the instance graph, never
/// from the syntax tree: its crate does not depend on the syntax crate, and no source of it
/// names it. (Execution still walks the tree; the resolved program will take that away.)
#[test]
fn refinement_reads_no_syntax_tree() {
    let refine = Path::new(env!("CARGO_MANIFEST_DIR")).join("../compiler/refine");
    let manifest = std::fs::read_to_string(refine.join("Cargo.toml")).unwrap();
    assert!(!manifest.contains("modelc-syntax"), "modelc-refine depends on the syntax crate");
    let mut files = Vec::new();
    rust_files(&refine.join("src"), &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains("modelc_syntax"), "{} names the syntax crate", file.display());
    }
}
