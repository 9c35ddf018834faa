//! Semantic analysis: from parsed files to a resolved, checked model.
//!
//! * [`loading`]: which namespaces a project loads (imports, transitively);
//! * [`index`]: the project's type table (entities, attributes, relations, indexes, typedefs,
//!   implementations, plugins), built from span-free item summaries;
//! * [`resolve`]: name resolution for types and namespaces (spec §4.11);
//! * `declarations` and `body`: the checks of one file, reported with spans: declarations from
//!   the syntax tree, statement blocks from the file's lowering ([`hir`]);
//! * [`consteval`]: constants evaluated at check time (defaults, typedef constraints);
//! * [`validate`]: whether a value fits a declared type, for check and execution alike;
//! * [`writable`]: the fields a hand-written graph may give each resource type;
//! * [`hir`]: the lowered, resolved program (names resolved to slots and ids, once) that the
//!   checks, the editor and execution read.
//!
//! Queries are layered for incrementality: an edit inside a statement block changes its
//! file's parse and diagnostics only. Summaries come out equal, so the loaded-module set, the
//! type table and every other file's diagnostics are reused.

mod body;
mod check;
pub use check::MAY_NOT_RUN;
pub mod consteval;
mod declarations;
mod double_set;
mod hierarchy;
pub mod hir;
pub mod index;
pub mod loading;
mod registry;
pub mod resolve;
pub mod resources;
pub mod signatures;
mod suggest;
pub mod type_mismatch;
pub mod types;
pub mod validate;
pub mod writable;

use modelc_db::{Db, FileInput, ProjectInput, imports, parse};
use modelc_diagnostics::Diagnostic;

pub use index::{ModelIndex, model_index};
pub use loading::{LoadedModules, loaded_modules};

/// The semantic diagnostics of one loaded file.
#[salsa::tracked(returns(ref))]
pub fn file_diagnostics(db: &dyn Db, project: ProjectInput, file: FileInput) -> Vec<Diagnostic> {
    let loaded = loaded_modules(db, project);
    let Some(namespace) = loaded.files.iter().find_map(|(ns, f)| (*f == file).then_some(ns.as_str())) else {
        return Vec::new();
    };
    let index = signatures::Signatures::new(db, project);
    let to_check = check::FileToCheck {
        id: file.id(db),
        ast: &parse(db, file).file,
        hir: hir::file_hir(db, project, file),
        text: file.text(db),
    };
    check::check_file(index, loaded, namespace, imports(db, file), to_check)
}

/// Every diagnostic of one loaded file, as `check` shows it: its syntax errors, then its
/// semantic diagnostics but those on a line with a syntax error (what the parser recovered
/// there is a guess, and errors about the guess would only be noise). Kept per file, so a
/// project's check after an edit copies nothing for the files the edit left alone.
#[salsa::tracked(returns(ref))]
pub fn checked_file(db: &dyn Db, project: ProjectInput, file: FileInput) -> Vec<Diagnostic> {
    let syntax = &parse(db, file).diagnostics;
    let semantic = file_diagnostics(db, project, file);
    let mut out = syntax.clone();
    if syntax.is_empty() {
        out.extend(semantic.iter().cloned());
        return out;
    }
    // Lines are counted only in a file with a syntax error.
    let lines = modelc_diagnostics::LineIndex::new(file.text(db));
    let broken: Vec<u32> = syntax.iter().filter_map(|d| d.primary_label()).map(|l| lines.line(l.span.start)).collect();
    out.extend(
        semantic
            .iter()
            .filter(|d| d.primary_label().is_none_or(|l| !broken.contains(&lines.line(l.span.start))))
            .cloned(),
    );
    out
}

/// Every diagnostic of a project: [`checked_file`] of each loaded file, in load order.
pub fn check_project(db: &dyn Db, project: ProjectInput) -> Vec<Diagnostic> {
    loaded_modules(db, project)
        .files
        .values()
        .flat_map(|file| checked_file(db, project, *file).iter().cloned())
        .collect()
}
