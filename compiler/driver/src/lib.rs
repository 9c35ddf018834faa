//! The driver: the only compiler crate that touches the file system.
//!
//! It finds what the user asked to compile (a `.cf` file or a project directory with a
//! `project.yml`), reads every source file into a [`SourceFiles`] collection, and runs the
//! phases over them. Phases below it are pure functions of text.

mod database;
mod project;
mod sources;

pub use database::RootDatabase;
pub use project::{LoadError, Project, Target, locate};
pub use sources::{Loaded, load};

use modelc_diagnostics::{Diagnostic, SourceFiles};

/// Parses every loaded file through the query database and returns all syntax diagnostics,
/// in file order.
pub fn parse_all(files: &SourceFiles) -> Vec<Diagnostic> {
    let db = RootDatabase::default();
    let inputs = db.add_files(files);
    inputs.iter().flat_map(|file| modelc_db::parse(&db, *file).diagnostics.iter().cloned()).collect()
}
