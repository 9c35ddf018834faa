//! The std module shipped in the binary checks without a single diagnostic, and what it
//! declares is what the language reference (spec §4.13) says it declares.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::sync::Arc;

use modelc_db::{FileInput, ProjectInput, TestDb};
use modelc_diagnostics::FileId;
use modelc_sema::index::TypeKind;

fn std_project(db: &TestDb) -> ProjectInput {
    let modules: Vec<(String, FileInput)> = modelc_stdlib::FILES
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let file = FileInput::new(db, f.display_name.to_owned(), Arc::from(f.text), FileId(i as u32));
            (f.namespace.to_owned(), file)
        })
        .collect();
    let roots = modules.iter().map(|(ns, _)| ns.clone()).collect();
    ProjectInput::new(db, modules, roots)
}

#[test]
fn std_checks_clean() {
    let db = TestDb::default();
    let project = std_project(&db);
    let diagnostics = modelc_sema::check_project(&db, project);
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
}

#[test]
fn std_declares_what_the_reference_describes() {
    let db = TestDb::default();
    let index = modelc_sema::model_index(&db, std_project(&db));
    for entity in [
        "Entity",
        "Resource",
        "PurgeableResource",
        "DiscoveryResource",
        "ManagedResource",
        "ManagedDevice",
        "Dataclass",
        "Host",
        "OS",
        "HostConfig",
        "HostGroup",
        "AgentConfig",
        "MutableString",
        "MutableInt",
        "MutableFloat",
        "MutableBool",
        "ResourceSet",
    ] {
        assert_eq!(index.type_in("std", entity), Some(TypeKind::Entity), "std::{entity}");
    }
    assert_eq!(index.type_in("std::testing", "NullResource"), Some(TypeKind::Entity));
    for typedef in ["port", "hoststring", "ipv4_address", "ipv_any_network", "uuid", "non_empty_string", "config_agent"]
    {
        assert_eq!(index.type_in("std", typedef), Some(TypeKind::Typedef), "std::{typedef}");
    }
    for implementation in ["none", "hostDefaults", "agentConfig"] {
        assert_eq!(index.type_in("std", implementation), Some(TypeKind::Implementation));
    }
    for plugin in ["print", "template", "count", "familyof", "getattr", "format"] {
        assert_eq!(index.type_in("std", plugin), Some(TypeKind::Plugin));
    }
    for os in ["unix", "windows", "linux", "solaris", "freebsd", "openbsd", "macos"] {
        assert!(index.has_variable("std", os), "std::{os}");
    }
    // Every entity has requires/provides; NullResource inherits from both resource kinds.
    assert!(index.attribute("std::testing::NullResource", "requires").is_some());
    assert!(index.is_subtype("std::testing::NullResource", "std::PurgeableResource"));
    assert!(index.has_default("std::testing::NullResource", "send_event"));
    assert_eq!(index.indexes("std::Host"), [["name".to_owned()].as_slice()]);
}
