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

/// The names a source file imports from the syntax crate (`use modelc_syntax::ast::{A, B}`),
/// and `ast::` itself.
fn syntax_names(text: &str) -> Vec<String> {
    let mut names = vec!["ast::".to_owned(), "modelc_syntax".to_owned()];
    for statement in text.split(';') {
        let statement = statement.trim();
        let Some(rest) = statement.strip_prefix("use modelc_syntax::") else { continue };
        let inner = rest.rsplit_once('{').map_or(rest, |(_, inner)| inner.trim_end_matches('}'));
        let last = inner.rsplit("::").next().unwrap_or(inner);
        for name in last.split(',').map(str::trim).filter(|n| !n.is_empty() && *n != "self") {
            names.push(name.rsplit("::").next().unwrap_or(name).to_owned());
        }
    }
    names
}

/// Whether `line` names `name` as a whole word.
fn names(line: &str, name: &str) -> bool {
    line.match_indices(name).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + name.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !word(before) && (name.ends_with("::") || !word(after))
    })
}

/// Execution and refinement consume the lowered program (`modelc_sema::hir`) and the type
/// table, never the syntax tree: neither crate depends on the syntax crate or names it, and
/// no public item of `modelc-sema` (what they use) exposes a syntax-tree type, so none can
/// reach them through a re-export either.
#[test]
fn execution_and_refinement_read_no_syntax_tree() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../compiler");
    for crate_dir in ["exec", "refine"] {
        let dir = root.join(crate_dir);
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(!manifest.contains("modelc-syntax"), "{crate_dir} depends on the syntax crate");
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for forbidden in ["modelc_syntax", "modelc_db::parse", "ast::"] {
                assert!(!text.contains(forbidden), "{} names `{forbidden}`", file.display());
            }
        }
    }
    // The public modules of modelc-sema (`pub mod x;` in its lib.rs), and lib.rs itself.
    let sema = root.join("sema/src");
    let lib = std::fs::read_to_string(sema.join("lib.rs")).unwrap();
    let mut files = vec![sema.join("lib.rs")];
    for module in lib.lines().filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';')) {
        let file = sema.join(format!("{module}.rs"));
        if file.exists() {
            files.push(file);
        } else {
            rust_files(&sema.join(module), &mut files);
        }
    }
    assert!(files.len() > 5, "found only {files:?}");
    let mut exposed = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let imported = syntax_names(&text);
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_start();
            // Public items and public fields; `pub(crate)` and `pub(super)` stay inside.
            if !line.starts_with("pub ") {
                continue;
            }
            if let Some(name) = imported.iter().find(|name| names(line, name)) {
                exposed.push(format!("{}:{}: `{name}` in `{line}`", file.display(), n + 1));
            }
        }
    }
    assert!(exposed.is_empty(), "public items of modelc-sema expose syntax-tree types:\n{}", exposed.join("\n"));
}

#[test]
fn the_syntax_check_sees_what_it_looks_for() {
    let source = "use modelc_syntax::ast::{Expr, Stmt};\npub fn eval(e: &Expr) {}\n";
    let imported = syntax_names(source);
    assert!(imported.contains(&"Expr".to_owned()) && imported.contains(&"Stmt".to_owned()), "{imported:?}");
    assert!(names("pub fn eval(e: &Expr) {}", "Expr"));
    assert!(!names("pub fn eval(e: &ExprKind) {}", "Expr"));
    assert!(!names("pub fn eval(e: &hir::Expr) {}", "ast::"));
}
