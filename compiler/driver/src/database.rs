//! The concrete query database that commands run against.

use modelc_db::FileInput;
use modelc_diagnostics::SourceFiles;

/// The database of one modelc run (and, later, of a language-server session).
#[salsa::db]
#[derive(Clone, Default)]
pub struct RootDatabase {
    storage: salsa::Storage<Self>,
}

impl RootDatabase {
    /// Makes every loaded file a query input, keeping each file's id.
    pub fn add_files(&self, files: &SourceFiles) -> Vec<FileInput> {
        files.iter().map(|(id, file)| FileInput::new(self, file.name.clone(), file.text.clone(), id)).collect()
    }
}

#[salsa::db]
impl salsa::Database for RootDatabase {}

#[salsa::db]
impl modelc_db::Db for RootDatabase {}
