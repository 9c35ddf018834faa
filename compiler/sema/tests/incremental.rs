//! Incrementality, proven by the queries that execute: after an edit inside a statement block,
//! only the edited file's own queries run again. Its summary and imports come out equal, so the
//! loaded-module set, the type table and the other files' diagnostics are reused. After a
//! declaration edit, a file is checked (or lowered) again only when an item its check (or its
//! lowering) read through `modelc_sema::signatures` changed.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::sync::Arc;

use modelc_db::{FileInput, ProjectInput, TestDb};
use modelc_diagnostics::FileId;
use salsa::Setter as _;

const MAIN: &str = "import web\nimport lib\nweb::Server(name=\"a\")\n";
const WEB: &str = "import lib\nentity Server extends lib::Base:\n    string name\nend\n\
                   implementation listen for Server:\n    x = 1\nend\nimplement Server using listen\n";
const LIB: &str = "entity Base:\nend\nentity Spare:\n    string label\nend\n";

struct Fixture {
    db: TestDb,
    files: Vec<FileInput>,
    project: ProjectInput,
}

impl Fixture {
    fn new() -> Fixture {
        let db = TestDb::with_log();
        let mut files = Vec::new();
        let mut modules = Vec::new();
        let mut add = |namespace: &str, text: &str| {
            let id = FileId(u32::try_from(files.len()).unwrap());
            let file = FileInput::new(&db, format!("{namespace}.cf"), Arc::from(text), id);
            files.push(file);
            modules.push((namespace.to_owned(), file));
        };
        add("__config__", MAIN);
        add("web", WEB);
        add("lib", LIB);
        for std_file in modelc_stdlib::FILES {
            add(std_file.namespace, std_file.text);
        }
        let project = ProjectInput::new(&db, modules, vec!["__config__".to_owned()]);
        let fixture = Fixture { db, files, project };
        assert_eq!(fixture.diagnostics(), Vec::<String>::new());
        fixture.db.take_executed();
        fixture
    }

    fn diagnostics(&self) -> Vec<String> {
        modelc_sema::check_project(&self.db, self.project).iter().map(|d| d.message.clone()).collect()
    }

    /// Checks everything, like `modelc check`, and returns the queries that executed.
    fn recheck(&self) -> Vec<String> {
        let _ = self.diagnostics();
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
fn key(query: &str, file: FileInput) -> String {
    format!("{query}({:?})", salsa::plumbing::AsId::as_id(&file))
}

#[test]
fn an_edit_inside_a_block_rechecks_only_that_file() {
    let mut fixture = Fixture::new();
    let web = fixture.files[1];
    fixture.edit_web("    x = 1\n", "    x = 1 + 2\n    y = [x, 3]\n");
    let executed = fixture.recheck();
    let own = [key("imports", web), key("item_summary", web), key("parse", web)];
    for query in &own {
        assert!(executed.contains(query), "{query} should rerun: {executed:?}");
    }
    // The checks read the file's lowering: it is lowered again with it.
    let per_file_checks = ["file_diagnostics", "checked_file", "file_hir"];
    let others: Vec<&String> = executed
        .iter()
        .filter(|q| !own.contains(q) && !per_file_checks.iter().any(|check| q.starts_with(check)))
        .collect();
    assert!(others.is_empty(), "queries of other files or of the project reran: {others:?}");
    // Exactly one file's diagnostics were recomputed: the edited one.
    for check in per_file_checks {
        assert_eq!(executed.iter().filter(|q| q.starts_with(check)).count(), 1, "{check}: {executed:?}");
    }
}

#[test]
fn an_error_introduced_by_an_edit_is_reported_and_fixing_it_clears_it() {
    let mut fixture = Fixture::new();
    fixture.edit_web("    x = 1\n", "    x = nosuch::y\n");
    let diagnostics = fixture.diagnostics();
    assert_eq!(diagnostics, ["namespace `nosuch` not found"]);
    fixture.edit_web("    x = 1\n", "    x = 2\n");
    assert_eq!(fixture.diagnostics(), Vec::<String>::new());
}

#[test]
fn changing_a_declaration_rebuilds_the_type_table_and_rechecks_its_users() {
    let mut fixture = Fixture::new();
    fixture.edit_web("    string name\n", "    string title\n");
    let executed = fixture.recheck();
    assert!(executed.iter().any(|q| q.starts_with("model_index(")), "{executed:?}");
    // main.cf constructs `web::Server(name=...)`, which is now wrong.
    let diagnostics = fixture.diagnostics();
    assert_eq!(diagnostics, ["entity `web::Server` has no attribute `name`"]);
}

#[test]
fn changing_an_import_reloads_modules() {
    let mut fixture = Fixture::new();
    fixture.edit_web("import lib\n", "import lib\nimport nosuch\n");
    let executed = fixture.recheck();
    assert!(executed.iter().any(|q| q.starts_with("loaded_modules(")), "{executed:?}");
    assert_eq!(fixture.diagnostics(), ["module `nosuch` not found"]);
}

impl Fixture {
    /// Lowers every loaded file, as `modelc compile` does before execution, and returns the
    /// queries that executed.
    fn relower(&self) -> Vec<String> {
        for file in modelc_sema::loaded_modules(&self.db, self.project).files.values() {
            let _ = modelc_sema::hir::file_hir(&self.db, self.project, *file);
        }
        let mut executed = self.db.take_executed();
        executed.sort();
        executed
    }

    fn web_hir(&self) -> &modelc_sema::hir::FileHir {
        modelc_sema::hir::file_hir(&self.db, self.project, self.files[1])
    }
}

#[test]
fn an_edit_inside_an_implementation_body_lowers_only_that_file_again() {
    let mut fixture = Fixture::new();
    // Checking the project lowered every file: the checks read the lowered program.
    let first = fixture.relower();
    assert_eq!(first.iter().filter(|q| q.starts_with("file_hir")).count(), 0, "{first:?}");
    assert_eq!(fixture.web_hir().implementations[0].body.locals.len(), 1);

    fixture.edit_web("    x = 1\n", "    x = 1 + 2\n    y = [x, 3]\n");
    let executed = fixture.relower();
    let lowered: Vec<&String> = executed.iter().filter(|q| q.starts_with("file_hir")).collect();
    assert_eq!(lowered.len(), 1, "only the edited file is lowered again: {executed:?}");
    assert!(!executed.iter().any(|q| q.starts_with("model_index(")), "{executed:?}");
    // What was lowered again is the edit: two variables now, `y` reading `x` from its slot.
    let body = &fixture.web_hir().implementations[0].body;
    let names: Vec<&str> = body.locals.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(names, ["x", "y"]);
    let modelc_sema::hir::Stmt::Assign(assign) = &body.stmts[1] else { panic!("{body:?}") };
    let modelc_sema::hir::ExprKind::List(items) = &assign.value.kind else { panic!("{assign:?}") };
    assert_eq!(items[0].kind, modelc_sema::hir::ExprKind::Var(modelc_sema::hir::Var::Local { up: 0, slot: 0 }));
}

impl Fixture {
    /// Lowers each loaded file in turn, and returns the namespaces lowered again.
    fn relowered_files(&self) -> Vec<String> {
        let _ = self.db.take_executed();
        let mut relowered = Vec::new();
        for (namespace, file) in &modelc_sema::loaded_modules(&self.db, self.project).files {
            let _ = modelc_sema::hir::file_hir(&self.db, self.project, *file);
            if self.db.take_executed().iter().any(|q| q.starts_with("file_hir")) {
                relowered.push(namespace.clone());
            }
        }
        relowered
    }
}

/// Lowering reads the signatures of the items a file names, as the checks do: a declaration
/// edit lowers again the files that read the changed item, and no other. Entities are named by
/// file-local references, so one added before the others moves no other file's ids.
#[test]
fn a_declaration_edit_lowers_again_only_the_files_that_read_it() {
    let mut fixture = Fixture::new();
    let _ = fixture.relowered_files();
    fixture.edit(1, "    string name\n", "    string name\n    int port = 80\n");
    assert_eq!(fixture.relowered_files(), ["__config__", "web"], "an attribute added to web::Server");
    fixture.edit(
        1,
        "entity Server extends lib::Base:\n",
        "entity Server extends lib::Base:\n    \"\"\"A server.\"\"\"\n",
    );
    assert_eq!(fixture.relowered_files(), ["web"], "a docstring");
    fixture.edit(2, "entity Base:", "entity First:\nend\nentity Base:");
    assert_eq!(fixture.relowered_files(), ["lib"], "an entity added before the others");
    fixture.edit(2, "entity Spare:", "entity Reserve:");
    assert_eq!(fixture.relowered_files(), ["lib"], "an unused entity renamed");

    // What main lowered again names the entity, and `name` at its position after the edits.
    let main = modelc_sema::hir::file_hir(&fixture.db, fixture.project, fixture.files[0]);
    let modelc_sema::hir::Stmt::Expr(construct) = &main.top_level.stmts[0] else { panic!("{main:?}") };
    let modelc_sema::hir::ExprKind::Construct { entity, args, .. } = &construct.kind else { panic!("{construct:?}") };
    assert_eq!(main.entity_name(*entity), "web::Server");
    let modelc_sema::hir::ConstructArg::Keyword { position, .. } = &args[0] else { panic!("{args:?}") };
    let signature = modelc_sema::signatures::Signatures::new(&fixture.db, fixture.project);
    let names: Vec<&str> = signature.attribute_names("web::Server").collect();
    assert_eq!(names[position.unwrap() as usize], "name");
}

impl Fixture {
    /// Replaces `from` with `to` in file `file` (its current text).
    fn edit(&mut self, file: usize, from: &str, to: &str) {
        let input = self.files[file];
        let old = input.text(&self.db).to_string();
        let text = old.replacen(from, to, 1);
        assert_ne!(text, old, "the edit must change something");
        input.set_text(&mut self.db).to(Arc::from(text));
    }

    /// Checks each loaded file in turn, like the language server, and returns the namespaces
    /// whose checks ran again (each file's check logged apart from the others').
    fn rechecked_files(&self) -> Vec<String> {
        let _ = self.db.take_executed();
        let mut rechecked = Vec::new();
        for (namespace, file) in &modelc_sema::loaded_modules(&self.db, self.project).files {
            let _ = modelc_sema::checked_file(&self.db, self.project, *file);
            if self.db.take_executed().iter().any(|q| q.starts_with("file_diagnostics")) {
                rechecked.push(namespace.clone());
            }
        }
        rechecked
    }
}

/// Edits that change no declaration's signature: a docstring, the spacing of a default
/// value, a statement of an implementation body. Only the edited file is checked again.
#[test]
fn an_edit_that_changes_no_signature_rechecks_no_other_file() {
    let mut fixture = Fixture::new();
    let edits = [
        ("entity Server extends lib::Base:\n", "entity Server extends lib::Base:\n    \"\"\"A server.\"\"\"\n"),
        ("    string name\n", "    string name = \"x\"\n"),
    ];
    // The default is a signature change (constructors may now leave it out): set it first.
    fixture.edit(1, edits[1].0, edits[1].1);
    let _ = fixture.rechecked_files();
    fixture.edit(1, edits[0].0, edits[0].1);
    assert_eq!(fixture.rechecked_files(), ["web"], "a docstring");
    fixture.edit(1, "= \"x\"", "=   \"x\"");
    assert_eq!(fixture.rechecked_files(), ["web"], "a default value's spacing");
    fixture.edit(1, "    x = 1\n", "    x = 2\n");
    assert_eq!(fixture.rechecked_files(), ["web"], "an implementation body");
    assert_eq!(fixture.diagnostics(), Vec::<String>::new());
}

/// Attributes of `web::Server` changed: the files that read `web::Server` (web itself, and
/// main, which constructs one) are checked again; lib and std, which do not, are not.
#[test]
fn changing_an_entity_rechecks_exactly_the_files_that_read_it() {
    let mut fixture = Fixture::new();
    fixture.edit(1, "    string name\n", "    string name\n    int port\n");
    assert_eq!(fixture.rechecked_files(), ["__config__", "web"]);
    // A constructor that leaves `port` out fails only when the model runs.
    assert_eq!(fixture.diagnostics(), Vec::<String>::new());
    fixture.edit(1, "    string name\n", "    string title\n");
    assert_eq!(fixture.rechecked_files(), ["__config__", "web"]);
    assert_eq!(fixture.diagnostics(), ["entity `web::Server` has no attribute `name`"]);
}

/// Renaming an entity nothing uses checks only its own file again.
#[test]
fn renaming_an_unused_entity_rechecks_no_other_file() {
    let mut fixture = Fixture::new();
    fixture.edit(2, "entity Spare:", "entity Reserve:");
    assert_eq!(fixture.rechecked_files(), ["lib"]);
    assert_eq!(fixture.diagnostics(), Vec::<String>::new());
}
