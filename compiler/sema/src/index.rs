//! The project's type table: every entity (with its parents, attributes, relations and
//! indexes), typedef, implementation and plugin of the loaded namespaces, by fully qualified
//! name. It is built from item summaries only, so edits inside statement blocks leave it equal
//! and nothing that depends on it reruns.
//!
//! Building never fails: names that do not resolve are left out, and the file that wrote them
//! reports the error with its span (`declarations.rs`).

use indexmap::{IndexMap, IndexSet};
use modelc_db::{Bounds, Db, DefaultSummary, FreedElsewhere, ItemSummary, ProjectInput, ResourceSummary, item_summary};
use modelc_stdlib::PluginSignature;
use modelc_syntax::ast::{self, Constraint};

use crate::hierarchy::Hierarchy;
use crate::loading::loaded_modules;
use crate::resolve::FileScope;
use crate::types::{BaseType, ValueType};

/// The kinds of definition that share a namespace's type table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypeKind {
    Entity,
    Typedef,
    Implementation,
    Plugin,
}

impl TypeKind {
    pub fn describe(self) -> &'static str {
        match self {
            TypeKind::Entity => "an entity",
            TypeKind::Typedef => "a typedef",
            TypeKind::Implementation => "an implementation",
            TypeKind::Plugin => "a plugin",
        }
    }
}

/// The definitions of one namespace.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NamespaceTable {
    pub types: IndexMap<String, TypeKind>,
    /// Variables its top level assigns.
    pub variables: IndexSet<String>,
}

/// Where an attribute was declared: which file, which declaration, so that only the first
/// declaration of a name counts and later ones are reported as duplicates.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Origin {
    /// The `ordinal`th attribute of its owner (the entity that declares it).
    Attribute { ordinal: usize },
    /// An end of the `ordinal`th relation in `namespace`'s file; `left` tells which end.
    Relation { namespace: String, ordinal: usize, left: bool },
}

/// An attribute or relation end of an entity.
#[derive(Debug, Clone, PartialEq)]
pub struct AttrDef {
    pub name: String,
    pub kind: AttrKind,
    /// The entity that declares it (fully qualified).
    pub owner: String,
    pub origin: Origin,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AttrKind {
    Value {
        ty: ValueType,
        default: DefaultSummary,
    },
    /// `target` is empty when the other end's entity did not resolve.
    Relation {
        target: String,
        bounds: Bounds,
        inverse: Option<String>,
    },
}

impl AttrDef {
    /// An attribute that holds one value: any plain attribute (lists included), `[1]` and `[0:1]`.
    pub fn is_single_valued(&self) -> bool {
        match &self.kind {
            AttrKind::Value { .. } => true,
            AttrKind::Relation { bounds, .. } => bounds.is_single(),
        }
    }

    pub fn describe_type(&self) -> String {
        match &self.kind {
            AttrKind::Value { ty, .. } => ty.to_string(),
            AttrKind::Relation { target, .. } => target.clone(),
        }
    }
}

/// An entity.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityDef {
    pub fqn: String,
    pub namespace: String,
    /// Resolved parents, in declaration order (`std::Entity` when none are written).
    pub parents: Vec<String>,
    /// Own attributes and relation ends, first declaration of each name.
    pub attributes: IndexMap<String, AttrDef>,
    /// Own indexes (inherited ones are found through the parents), attributes sorted.
    pub indexes: Vec<Vec<String>>,
    /// The same indexes as written: attributes in written order, indexes in load order (a
    /// resource's default id is its first index, written order).
    pub written_indexes: Vec<Vec<String>>,
    /// Indexes declared with an attribute that cannot be indexed (reported by their file).
    pub invalid_indexes: Vec<Vec<String>>,
    /// A written parent did not resolve (an error reported where it is written): what the
    /// entity has is not fully known, so missing attributes are not reported.
    pub incomplete: bool,
}

/// A typedef.
#[derive(Debug, Clone, PartialEq)]
pub struct TypedefDef {
    pub fqn: String,
    pub namespace: String,
    /// The primitive or typedef it refines.
    pub base: BaseType,
    /// The constraint, parsed again from its source text (its spans are not the file's).
    pub(crate) constraint: Option<Constraint>,
}

/// The whole project's declarations.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelIndex {
    pub namespaces: IndexMap<String, NamespaceTable>,
    /// Every namespace the project could load, loaded or not (for "missing import" errors).
    pub available: IndexSet<String>,
    pub entities: IndexMap<String, EntityDef>,
    pub typedefs: IndexMap<String, TypedefDef>,
    /// Implementation name → the entity it is for.
    pub implementations: IndexMap<String, String>,
    /// Entity → what its `implement` statements use: (some named implementation, `parents`).
    /// An entity not in it has no `implement` statement.
    pub implemented: IndexMap<String, (bool, bool)>,
    /// Direct subtypes of each entity.
    pub children: IndexMap<String, Vec<String>>,
    /// Entity → the namespaces that declare it a resource (`resource Entity(...)`), in load
    /// order; more than one is an error reported by the later files.
    pub resource_declarations: IndexMap<String, Vec<String>>,
    /// Entity → its resource declaration (the first one, in load order), then the ones modelc
    /// ships for the public modules' entities (`modelc_stdlib::MODULE_SHAPES`) that the model
    /// does not declare itself, then the ones modules declare in Python (`@resource` classes).
    /// Names in it are attribute names of the entity.
    pub resources: IndexMap<String, ResourceSummary>,
    /// Some `implement` statement names no entity the index knows.
    pub implements_unresolved: bool,
    /// The plugins loaded modules define in Python, by fully qualified name.
    pub python_plugins: IndexMap<String, &'static PluginSignature>,
    /// Subtype and incompleteness questions, answered without walking the parents.
    hierarchy: Hierarchy,
    /// Attribute name → the positions (in `entities`) of the entities that declare it.
    owners: IndexMap<String, Vec<usize>>,
}

/// The questions name resolution and value checks ask of the declarations: answered by the
/// whole type table ([`ModelIndex`]), or one salsa query at a time for a file's check
/// ([`crate::signatures::Signatures`]), so that the rules using them are written once.
pub trait Declarations {
    /// What `name` is in `namespace`, if anything.
    fn type_in(&self, namespace: &str, name: &str) -> Option<TypeKind>;
    /// Whether `namespace` exists (loaded, or loadable: "missing import" rather than unknown).
    fn has_namespace(&self, namespace: &str) -> bool;
    /// Every type name of `namespace` (for "did you mean", on the error path only).
    fn type_names_of(&self, namespace: &str) -> Vec<String>;
    /// A typedef, by fully qualified name.
    fn typedef(&self, fqn: &str) -> Option<&TypedefDef>;
}

impl Declarations for ModelIndex {
    fn type_in(&self, namespace: &str, name: &str) -> Option<TypeKind> {
        ModelIndex::type_in(self, namespace, name)
    }

    fn has_namespace(&self, namespace: &str) -> bool {
        ModelIndex::has_namespace(self, namespace)
    }

    fn type_names_of(&self, namespace: &str) -> Vec<String> {
        self.type_names(namespace).map(str::to_owned).collect()
    }

    fn typedef(&self, fqn: &str) -> Option<&TypedefDef> {
        self.typedefs.get(fqn)
    }
}

/// The type table of a project.
/// Freed on a thread of its own ([`FreedElsewhere`]): the previous table is freed when the next
/// edit is set, which would otherwise delay that edit's check by milliseconds.
#[salsa::tracked(returns(ref))]
pub fn model_index(db: &dyn Db, project: ProjectInput) -> FreedElsewhere<ModelIndex> {
    let loaded = loaded_modules(db, project);
    let summaries: Vec<(&str, &ItemSummary)> =
        loaded.files.iter().map(|(ns, file)| (ns.as_str(), item_summary(db, *file))).collect();
    let mut index = ModelIndex::default();
    index.available.extend(project.modules(db).iter().map(|(ns, _)| ns.clone()));
    index.build(&summaries, project.python_resources(db), *project.python_shapes_first(db));
    index.add_python_plugins(project.python_plugins(db));
    FreedElsewhere::new(index)
}

impl ModelIndex {
    fn build(&mut self, summaries: &[(&str, &ItemSummary)], python_resources: &[ResourceSummary], python_first: bool) {
        // 1. Every name, so that declarations can refer to each other in any order.
        for (ns, summary) in summaries {
            let table = self.namespaces.entry((*ns).to_owned()).or_default();
            for entity in &summary.entities {
                table.types.entry(entity.name.clone()).or_insert(TypeKind::Entity);
            }
            for typedef in &summary.typedefs {
                table.types.entry(typedef.name.clone()).or_insert(TypeKind::Typedef);
            }
            for (name, _) in &summary.implementations {
                table.types.entry(name.clone()).or_insert(TypeKind::Implementation);
            }
            table.variables.extend(summary.variables.iter().cloned());
        }
        let std_table = self.namespaces.entry("std".to_owned()).or_default();
        for sig in modelc_stdlib::signatures::SIGNATURES {
            std_table.types.entry(sig.name.to_owned()).or_insert(TypeKind::Plugin);
        }
        // 2. Entities, typedefs and implementations (the tables sized once: a large project has
        // thousands of entities, and growing the tables step by step copied them again and again).
        self.entities.reserve(summaries.iter().map(|(_, s)| s.entities.len()).sum());
        self.typedefs.reserve(summaries.iter().map(|(_, s)| s.typedefs.len()).sum());
        self.implementations.reserve(summaries.iter().map(|(_, s)| s.implementations.len()).sum());
        for (ns, summary) in summaries {
            let scope = FileScope { namespace: ns, imports: &summary.imports };
            for entity in &summary.entities {
                let fqn = format!("{ns}::{}", entity.name);
                if self.entities.contains_key(&fqn) {
                    continue;
                }
                let mut parents: Vec<String> = Vec::new();
                let mut incomplete = false;
                for parent in &entity.parents {
                    match scope.resolve_type(self, parent) {
                        Ok(r) if r.kind == TypeKind::Entity => {
                            if !parents.contains(&r.fqn) {
                                parents.push(r.fqn);
                            }
                        }
                        _ => incomplete = true,
                    }
                }
                // Also when no written parent resolved: whatever they were, they were entities.
                if parents.is_empty() && fqn != "std::Entity" {
                    parents.push("std::Entity".to_owned());
                }
                let mut attributes = IndexMap::with_capacity(entity.attributes.len());
                for (ordinal, attr) in entity.attributes.iter().enumerate() {
                    let ty = ValueType {
                        base: self.resolve_value_base(&scope, &attr.base),
                        list: attr.list,
                        nullable: attr.nullable,
                    };
                    attributes.entry(attr.name.clone()).or_insert_with(|| AttrDef {
                        name: attr.name.clone(),
                        kind: AttrKind::Value { ty, default: attr.default },
                        owner: fqn.clone(),
                        origin: Origin::Attribute { ordinal },
                    });
                }
                self.entities.insert(
                    fqn.clone(),
                    EntityDef {
                        fqn,
                        namespace: (*ns).to_owned(),
                        parents,
                        attributes,
                        indexes: Vec::new(),
                        written_indexes: Vec::new(),
                        invalid_indexes: Vec::new(),
                        incomplete,
                    },
                );
            }
            for typedef in &summary.typedefs {
                let fqn = format!("{ns}::{}", typedef.name);
                if self.typedefs.contains_key(&fqn) {
                    continue;
                }
                let base = self.resolve_value_base(&scope, &typedef.base);
                self.typedefs.insert(
                    fqn.clone(),
                    TypedefDef {
                        fqn,
                        namespace: (*ns).to_owned(),
                        base,
                        constraint: parse_constraint(&typedef.constraint),
                    },
                );
            }
            for (name, entity) in &summary.implementations {
                let fqn = format!("{ns}::{name}");
                if let Ok(r) = scope.resolve_type(self, entity)
                    && r.kind == TypeKind::Entity
                {
                    self.implementations.entry(fqn).or_insert(r.fqn);
                }
            }
        }
        self.index_hierarchy();
        for (ns, summary) in summaries {
            let scope = FileScope { namespace: ns, imports: &summary.imports };
            for (entity, uses) in &summary.implements {
                // An `implement` of a name that does not resolve is reported by its file; the
                // entity it meant may be any, so nothing is concluded from it.
                let Ok(r) = scope.resolve_type(self, entity) else {
                    self.implements_unresolved = true;
                    continue;
                };
                let entry = self.implemented.entry(r.fqn).or_default();
                entry.0 |= uses.iter().any(|u| u != "parents");
                entry.1 |= uses.iter().any(|u| u == "parents");
            }
        }
        for entity in self.entities.values() {
            for parent in &entity.parents {
                push_to(&mut self.children, parent, entity.fqn.clone());
            }
        }
        // 3. Relations and indexes, which may name entities of any loaded namespace.
        for (ns, summary) in summaries {
            let scope = FileScope { namespace: ns, imports: &summary.imports };
            for (ordinal, relation) in summary.relations.iter().enumerate() {
                let resolve = |written: &str| {
                    scope.resolve_type(self, written).ok().filter(|r| r.kind == TypeKind::Entity).map(|r| r.fqn)
                };
                // An end whose other side did not resolve (reported by its file) still exists,
                // with an unknown target, so that uses of it are not reported as well.
                let (left, right) = (resolve(&relation.left.entity), resolve(&relation.right_entity));
                let (left, right) = match (left, right) {
                    (None, None) => continue,
                    (l, r) => (l.unwrap_or_default(), r.unwrap_or_default()),
                };
                let right_attr = relation.right.as_ref().map(|(name, _)| name.clone());
                self.add_relation_end(
                    &left,
                    &relation.left.attribute,
                    AttrKind::Relation { target: right.clone(), bounds: relation.left.bounds, inverse: right_attr },
                    Origin::Relation { namespace: (*ns).to_owned(), ordinal, left: true },
                );
                if let Some((attribute, bounds)) = &relation.right {
                    self.add_relation_end(
                        &right,
                        attribute,
                        AttrKind::Relation {
                            target: left.clone(),
                            bounds: *bounds,
                            inverse: Some(relation.left.attribute.clone()),
                        },
                        Origin::Relation { namespace: (*ns).to_owned(), ordinal, left: false },
                    );
                }
            }
        }
        for (ns, summary) in summaries {
            let scope = FileScope { namespace: ns, imports: &summary.imports };
            for declaration in &summary.resources {
                if let Ok(r) = scope.resolve_type(self, &declaration.entity) {
                    self.resource_declarations.entry(r.fqn.clone()).or_default().push(ns.to_string());
                    self.resources.entry(r.fqn).or_insert_with(|| declaration.clone());
                }
            }
        }
        let (first, second) = if python_first {
            (python_resources, builtin_resources())
        } else {
            (builtin_resources(), python_resources)
        };
        for declaration in first.iter().chain(second) {
            if self.entities.contains_key(&declaration.entity) {
                self.resources.entry(declaration.entity.clone()).or_insert_with(|| declaration.clone());
            }
        }
        // 4. Indexes, once every relation end exists. Invalid ones (reported by their file)
        // are left out, so that constructors are not also told to set what cannot be indexed.
        let mut known_indexes: IndexSet<(String, Vec<String>)> = IndexSet::new();
        for (ns, summary) in summaries {
            let scope = FileScope { namespace: ns, imports: &summary.imports };
            for (entity, attributes) in &summary.indexes {
                let Ok(r) = scope.resolve_type(self, entity) else { continue };
                let valid = attributes.iter().all(|a| {
                    self.attribute(&r.fqn, a).is_some_and(|def| match &def.kind {
                        // A bare `list` or `dict` attribute holds one value; a typed list does not.
                        AttrKind::Value { ty, .. } => !ty.list,
                        AttrKind::Relation { bounds, .. } => bounds.is_single() && !bounds.is_optional(),
                    })
                });
                if !valid {
                    // Kept aside, so that lookups on it are not reported as well.
                    if let Some(def) = self.entities.get_mut(&r.fqn) {
                        def.invalid_indexes.push(attributes.clone());
                    }
                    continue;
                }
                if let Some(def) = self.entities.get_mut(&r.fqn) {
                    let mut sorted = attributes.clone();
                    sorted.sort();
                    sorted.dedup();
                    // A set of each entity's indexes while building: one entity with thousands
                    // of them made this quadratic.
                    if known_indexes.insert((r.fqn.clone(), sorted.clone())) {
                        def.indexes.push(sorted);
                    }
                    def.written_indexes.push(attributes.clone());
                }
            }
        }
    }

    fn add_relation_end(&mut self, entity: &str, name: &str, kind: AttrKind, origin: Origin) {
        if entity.is_empty() {
            return;
        }
        // A name the entity or a parent already has is a duplicate, reported by the file.
        if self.attribute(entity, name).is_some() {
            return;
        }
        if let Some((position, _, def)) = self.entities.get_full_mut(entity) {
            def.attributes
                .insert(name.to_owned(), AttrDef { name: name.to_owned(), kind, owner: entity.to_owned(), origin });
            push_to(&mut self.owners, name, position);
        }
    }

    /// Once every entity is known: the hierarchy's numbering and who declares each attribute.
    fn index_hierarchy(&mut self) {
        let parents: Vec<Vec<usize>> = self
            .entities
            .values()
            .map(|e| e.parents.iter().filter_map(|p| self.entities.get_index_of(p)).collect())
            .collect();
        let incomplete: Vec<bool> = self.entities.values().map(|e| e.incomplete).collect();
        self.hierarchy = Hierarchy::new(&parents, &incomplete);
        for (position, entity) in self.entities.values().enumerate() {
            for name in entity.attributes.keys() {
                push_to(&mut self.owners, name, position);
            }
        }
    }

    fn resolve_value_base(&self, scope: &FileScope<'_>, written: &str) -> BaseType {
        if let Some(primitive) = BaseType::primitive(written) {
            return primitive;
        }
        match scope.resolve_type(self, written) {
            Ok(r) if r.kind == TypeKind::Typedef => BaseType::Typedef(r.fqn),
            Ok(r) if r.kind == TypeKind::Entity => BaseType::Entity(r.fqn),
            _ => BaseType::Unresolved,
        }
    }

    /// Whether constructing `entity` can find an implementation: it has an `implement`
    /// statement with an implementation, or one `using parents` and a parent that can. (A `when`
    /// condition may still rule them out when the model runs.)
    pub fn may_be_implemented(&self, entity: &str) -> bool {
        if self.implements_unresolved || self.is_incomplete(entity) {
            return true;
        }
        // Up through the entities implemented `using parents`, each visited once (a recursion
        // would be as deep as the hierarchy, and follow every path of a diamond).
        let mut seen: IndexSet<&str> = IndexSet::new();
        let mut stack = vec![entity];
        while let Some(name) = stack.pop() {
            if !seen.insert(name) {
                continue;
            }
            match self.implemented.get(name) {
                Some((true, _)) => return true,
                Some((false, true)) => {
                    if let Some(e) = self.entities.get(name) {
                        stack.extend(e.parents.iter().map(String::as_str));
                    }
                }
                _ => {}
            }
        }
        false
    }

    /// Whether instances of `entity`, a resource type, can be identified: an ancestor's resource
    /// declaration names an `id` (a module's Python class always does; one modelc cannot read
    /// is reported as such, E0409), or the entity has an index (own or inherited). Without
    /// either they are not exported (W0403).
    pub fn resource_has_identity(&self, entity: &str) -> bool {
        self.is_incomplete(entity)
            || self
                .ancestry(entity)
                .iter()
                .any(|d| self.resources.get(&d.fqn).is_some_and(|r| r.id.is_some() || r.python.is_some()))
            || !self.indexes(entity).is_empty()
    }

    pub fn has_namespace(&self, namespace: &str) -> bool {
        self.available.contains(namespace) || self.namespaces.contains_key(namespace)
    }

    pub fn type_in(&self, namespace: &str, name: &str) -> Option<TypeKind> {
        self.namespaces.get(namespace)?.types.get(name).copied()
    }

    pub fn type_names(&self, namespace: &str) -> impl Iterator<Item = &str> {
        self.namespaces.get(namespace).into_iter().flat_map(|t| t.types.keys().map(String::as_str))
    }

    pub fn has_variable(&self, namespace: &str, name: &str) -> bool {
        self.namespaces.get(namespace).is_some_and(|t| t.variables.contains(name))
    }

    pub fn plugin(&self, fqn: &str) -> Option<&'static PluginSignature> {
        match fqn.strip_prefix("std::") {
            Some(name) => modelc_stdlib::signatures::lookup(name),
            None => self.python_plugins.get(fqn).copied(),
        }
    }

    /// The Python plugins of the namespaces the model loads: a name the namespace's `.cf` files
    /// already give a type keeps that meaning.
    fn add_python_plugins(&mut self, plugins: &[(String, &'static [PluginSignature])]) {
        for (namespace, signatures) in plugins {
            let Some(table) = self.namespaces.get_mut(namespace) else { continue };
            for signature in *signatures {
                if let indexmap::map::Entry::Vacant(slot) = table.types.entry(signature.name.to_owned()) {
                    slot.insert(TypeKind::Plugin);
                    self.python_plugins.insert(signature.fqn(), signature);
                }
            }
        }
    }

    /// The entity and its ancestors, nearest first, each once (cycles are cut).
    pub fn ancestry(&self, entity: &str) -> Vec<&EntityDef> {
        self.ancestors(entity).collect()
    }

    /// The resource declaration that identifies `entity`'s resources: the nearest of its
    /// ancestry (itself first) that gives an `id`, with its position in the ancestry. Its
    /// entity is the type the resources are exported under.
    pub fn identifying_declaration(&self, entity: &str) -> Option<(usize, &EntityDef, &ResourceSummary)> {
        self.ancestors(entity)
            .enumerate()
            .find_map(|(at, def)| self.resources.get(&def.fqn).filter(|r| r.id.is_some()).map(|r| (at, def, r)))
    }

    /// Where `entity`'s resources get their agent: the nearest declaration of its ancestry that
    /// says; `None` means [`crate::resources::DEFAULT_AGENT`].
    pub fn declared_agent(&self, entity: &str) -> Option<&modelc_db::AgentSummary> {
        self.ancestors(entity).find_map(|def| self.resources.get(&def.fqn)?.agent.as_ref())
    }

    /// [`ModelIndex::ancestry`], one at a time, so that a search can stop early.
    fn ancestors<'s>(&'s self, entity: &str) -> impl Iterator<Item = &'s EntityDef> + use<'s> {
        let mut seen: IndexSet<&str> = IndexSet::new();
        let mut stack: Vec<&'s str> =
            self.entities.get_key_value(entity).map(|(k, _)| k.as_str()).into_iter().collect();
        std::iter::from_fn(move || {
            while let Some(name) = stack.pop() {
                let Some(def) = self.entities.get(name) else { continue };
                if !seen.insert(def.fqn.as_str()) {
                    continue;
                }
                // Left-most parent first: push in reverse.
                stack.extend(def.parents.iter().rev().map(String::as_str));
                return Some(def);
            }
            None
        })
    }

    /// An attribute of `entity`, own or inherited (own first, then parents left to right).
    pub fn attribute(&self, entity: &str, name: &str) -> Option<&AttrDef> {
        self.nearest(entity, name, Some)
    }

    /// The first declaration of `name` along `entity`'s ancestry (own first, then parents left
    /// to right) for which `pick` gives an answer, and that answer.
    fn nearest<'s, T>(&'s self, entity: &str, name: &str, pick: impl Fn(&'s AttrDef) -> Option<T>) -> Option<T> {
        let (position, _, def) = self.entities.get_full(entity)?;
        if let Some(answer) = def.attributes.get(name).and_then(&pick) {
            return Some(answer);
        }
        let walk = || self.ancestors(entity).filter_map(|d| d.attributes.get(name)).find_map(&pick);
        // Few entities declare a name: the one of them that is an ancestor says where it comes
        // from without walking a deep hierarchy. With several, the walk decides which is first.
        const FEW: usize = 8;
        let owners = self.owners.get(name)?;
        if owners.len() > FEW {
            return walk();
        }
        let mut found = None;
        for &owner in owners.iter().filter(|&&o| o != position) {
            match self.hierarchy.is_subtype(position, owner) {
                Some(false) => {}
                Some(true) if found.is_none() => found = Some(owner),
                // Several, or a cycle.
                _ => return walk(),
            }
        }
        found.and_then(|owner| self.entities.get_index(owner)?.1.attributes.get(name)).and_then(pick)
    }

    /// Every attribute name of `entity`, own and inherited.
    pub fn attribute_names(&self, entity: &str) -> IndexSet<&str> {
        self.ancestry(entity).into_iter().flat_map(|d| d.attributes.keys().map(String::as_str)).collect()
    }

    /// Whether `sub` is `sup` or one of its descendants.
    pub fn is_subtype(&self, sub: &str, sup: &str) -> bool {
        let (Some(a), Some(b)) = (self.entities.get_index_of(sub), self.entities.get_index_of(sup)) else {
            return false;
        };
        match self.hierarchy.is_subtype(a, b) {
            Some(answer) => answer,
            None => self.ancestors(sub).any(|d| d.fqn == sup),
        }
    }

    /// The entity and all its descendants.
    /// The entities an unqualified constructor `name` may mean as the value of a relation typed
    /// `target` when `name` does not resolve where it is written (spec §4.5): `target` and its
    /// subtypes whose simple name is `name`, sorted. One is the entity; several are ambiguous.
    pub fn constructor_candidates<'s>(&'s self, name: &str, target: &'s str) -> Vec<&'s str> {
        let mut candidates: Vec<&str> =
            self.subtypes(target).into_iter().filter(|e| e.rsplit("::").next() == Some(name)).collect();
        candidates.sort_unstable();
        candidates
    }

    pub fn subtypes<'s>(&'s self, entity: &'s str) -> Vec<&'s str> {
        let mut seen: IndexSet<&str> = IndexSet::new();
        let mut stack = vec![entity];
        while let Some(name) = stack.pop() {
            if !seen.insert(name) {
                continue;
            }
            if let Some(children) = self.children.get(name) {
                stack.extend(children.iter().map(String::as_str));
            }
        }
        seen.into_iter().collect()
    }

    /// Whether `entity` or one of its subtypes has an attribute `name` (reading it through a
    /// value typed as `entity` may then succeed), or may have it: an entity with a parent that
    /// did not resolve may have any attribute.
    pub fn attribute_in_family(&self, entity: &str, name: &str) -> bool {
        self.subtypes(entity).iter().any(|e| self.attribute(e, name).is_some() || self.is_incomplete(e))
    }

    /// Whether some ancestor of `entity` (or itself) has a parent that did not resolve.
    pub fn is_incomplete(&self, entity: &str) -> bool {
        let known = self.entities.get_index_of(entity).and_then(|e| self.hierarchy.is_incomplete(e));
        known.unwrap_or_else(|| self.ancestors(entity).any(|d| d.incomplete))
    }

    /// The indexes that constrain `entity`: its own and its ancestors'.
    pub fn indexes(&self, entity: &str) -> Vec<&[String]> {
        let mut out: IndexSet<&[String]> = IndexSet::new();
        for def in self.ancestors(entity) {
            out.extend(def.indexes.iter().map(Vec::as_slice));
        }
        out.into_iter().collect()
    }

    /// Whether `entity` has a default for `name` (own declarations win, then parents left to
    /// right; `= undef` removes an inherited default).
    pub fn has_default(&self, entity: &str, name: &str) -> bool {
        // The nearest declaration with a default or `= undef` decides.
        let decides = |attr: &AttrDef| match &attr.kind {
            AttrKind::Value { default: DefaultSummary::Value, .. } => Some(true),
            AttrKind::Value { default: DefaultSummary::Undef, .. } => Some(false),
            AttrKind::Value { default: DefaultSummary::None, .. } | AttrKind::Relation { .. } => None,
        };
        self.nearest(entity, name, decides).unwrap_or(false)
    }
}

/// Adds `value` to `key`'s list, copying the key only the first time it is seen (the type table
/// is built on every declaration edit; a copy per attribute was most of its allocations).
fn push_to<V>(map: &mut IndexMap<String, Vec<V>>, key: &str, value: V) {
    match map.get_mut(key) {
        Some(values) => values.push(value),
        None => {
            map.insert(key.to_owned(), vec![value]);
        }
    }
}

/// Parses a typedef constraint from its source text.
fn parse_constraint(source: &str) -> Option<Constraint> {
    let text = format!("typedef t as int matching {source}\n");
    let parse = modelc_syntax::parse(modelc_diagnostics::FileId(u32::MAX), &text);
    if !parse.diagnostics.is_empty() {
        return None;
    }
    parse.file.items.into_iter().find_map(|item| match item {
        ast::Item::Typedef(t) => Some(t.constraint),
        _ => None,
    })
}

/// The resource declarations modelc ships for the public modules whose resources the reference
/// defines in Python (`fs`, `exec`), entity names in full; parsed once.
pub(crate) fn builtin_resources() -> &'static [ResourceSummary] {
    static PARSED: std::sync::OnceLock<Vec<ResourceSummary>> = std::sync::OnceLock::new();
    PARSED.get_or_init(|| {
        let parse = modelc_syntax::parse(modelc_diagnostics::FileId(u32::MAX), modelc_stdlib::MODULE_SHAPES);
        parse
            .file
            .items
            .iter()
            .filter_map(|item| match item {
                modelc_syntax::ast::Item::Resource(decl) => Some(ResourceSummary::of(decl)),
                _ => None,
            })
            .collect()
    })
}
