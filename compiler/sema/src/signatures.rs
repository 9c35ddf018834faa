//! What one file's check reads of the project's declarations, one salsa query per item: the
//! signature of an entity (its attributes and relation ends, own and inherited, its ancestors,
//! indexes, whether it can be implemented and identified), what a name of a namespace is, a
//! typedef, a plugin's signature. A file's diagnostics then depend on exactly the items its
//! check read. When a declaration changes, the type table is built again and each item's
//! signature taken from it again; a signature that comes out equal keeps its revision (salsa
//! backdates it), so only the files that read a changed item are checked again: a docstring
//! or an implementation body re-checks no other file, a new attribute of one entity re-checks
//! the files that read that entity, renaming an entity nothing uses re-checks none.
//!
//! The answers come from [`ModelIndex`], where the rules of declarations live; this module
//! only cuts them into items. Within one file's check each item is fetched from the database
//! once (a local cache), so a large file's thousands of lookups cost hash-map reads.

use std::cell::RefCell;

use indexmap::IndexMap;
use modelc_db::{Db, ProjectInput};
use modelc_stdlib::PluginSignature;
use rustc_hash::FxHashMap;

use crate::index::{AttrDef, Declarations, TypeKind, TypedefDef, model_index};

/// A name an item is looked up by (a namespace, an entity, a typedef, …), interned.
#[salsa::interned(debug)]
pub struct Name<'db> {
    #[returns(ref)]
    pub text: String,
}

/// An entity as the checks of other files see it. Two signatures are equal when every answer
/// a check can get about the entity is the same.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EntitySignature {
    /// Whether the entity exists.
    pub exists: bool,
    /// Every attribute and relation end, own and inherited, each name with its nearest
    /// declaration ([`ModelIndex::attribute`]), in the order of [`ModelIndex::attribute_names`].
    pub attributes: IndexMap<String, AttrDef>,
    /// The names with a default, by the nearest declaration that decides
    /// ([`ModelIndex::has_default`]).
    pub defaults: Vec<String>,
    /// Its ancestors, itself excluded, nearest first.
    pub ancestors: Vec<String>,
    /// Some ancestor (or itself) has a parent that did not resolve.
    pub incomplete: bool,
    /// The indexes that constrain it: its own and its ancestors'.
    pub indexes: Vec<Vec<String>>,
    /// The indexes of its ancestry declared with an attribute that cannot be indexed.
    pub invalid_indexes: Vec<Vec<String>>,
    pub may_be_implemented: bool,
    pub resource_has_identity: bool,
    /// The namespaces that declare it a resource (`resource Entity(...)`), in load order.
    pub resource_declarations: Vec<String>,
}

/// An attribute some of an entity's subtypes have (read through a value of the entity, it is
/// found for their instances only).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FamilyAttribute {
    /// The subtypes that have it, sorted.
    pub having: Vec<String>,
    /// Some entity of the family has a parent that did not resolve: it may have any attribute.
    pub incomplete: bool,
}

/// The declarations as one file's check reads them.
pub struct Signatures<'db> {
    db: &'db dyn Db,
    project: ProjectInput,
    entities: RefCell<FxHashMap<String, &'db EntitySignature>>,
    types: RefCell<FxHashMap<(String, String), Option<TypeKind>>>,
}

impl<'db> Signatures<'db> {
    pub fn new(db: &'db dyn Db, project: ProjectInput) -> Signatures<'db> {
        Signatures { db, project, entities: RefCell::default(), types: RefCell::default() }
    }

    fn name(&self, text: &str) -> Name<'db> {
        Name::new(self.db, text)
    }

    /// An entity's signature (an entity that does not exist has an empty one).
    pub fn entity(&self, fqn: &str) -> &'db EntitySignature {
        if let Some(found) = self.entities.borrow().get(fqn) {
            return found;
        }
        let found = entity_signature(self.db, self.project, self.name(fqn));
        self.entities.borrow_mut().insert(fqn.to_owned(), found);
        found
    }

    /// An attribute of `entity`, own or inherited ([`ModelIndex::attribute`]).
    pub fn attribute(&self, entity: &str, name: &str) -> Option<&'db AttrDef> {
        self.entity(entity).attributes.get(name)
    }

    /// Every attribute name of `entity`, own and inherited, nearest first.
    pub fn attribute_names(&self, entity: &str) -> impl Iterator<Item = &'db str> + use<'db> {
        self.entity(entity).attributes.keys().map(String::as_str)
    }

    /// Whether `sub` is `sup` or one of its descendants.
    pub fn is_subtype(&self, sub: &str, sup: &str) -> bool {
        let signature = self.entity(sub);
        signature.exists && self.entity(sup).exists && (sub == sup || signature.ancestors.iter().any(|a| a == sup))
    }

    pub fn is_incomplete(&self, entity: &str) -> bool {
        self.entity(entity).incomplete
    }

    pub fn indexes(&self, entity: &str) -> &'db [Vec<String>] {
        &self.entity(entity).indexes
    }

    pub fn invalid_indexes(&self, entity: &str) -> &'db [Vec<String>] {
        &self.entity(entity).invalid_indexes
    }

    pub fn ancestors(&self, entity: &str) -> &'db [String] {
        &self.entity(entity).ancestors
    }

    pub fn may_be_implemented(&self, entity: &str) -> bool {
        self.entity(entity).may_be_implemented
    }

    pub fn resource_has_identity(&self, entity: &str) -> bool {
        self.entity(entity).resource_has_identity
    }

    pub fn has_default(&self, entity: &str, name: &str) -> bool {
        self.entity(entity).defaults.iter().any(|d| d == name)
    }

    pub fn resource_declarations(&self, entity: &str) -> &'db [String] {
        &self.entity(entity).resource_declarations
    }

    /// Whether `entity` or one of its subtypes has (or may have) an attribute `name`
    /// ([`ModelIndex::attribute_in_family`]).
    pub fn attribute_in_family(&self, entity: &str, name: &str) -> bool {
        let family = self.family_attribute(entity, name);
        family.incomplete || !family.having.is_empty()
    }

    /// Which of `entity`'s subtypes have an attribute `name` it does not have itself.
    pub fn family_attribute(&self, entity: &str, name: &str) -> &'db FamilyAttribute {
        family_attribute(self.db, self.project, self.name(entity), self.name(name))
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

    /// The entity an implementation is for.
    pub fn implementation_for(&self, implementation: &str) -> Option<&'db str> {
        implementation_for(self.db, self.project, self.name(implementation)).as_deref()
    }

    pub fn has_variable(&self, namespace: &str, name: &str) -> bool {
        has_variable(self.db, self.project, self.name(namespace), self.name(name))
    }

    /// Whether `namespace` belongs to a module the check started from (the project's own
    /// code, as opposed to the modules it depends on).
    pub fn is_root_module(&self, namespace: &str) -> bool {
        let top = namespace.split("::").next().unwrap_or(namespace);
        is_root_module(self.db, self.project, self.name(top))
    }

    /// Every namespace the project could load.
    pub fn available(&self) -> &'db [String] {
        available(self.db, self.project)
    }
}

impl Declarations for Signatures<'_> {
    fn type_in(&self, namespace: &str, name: &str) -> Option<TypeKind> {
        let key = (namespace.to_owned(), name.to_owned());
        if let Some(found) = self.types.borrow().get(&key) {
            return *found;
        }
        let found = type_in(self.db, self.project, self.name(namespace), self.name(name));
        self.types.borrow_mut().insert(key, found);
        found
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

// One query per item; each reads the type table.

#[salsa::tracked(returns(ref))]
fn entity_signature<'db>(db: &'db dyn Db, project: ProjectInput, fqn: Name<'db>) -> EntitySignature {
    let index = model_index(db, project);
    let fqn = fqn.text(db);
    let Some(own) = index.entities.get(fqn) else { return EntitySignature::default() };
    let ancestry = index.ancestry(fqn);
    let attributes: IndexMap<String, AttrDef> = index
        .attribute_names(fqn)
        .into_iter()
        .filter_map(|name| Some((name.to_owned(), index.attribute(fqn, name)?.clone())))
        .collect();
    let defaults = attributes.keys().filter(|name| index.has_default(fqn, name)).cloned().collect();
    EntitySignature {
        exists: true,
        defaults,
        attributes,
        ancestors: ancestry.iter().skip(1).map(|d| d.fqn.clone()).collect(),
        incomplete: index.is_incomplete(&own.fqn),
        indexes: index.indexes(fqn).into_iter().map(<[String]>::to_vec).collect(),
        invalid_indexes: ancestry.iter().flat_map(|d| d.invalid_indexes.iter().cloned()).collect(),
        may_be_implemented: index.may_be_implemented(fqn),
        resource_has_identity: index.resource_has_identity(fqn),
        resource_declarations: index.resource_declarations.get(fqn).cloned().unwrap_or_default(),
    }
}

#[salsa::tracked(returns(ref))]
fn family_attribute<'db>(
    db: &'db dyn Db,
    project: ProjectInput,
    entity: Name<'db>,
    name: Name<'db>,
) -> FamilyAttribute {
    let index = model_index(db, project);
    let subtypes = index.subtypes(entity.text(db));
    let mut having: Vec<String> =
        subtypes.iter().filter(|e| index.attribute(e, name.text(db)).is_some()).map(|e| (*e).to_owned()).collect();
    having.sort();
    FamilyAttribute { having, incomplete: subtypes.iter().any(|e| index.is_incomplete(e)) }
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

#[salsa::tracked(returns(copy))]
fn is_root_module<'db>(db: &'db dyn Db, project: ProjectInput, top: Name<'db>) -> bool {
    project.roots(db).iter().any(|root| root.split("::").next() == Some(top.text(db).as_str()))
}
