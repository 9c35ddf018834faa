//! Plugins modelc does not implement itself: a module's plugins written in Python, run by
//! whoever the driver hands in (the plugin host). Execution only needs to call them and to
//! answer what they read back; how they run is not its business.

use modelc_std_plugins::PluginContext;
use modelc_stdlib::PluginSignature;
use modelc_value::{InstanceId, Value};

/// Runs the plugins of modules' Python. Shared by reference: one interpreter serves a compile.
pub trait ForeignPlugins: Send + Sync + std::fmt::Debug {
    /// Calls `plugin` with the arguments as the model wrote them (the plugin binds them and
    /// applies its defaults). What it reads of instances goes through `context`, which may
    /// answer "not yet": the call then ends with [`ForeignError::NotYetSet`] and is made again
    /// later, as a std plugin's is. `caller` is the namespace of the file that makes the call
    /// (a plugin's `Context.owner`: module-relative paths are resolved against it).
    fn call(
        &self,
        plugin: &PluginSignature,
        caller: &str,
        positional: &[Value],
        keywords: &[(String, Value)],
        context: &mut dyn PluginContext,
    ) -> Result<Value, ForeignError>;

    /// The compile will need these modules' Python (their resource classes have mappers): a host
    /// may start its interpreter and load them now, while the model executes.
    fn prepare(&self, modules: &[String]) {
        let _ = modules;
    }

    /// Runs the mappers of a module's resource class (`get_<field>`, `map`) for every item of
    /// `batch`, at export; what they read of the model goes through `context`. `Err` when the
    /// class could not be run at all (its module's Python did not load, no interpreter).
    fn map_resources(&self, batch: &MapBatch<'_>, context: &mut dyn PluginContext) -> Result<MapAnswer, MapFailure> {
        let _ = context;
        Err(MapFailure {
            message: format!("the Python of module {} is not run by this compile", batch.module),
            detail: None,
        })
    }

    /// Runs `batch.managers` over the exported resources, as the reference's exporter does after
    /// it maps them; what they read of the model goes through `context`. `Err` when a manager
    /// raised, or could not be run.
    fn run_dependency_managers(
        &self,
        batch: &DependBatch<'_>,
        context: &mut dyn PluginContext,
    ) -> Result<DependAnswer, MapFailure> {
        let _ = (batch, context);
        Err(MapFailure { message: "the modules' Python is not run by this compile".to_owned(), detail: None })
    }
}

/// A module's `@dependency_manager` function, as its source shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DependencyManager {
    pub module: String,
    pub function: String,
    /// Where it is defined, as the project names the file.
    pub file: String,
    pub line: u32,
}

/// The exported resources, for the dependency managers of some modules.
#[derive(Debug)]
pub struct DependBatch<'a> {
    /// The dependency managers to run (modules register others that modelc runs natively).
    pub managers: &'a [DependencyManager],
    pub resources: Vec<DependResource<'a>>,
}

/// One exported resource as a dependency manager sees it.
#[derive(Debug)]
pub struct DependResource<'a> {
    pub id: &'a str,
    /// The instance it was made from (`resource.model`).
    pub instance: InstanceId,
    /// Its fields' exported values.
    pub fields: Vec<(&'a str, &'a serde_json::Value)>,
    /// The ids of the resources it requires.
    pub requires: &'a [String],
}

/// What the dependency managers changed: per resource (by position in the batch) whose
/// `requires` changed, the ids it requires now.
#[derive(Debug, Default)]
pub struct DependAnswer {
    pub changed: Vec<(usize, Vec<String>)>,
}

/// One resource type's instances, to map.
#[derive(Debug)]
pub struct MapBatch<'a> {
    /// The module whose Python registers the class.
    pub module: &'a str,
    /// The entity the class is registered for.
    pub entity: &'a str,
    /// The mapped fields, in the order of the answer's values.
    pub fields: &'a [String],
    /// The id attribute, when a mapper computes it too (mapped on its own, as the reference does).
    pub id: Option<&'a str>,
    /// The instances, of the entity or its subtypes.
    pub items: Vec<InstanceId>,
    /// The attributes of the instances the mappers read, as far as their source shows: sent
    /// with them. Empty when the source shows none.
    pub reads: &'a [String],
}

/// The mappers' answer for a batch: per item, in order, and the files they uploaded.
#[derive(Debug, Default)]
pub struct MapAnswer {
    pub mapped: Vec<Mapped>,
    /// Uploaded files by sha1: their text, `None` for content that is not UTF-8.
    pub files: Vec<(String, Option<String>)>,
}

/// What became of one instance.
#[derive(Debug, Clone)]
pub enum Mapped {
    /// The mapped fields' values, and the id's text when it is mapped.
    Values { id: Option<String>, values: Vec<Value> },
    /// Its mapped id is unknown: it is not exported.
    UnknownId,
    /// A mapper raised `IgnoreResourceException`: it is not exported.
    Ignored,
    /// A mapper raised: the field, the exception and Python's traceback.
    Raised { field: Option<String>, kind: String, message: String, traceback: String },
}

/// Why a whole batch could not be mapped, and the detail (a traceback) when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapFailure {
    pub message: String,
    pub detail: Option<String>,
}

/// Why a foreign plugin call gave no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForeignError {
    /// It read a value that is not complete yet: the call is made again once it is.
    NotYetSet,
    /// The plugin raised an exception.
    Raised {
        /// The exception's class: `ValueError`, `PluginException`.
        kind: String,
        message: String,
        /// Python's traceback of it, most recent call last.
        traceback: String,
        /// Raised on purpose (`PluginException`), rather than a failure in the plugin's code.
        explicit: bool,
    },
    /// The plugin could not run: the interpreter did not start, stopped, or took too long, or the
    /// module's Python could not be loaded. `detail` says more (an import's traceback).
    Host { message: String, detail: Option<String> },
}

/// Plugins that are not run: every call's value is unknown. For the language server, which
/// executes the model on every change and does not start Python for it.
#[derive(Debug, Default)]
pub struct NotRun;

impl ForeignPlugins for NotRun {
    fn call(
        &self,
        _plugin: &PluginSignature,
        _caller: &str,
        _positional: &[Value],
        _keywords: &[(String, Value)],
        _context: &mut dyn PluginContext,
    ) -> Result<Value, ForeignError> {
        Ok(Value::Unknown)
    }
}
