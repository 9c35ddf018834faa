//! Incrementality, proven by the queries that execute: an edit inside a statement block
//! reparses that one file and recomputes nothing derived from other files, and neither the
//! import graph nor any other file's summary.
#![allow(clippy::unwrap_used, reason = "test code")]

use std::sync::Arc;

use modelc_db::{ProjectModules, SourceFile, TestDb, import_graph, item_summary, parse};
use modelc_diagnostics::FileId;
use salsa::Setter as _;

const MAIN: &str = "import web\nimport lib\nweb::Server(name=\"a\")\n";
const WEB: &str = "import lib\nentity Server:\n    string name\nend\n\
                   implementation listen for Server:\n    x = 1\nend\nimplement Server using listen\n";
const LIB: &str = "entity Base:\nend\n";

struct Fixture {
    db: TestDb,
    files: [SourceFile; 3],
    project: ProjectModules,
}

impl Fixture {
    fn new() -> Fixture {
        let db = TestDb::with_log();
        let file = |name: &str, text: &str, id| SourceFile::new(&db, name.to_owned(), Arc::from(text), FileId(id));
        let files = [file("main.cf", MAIN, 0), file("web/_init.cf", WEB, 1), file("lib/_init.cf", LIB, 2)];
        let modules =
            vec![("__config__".to_owned(), files[0]), ("web".to_owned(), files[1]), ("lib".to_owned(), files[2])];
        let project = ProjectModules::new(&db, modules);
        let fixture = Fixture { db, files, project };
        fixture.compute_all();
        fixture.db.take_executed();
        fixture
    }

    /// Asks for everything, like a `check` would, and returns the queries that executed.
    fn compute_all(&self) -> Vec<String> {
        let _ = import_graph(&self.db, self.project);
        for file in self.files {
            let _ = item_summary(&self.db, file);
            let _ = parse(&self.db, file);
        }
        let mut executed = self.db.take_executed();
        executed.sort();
        executed
    }

    fn edit_web(&mut self, from: &str, to: &str) {
        let text = WEB.replace(from, to);
        assert_ne!(text, WEB, "the edit must change something");
        self.files[1].set_text(&mut self.db).to(Arc::from(text));
    }
}

/// The salsa key of a query on a file, as the event log prints it.
fn key(query: &str, file: SourceFile) -> String {
    format!("{query}({:?})", salsa::plumbing::AsId::as_id(&file))
}

#[test]
fn an_edit_inside_a_block_recomputes_only_that_files_own_queries() {
    let mut fixture = Fixture::new();
    let web = fixture.files[1];
    fixture.edit_web("    x = 1\n", "    x = 1 + 2\n    y = [x, 3]\n");
    let executed = fixture.compute_all();
    let mut expected = vec![key("imports", web), key("item_summary", web), key("parse", web)];
    expected.sort();
    assert_eq!(executed, expected, "only the edited file's own queries run; its summary and imports come out equal");
}

#[test]
fn changing_an_import_recomputes_the_import_graph() {
    let mut fixture = Fixture::new();
    fixture.edit_web("import lib\n", "import lib\nimport std\n");
    let executed = fixture.compute_all();
    assert!(executed.iter().any(|q| q.starts_with("import_graph(")), "{executed:?}");
    assert_eq!(import_graph(&fixture.db, fixture.project).unresolved, [("web".to_owned(), "std".to_owned())]);
}

#[test]
fn changing_a_declaration_changes_the_summary_but_not_the_import_graph() {
    let mut fixture = Fixture::new();
    let web = fixture.files[1];
    fixture.edit_web("    string name\n", "    string name\n    int port = 80\n");
    let executed = fixture.compute_all();
    assert!(executed.contains(&key("item_summary", web)));
    assert!(!executed.iter().any(|q| q.starts_with("import_graph(")), "{executed:?}");
    let attributes = &item_summary(&fixture.db, web).entities[0].attributes;
    assert_eq!(attributes, &[("name".to_owned(), "string".to_owned()), ("port".to_owned(), "int".to_owned())]);
}

#[test]
fn the_import_graph_resolves_modules_of_the_project() {
    let fixture = Fixture::new();
    let graph = import_graph(&fixture.db, fixture.project);
    let edge = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    assert_eq!(graph.edges, [edge("__config__", "web"), edge("__config__", "lib"), edge("web", "lib")]);
    assert!(graph.unresolved.is_empty());
}
