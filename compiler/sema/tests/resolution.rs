//! Name resolution across modules (spec §4.11), on small in-memory projects: what each file can
//! see unqualified and qualified, aliases, constructor type inference, and per-file imports.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::sync::Arc;

use modelc_db::{FileInput, ProjectInput, TestDb};
use modelc_diagnostics::FileId;

/// Checks a project of `(namespace, text)` files (std added) and returns `code: message` of
/// each diagnostic.
fn check(files: &[(&str, &str)]) -> Vec<String> {
    let db = TestDb::default();
    let mut modules = Vec::new();
    let all = files
        .iter()
        .map(|(ns, text)| ((*ns).to_owned(), (*text).to_owned()))
        .chain(modelc_stdlib::FILES.iter().map(|f| (f.namespace.to_owned(), f.text.to_owned())));
    for (i, (namespace, text)) in all.enumerate() {
        let file = FileInput::new(&db, format!("{namespace}.cf"), Arc::from(text), FileId(i as u32));
        modules.push((namespace, file));
    }
    let project = ProjectInput::new(&db, modules, vec!["__config__".to_owned()]);
    modelc_sema::check_project(&db, project).iter().map(|d| format!("{}: {}", d.code.id, d.message)).collect()
}

const LIB: &str = "entity Thing:\n    string name\nend\nimplement Thing using std::none\nlibvar = 1\n";

#[test]
fn a_submodule_sees_its_parents_types_unqualified_but_not_qualified_without_import() {
    let sub_ok = "entity Sub extends Thing:\nend\n";
    assert_eq!(check(&[("__config__", "import m::x\n"), ("m", LIB), ("m::x", sub_ok)]), Vec::<String>::new());
    let sub_qualified = "entity Sub extends m::Thing:\nend\n";
    assert_eq!(
        check(&[("__config__", "import m::x\n"), ("m", LIB), ("m::x", sub_qualified)]),
        ["E0104: namespace `m` is not imported in this file"]
    );
}

#[test]
fn parent_variables_are_not_visible_in_a_submodule() {
    let sub = "x = libvar\n";
    assert_eq!(
        check(&[("__config__", "import m::x\n"), ("m", LIB), ("m::x", sub)]),
        ["E0106: variable `libvar` not found"]
    );
}

#[test]
fn an_alias_replaces_the_module_name() {
    let main = "import m as lib\nt = lib::Thing(name=\"a\")\nu = m::Thing(name=\"b\")\n";
    assert_eq!(check(&[("__config__", main), ("m", LIB)]), ["E0104: namespace `m` is not imported in this file"]);
}

#[test]
fn main_does_not_see_std_unqualified() {
    assert_eq!(
        check(&[("__config__", "entity A extends Resource:\nend\n")]),
        ["E0103: could not find entity `Resource`"]
    );
}

#[test]
fn constructors_in_relation_values_are_inferred_among_subtypes() {
    let main = "import m\nimport m::x\nentity Holder:\nend\nHolder.thing [1] -- m::Thing\n\
                implement Holder using std::none\nHolder(thing=Sub(name=\"a\"))\n";
    let sub = "entity Sub extends Thing:\nend\nimplement Sub using std::none\n";
    assert_eq!(check(&[("__config__", main), ("m", LIB), ("m::x", sub)]), Vec::<String>::new());
}

#[test]
fn imports_are_per_file_and_duplicates_are_reported() {
    let main = "import m\nimport m\n";
    assert_eq!(check(&[("__config__", main), ("m", LIB)]), ["E0102: `m` is imported twice"]);
    // `m` is loaded (by main.cf) but the other module did not import it.
    let main = "import m\nimport other\n";
    let other = "t = m::Thing(name=\"a\")\n";
    assert_eq!(
        check(&[("__config__", main), ("m", LIB), ("other", other)]),
        ["E0104: namespace `m` is not imported in this file"]
    );
}

#[test]
fn misspelt_names_get_suggestions() {
    let db_free = check(&[("__config__", "import m\nt = m::Thnig(name=\"a\")\n"), ("m", LIB)]);
    assert_eq!(db_free, ["E0103: could not find entity `m::Thnig`"]);
    let main = "entity Server:\n    string name\nend\nimplement Server using std::none\nServer(nmae=\"a\")\n";
    assert_eq!(check(&[("__config__", main)]), ["E0207: entity `__config__::Server` has no attribute `nmae`"]);
}
