//! The reference of a module: what `modelc doc MODULE` prints and `docs/std.md` holds. It is
//! read from the resolved program (the lowered files' declarations, the type table and std's
//! plugin signatures), never from a second parser, so it shows what the compiler sees:
//! declarations as written, with their docstrings, each statement about an entity (relations,
//! indexes, `implement`, `resource`) beside that entity.
//!
//! [`collect`] builds a [`Reference`]; [`markdown`] renders it, and it serialises as JSON.

mod collect;
mod markdown;

pub use collect::collect;
pub use markdown::markdown;

use serde::Serialize;

/// The reference of a module: its namespaces (the module's own first, then its submodules).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reference {
    pub module: String,
    pub namespaces: Vec<Namespace>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Namespace {
    pub name: String,
    /// The file's docstring.
    pub doc: Option<String>,
    pub entities: Vec<Entity>,
    pub typedefs: Vec<Declared>,
    pub implementations: Vec<Declared>,
    pub plugins: Vec<Plugin>,
    /// Top-level variables, with the statement that sets each.
    pub variables: Vec<Declared>,
}

/// Something declared by one statement: its qualified name, the statement as written and its
/// docstring.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Declared {
    pub name: String,
    pub declaration: String,
    pub doc: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entity {
    pub name: String,
    /// The entity's header as written (`entity Host extends ManagedDevice`).
    pub header: String,
    pub doc: Option<String>,
    /// Its own attributes, as written (`bool purged = false`).
    pub attributes: Vec<String>,
    /// The statements about it, as written: relations with an end on it, its indexes,
    /// `implement` and `resource` declarations.
    pub statements: Vec<String>,
    /// Every ancestor, nearest first (`std::Entity` last).
    pub ancestors: Vec<String>,
    /// The attributes and relation ends it inherits, with the entity that declares each.
    pub inherited: Vec<Inherited>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Inherited {
    pub from: String,
    pub names: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plugin {
    pub name: String,
    /// `std::replace(string string, string old, string new) -> string`.
    pub signature: String,
    pub doc: Option<String>,
    pub deprecated: bool,
}
