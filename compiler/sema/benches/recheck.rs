//! Re-checking after a one-line edit versus checking from scratch, on a generated project of
//! about 50,000 lines (100 modules), and what a declaration edit costs: the type table rebuilt,
//! the edited file's own check (what the editor shows first), the whole project's check.
//! Run with `cargo bench -p modelc-sema`.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "benchmark code")]

use std::sync::Arc;

use modelc_db::{FileInput, ProjectInput, TestDb};
use modelc_diagnostics::FileId;
use salsa::Setter as _;

const MODULES: usize = 100;
const ENTITIES_PER_MODULE: usize = 25;

fn main() {
    divan::main();
}

/// One generated module: entities with attributes and relations, an index, implementations
/// with statement bodies, and top-level instances. About 500 lines.
fn module_text(m: usize, body_value: usize) -> String {
    module_text_with(m, body_value, None)
}

/// [`module_text`], `Thing1` with one more attribute, `extra{n}`, when `extra` is `Some(n)`.
fn module_text_with(m: usize, body_value: usize, extra: Option<usize>) -> String {
    let mut out = String::new();
    if m > 0 {
        out.push_str(&format!("import mod{}\n", m - 1));
    }
    for e in 0..ENTITIES_PER_MODULE {
        out.push_str(&format!(
            "entity Thing{e}:\n    \"\"\" Thing {e} of module {m}. \"\"\"\n    string name\n    int size = 1\n    \
             string? note = null\n    std::port port = 80\n{extra}end\n\n",
            extra = match extra {
                Some(n) if e == 1 => format!("    string? extra{n} = null\n"),
                _ => String::new(),
            }
        ));
        out.push_str(&format!("index Thing{e}(name)\n"));
        if e > 0 {
            out.push_str(&format!("Thing{e}.parts [0:] -- Thing{}.owner [0:1]\n", e - 1));
        }
        out.push_str(&format!(
            "implementation build{e} for Thing{e}:\n    total = size + {body_value}\n    label = \"{{{{name}}}}-{e}\"\n    \
             if total > 10:\n        std::print(label)\n    end\nend\n\nimplement Thing{e} using build{e}\n\n"
        ));
    }
    for e in 0..ENTITIES_PER_MODULE {
        out.push_str(&format!("t{e} = Thing{e}(name=\"t{e}\", size={e})\n"));
    }
    if m > 0 {
        out.push_str(&format!("other = mod{}::Thing0(name=\"from-{m}\")\n", m - 1));
    }
    out
}

struct Generated {
    db: TestDb,
    files: Vec<FileInput>,
    project: ProjectInput,
    lines: usize,
}

fn generate() -> Generated {
    let db = TestDb::default();
    let mut files = Vec::new();
    let mut modules = Vec::new();
    let mut lines = 0;
    let mut add = |namespace: String, text: String| {
        lines += text.lines().count();
        let file = FileInput::new(&db, format!("{namespace}.cf"), Arc::from(text), FileId(files.len() as u32));
        files.push(file);
        modules.push((namespace, file));
    };
    let main: String = (0..MODULES).map(|m| format!("import mod{m}\n")).collect();
    add("__config__".to_owned(), main);
    for m in 0..MODULES {
        add(format!("mod{m}"), module_text(m, 0));
    }
    for std_file in modelc_stdlib::FILES {
        add(std_file.namespace.to_owned(), std_file.text.to_owned());
    }
    let project = ProjectInput::new(&db, modules, vec!["__config__".to_owned()]);
    Generated { db, files, project, lines }
}

#[divan::bench(sample_count = 10)]
fn cold_check(bencher: divan::Bencher) {
    bencher.with_inputs(generate).bench_local_values(|g| {
        let diagnostics = modelc_sema::check_project(&g.db, g.project);
        assert!(diagnostics.is_empty(), "{:?}", diagnostics.first());
        assert!(g.lines > 45_000, "{} lines", g.lines);
        g
    });
}

#[divan::bench(sample_count = 50)]
fn recheck_after_one_line_edit(bencher: divan::Bencher) {
    // The edit: one line of one implementation body, in the middle module.
    after_edit(
        bencher,
        |toggle| module_text(MODULES / 2 - 1, toggle),
        |g, _| {
            assert!(modelc_sema::check_project(&g.db, g.project).is_empty());
        },
    );
}

/// The middle module's text replaced by `edited(n)` at the `n`th iteration, then what is asked
/// of the database: `what` of the project and the edited file.
fn after_edit(bencher: divan::Bencher, edited: fn(usize) -> String, what: fn(&Generated, FileInput)) {
    let mut g = generate();
    assert!(modelc_sema::check_project(&g.db, g.project).is_empty());
    let file = g.files[MODULES / 2];
    let mut toggle = 0;
    bencher.bench_local(|| {
        toggle += 1;
        file.set_text(&mut g.db).to(Arc::from(edited(toggle)));
        what(&g, file);
    });
}

/// A declaration edit in the middle module (an attribute of `Thing1` renamed), then `what`.
fn after_declaration_edit(bencher: divan::Bencher, what: fn(&Generated, FileInput)) {
    after_edit(bencher, |toggle| module_text_with(MODULES / 2 - 1, 0, Some(toggle)), what);
}

#[divan::bench(sample_count = 30)]
fn type_table_after_declaration_edit(bencher: divan::Bencher) {
    after_declaration_edit(bencher, |g, _| {
        let _ = modelc_sema::model_index(&g.db, g.project);
    });
}

#[divan::bench(sample_count = 30)]
fn edited_file_after_declaration_edit(bencher: divan::Bencher) {
    after_declaration_edit(bencher, |g, edited| {
        assert!(modelc_sema::checked_file(&g.db, g.project, edited).is_empty());
    });
}

#[divan::bench(sample_count = 30)]
fn project_after_declaration_edit(bencher: divan::Bencher) {
    after_declaration_edit(bencher, |g, _| {
        assert!(modelc_sema::check_project(&g.db, g.project).is_empty());
    });
}
