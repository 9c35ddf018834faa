//! The salsa base layer: source files as inputs, and the per-file queries later phases build
//! on.
//!
//! Queries are layered so that editing inside a block recomputes as little as possible. `parse`
//! depends on a file's text and reruns on every edit; `imports` and `item_summary` reduce the
//! tree to what other files can see, without positions, so after most edits they produce an
//! equal value and salsa stops there: nothing that depends only on them (the import graph,
//! other files' analyses) reruns. Diagnostics travel inside query values, never on the side.

mod freed_elsewhere;
mod summary;

use std::sync::Arc;

use modelc_diagnostics::FileId;
use modelc_syntax::Parse;

pub use freed_elsewhere::FreedElsewhere;
pub use summary::{
    AgentSummary, AttributeSummary, Bounds, DefaultSummary, EntitySummary, FieldSourceSummary, ImportSummary,
    ItemSummary, PythonOrigin, RelationEndSummary, RelationSummary, ResourceSummary, TypedefSummary,
};

/// One source file: its text, and the name and id diagnostics use for it.
#[salsa::input(debug)]
pub struct FileInput {
    #[returns(ref)]
    pub name: String,
    #[returns(ref)]
    pub text: Arc<str>,
    #[returns(copy)]
    pub id: FileId,
}

/// The files of a project, each with the namespace it defines (`__config__` for `main.cf`,
/// `std`, `web`, `web::sub`), in a stable order, and the namespaces loading starts from.
#[salsa::input(debug)]
pub struct ProjectInput {
    #[returns(ref)]
    pub modules: Vec<(String, FileInput)>,
    /// Where loading starts: `__config__` for a project, every namespace of a module that is
    /// checked on its own. Everything these import, transitively, is loaded too.
    #[returns(ref)]
    pub roots: Vec<String>,
    /// The plugins modules define in Python, by the namespace of their Python file (`exec`,
    /// `files::json`), read from the source by the driver. std's are built in and never here.
    #[default]
    #[returns(ref)]
    pub python_plugins: Vec<(String, &'static [modelc_stdlib::PluginSignature])>,
    /// The resource shapes modules declare in Python (`@resource` classes), read from the
    /// source by the driver; a model's own `resource` declaration and the ones modelc ships
    /// come first.
    #[default]
    #[returns(ref)]
    pub python_resources: Vec<ResourceSummary>,
    /// The modules' Python classes win over the shapes modelc ships for fs and exec
    /// (`--python-shapes`): to check that the two agree.
    #[default]
    pub python_shapes_first: bool,
}

/// The database every query runs against. The concrete one lives in the driver.
#[salsa::db]
pub trait Db: salsa::Database {}

/// The file's syntax tree and syntax diagnostics.
///
/// `no_eq`: comparing two trees costs about as much as building one, and every edit changes
/// some span anyway; the cheap position-free queries below are where changes stop.
#[salsa::tracked(returns(ref), no_eq)]
pub fn parse(db: &dyn Db, file: FileInput) -> Parse {
    modelc_syntax::parse(file.id(db), file.text(db))
}

/// The file's imports, as written, in source order.
#[salsa::tracked(returns(ref))]
pub fn imports(db: &dyn Db, file: FileInput) -> Vec<ImportSummary> {
    parse(db, file)
        .file
        .items
        .iter()
        .filter_map(|item| match item {
            modelc_syntax::ast::Item::Import(import) => Some(ImportSummary {
                module: import.module.text(),
                alias: import.alias.as_ref().map(|a| a.name.clone()),
            }),
            _ => None,
        })
        .collect()
}

/// The declarations a file makes visible to others, without positions.
#[salsa::tracked(returns(ref))]
pub fn item_summary(db: &dyn Db, file: FileInput) -> ItemSummary {
    ItemSummary::of(&parse(db, file).file, file.text(db))
}

/// A database for tests and tools that need nothing else, optionally recording which queries
/// executed (to prove incrementality).
#[salsa::db]
#[derive(Clone, Default)]
pub struct TestDb {
    storage: salsa::Storage<Self>,
    executed: Arc<std::sync::Mutex<Vec<String>>>,
}

impl TestDb {
    /// A database that records the name and input of every query it executes.
    pub fn with_log() -> TestDb {
        let executed: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
        let log = Arc::clone(&executed);
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind
                && let Ok(mut log) = log.lock()
            {
                log.push(format!("{database_key:?}"));
            }
        })));
        TestDb { storage, executed }
    }

    /// The queries executed since the last call, e.g. `parse(Id(0))`.
    pub fn take_executed(&self) -> Vec<String> {
        self.executed.lock().map(|mut log| std::mem::take(&mut *log)).unwrap_or_default()
    }
}

#[salsa::db]
impl salsa::Database for TestDb {}

#[salsa::db]
impl Db for TestDb {}
