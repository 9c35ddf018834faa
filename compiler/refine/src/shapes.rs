//! How the instances of each entity become resources: their type name, identity, agent,
//! exported fields and export condition, from the `resource` declarations the type table holds
//! (resolved; the model's own and the ones modelc ships for fs and exec) and the documented
//! defaults (see `docs/resources.md`).
//!
//! * The **type** is the nearest entity of the ancestry (the entity itself first) whose
//!   declaration gives an `id`; instances of subtypes are exported under that name, as the
//!   reference does. Without one, the type is the entity itself and its identity is its first
//!   index, in written order (own indexes first, then inherited ones).
//!   An entity of a module that declares its resources in Python, that no class covers, is not
//!   a resource (the reference exports only what a class declares).
//! * The **agent** is the nearest declaration's `agent`, else `"internal"`.
//! * The **fields** are, per entity of the type's ancestry (a subtype adds none), its
//!   declaration's `fields` if it gives them, else its own plain attributes; names the export
//!   format reserves are left out.
//! * **export_if** conditions of every declaration in the ancestry must all hold.
//! * A module's **Python class** (`@resource`) gives its fields in full; the ones its mappers
//!   compute are `Field::Python`, run at export through `ForeignPlugins::map_resources`.
//! * `send_event` and `receive_events` read as inmanta-core's mappers read them: a value that
//!   is not a known boolean is `false` and `true`.

use indexmap::IndexMap;
use modelc_db::{AgentSummary, FieldSourceSummary, ResourceSummary};
use modelc_exec::Program;
use modelc_exec::graph::{EntityShape, InstanceGraph};
use modelc_sema::index::AttrKind;
use modelc_sema::resources::{RESERVED_FIELDS, RESOURCE_ROOT};

pub use modelc_sema::resources::DEFAULT_AGENT;

/// How a field of a resource shape gets its value.
#[derive(Debug, Clone, PartialEq)]
pub enum Field {
    /// The instance's attribute at this position.
    Attribute(usize),
    /// Attributes followed from the instance.
    Path(Vec<String>),
    /// An export function (see `crate::functions`) applied to paths.
    Call(String, Vec<Vec<String>>),
    /// `send_event`, `receive_events`: the attribute at this position (if the entity has it)
    /// when it is a known boolean, else the default (inmanta-core's mappers read them so).
    Flag(Option<usize>, bool),
    /// Computed by the module's Python mapper: its position among the shape's mapped fields.
    Python(usize),
    /// A field of a module's Python class that the entity has no attribute for and no mapper
    /// computes: exporting fails, as the reference's does.
    Missing,
}

/// A resource shape a module declares in Python.
#[derive(Debug, Clone)]
pub struct PythonShape {
    /// The module whose Python loads the class, the class (dotted), and where it is.
    pub origin: modelc_db::PythonOrigin,
    /// The entity the class is registered for (the resources' type).
    pub entity: String,
    /// The fields its mappers compute, in the order of `Field::Python`.
    pub mapped: Vec<String>,
    /// Exporting runs the class's Python (`ResourceSummary::runs_python`).
    pub runs: bool,
}

/// Where a resource's agent comes from: a string, or a path of attributes.
pub type Agent = AgentSummary;

/// How one entity's instances become resources.
#[derive(Debug, Clone)]
pub struct ResourceShape {
    pub entity_type: String,
    pub key: Key,
    pub agent: Agent,
    /// Exported fields: name (shared by every resource of the type) and where the value comes
    /// from.
    pub fields: Vec<(std::sync::Arc<str>, Field)>,
    /// `directory=`: the position of the attribute holding the directory path.
    pub directory: Option<usize>,
    /// `paths=`: the positions of the attributes holding the paths it occupies.
    pub paths: Vec<usize>,
    /// Positions of the boolean attributes that must all be true for the resource to export.
    pub export_if: Vec<usize>,
    pub requires: Option<usize>,
    pub send_event: Option<usize>,
    pub receive_events: Option<usize>,
    /// The module's Python class, when it declares the shape.
    pub python: Option<PythonShape>,
    /// The module's Python class that declares these resources but cannot be used (its
    /// `unusable` says why): they are not exported.
    pub unusable: Option<modelc_db::PythonOrigin>,
}

impl ResourceShape {
    /// Whether an instance with these values is exported: every `export_if` attribute is true.
    pub fn export_if_holds(&self, values: &[modelc_value::Value]) -> bool {
        self.export_if.iter().all(|at| matches!(values[*at], modelc_value::Value::Bool(true)))
    }
}

/// What identifies a resource.
#[derive(Debug, Clone, PartialEq)]
pub enum Key {
    /// A declared `id`: one attribute (name, position).
    Declared(String, usize),
    /// The id attribute of a module's Python class that a mapper computes (its name).
    Mapped(String),
    /// The attributes of the entity's first index, in written order (name, position).
    Index(Vec<(String, usize)>),
    /// Neither: the instances cannot be identified (W0403: not exported).
    Missing,
}

/// The resource shapes of a program's entities, from the type table's resolved declarations.
pub struct Shapes<'a> {
    program: &'a Program<'a>,
    declarations: &'a IndexMap<String, ResourceSummary>,
    /// Per entity of the instance graph: `None` = not a resource.
    computed: Vec<Option<ResourceShape>>,
    /// Entity → its first index (see [`Shapes::first_index`]), for the entities of the graph.
    first_indexes: IndexMap<String, Option<Vec<String>>>,
    /// The modules that declare resources in Python: their entities that no class covers are
    /// not resources, as in the reference (no index makes them one).
    python_modules: indexmap::IndexSet<String>,
}

impl<'a> Shapes<'a> {
    pub fn new(program: &'a Program<'a>, graph: &InstanceGraph) -> Shapes<'a> {
        // The type table holds each entity's declaration, resolved (the model's own, else the
        // one modelc ships for the public modules).
        let declarations = &program.index.resources;
        let python_modules = declarations
            .values()
            .filter_map(|d| d.python.as_ref())
            .filter(|origin| !origin.module.is_empty())
            .map(|origin| origin.module.clone())
            .collect();
        let mut shapes =
            Shapes { program, declarations, computed: Vec::new(), first_indexes: IndexMap::new(), python_modules };
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

    /// The entity's first valid index as written: its own first, then its ancestors'.
    fn find_first_index(&self, entity: &str) -> Option<&[String]> {
        self.program.index.ancestry(entity).into_iter().find_map(|def| def.written_indexes.first()).map(Vec::as_slice)
    }

    fn compute(&self, shape: &EntityShape) -> Option<ResourceShape> {
        let index = self.program.index;
        let entity = shape.fqn.as_str();
        let ancestry = index.ancestry(entity);
        let declared = |def: &&modelc_sema::index::EntityDef| self.declarations.get(&def.fqn);
        // A module's Python class makes its entity a resource, whatever it extends.
        let python_declared = ancestry.iter().any(|d| declared(d).is_some_and(|r| r.python.is_some()));
        if !index.is_subtype(entity, RESOURCE_ROOT) && !python_declared {
            return None;
        }
        let position = |name: &str| shape.attributes.iter().position(|a| a == name);
        // A class declared for the entity or an ancestor that cannot be used: never a guessed shape.
        let unusable = ancestry
            .iter()
            .find_map(|d| declared(d)?.python.as_ref().filter(|origin| origin.unusable.is_some()))
            .cloned();
        let (type_at, entity_type, key) = match index.identifying_declaration(entity) {
            Some((at, def, declaration)) => {
                let id = declaration.id.as_ref()?;
                let mapped = declaration.python.as_ref().is_some_and(|p| p.id_mapped);
                let key = if mapped {
                    Key::Mapped(id.clone())
                } else {
                    position(id).map_or(Key::Missing, |p| Key::Declared(id.clone(), p))
                };
                (at, def.fqn.clone(), key)
            }
            None if unusable.is_none()
                && self.python_modules.contains(entity.split("::").next().unwrap_or_default()) =>
            {
                return None;
            }
            None => {
                let key = self
                    .find_first_index(entity)
                    .and_then(|attrs| attrs.iter().map(|a| Some((a.clone(), position(a)?))).collect::<Option<Vec<_>>>())
                    .map_or(Key::Missing, Key::Index);
                (0, entity.to_owned(), key)
            }
        };
        let agent =
            index.declared_agent(entity).cloned().unwrap_or_else(|| AgentSummary::Literal(DEFAULT_AGENT.to_owned()));
        // A subtype is exported as the type that declares the resource, with that type's
        // fields only: the fields come from the type and its ancestors.
        let mut fields: Vec<(std::sync::Arc<str>, Field)> = Vec::new();
        let declaring = ancestry.get(type_at).and_then(declared);
        let python = declaring.and_then(|d| Some((d.python.clone()?, d.entity.clone(), d.runs_python())));
        let mut mapped: Vec<String> = Vec::new();
        // A Python class lists all its fields, inherited ones included.
        let contributing = if python.is_some() { &ancestry[type_at..=type_at] } else { &ancestry[type_at..] };
        for def in contributing {
            let own: Vec<(String, FieldSourceSummary)> = match declared(def).and_then(|d| d.fields.clone()) {
                Some(listed) => listed,
                None => def
                    .attributes
                    .values()
                    .filter(|a| matches!(a.kind, AttrKind::Value { .. }))
                    .map(|a| (a.name.clone(), FieldSourceSummary::Same))
                    .collect(),
            };
            for (name, source) in own {
                if RESERVED_FIELDS.contains(&name.as_str()) || fields.iter().any(|(f, _)| **f == *name) {
                    continue;
                }
                let field = match source {
                    FieldSourceSummary::Same => match (position(&name), name.as_str()) {
                        (at, "send_event") => Field::Flag(at, false),
                        (at, "receive_events") => Field::Flag(at, true),
                        (Some(at), _) => Field::Attribute(at),
                        // A Python class's field must be there; a declaration's is optional.
                        (None, _) if python.is_some() => Field::Missing,
                        (None, _) => continue,
                    },
                    FieldSourceSummary::Python => {
                        mapped.push(name.clone());
                        Field::Python(mapped.len() - 1)
                    }
                    FieldSourceSummary::Path(path) if path.len() == 1 => match position(&path[0]) {
                        Some(at) => Field::Attribute(at),
                        None => continue,
                    },
                    FieldSourceSummary::Path(path) => Field::Path(path),
                    FieldSourceSummary::Call(function, args) => Field::Call(function, args),
                };
                fields.push((name.into(), field));
            }
        }
        let export_if = ancestry.iter().filter_map(|d| position(declared(d)?.export_if.as_ref()?)).collect();
        let directory = ancestry.iter().find_map(|d| declared(d)?.directory.as_deref()).and_then(position);
        let paths = ancestry
            .iter()
            .find_map(|d| declared(d)?.paths.as_ref())
            .map(|names| names.iter().filter_map(|n| position(n)).collect())
            .unwrap_or_default();
        Some(ResourceShape {
            entity_type,
            key,
            agent,
            fields,
            directory,
            paths,
            export_if,
            requires: position("requires"),
            send_event: position("send_event"),
            receive_events: position("receive_events"),
            python: python.map(|(origin, entity, runs)| PythonShape { origin, entity, mapped, runs }),
            unusable,
        })
    }
}
