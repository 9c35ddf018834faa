//! The salsa base layer: source files as inputs, and the per-file queries later phases build
//! on.
//!
//! Queries are layered so that editing inside a block recomputes as little as possible. `parse`
//! depends on a file's text and reruns on every edit; `imports` and `item_summary` reduce the
//! tree to what other files can see, without positions, so after most edits they produce an
//! equal value and salsa stops there: nothing that depends only on them (the import graph,
//! other files' analyses) reruns. Diagnostics travel inside query values, never on the side.

mod summary;

use std::collections::HashSet;
use std::sync::Arc;

use modelc_diagnostics::FileId;
use modelc_syntax::Parse;

pub use summary::{EntitySummary, ItemSummary};

/// One source file: its text, and the name and id diagnostics use for it.
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub name: String,
    #[returns(ref)]
    pub text: Arc<str>,
    #[returns(copy)]
    pub id: FileId,
}

/// The files of a project, each with the module it defines: `__config__` for `main.cf`, `std`,
/// `web`, `web::sub`, in a stable order.
#[salsa::input(debug)]
pub struct ProjectModules {
    #[returns(ref)]
    pub modules: Vec<(String, SourceFile)>,
}

/// The database every query runs against. The concrete one lives in the driver.
#[salsa::db]
pub trait Db: salsa::Database {}

/// The file's syntax tree and syntax diagnostics.
///
/// `no_eq`: comparing two trees costs about as much as building one, and every edit changes
/// some span anyway; the cheap position-free queries below are where changes stop.
#[salsa::tracked(returns(ref), no_eq)]
pub fn parse(db: &dyn Db, file: SourceFile) -> Parse {
    modelc_syntax::parse(file.id(db), file.text(db))
}

/// The modules a file imports, as written (`std`, `web::sub`), in source order.
#[salsa::tracked(returns(ref))]
pub fn imports(db: &dyn Db, file: SourceFile) -> Vec<String> {
    parse(db, file)
        .file
        .items
        .iter()
        .filter_map(|item| match item {
            modelc_syntax::ast::Item::Import(import) => Some(import.module.text()),
            _ => None,
        })
        .collect()
}

/// The declarations a file makes visible to others, without positions.
#[salsa::tracked(returns(ref))]
pub fn item_summary(db: &dyn Db, file: SourceFile) -> ItemSummary {
    ItemSummary::of(&parse(db, file).file)
}

/// Which module imports which, over a whole project.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ImportGraph {
    /// (importing module, imported module) for every import of a module the project has.
    pub edges: Vec<(String, String)>,
    /// (importing module, imported module) for imports of modules the project does not have.
    pub unresolved: Vec<(String, String)>,
}

/// The import graph of a project. Depends only on `imports` of each file, so edits that do
/// not touch imports never recompute it.
#[salsa::tracked(returns(ref))]
pub fn import_graph(db: &dyn Db, project: ProjectModules) -> ImportGraph {
    let modules = project.modules(db);
    let known: HashSet<&str> = modules.iter().map(|(name, _)| name.as_str()).collect();
    let mut graph = ImportGraph::default();
    for (module, file) in modules {
        for imported in imports(db, *file) {
            let edge = (module.clone(), imported.clone());
            if known.contains(imported.as_str()) {
                graph.edges.push(edge);
            } else {
                graph.unresolved.push(edge);
            }
        }
    }
    graph
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
