//! Valid models that a careless checker would reject: each must check without errors
//! (warnings allowed), because the reference compiler accepts it. Most come from a review of
//! the checker against the language reference.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::sync::Arc;

use modelc_db::{FileInput, ProjectInput, TestDb};
use modelc_diagnostics::FileId;

fn errors(main: &str) -> Vec<String> {
    let db = TestDb::default();
    let mut modules =
        vec![("__config__".to_owned(), FileInput::new(&db, "main.cf".to_owned(), Arc::from(main), FileId(0)))];
    for (i, f) in modelc_stdlib::FILES.iter().enumerate() {
        let file = FileInput::new(&db, f.display_name.to_owned(), Arc::from(f.text), FileId(i as u32 + 1));
        modules.push((f.namespace.to_owned(), file));
    }
    let project = ProjectInput::new(&db, modules, vec!["__config__".to_owned()]);
    modelc_sema::check_project(&db, project)
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{}: {}", d.code.id, d.message))
        .collect()
}

const INDEXED_PAIR: &str = "entity A:\n  string name\nend\nentity B:\n  string name\nend\n\
                            A.bs [0:] -- B.a [1]\nindex A(name)\nindex B(a, name)\n\
                            implement A using std::none\nimplement B using std::none\n";

#[test]
fn an_index_attribute_filled_by_the_inverse_relation() {
    let main = format!("{INDEXED_PAIR}A(name=\"x\")\na = A[name=\"x\"]\na.bs += B(name=\"b1\")\n");
    assert_eq!(errors(&main), Vec::<String>::new());
    let main = format!("{INDEXED_PAIR}A(name=\"x\", bs=[B(name=n) for n in [\"b1\", \"b2\"]])\n");
    assert_eq!(errors(&main), Vec::<String>::new());
}

#[test]
fn elif_conditions_and_guarded_elements_may_not_run() {
    assert_eq!(errors("if true:\n  x = 1\nelif nosuch:\n  y = 2\nend\n"), Vec::<String>::new());
    assert_eq!(errors("x = [nosuch for i in [1] if false]\n"), Vec::<String>::new());
    assert_eq!(errors("e = []\nfor x in [e]:\n  std::print(nosuch)\nend\n"), Vec::<String>::new());
    assert_eq!(errors("for x in [std::get_env(\"UNSET\")]:\n  std::print(nosuch)\nend\n"), Vec::<String>::new());
}

#[test]
fn variables_resolve_where_they_are_written() {
    let main = "a = \"s\"\nb = a\nfor i in [1]:\n  a = 1\n  c = b + \"x\"\nend\n";
    assert_eq!(errors(main), Vec::<String>::new());
}

#[test]
fn is_defined_on_a_lookup_is_never_a_lookup_error() {
    assert_eq!(
        errors("l = [\"a\"]\nx = l[\"b\"] is defined\nd = {\"a\": 1}\ny = d[1] is defined\n"),
        Vec::<String>::new()
    );
}

#[test]
fn nested_constructors_for_index_attributes_are_checked_only_when_run() {
    let main = "entity A:\nend\nentity B:\nend\nentity C:\nend\nA.b [1] -- B\nindex A(b)\n\
                implement A using std::none\nimplement B using std::none\nimplement C using std::none\n\
                implementation unused for C:\n  x = A(b=C())\nend\n";
    assert_eq!(errors(main), Vec::<String>::new());
}

#[test]
fn python_regex_and_exact_integer_constants() {
    let main = "entity A:\n  std::hoststring h = \"web1\\n\"\nend\nimplement A using std::none\n";
    assert_eq!(errors(main), Vec::<String>::new());
    let main = "typedef t as int matching self != 9007199254740992\nentity A:\n  t x = 9007199254740993\nend\n";
    assert_eq!(errors(main), Vec::<String>::new());
    assert_eq!(errors("x = -170141183460469231731687303865105728 % -1 == 0 and true\n"), Vec::<String>::new());
}

#[test]
fn operators_on_possibly_unknown_values_are_not_errors() {
    let main = "x = std::get_env(\"PORT\")\ny = x + 1\nz = std::getfact(null, \"f\") < \"a\"\n";
    assert_eq!(errors(main), Vec::<String>::new());
}

#[test]
fn comprehension_variables_in_typedef_constraints() {
    let main = "typedef t as list matching std::count([x for x in self if x > 0]) == std::count(self)\n";
    let db_errors = errors(main);
    assert_eq!(db_errors, Vec::<String>::new());
}
