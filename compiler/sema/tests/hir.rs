//! What lowering resolves names to: slots counted out through scopes, ids, and the references
//! editor features use.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::sync::Arc;

use modelc_db::{FileInput, ProjectInput, TestDb};
use modelc_diagnostics::FileId;
use modelc_sema::hir::{ExprKind, FileHir, Stmt, Symbol, Var};

fn lower(main: &str) -> (TestDb, FileInput, ProjectInput) {
    let db = TestDb::default();
    let mut modules = Vec::new();
    let file = FileInput::new(&db, "main.cf".to_owned(), Arc::from(main), FileId(0));
    modules.push(("__config__".to_owned(), file));
    for (n, std_file) in modelc_stdlib::FILES.iter().enumerate() {
        let input =
            FileInput::new(&db, std_file.display_name.to_owned(), Arc::from(std_file.text), FileId(n as u32 + 1));
        modules.push((std_file.namespace.to_owned(), input));
    }
    let project = ProjectInput::new(&db, modules, vec!["__config__".to_owned()]);
    (db, file, project)
}

fn symbols_at<'h>(hir: &'h FileHir, text: &str, needle: &str) -> Vec<&'h Symbol> {
    let start = text.find(needle).unwrap() as u32;
    hir.references.iter().filter(|r| r.span.start == start).map(|r| &r.symbol).collect()
}

#[test]
fn both_ends_of_a_unidirectional_relation_are_references() {
    let text = "entity A:\nend\nentity B:\nend\nA.b [0:1] -- B\n";
    let (db, file, project) = lower(text);
    let hir = modelc_sema::hir::file_hir(&db, project, file);
    assert_eq!(symbols_at(hir, text, "B\n"), [&Symbol::Entity("__config__::B".to_owned())]);
    assert_eq!(symbols_at(hir, text, "A.b"), [&Symbol::Entity("__config__::A".to_owned())]);
}

#[test]
fn variables_resolve_to_slots_counted_out_through_scopes() {
    let text = "a = 1\nfor i in [1]:\n    b = [a + i + j for j in [2]]\nend\n";
    let (db, file, project) = lower(text);
    let hir = modelc_sema::hir::file_hir(&db, project, file);
    let Stmt::For(for_) = &hir.top_level.stmts[1] else { panic!() };
    let Stmt::Assign(assign) = &for_.body.stmts[0] else { panic!() };
    let ExprKind::ListComp { element, .. } = &assign.value.kind else { panic!() };
    // `a + i + j` inside the comprehension: `j` in its own scope, `i` one out (the loop body,
    // slot 1 after `b`), `a` two out (the top level).
    let ExprKind::Binary { lhs, rhs: j, .. } = &element.kind else { panic!() };
    let ExprKind::Binary { lhs: a, rhs: i, .. } = &lhs.kind else { panic!() };
    assert_eq!(a.kind, ExprKind::Var(Var::Local { up: 2, slot: 0 }));
    assert_eq!(i.kind, ExprKind::Var(Var::Local { up: 1, slot: 1 }));
    assert_eq!(j.kind, ExprKind::Var(Var::Local { up: 0, slot: 0 }));
    // The top-level `a` is a global of the namespace for navigation; `i` a block variable.
    assert_eq!(
        symbols_at(hir, text, "a +"),
        [&Symbol::Global { namespace: "__config__".to_owned(), name: "a".to_owned() }]
    );
    assert!(matches!(symbols_at(hir, text, "i +")[..], [Symbol::Local(_)]));
}

#[test]
fn an_undefined_name_is_lowered_as_such_and_runs_into_its_error() {
    let text = "x = nosuch\n";
    let (db, file, project) = lower(text);
    let hir = modelc_sema::hir::file_hir(&db, project, file);
    let Stmt::Assign(assign) = &hir.top_level.stmts[0] else { panic!() };
    assert_eq!(assign.value.kind, ExprKind::Var(Var::Undefined("nosuch".to_owned())));
}
