//! What one file's check reads of the project's declarations, one salsa query per question:
//! an attribute of an entity, whether one entity is a subtype of another, what a name of a
//! namespace is, a typedef, a plugin's signature. A file's diagnostics then depend on exactly
//! the answers its check used. When a declaration changes, the type table is built again and
//! each question asked again (a lookup in it); an answer that comes out equal keeps its
//! revision (salsa backdates it), so only the files whose answers changed are checked again:
//! a docstring or an implementation body re-checks no other file, a new attribute of one
//! entity re-checks the files that read that entity, renaming an entity nothing uses re-checks
//! none.
//!
//! The answers come from [`ModelIndex`], where the rules of declarations live; this module
//! only cuts them into questions.

use modelc_db::{Db, ProjectInput};
use modelc_stdlib::PluginSignature;

use crate::index::{AttrDef, Declarations, EntityDef, TypeKind, TypedefDef, model_index};

/// A name a question is about (a namespace, an entity, an attribute, …), interned.
#[salsa::interned(debug)]
pub struct Name<'db> {
    #[returns(ref)]
    pub text: String,
}

/// The declarations as one file's check asks about them.
#[derive(Clone, Copy)]
pub struct Signatures<'db> {
    db: &'db dyn Db,
    project: ProjectInput,
}

impl<'db> Signatures<'db> {
    pub fn new(db: &'db dyn Db, project: ProjectInput) -> Signatures<'db> {
        Signatures { db, project }
    }

    fn name(&self, text: &str) -> Name<'db> {
        Name::new(self.db, text)
    }

    /// An attribute of `entity`, own or inherited ([`ModelIndex::attribute`]).
    pub fn attribute(&self, entity: &str, name: &str) -> Option<&'db AttrDef> {
        attribute(self.db, self.project, self.name(entity), self.name(name)).as_ref()
    }

    /// Every attribute name of `entity`, own and inherited, nearest first.
    pub fn attribute_names(&self, entity: &str) -> &'db [String] {
        attribute_names(self.db, self.project, self.name(entity))
    }

    pub fn is_subtype(&self, sub: &str, sup: &str) -> bool {
        is_subtype(self.db, self.project, self.name(sub), self.name(sup))
    }

    pub fn is_incomplete(&self, entity: &str) -> bool {
        is_incomplete(self.db, self.project, self.name(entity))
    }

    /// The indexes that constrain `entity`: its own and its ancestors'.
    pub fn indexes(&self, entity: &str) -> &'db [Vec<String>] {
        indexes(self.db, self.project, self.name(entity))
    }

    /// The indexes of `entity`'s ancestry (itself included) that were declared invalid.
    pub fn invalid_indexes(&self, entity: &str) -> &'db [Vec<String>] {
        invalid_indexes(self.db, self.project, self.name(entity))
    }

    /// The entity's ancestors, itself excluded, nearest first.
    pub fn ancestors(&self, entity: &str) -> &'db [String] {
        ancestors(self.db, self.project, self.name(entity))
    }

    pub fn may_be_implemented(&self, entity: &str) -> bool {
        may_be_implemented(self.db, self.project, self.name(entity))
    }

    pub fn attribute_in_family(&self, entity: &str, name: &str) -> bool {
        attribute_in_family(self.db, self.project, self.name(entity), self.name(name))
    }

    pub fn resource_has_identity(&self, entity: &str) -> bool {
        resource_has_identity(self.db, self.project, self.name(entity))
    }

    pub fn has_default(&self, entity: &str, name: &str) -> bool {
        has_default(self.db, self.project, self.name(entity), self.name(name))
    }

    /// [`ModelIndex::constructor_candidates`].
    pub fn constructor_candidates(&self, name: &str, target: &str) -> &'db [String] {
        constructor_candidates(self.db, self.project, self.name(name), self.name(target))
    }

    pub fn plugin(&self, fqn: &str) -> Option<&'static PluginSignature> {
        plugin(self.db, self.project, self.name(fqn))
    }

    /// The Python plugins of `module` and its submodules, by fully qualified name.
    pub fn python_plugins_of(&self, module: &str) -> &'db [String] {
        python_plugins_of(self.db, self.project, self.name(module))
    }

    /// The namespaces that declare `entity` a resource (`resource Entity(...)`), in load order.
    pub fn resource_declarations(&self, entity: &str) -> &'db [String] {
        resource_declarations(self.db, self.project, self.name(entity))
    }

    /// The entity an implementation is for.
    pub fn implementation_for(&self, implementation: &str) -> Option<&'db str> {
        implementation_for(self.db, self.project, self.name(implementation)).as_deref()
    }

    pub fn has_variable(&self, namespace: &str, name: &str) -> bool {
        has_variable(self.db, self.project, self.name(namespace), self.name(name))
    }

    /// Every namespace the project could load.
    pub fn available(&self) -> &'db [String] {
        available(self.db, self.project)
    }
}

impl Declarations for Signatures<'_> {
    fn type_in(&self, namespace: &str, name: &str) -> Option<TypeKind> {
        type_in(self.db, self.project, self.name(namespace), self.name(name))
    }

    fn has_namespace(&self, namespace: &str) -> bool {
        has_namespace(self.db, self.project, self.name(namespace))
    }

    fn type_names_of(&self, namespace: &str) -> Vec<String> {
        type_names(self.db, self.project, self.name(namespace)).clone()
    }

    fn typedef(&self, fqn: &str) -> Option<&TypedefDef> {
        typedef(self.db, self.project, self.name(fqn)).as_ref()
    }
}

// One query per question; each asks the type table.

#[salsa::tracked(returns(ref))]
fn attribute<'db>(db: &'db dyn Db, project: ProjectInput, entity: Name<'db>, name: Name<'db>) -> Option<AttrDef> {
    model_index(db, project).attribute(entity.text(db), name.text(db)).cloned()
}

#[salsa::tracked(returns(ref))]
fn attribute_names<'db>(db: &'db dyn Db, project: ProjectInput, entity: Name<'db>) -> Vec<String> {
    model_index(db, project).attribute_names(entity.text(db)).into_iter().map(str::to_owned).collect()
}

#[salsa::tracked(returns(copy))]
fn is_subtype<'db>(db: &'db dyn Db, project: ProjectInput, sub: Name<'db>, sup: Name<'db>) -> bool {
    model_index(db, project).is_subtype(sub.text(db), sup.text(db))
}

#[salsa::tracked(returns(copy))]
fn is_incomplete<'db>(db: &'db dyn Db, project: ProjectInput, entity: Name<'db>) -> bool {
    model_index(db, project).is_incomplete(entity.text(db))
}

#[salsa::tracked(returns(ref))]
fn indexes<'db>(db: &'db dyn Db, project: ProjectInput, entity: Name<'db>) -> Vec<Vec<String>> {
    model_index(db, project).indexes(entity.text(db)).into_iter().map(<[String]>::to_vec).collect()
}

#[salsa::tracked(returns(ref))]
fn invalid_indexes<'db>(db: &'db dyn Db, project: ProjectInput, entity: Name<'db>) -> Vec<Vec<String>> {
    let index = model_index(db, project);
    index.ancestry(entity.text(db)).iter().flat_map(|d: &&EntityDef| d.invalid_indexes.iter().cloned()).collect()
}

#[salsa::tracked(returns(ref))]
fn ancestors<'db>(db: &'db dyn Db, project: ProjectInput, entity: Name<'db>) -> Vec<String> {
    model_index(db, project).ancestry(entity.text(db)).iter().skip(1).map(|d| d.fqn.clone()).collect()
}

#[salsa::tracked(returns(copy))]
fn may_be_implemented<'db>(db: &'db dyn Db, project: ProjectInput, entity: Name<'db>) -> bool {
    model_index(db, project).may_be_implemented(entity.text(db))
}

#[salsa::tracked(returns(copy))]
fn attribute_in_family<'db>(db: &'db dyn Db, project: ProjectInput, entity: Name<'db>, name: Name<'db>) -> bool {
    model_index(db, project).attribute_in_family(entity.text(db), name.text(db))
}

#[salsa::tracked(returns(copy))]
fn resource_has_identity<'db>(db: &'db dyn Db, project: ProjectInput, entity: Name<'db>) -> bool {
    model_index(db, project).resource_has_identity(entity.text(db))
}

#[salsa::tracked(returns(copy))]
fn has_default<'db>(db: &'db dyn Db, project: ProjectInput, entity: Name<'db>, name: Name<'db>) -> bool {
    model_index(db, project).has_default(entity.text(db), name.text(db))
}

#[salsa::tracked(returns(ref))]
fn constructor_candidates<'db>(
    db: &'db dyn Db,
    project: ProjectInput,
    name: Name<'db>,
    target: Name<'db>,
) -> Vec<String> {
    model_index(db, project)
        .constructor_candidates(name.text(db), target.text(db))
        .into_iter()
        .map(str::to_owned)
        .collect()
}

#[salsa::tracked(returns(copy))]
fn plugin<'db>(db: &'db dyn Db, project: ProjectInput, fqn: Name<'db>) -> Option<&'static PluginSignature> {
    model_index(db, project).plugin(fqn.text(db))
}

#[salsa::tracked(returns(ref))]
fn python_plugins_of<'db>(db: &'db dyn Db, project: ProjectInput, module: Name<'db>) -> Vec<String> {
    let prefix = format!("{}::", module.text(db));
    model_index(db, project).python_plugins.keys().filter(|fqn| fqn.starts_with(&prefix)).cloned().collect()
}

#[salsa::tracked(returns(ref))]
fn resource_declarations<'db>(db: &'db dyn Db, project: ProjectInput, entity: Name<'db>) -> Vec<String> {
    model_index(db, project).resource_declarations.get(entity.text(db)).cloned().unwrap_or_default()
}

#[salsa::tracked(returns(ref))]
fn implementation_for<'db>(db: &'db dyn Db, project: ProjectInput, implementation: Name<'db>) -> Option<String> {
    model_index(db, project).implementations.get(implementation.text(db)).cloned()
}

#[salsa::tracked(returns(copy))]
fn has_variable<'db>(db: &'db dyn Db, project: ProjectInput, namespace: Name<'db>, name: Name<'db>) -> bool {
    model_index(db, project).has_variable(namespace.text(db), name.text(db))
}

#[salsa::tracked(returns(ref))]
fn available(db: &dyn Db, project: ProjectInput) -> Vec<String> {
    model_index(db, project).available.iter().cloned().collect()
}

#[salsa::tracked(returns(copy))]
fn type_in<'db>(db: &'db dyn Db, project: ProjectInput, namespace: Name<'db>, name: Name<'db>) -> Option<TypeKind> {
    model_index(db, project).type_in(namespace.text(db), name.text(db))
}

#[salsa::tracked(returns(copy))]
fn has_namespace<'db>(db: &'db dyn Db, project: ProjectInput, namespace: Name<'db>) -> bool {
    model_index(db, project).has_namespace(namespace.text(db))
}

#[salsa::tracked(returns(ref))]
fn type_names<'db>(db: &'db dyn Db, project: ProjectInput, namespace: Name<'db>) -> Vec<String> {
    model_index(db, project).type_names(namespace.text(db)).map(str::to_owned).collect()
}

#[salsa::tracked(returns(ref))]
fn typedef<'db>(db: &'db dyn Db, project: ProjectInput, fqn: Name<'db>) -> Option<TypedefDef> {
    model_index(db, project).typedefs.get(fqn.text(db)).cloned()
}
