//! The fields a module's Python class computes (`get_<field>` mappers, `map` entries): run in
//! batches, one per resource type, through `ForeignPlugins::map_resources` (the plugin host),
//! before the queue is built. Mappers read the finished model through [`ExportContext`].

use modelc_exec::graph::InstanceGraph;
use modelc_exec::{MapBatch, MapFailure, Mapped, Program};
use modelc_std_plugins::{AttributeError, ModuleDir, PluginContext};
use modelc_value::{InstanceId, Value};

/// The finished model, as mappers (and the std plugins they call) read it.
pub(crate) struct ExportContext<'a> {
    pub program: &'a Program<'a>,
    pub graph: &'a InstanceGraph,
    /// What std plugins the mappers called warned, in order: reported with the export's
    /// diagnostics.
    pub warnings: Vec<String>,
}

impl PluginContext for ExportContext<'_> {
    fn attribute(&mut self, instance: InstanceId, attribute: &str) -> Result<Value, AttributeError> {
        if instance.0 as usize >= self.graph.instances.len() {
            return Err(AttributeError::NotFound(format!("there is no instance {}", instance.0)));
        }
        let entity = &self.graph.entity_of(instance).fqn;
        match self.graph.attribute(instance, attribute) {
            Some(Value::Null) if self.is_optional_relation(entity, attribute) => Err(AttributeError::OptionalEmpty(
                format!("Optional variable accessed that has no value (attribute `{attribute}` of {entity})"),
            )),
            Some(value) => Ok(value.clone()),
            None => Err(AttributeError::NotFound(format!(
                "could not find attribute with name: {attribute} in type {entity}"
            ))),
        }
    }

    fn entity_name(&self, instance: InstanceId) -> String {
        self.graph.entity_of(instance).fqn.clone()
    }

    fn is_instance_of(&self, instance: InstanceId, entity: &str) -> Result<bool, String> {
        if !self.program.index.entities.contains_key(entity) {
            return Err(format!("could not find type {entity}"));
        }
        Ok(self.program.index.is_subtype(&self.graph.entity_of(instance).fqn, entity))
    }

    fn entity_type(&self, entity: &str) -> Option<modelc_std_plugins::EntityType> {
        modelc_exec::entity_type(self.program.index, entity)
    }

    fn display_instance(&self, instance: InstanceId) -> String {
        format!("{} {}", self.graph.entity_of(instance).fqn, instance.0)
    }

    /// An export prints nothing of its own: what a mapper prints is not shown.
    fn print(&mut self, _line: &str) {}

    fn warn(&mut self, message: &str) {
        self.warnings.push(message.to_owned());
    }

    fn read_module_file(&mut self, module: &str, _dir: ModuleDir, path: &str) -> Result<String, String> {
        Err(self.not_at_export(&format!("reading {module}/{path}")))
    }

    fn module_file_path(&mut self, module: &str, _dir: ModuleDir, path: &str) -> Result<String, String> {
        Err(self.not_at_export(&format!("finding {module}/{path}")))
    }

    fn list_module_dir(&mut self, module: &str, _dir: ModuleDir, path: &str) -> Result<Vec<String>, String> {
        Err(self.not_at_export(&format!("listing {module}/{path}")))
    }

    fn env_var(&self, _name: &str) -> Option<String> {
        None
    }

    fn unix_time(&self) -> i64 {
        0
    }

    fn random_alphanumeric(&mut self, length: usize) -> String {
        "x".repeat(length)
    }

    fn stored_password(&mut self, _id: &str) -> Result<Option<String>, String> {
        Err(self.not_at_export("reading stored passwords"))
    }

    fn store_password(&mut self, _id: &str, _password: &str) -> Result<(), String> {
        Err(self.not_at_export("storing passwords"))
    }

    fn server_token(&mut self, _client_types: &[String]) -> Result<String, String> {
        Ok(String::new())
    }

    fn scope_variable(&mut self, name: &str) -> Result<Value, AttributeError> {
        Err(AttributeError::NotFound(format!("variable {name} not found: a resource mapper has no scope")))
    }
}

impl ExportContext<'_> {
    fn is_optional_relation(&self, entity: &str, attribute: &str) -> bool {
        self.program.index.attribute(entity, attribute).is_some_and(|def| match &def.kind {
            modelc_sema::index::AttrKind::Relation { bounds, .. } => bounds.is_optional(),
            modelc_sema::index::AttrKind::Value { .. } => false,
        })
    }

    /// std plugins that read the world run while the model executes; a mapper calling one
    /// after it is refused.
    fn not_at_export(&self, what: &str) -> String {
        format!("{what} is not available to a resource mapper: modelc runs mappers after the model has executed")
    }
}

/// What the mappers gave for the instances whose resource class has mapped fields.
#[derive(Default)]
pub(crate) struct MappedInstances {
    /// Per instance id: what became of it, when it was mapped.
    pub outcomes: rustc_hash::FxHashMap<InstanceId, Outcome>,
    /// The batches that failed as a whole: (entity, why).
    pub failures: Vec<(String, MapFailure)>,
    /// Uploaded files by sha1: text, or `None` when it is not UTF-8.
    pub files: Vec<(String, Option<String>)>,
    /// What std plugins the mappers called warned.
    pub warnings: Vec<String>,
}

pub(crate) enum Outcome {
    Mapped(Mapped),
    /// Its batch failed: `MappedInstances::failures[at]`.
    BatchFailed(usize),
}

/// A batch being gathered: the mapped fields, the mapped id attribute, the instances.
type PendingBatch = (Vec<String>, Option<String>, Vec<InstanceId>, Vec<String>);

/// Runs the mappers of every resource type that has mapped fields, one batch per type, for the
/// instances that would be exported (their `export_if` holds and their agent is known).
pub(crate) fn run_mappers(
    program: &Program<'_>,
    graph: &InstanceGraph,
    shapes: &crate::shapes::Shapes<'_>,
    foreign: Option<&dyn modelc_exec::ForeignPlugins>,
) -> MappedInstances {
    let mut batches: indexmap::IndexMap<(String, String), PendingBatch> = indexmap::IndexMap::new();
    for (at, node) in graph.instances.iter().enumerate() {
        let Some(shape) = shapes.shape(node.entity) else { continue };
        let Some(python) = &shape.python else { continue };
        let id = match &shape.key {
            crate::shapes::Key::Mapped(name) => Some(name.clone()),
            _ => None,
        };
        if shape.unusable.is_some() || !python.runs {
            continue;
        }
        let instance = InstanceId(at as u32);
        let values = graph.values(instance);
        if !shape.export_if_holds(values) {
            continue;
        }
        if crate::identity::agent(graph, instance, shape).is_err() {
            continue;
        }
        let key = (python.origin.module.clone(), python.entity.clone());
        let batch =
            batches.entry(key).or_insert_with(|| (python.mapped.clone(), id, Vec::new(), python.origin.reads.clone()));
        batch.2.push(instance);
    }
    let mut out = MappedInstances::default();
    let mut context = ExportContext { program, graph, warnings: Vec::new() };
    for ((module, entity), (fields, id, items, reads)) in batches {
        let batch =
            MapBatch { module: &module, entity: &entity, fields: &fields, id: id.as_deref(), items, reads: &reads };
        let answer = match foreign {
            Some(foreign) => foreign.map_resources(&batch, &mut context),
            None => Err(MapFailure {
                message: format!(
                    "its fields are computed by the Python of module {module}, and this compile has no Python \
                     environment"
                ),
                detail: None,
            }),
        };
        match answer {
            Ok(answer) if answer.mapped.len() == batch.items.len() => {
                for (instance, mapped) in batch.items.iter().zip(answer.mapped) {
                    out.outcomes.insert(*instance, Outcome::Mapped(mapped));
                }
                out.files.extend(answer.files);
            }
            Ok(answer) => {
                let message =
                    format!("the plugin host answered {} of {} resources", answer.mapped.len(), batch.items.len());
                out.failures.push((entity.clone(), MapFailure { message, detail: None }));
                for instance in &batch.items {
                    out.outcomes.insert(*instance, Outcome::BatchFailed(out.failures.len() - 1));
                }
            }
            Err(failure) => {
                out.failures.push((entity.clone(), failure));
                for instance in &batch.items {
                    out.outcomes.insert(*instance, Outcome::BatchFailed(out.failures.len() - 1));
                }
            }
        }
    }
    out.warnings = context.warnings;
    out
}
