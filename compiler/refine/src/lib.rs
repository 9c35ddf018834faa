//! Refinement: from the executed model (an `InstanceGraph`) to the resource IR (`modelc-ir`).
//!
//! 1. [`shapes`]: per entity, how its instances become resources (declarations and defaults);
//! 2. [`identity`]: each resource's id, agent and exported values; pruned when unknown;
//! 3. `requires`: each resource's dependencies, resolved through entities that are not resources;
//!    `notifications`: each resource's notifications with their timing, by receiver id;
//! 4. `sets`: resource-set membership;
//! 5. `validate`: duplicate ids, a resource in two sets, dependencies across sets, cycles;
//! 6. `ownership` (partial compiles only): every member of a set belongs to the set's service.
//!
//! Every problem is a diagnostic naming the resources and sets involved and where each was
//! created; all are reported in one run. The IR is returned even when there are errors (for
//! drawing and debugging); callers must not export it then.

mod dependencies;
mod directories;
mod edge_sites;
mod functions;
pub mod identity;
mod mappers;
mod notifications;
mod ownership;
mod requires;
mod sets;
pub mod shapes;
mod validate;

use indexmap::IndexMap;
use modelc_diagnostics::{Diagnostic, codes};
use modelc_exec::Program;
use modelc_exec::graph::InstanceGraph;
use modelc_ir::{Ir, Resource, ResourceState, Source};
use modelc_value::{InstanceId, Value};
use std::hash::BuildHasher as _;

use crate::identity::Identity;
use crate::shapes::Shapes;

/// What refinement produced.
#[derive(Debug)]
pub struct Refined {
    pub ir: Ir,
    pub diagnostics: Vec<Diagnostic>,
}

/// What became of one instance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Fate {
    /// Not a resource: dependencies are followed through it.
    NotResource,
    /// A resource that is not exported (`export_if` false, unknown or invalid id).
    Dropped,
    /// Exported, at this position of the queue.
    Exported(u32),
}

/// How to refine.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// The model is a partial compile: it holds only some services, so the rules that keep a
    /// partial export safe are checked too (each set's members belong to its service).
    pub partial: bool,
}

/// What runs the modules' Python at export: the plugin host (the mappers of their resource
/// classes), and the dependency managers to run.
#[derive(Clone, Copy, Default)]
pub struct ModulePython<'a> {
    pub foreign: Option<&'a dyn modelc_exec::ForeignPlugins>,
    pub dependency_managers: &'a [modelc_exec::DependencyManager],
}

/// Refines an executed model into resources, grouped and validated.
pub fn refine(program: &Program<'_>, graph: &InstanceGraph, options: Options, python: ModulePython<'_>) -> Refined {
    let mut refinery = Refinery {
        graph,
        diagnostics: Vec::new(),
        fates: Vec::new(),
        instances: Vec::new(),
        set_instances: Vec::new(),
        requires: Vec::new(),
        in_two_sets: rustc_hash::FxHashSet::default(),
        files: IndexMap::new(),
    };
    let shapes = Shapes::new(program, graph);
    let mapped = mappers::run_mappers(program, graph, &shapes, python.foreign);
    let resources = refinery.queue(program, &shapes, mapped);
    let mut ir = Ir::new(resources, Vec::new());
    ir.files = std::mem::take(&mut refinery.files);
    refinery.requires(&mut ir);
    refinery.notifications(&mut ir);
    refinery.directories(&mut ir, &shapes);
    refinery.dependency_managers(&mut ir, program, python);
    let is_set: Vec<bool> =
        graph.entities.iter().map(|e| program.index.is_subtype(&e.fqn, sets::RESOURCE_SET)).collect();
    refinery.sets(&mut ir, &is_set);
    refinery.validate(&ir);
    if options.partial {
        refinery.ownership(&ir, &shapes);
    }
    Refined { ir, diagnostics: refinery.diagnostics }
}

pub(crate) struct Refinery<'g> {
    pub graph: &'g InstanceGraph,
    pub diagnostics: Vec<Diagnostic>,
    /// Per instance (by id), what became of it.
    pub fates: Vec<Fate>,
    /// Per queue position, the instance of the resource.
    pub instances: Vec<InstanceId>,
    /// Per set of `Ir::sets`, its instance and its members' queue positions.
    pub set_instances: Vec<(InstanceId, Vec<u32>)>,
    /// Per queue position, the positions it requires (what `Resource::requires` names).
    pub requires: Vec<Vec<u32>>,
    /// Queue positions of resources reported in two sets: their dependencies are not reported
    /// as crossing sets too.
    pub in_two_sets: rustc_hash::FxHashSet<u32>,
    /// The content table (sha1 → text) the fields' export functions fill.
    pub files: IndexMap<String, String>,
}

impl Refinery<'_> {
    /// The resource queue: every exported resource, in creation order.
    fn queue(
        &mut self,
        program: &Program<'_>,
        shapes: &Shapes<'_>,
        mut mapped: mappers::MappedInstances,
    ) -> Vec<Resource> {
        let graph = self.graph;
        // Per entity of the graph, its attributes that are not relations (inherited ones
        // included): computed once, not for every resource whose context is serialised.
        let plain_attributes: Vec<Vec<String>> = graph
            .entities
            .iter()
            .map(|entity| {
                // A set, in first-seen order: an entity may have tens of thousands of attributes.
                let mut names: indexmap::IndexSet<&str> = indexmap::IndexSet::new();
                for def in program.index.ancestry(&entity.fqn) {
                    for a in def.attributes.values() {
                        if matches!(a.kind, modelc_sema::index::AttrKind::Value { .. }) {
                            names.insert(&a.name);
                        }
                    }
                }
                names.into_iter().map(str::to_owned).collect()
            })
            .collect();
        // Reserved for every instance that may be a resource: growing by doubling would hold
        // the old and the new array at once, and leave up to half of the new one unused.
        let candidates = graph.instances.iter().filter(|node| shapes.shape(node.entity).is_some()).count();
        let mut resources: Vec<Resource> = Vec::with_capacity(candidates);
        // Queue positions by id: the ids themselves are in `resources`, not copied here.
        let mut by_id: hashbrown::HashTable<u32> = hashbrown::HashTable::with_capacity(candidates);
        let hash_id = |id: &str| rustc_hash::FxBuildHasher.hash_one(id);
        // One `Source` per entity and place: a loop makes many resources at one statement.
        let mut sources: rustc_hash::FxHashMap<_, std::sync::Arc<Source>> = rustc_hash::FxHashMap::default();
        let mut without_identity: IndexMap<u32, ()> = IndexMap::new();
        let mut unusable_reported: rustc_hash::FxHashSet<u32> = rustc_hash::FxHashSet::default();
        let mut failures_reported: rustc_hash::FxHashSet<usize> = rustc_hash::FxHashSet::default();
        self.add_uploaded_files(std::mem::take(&mut mapped.files));
        for warning in std::mem::take(&mut mapped.warnings) {
            self.diagnostics.push(Diagnostic::new(&codes::PLUGIN_WARNING, warning));
        }
        self.fates = Vec::with_capacity(graph.instances.len());
        for i in 0..graph.instances.len() as u32 {
            let instance = InstanceId(i);
            let node = graph.get(instance);
            let Some(shape) = shapes.shape(node.entity) else {
                self.fates.push(Fate::NotResource);
                continue;
            };
            let values = graph.values(instance);
            let exported = shape.export_if_holds(values);
            if !exported {
                self.fates.push(Fate::Dropped);
                continue;
            }
            if let Some(origin) = &shape.unusable {
                if unusable_reported.insert(node.entity) {
                    self.report_unusable_class(instance, &shape.entity_type, origin);
                }
                self.fates.push(Fate::Dropped);
                continue;
            }
            let mut mapped_values: Vec<Value> = Vec::new();
            let mut mapped_id: Option<String> = None;
            match mapped.outcomes.remove(&instance) {
                None => {}
                Some(mappers::Outcome::BatchFailed(at)) => {
                    if failures_reported.insert(at) {
                        let (entity, failure) = &mapped.failures[at];
                        self.report_failed_batch(instance, entity, failure);
                    }
                    self.fates.push(Fate::Dropped);
                    continue;
                }
                Some(mappers::Outcome::Mapped(outcome)) => match outcome {
                    modelc_exec::Mapped::Values { id, values } => {
                        mapped_values = values;
                        mapped_id = id;
                    }
                    modelc_exec::Mapped::UnknownId | modelc_exec::Mapped::Ignored => {
                        self.fates.push(Fate::Dropped);
                        continue;
                    }
                    modelc_exec::Mapped::Raised { field, kind, message, traceback } => {
                        self.report_mapper_raised(instance, shape, field.as_deref(), &kind, &message, &traceback);
                        self.fates.push(Fate::Dropped);
                        continue;
                    }
                },
            }
            let id = match identity::identify(graph, shapes, instance, shape, mapped_id.as_deref()) {
                Identity::Id(id) => id,
                Identity::Unknown => {
                    self.fates.push(Fate::Dropped);
                    continue;
                }
                Identity::Invalid(reason) => {
                    if matches!(shape.key, shapes::Key::Missing) {
                        if without_identity.insert(node.entity, ()).is_none() {
                            self.report_missing_identity(instance);
                        }
                    } else {
                        self.report_invalid_value(instance, &reason);
                    }
                    self.fates.push(Fate::Dropped);
                    continue;
                }
            };
            let mut attributes = modelc_ir::Attributes::with_capacity(shape.fields.len());
            let mut state = ResourceState::Available;
            let mut context = functions::FieldContext {
                graph,
                plain_attributes: &plain_attributes,
                files: &mut self.files,
                mapped: &mapped_values,
            };
            let mut failed = None;
            for (name, field) in &shape.fields {
                match functions::field(&mut context, instance, field) {
                    Ok((value, known)) => {
                        if !known {
                            state = ResourceState::Undefined;
                        }
                        attributes.insert(std::sync::Arc::clone(name), value);
                    }
                    Err(reason) => {
                        failed = Some(format!("its field `{name}`: {reason}"));
                        break;
                    }
                }
            }
            if let Some(reason) = failed {
                self.report_invalid_value(instance, &reason);
                self.fates.push(Fate::Dropped);
                continue;
            }
            let flag = |at: Option<usize>, default: bool| at.and_then(|at| values[at].py_bool()).unwrap_or(default);
            let id_text = id.text();
            let position = resources.len() as u32;
            let hash = hash_id(&id_text);
            if let Some(&first) = by_id.find(hash, |p| resources[*p as usize].id == id_text) {
                self.report_duplicate_id(&id_text, self.instances[first as usize], instance);
                self.fates.push(Fate::Dropped);
                continue;
            }
            by_id.insert_unique(hash, position, |p| hash_id(&resources[*p as usize].id));
            resources.push(Resource {
                id: id_text,
                entity_type: id.entity_type,
                agent: id.agent,
                attributes,
                requires: Vec::new(),
                send_event: flag(shape.send_event, false),
                receive_events: flag(shape.receive_events, true),
                resource_set: None,
                state,
                source: sources
                    .entry((node.entity, node.file, node.line))
                    .or_insert_with(|| std::sync::Arc::new(self.source(instance)))
                    .clone(),
                meta: self.meta_of(instance).into(),
                notify: Vec::new(),
            });
            self.instances.push(instance);
            self.fates.push(Fate::Exported(position));
        }
        resources
    }

    /// The meta parameters of a resource: its `meta` relation's `std::Meta`, or the defaults,
    /// through the one rule table (`modelc_ir::meta_params`). std's typedefs refused any value
    /// that breaks a rule before this (as `tests/tests/meta_params.rs` proves); an unknown value
    /// is the parameter's default. Should a value reach here that the table refuses (std and the
    /// table disagreeing: our bug), it is reported, never silently replaced.
    fn meta_of(&mut self, instance: InstanceId) -> modelc_ir::Meta {
        use modelc_ir::meta_params::Given;
        let Some(Value::Instance(m)) = self.graph.attribute(instance, "meta") else {
            return modelc_ir::Meta::default();
        };
        fn given(value: &Value) -> Option<Given<'_>> {
            Some(match value {
                Value::Null => Given::Null,
                Value::Bool(b) => Given::Bool(*b),
                Value::Int(i) => Given::Int(*i),
                Value::Float(f) => Given::Float(*f),
                Value::Str(s) => Given::Str(s),
                Value::List(items) => Given::List(items.iter().map(given).collect::<Option<_>>()?),
                Value::Dict(_) | Value::Instance(_) | Value::Unknown => return None,
            })
        }
        let m = *m;
        match modelc_ir::meta_params::meta_of(|name| self.graph.attribute(m, name).and_then(given)) {
            Ok(meta) => meta,
            Err(refused) => {
                let node = self.graph.get(instance);
                let (file, span) = (node.file, node.span);
                for (_, problem) in refused {
                    self.diagnostics.push(
                        Diagnostic::new(&codes::INVALID_META_PARAMETER, problem.message)
                            .primary(file, span, problem.label)
                            .help(problem.help)
                            .note("std's typedefs let this value through: please report it, it is a bug of modelc"),
                    );
                }
                modelc_ir::Meta::default()
            }
        }
    }

    pub(crate) fn source(&self, instance: InstanceId) -> Source {
        let node = self.graph.get(instance);
        Source {
            entity: self.graph.entity_of(instance).fqn.clone(),
            file: (self.graph.model_file_names.get(&node.file))
                .or_else(|| self.graph.file_names.get(&node.file))
                .cloned()
                .unwrap_or_default(),
            line: node.line,
        }
    }

    /// `Host` (created at main.cf:12): how messages name an instance.
    pub(crate) fn describe(&self, instance: InstanceId) -> String {
        let fqn = &self.graph.entity_of(instance).fqn;
        format!("`{}` (created at {})", fqn.strip_prefix("__config__::").unwrap_or(fqn), self.graph.location(instance))
    }

    fn report_missing_identity(&mut self, instance: InstanceId) {
        let node = self.graph.get(instance);
        let fqn = &self.graph.entity_of(instance).fqn;
        let d = Diagnostic::new(
            &codes::RESOURCE_WITHOUT_IDENTITY,
            format!("instances of `{fqn}` are resources, but nothing identifies them: they are not exported"),
        )
        .primary(node.file, node.span, "a resource without an id, not exported")
        .note(format!("`{fqn}` extends std::Resource, has no index and no resource declaration with an `id`"))
        .help(format!(
            "add an index (`index {}(name)`) or declare the id: `resource {}(id=name)`",
            short(fqn),
            short(fqn)
        ));
        self.diagnostics.push(d);
    }

    /// The files mappers uploaded go to the content table; content that is not text cannot.
    fn add_uploaded_files(&mut self, files: Vec<(String, Option<String>)>) {
        for (hash, text) in files {
            match text {
                Some(text) => {
                    self.files.insert(hash, text);
                }
                None => self.diagnostics.push(Diagnostic::new(
                    &codes::RESOURCE_MAPPER_FAILED,
                    format!(
                        "a resource mapper uploaded a file ({hash}) that is not UTF-8 text, which modelc cannot store"
                    ),
                )),
            }
        }
    }

    /// A module's resource class as messages name it: `` `inmanta_plugins.m.C` (file:line) ``.
    fn class_named(origin: &modelc_db::PythonOrigin) -> String {
        format!("`{}` ({}:{})", origin.class, origin.file, origin.line)
    }

    fn report_unusable_class(&mut self, instance: InstanceId, entity: &str, origin: &modelc_db::PythonOrigin) {
        let node = self.graph.get(instance);
        let d = Diagnostic::new(
            &codes::UNUSABLE_RESOURCE_CLASS,
            format!(
                "resources of `{entity}` are not exported: its module's resource class {} cannot be used",
                Self::class_named(origin)
            ),
        )
        .primary(node.file, node.span, "a resource of this type")
        .note(origin.unusable.clone().unwrap_or_default())
        .help("write its `fields` as a literal tuple of names, and derive it from classes modelc can find");
        self.diagnostics.push(d);
    }

    fn report_failed_batch(&mut self, instance: InstanceId, entity: &str, failure: &modelc_exec::MapFailure) {
        let node = self.graph.get(instance);
        let mut d = Diagnostic::new(
            &codes::RESOURCE_MAPPER_FAILED,
            format!("resources of `{entity}` cannot be exported: {}", failure.message),
        )
        .primary(node.file, node.span, "a resource of this type");
        if let Some(detail) = &failure.detail {
            d = d.note(detail.trim_end().to_owned());
        }
        self.diagnostics.push(d);
    }

    fn report_mapper_raised(
        &mut self,
        instance: InstanceId,
        shape: &shapes::ResourceShape,
        field: Option<&str>,
        kind: &str,
        message: &str,
        traceback: &str,
    ) {
        let node = self.graph.get(instance);
        let what = field.map_or_else(|| "a field".to_owned(), |f| format!("field `{f}`"));
        let mut d = Diagnostic::new(
            &codes::RESOURCE_MAPPER_FAILED,
            format!(
                "resource {} cannot be exported: the mapper of its {what} raised {kind}: {message}",
                self.describe(instance)
            ),
        )
        .primary(node.file, node.span, "this resource");
        if let Some(python) = &shape.python {
            d = d.note(format!("the resource class is {}", Self::class_named(&python.origin)));
        }
        if !traceback.is_empty() {
            d = d.note(traceback.trim_end().to_owned());
        }
        self.diagnostics.push(d);
    }

    fn report_invalid_value(&mut self, instance: InstanceId, reason: &str) {
        let node = self.graph.get(instance);
        let d = Diagnostic::new(
            &codes::INVALID_RESOURCE_VALUE,
            format!("resource {} cannot be exported: {reason}", self.describe(instance)),
        )
        .primary(node.file, node.span, "this resource");
        self.diagnostics.push(d);
    }

    fn report_duplicate_id(&mut self, id: &str, first: InstanceId, second: InstanceId) {
        let (a, b) = (self.graph.get(first), self.graph.get(second));
        let d = Diagnostic::new(
            &codes::DUPLICATE_RESOURCE_ID,
            format!("two resources have the id `{id}`: {} and {}", self.describe(first), self.describe(second)),
        )
        .primary(b.file, b.span, "the second resource with this id")
        .secondary(a.file, a.span, "the first resource with this id")
        .help("make the id attribute unique, for instance an attribute of an index of the entity");
        self.diagnostics.push(d);
    }
}

fn short(fqn: &str) -> &str {
    fqn.rsplit("::").next().unwrap_or(fqn)
}
