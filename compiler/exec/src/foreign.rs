//! Plugins modelc does not implement itself: a module's plugins written in Python, run by
//! whoever the driver hands in (the plugin host). Execution only needs to call them and to
//! answer what they read back; how they run is not its business.

use modelc_std_plugins::PluginContext;
use modelc_stdlib::PluginSignature;
use modelc_value::Value;

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
