//! Semantic analysis: from parsed files to a resolved, checked model.
//!
//! * [`loading`]: which namespaces a project loads (imports, transitively);
//! * [`index`]: the project's type table (entities, attributes, relations, indexes, typedefs,
//!   implementations, plugins), built from span-free item summaries;
//! * [`resolve`]: name resolution for types and namespaces (spec §4.11);
//! * `declarations` and `body`: the checks of one file, reported with spans;
//! * [`consteval`]: constants evaluated at check time (defaults, typedef constraints);
//! * [`hir`]: the lowered, resolved program execution runs (names resolved to slots and ids).
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
mod suggest;
pub mod type_mismatch;
pub mod types;

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
    let index = model_index(db, project);
    check::check_file(index, loaded, namespace, imports(db, file), file.id(db), &parse(db, file).file)
}

/// Every diagnostic of a project: syntax and semantics of each loaded file, in load order.
pub fn check_project(db: &dyn Db, project: ProjectInput) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for file in loaded_modules(db, project).files.values() {
        let syntax = &parse(db, *file).diagnostics;
        out.extend(syntax.iter().cloned());
        // A line with a syntax error gets no further diagnostics: what the parser recovered
        // there is a guess, and errors about the guess would only be noise.
        let lines = modelc_diagnostics::LineIndex::new(file.text(db));
        let line_of = |offset: u32| lines.line(offset);
        let broken: Vec<u32> = syntax.iter().filter_map(|d| d.primary_label()).map(|l| line_of(l.span.start)).collect();
        out.extend(
            file_diagnostics(db, project, *file)
                .iter()
                .filter(|d| d.primary_label().is_none_or(|l| !broken.contains(&line_of(l.span.start))))
                .cloned(),
        );
    }
    out
}
