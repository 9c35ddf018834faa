//! What the std plugins need from the world outside their arguments: the instance graph, the
//! module files, the process environment, the clock, randomness, stored passwords, the server
//! settings and the caller's scope. The executor implements [`PluginContext`]; the plugins
//! themselves never touch the file system, environment, clock or random generator, so this crate
//! stays pure and every plugin is testable with an in-memory context.

use modelc_value::{InstanceId, Value};

/// Why reading an attribute (or a variable of the caller's scope) gave no value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttributeError {
    /// The entity has no such attribute (or the scope no such variable). The message is the
    /// executor's, e.g. "could not find attribute with name: zz in type __config__::A".
    NotFound(String),
    /// The value is not known yet: the executor suspends the call and retries it once it is set.
    NotYetSet,
    /// An unset optional relation (Python's `OptionalValueException`), with the executor's
    /// message.
    OptionalEmpty(String),
}

pub use modelc_stdlib::ModuleDir;

/// The compiler's connection settings to the server (`compiler_rest_transport`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerSettings {
    /// `server_ca()`: the CA certificate path, empty when none is configured.
    pub ca: String,
    pub ssl: bool,
    pub port: i64,
}

/// An entity as Python code sees it through `_type()`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntityType {
    /// Every parent, depth first (`get_all_parent_names`).
    pub parents: Vec<String>,
    /// Every attribute, the entity's own first, then its parents' (`get_all_attribute_names`),
    /// and whether it is a relation end.
    pub attributes: Vec<(String, bool)>,
}

/// Everything outside their arguments that the std plugins read or change.
pub trait PluginContext {
    /// The value of `attribute` of `instance`. Relations come back as instances or lists.
    fn attribute(&mut self, instance: InstanceId, attribute: &str) -> Result<Value, AttributeError>;

    /// The fully qualified name of the instance's entity: `std::OS`, `__config__::A`.
    fn entity_name(&self, instance: InstanceId) -> String;

    /// Whether the instance's entity is `entity` (a fully qualified name) or a subtype of it;
    /// `Err` with a message when no entity has that name.
    fn is_instance_of(&self, instance: InstanceId, entity: &str) -> Result<bool, String>;

    /// The parents and attributes of `entity` (a fully qualified name), as Python code reads
    /// them from an instance's `_type()`; `None` for an unknown entity.
    fn entity_type(&self, entity: &str) -> Option<EntityType>;

    /// How the instance is shown in text, e.g. `std::OS 7f3a2c1e4b50`.
    fn display_instance(&self, instance: InstanceId) -> String;

    /// Writes one line of program output (`std::print`).
    fn print(&mut self, line: &str);

    /// Reports a warning of the std module (e.g. a missing environment variable).
    fn warn(&mut self, message: &str);

    /// The text of `path` (relative, `/`-separated) in `dir` of `module`; `Err` with a message
    /// when there is no such module or file.
    fn read_module_file(&mut self, module: &str, dir: ModuleDir, path: &str) -> Result<String, String>;

    /// The absolute path of the existing file `path` in `dir` of `module`.
    fn module_file_path(&mut self, module: &str, dir: ModuleDir, path: &str) -> Result<String, String>;

    /// The names of the files directly inside the directory `path` of `dir` of `module`.
    fn list_module_dir(&mut self, module: &str, dir: ModuleDir, path: &str) -> Result<Vec<String>, String>;

    /// The process environment variable `name`.
    fn env_var(&self, name: &str) -> Option<String>;

    /// Seconds since the Unix epoch.
    fn unix_time(&self) -> i64;

    /// `length` random characters from `[A-Za-z0-9]`.
    fn random_alphanumeric(&mut self, length: usize) -> String;

    /// The stored password `id`, if there is one; `Err` when the store cannot be read.
    fn stored_password(&mut self, id: &str) -> Result<Option<String>, String>;

    /// Stores (persists) password `id`.
    fn store_password(&mut self, id: &str, password: &str) -> Result<(), String>;

    // What a server would give. modelc compiles without one: the defaults say so (no
    // environment, no name, no address, default transport settings, no facts).

    /// The configured environment id, if any.
    fn environment_id(&self) -> Option<String> {
        None
    }

    /// The environment's name from the server; `None` when it cannot be had (the plugin then
    /// returns unknown).
    fn environment_name(&mut self) -> Option<String> {
        None
    }

    /// The server's address; `None` when it cannot be had.
    fn environment_server(&mut self) -> Option<String> {
        None
    }

    /// The compiler's transport settings.
    fn server_settings(&self) -> ServerSettings {
        ServerSettings::default()
    }

    /// A token for the given client types (`server_token`); `Err` with a message on failure.
    fn server_token(&mut self, client_types: &[String]) -> Result<String, String>;

    /// The fact `name` of `resource`, if a deploy learnt it (or a mock has it); `NotYetSet` when
    /// the resource's id cannot be built yet.
    fn fact(&mut self, _resource: &Value, _name: &str) -> Result<Option<Value>, AttributeError> {
        Ok(None)
    }

    /// The namespace of the file that makes the call (`web::sub`, `__config__`): a path
    /// starting with `./` is in its module. `None` where there is no call site.
    fn caller_namespace(&self) -> Option<String> {
        None
    }

    /// The variable `name` as seen from the call site (`std::template` without keyword
    /// arguments).
    fn scope_variable(&mut self, name: &str) -> Result<Value, AttributeError>;
}
