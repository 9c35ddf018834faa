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
