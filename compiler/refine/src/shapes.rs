//! How the instances of each entity become resources: their type name, identity, agent,
//! exported fields and export condition, from the `resource` declarations of the model and the
//! documented defaults (see `docs/resources.md`).
//!
//! * The **type** is the nearest entity of the ancestry (the entity itself first) whose
//!   declaration gives an `id`; instances of subtypes are exported under that name, as the
//!   reference does. Without one, the type is the entity itself and its identity is its first
//!   index, in written order (own indexes first, then inherited ones).
//! * The **agent** is the nearest declaration's `agent`, else `"internal"`.
//! * The **fields** are, per entity of the ancestry, its declaration's `fields` if it gives them,
//!   else its own plain attributes; names the export format reserves are left out.
//! * **export_if** conditions of every declaration in the ancestry must all hold.

use indexmap::IndexMap;
use modelc_exec::Program;
use modelc_exec::graph::{EntityShape, InstanceGraph};
use modelc_sema::index::AttrKind;
use modelc_sema::resources::{RESERVED_FIELDS, RESOURCE_ROOT};
use modelc_syntax::ast::{Item, ResourceDecl, ResourceOptionValue};

/// The default agent of a resource that declares none.
pub const DEFAULT_AGENT: &str = "internal";

/// A `resource` declaration, resolved.
#[derive(Debug, Clone, Default)]
pub struct Declaration {
    pub id: Option<String>,
    pub agent: Option<Agent>,
    pub fields: Option<Vec<String>>,
    pub export_if: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Agent {
    Literal(String),
    /// Attribute names followed from the resource; the last is a string.
    Path(Vec<String>),
}

/// How one entity's instances become resources.
#[derive(Debug, Clone)]
pub struct ResourceShape {
    pub entity_type: String,
    pub key: Key,
    pub agent: Agent,
    /// Exported fields: name and position in the entity's attributes.
    pub fields: Vec<(String, usize)>,
    /// Positions of the boolean attributes that must all be true for the resource to export.
    pub export_if: Vec<usize>,
    pub requires: Option<usize>,
    pub send_event: Option<usize>,
    pub receive_events: Option<usize>,
}

/// What identifies a resource.
#[derive(Debug, Clone, PartialEq)]
pub enum Key {
    /// A declared `id`: one attribute (name, position).
    Declared(String, usize),
    /// The attributes of the entity's first index, in written order (name, position).
    Index(Vec<(String, usize)>),
    /// Neither: the instances cannot be identified (E0401).
    Missing,
}

/// Declarations and written indexes of a program, by entity.
pub struct Shapes<'a> {
    program: &'a Program<'a>,
    declarations: IndexMap<String, Declaration>,
    /// Entity → its own indexes, in written order.
    indexes: IndexMap<String, Vec<Vec<String>>>,
    /// Per entity of the instance graph: `None` = not a resource.
    computed: Vec<Option<ResourceShape>>,
    /// Entity → its first index (see [`Shapes::first_index`]), for the entities of the graph.
    first_indexes: IndexMap<String, Option<Vec<String>>>,
}

impl<'a> Shapes<'a> {
    pub fn new(program: &'a Program<'a>, graph: &InstanceGraph) -> Shapes<'a> {
        let mut declarations = IndexMap::new();
        let mut indexes: IndexMap<String, Vec<Vec<String>>> = IndexMap::new();
        for unit in &program.units {
            let scope = unit.scope();
            for item in &unit.file.items {
                match item {
                    Item::Resource(decl) => {
                        if let Ok(r) = scope.resolve_type(program.index, &decl.entity.text()) {
                            declarations.entry(r.fqn).or_insert_with(|| declaration(decl));
                        }
                    }
                    Item::Index(index) => {
                        if let Ok(r) = scope.resolve_type(program.index, &index.entity.text()) {
                            let attributes = index.attributes.iter().map(|a| a.name.clone()).collect();
                            indexes.entry(r.fqn).or_default().push(attributes);
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut shapes =
            Shapes { program, declarations, indexes, computed: Vec::new(), first_indexes: IndexMap::new() };
        shapes.first_indexes = graph
            .entities
            .iter()
            .map(|e| (e.fqn.clone(), shapes.find_first_index(&e.fqn).map(<[String]>::to_vec)))
            .collect();
        shapes.computed = graph.entities.iter().map(|e| shapes.compute(e)).collect();
        shapes
    }

    /// How instances of `graph.entities[entity]` become resources; `None` when they do not.
    pub fn shape(&self, entity: u32) -> Option<&ResourceShape> {
        self.computed[entity as usize].as_ref()
    }

    /// The first index of `entity` (own first, then its ancestors'), in written order; for an
    /// entity that has instances.
    pub fn first_index(&self, entity: &str) -> Option<&[String]> {
        self.first_indexes.get(entity).and_then(|i| i.as_deref())
    }

    fn find_first_index(&self, entity: &str) -> Option<&[String]> {
        self.program
            .index
            .ancestry(entity)
            .into_iter()
            .find_map(|def| {
                let written = self.indexes.get(&def.fqn)?;
                // Only indexes the type table kept (invalid ones were reported by `check`).
                written.iter().find(|w| {
                    let mut sorted = (*w).clone();
                    sorted.sort();
                    sorted.dedup();
                    def.indexes.contains(&sorted)
                })
            })
            .map(Vec::as_slice)
    }

    fn compute(&self, shape: &EntityShape) -> Option<ResourceShape> {
        let index = self.program.index;
        let entity = shape.fqn.as_str();
        if !index.is_subtype(entity, RESOURCE_ROOT) {
            return None;
        }
        let ancestry = index.ancestry(entity);
        let declared = |def: &&modelc_sema::index::EntityDef| self.declarations.get(&def.fqn);
        let position = |name: &str| shape.attributes.iter().position(|a| a == name);
        let (entity_type, key) = match ancestry.iter().find_map(|d| Some((d, declared(d)?.id.as_ref()?))) {
            Some((def, id)) => (def.fqn.clone(), position(id).map_or(Key::Missing, |at| Key::Declared(id.clone(), at))),
            None => {
                let key = self
                    .find_first_index(entity)
                    .and_then(|attrs| attrs.iter().map(|a| Some((a.clone(), position(a)?))).collect::<Option<Vec<_>>>())
                    .map_or(Key::Missing, Key::Index);
                (entity.to_owned(), key)
            }
        };
        let agent = ancestry
            .iter()
            .find_map(|d| declared(d)?.agent.clone())
            .unwrap_or_else(|| Agent::Literal(DEFAULT_AGENT.to_owned()));
        let mut fields: Vec<(String, usize)> = Vec::new();
        for def in &ancestry {
            let own: Vec<String> = match declared(def).and_then(|d| d.fields.clone()) {
                Some(listed) => listed,
                None => def
                    .attributes
                    .values()
                    .filter(|a| matches!(a.kind, AttrKind::Value { .. }))
                    .map(|a| a.name.clone())
                    .collect(),
            };
            for name in own {
                if RESERVED_FIELDS.contains(&name.as_str()) || fields.iter().any(|(f, _)| *f == name) {
                    continue;
                }
                if let Some(at) = position(&name) {
                    fields.push((name, at));
                }
            }
        }
        let export_if = ancestry.iter().filter_map(|d| position(declared(d)?.export_if.as_ref()?)).collect();
        Some(ResourceShape {
            entity_type,
            key,
            agent,
            fields,
            export_if,
            requires: position("requires"),
            send_event: position("send_event"),
            receive_events: position("receive_events"),
        })
    }
}

fn declaration(decl: &ResourceDecl) -> Declaration {
    let mut out = Declaration::default();
    for option in &decl.options {
        let path = || match &option.value {
            ResourceOptionValue::Path(path) => Some(path.iter().map(|i| i.name.clone()).collect::<Vec<_>>()),
            _ => None,
        };
        match option.name.name.as_str() {
            "id" => out.id = path().and_then(|p| p.into_iter().next()),
            "export_if" => out.export_if = path().and_then(|p| p.into_iter().next()),
            "fields" => {
                if let ResourceOptionValue::List(names) = &option.value {
                    out.fields = Some(names.iter().map(|i| i.name.clone()).collect());
                }
            }
            "agent" => {
                out.agent = match &option.value {
                    ResourceOptionValue::Str(text) => text.as_constant().map(Agent::Literal),
                    _ => path().map(Agent::Path),
                }
            }
            _ => {}
        }
    }
    out
}
