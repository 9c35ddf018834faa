//! Execution stops when its cancel flag is set (the language server sets it when the model
//! changes under a run), and a run nobody cancels is unaffected by the flag being there.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use modelc_db::{FileInput, ProjectInput, TestDb};
use modelc_diagnostics::FileId;

fn project(db: &TestDb, text: &str) -> ProjectInput {
    let mut modules =
        vec![("__config__".to_owned(), FileInput::new(db, "main.cf".to_owned(), Arc::from(text), FileId(0)))];
    for (n, file) in modelc_stdlib::FILES.iter().enumerate() {
        let input = FileInput::new(db, file.display_name.to_owned(), Arc::from(file.text), FileId(n as u32 + 1));
        modules.push((file.namespace.to_owned(), input));
    }
    ProjectInput::new(db, modules, vec!["__config__".to_owned()])
}

fn model() -> String {
    let mut text = String::from("entity A:\n    int n\nend\nimplement A using std::none\n");
    for i in 0..5000 {
        text.push_str(&format!("a{i} = A(n={i})\n"));
    }
    text
}

#[test]
fn a_cancelled_run_stops_and_says_so() {
    let db = TestDb::default();
    let project = project(&db, &model());
    let flag = Arc::new(AtomicBool::new(true));
    let world = modelc_exec::World { cancel: Some(Arc::clone(&flag)), ..modelc_exec::World::default() };
    let outcome = modelc_driver::execute(&db, project, world);
    assert!(outcome.cancelled);
    assert!(outcome.graph.instances.is_empty(), "a cancelled run has no model");

    flag.store(false, Ordering::Relaxed);
    let world = modelc_exec::World { cancel: Some(flag), ..modelc_exec::World::default() };
    let outcome = modelc_driver::execute(&db, project, world);
    assert!(!outcome.cancelled);
    assert_eq!(outcome.instances_by_entity.get("__config__::A"), Some(&5000));
}

/// Each loaded file of `project`, lowered, as execution takes them.
fn units(db: &TestDb, project: ProjectInput) -> Vec<modelc_exec::Unit<'_>> {
    modelc_sema::loaded_modules(db, project)
        .files
        .iter()
        .map(|(namespace, file)| modelc_exec::Unit {
            namespace: namespace.clone(),
            file_id: file.id(db),
            display_name: file.name(db).clone(),
            text: file.text(db),
            hir: modelc_sema::hir::file_hir(db, project, *file),
        })
        .collect()
}

#[test]
fn gathering_the_program_and_the_plans_looks_at_the_flag() {
    let db = TestDb::default();
    let project = project(&db, &model());
    let index = modelc_sema::model_index(&db, project);

    let looks = std::cell::Cell::new(0);
    let program = modelc_exec::Program::unless_cancelled(units(&db, project), index, &|| {
        looks.set(looks.get() + 1);
        true
    });
    assert!(program.is_none(), "a program gathered under a set flag is abandoned");
    assert_eq!(looks.get(), 1, "the flag is looked at before the first file");

    // A program gathered in time, run under a flag set since: the plans stop first.
    let program = modelc_exec::Program::unless_cancelled(units(&db, project), index, &|| false).unwrap();
    let world = modelc_exec::World { cancel: Some(Arc::new(AtomicBool::new(true))), ..modelc_exec::World::default() };
    let outcome = modelc_exec::execute(&program, world);
    assert!(outcome.cancelled);
    assert!(outcome.instances_by_entity.is_empty(), "nothing ran");
}
