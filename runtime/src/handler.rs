//! The handler interface: one handler per resource type reads the machine's current state,
//! computes the difference with the desired state and, unless this is a dry run, applies it.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use modelc_ir::Resource;

use crate::report::Change;

/// Where file content comes from, by its sha1 (the `hash` field of `fs::File`): the IR's content
/// table for a fresh compile, the store's content table for a stored version.
pub trait ContentSource: Sync {
    fn content(&self, hash: &str) -> Option<Vec<u8>>;
}

/// Content held in memory.
#[derive(Debug, Default, Clone)]
pub struct MemoryContent(pub HashMap<String, Vec<u8>>);

impl MemoryContent {
    /// The content table of an IR (sha1 → text).
    pub fn of_ir(ir: &modelc_ir::Ir) -> MemoryContent {
        MemoryContent(ir.files.iter().map(|(hash, text)| (hash.clone(), text.as_bytes().to_vec())).collect())
    }
}

impl ContentSource for MemoryContent {
    fn content(&self, hash: &str) -> Option<Vec<u8>> {
        self.0.get(hash).cloned()
    }
}

/// What a handler is told about this run.
pub struct Context<'a> {
    /// Report differences, change nothing.
    pub dry_run: bool,
    /// A resource this one requires changed and sends events (or an earlier run left a refresh
    /// due): refresh it (for `exec::Run`, run its reload command).
    pub refresh: bool,
    pub content: &'a dyn ContentSource,
    /// The resource's meta `timeout`: how long the commands it runs may take (a handler that
    /// runs none cannot be stopped halfway without leaving the machine half changed).
    pub timeout: Option<std::time::Duration>,
    /// The directories that the run's resources make exist ([`Handler::creates_directory`]): a
    /// dry run predicts that a path whose parent is one of them can be created.
    pub directories: &'a HashSet<PathBuf>,
}

/// What a handler did.
#[derive(Debug, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Done {
    /// The differences found (and applied, unless dry run).
    pub changes: Vec<Change>,
    /// The refresh was done (it counts as a change).
    pub refreshed: bool,
    /// The handler chose not to act, with the reason (reported as `skipped`).
    pub skipped: Option<String>,
    /// What the handler logged (modules' Python handlers log through their context).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<LogLine>,
    /// What the handler learnt about the resource (`set_fact`, a Python handler's `facts`),
    /// by name: the store keeps them for `std::getfact` in later compiles.
    #[serde(default, skip_serializing_if = "Facts::is_empty")]
    pub facts: Facts,
}

/// Facts about one resource, by name; values are text, as the reference keeps them.
pub type Facts = std::collections::BTreeMap<String, String>;

/// One line a handler logged.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LogLine {
    /// `DEBUG`, `INFO`, `WARNING`, `ERROR` or `CRITICAL`.
    pub level: String,
    pub message: String,
}

impl Done {
    pub fn unchanged() -> Done {
        Done::default()
    }

    pub fn changed(changes: Vec<Change>) -> Done {
        Done { changes, ..Done::default() }
    }
}

/// Deploys the resources of one type.
pub trait Handler: Send + Sync {
    /// Brings the machine to `resource`'s desired state (or, in a dry run, only says what
    /// differs). An error is reported on this resource only.
    fn deploy(&self, resource: &Resource, context: &Context<'_>) -> Result<Done, String>;

    /// Whether a dry run can check this resource when something it requires would change
    /// first: its check reads only the thing it manages, which what runs before it does not
    /// change except by creating what it sits in (`directories` of the context say what will
    /// exist). `false` (the default): such a resource is `not-evaluated` in a dry run.
    fn predicts_after_requirements(&self) -> bool {
        false
    }

    /// Whether it honours std's `purged` (removes what it manages when it is true).
    fn purges(&self) -> bool {
        false
    }

    /// The directory this resource makes exist, if it does (for dry runs' predictions).
    fn creates_directory(&self, _resource: &Resource) -> Option<PathBuf> {
        None
    }

    /// Resources of this type with the same key can be applied together by
    /// [`Handler::deploy_group`] for less work than one by one; `None` (the default): never.
    fn group_key(&self, _resource: &Resource) -> Option<String> {
        None
    }

    /// Why the resource's guards (meta `creates`, `only_if`, `not_if`) keep it from deploying
    /// now, if they do; they are evaluated where the resource is deployed.
    fn guarded_out(&self, resource: &Resource) -> Option<String> {
        crate::meta::guarded_out(&resource.meta)
    }

    /// Applies resources that share a group key, each with its own context (a refresh may be
    /// due for some); one result per member, in order. The default applies them one by one.
    fn deploy_group(&self, members: &[&Resource], contexts: &[Context<'_>]) -> Vec<Result<Done, String>> {
        members.iter().zip(contexts).map(|(resource, context)| self.deploy(resource, context)).collect()
    }
}

/// The handlers of a runtime, by resource type, and how resources on other machines are
/// reached.
pub struct Handlers {
    by_type: HashMap<String, Box<dyn Handler>>,
    /// Deploys resources whose context is another machine or user (`remote::RemoteHandler`);
    /// without it they are undeployable.
    remote: Option<Box<dyn Handler>>,
    /// Modules' own handlers (Python, `modelc_pyhost::handlers`) and the types they deploy, those
    /// without a handler of the runtime's: they reach any target themselves, through
    /// [`crate::operations`].
    module: Option<(HashSet<String>, Box<dyn Handler>)>,
}

impl Handlers {
    /// No handler at all.
    pub fn empty() -> Handlers {
        Handlers { by_type: HashMap::new(), remote: None, module: None }
    }

    /// These handlers, with resources whose context is elsewhere deployed through `remote`
    /// (which runs the handler of their type there).
    pub fn with_remote(mut self, remote: impl Handler + 'static) -> Handlers {
        self.remote = Some(Box::new(remote));
        self
    }

    /// These handlers, with resources of `types` that have no handler here deployed by `handler`
    /// (modules' own), wherever their context leads.
    pub fn with_module_handlers(
        mut self,
        types: impl IntoIterator<Item = String>,
        handler: impl Handler + 'static,
    ) -> Handlers {
        let types = types.into_iter().filter(|t| !self.by_type.contains_key(t)).collect();
        self.module = Some((types, Box::new(handler)));
        self
    }

    /// Whether a module's own handler deploys resources of `resource_type`.
    pub fn is_module_type(&self, resource_type: &str) -> bool {
        self.module.as_ref().is_some_and(|(types, _)| types.contains(resource_type))
    }

    /// Whether resources on other machines can be reached.
    pub fn reaches_remote(&self) -> bool {
        self.remote.is_some()
    }

    /// The handler that deploys `resource` where its context says: its type's handler here, or
    /// the remote one that runs that handler on the target.
    pub fn for_resource(&self, resource: &Resource) -> Option<&dyn Handler> {
        let local = self.get(&resource.entity_type)?;
        match crate::remote::Target::of(resource) {
            Ok(_) if self.is_module_type(&resource.entity_type) => Some(local),
            Ok(crate::remote::Target::Local) => Some(local),
            Ok(crate::remote::Target::Remote(_)) => self.remote.as_deref(),
            Err(_) => None,
        }
    }

    /// The key resources are grouped by ([`Handler::group_key`]), kept apart per target: one
    /// apply happens on one machine.
    pub fn group_key(&self, resource: &Resource) -> Option<String> {
        let key = self.get(&resource.entity_type)?.group_key(resource)?;
        match crate::remote::Target::of(resource).ok()? {
            crate::remote::Target::Local => Some(key),
            target => Some(format!("{}\u{0}{key}", target.key())),
        }
    }

    /// The handlers this runtime ships: std's `testing::NullResource`, `AgentConfig` and
    /// `Handover` (nothing to apply), the
    /// `fs` module's `File`, `Directory` and `Symlink`, and the `exec` module's `Run`.
    pub fn builtin() -> Handlers {
        let mut handlers = Handlers::empty();
        handlers.register("std::testing::NullResource", crate::handlers::null::NullHandler);
        handlers.register("std::AgentConfig", crate::handlers::null::AgentConfigHandler);
        handlers.register("std::Handover", crate::handlers::null::AgentConfigHandler);
        handlers.register("fs::File", crate::handlers::file::FileHandler);
        handlers.register("fs::Directory", crate::handlers::directory::DirectoryHandler);
        handlers.register("fs::Symlink", crate::handlers::symlink::SymlinkHandler);
        handlers.register("exec::Run", crate::handlers::run::RunHandler);
        handlers
    }

    pub fn register(&mut self, resource_type: &str, handler: impl Handler + 'static) {
        self.by_type.insert(resource_type.to_owned(), Box::new(handler));
    }

    /// The handler of `resource_type`: the runtime's own, else a module's.
    pub fn get(&self, resource_type: &str) -> Option<&dyn Handler> {
        self.by_type.get(resource_type).map(|h| &**h).or_else(|| match &self.module {
            Some((types, handler)) if types.contains(resource_type) => Some(&**handler),
            _ => None,
        })
    }
}
