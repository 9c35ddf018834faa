//! How a std plugin call fails, in the classes the reference reports (spec §4.12): a deliberate
//! plugin error, a Python exception escaping the plugin, a compiler error inside it, or a value
//! the call has to wait for.

use std::fmt;

use super::context::AttributeError;

/// A failed plugin call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PluginError {
    /// Raised on purpose by the plugin (the reference's `PluginException`, reported as
    /// `ExplicitPluginException`).
    Explicit { message: String },
    /// A Python exception escaping the plugin, reported as `ExternalException` "Exception in
    /// plugin std::at … caused by: IndexError: list index out of range". `kind` is the Python
    /// exception class (`IndexError`, `KeyError`, `ValueError`, `AssertionError`, …).
    External { kind: &'static str, message: String },
    /// An attribute the plugin read is not set yet: the executor suspends the call and runs it
    /// again once the value is there.
    NotYetSet,
    /// A compiler error inside the plugin (`WrappingRuntimeException`): an argument of the wrong
    /// type, an unknown type name, an unusable template.
    Invalid { message: String },
    /// An attribute or variable that does not exist (`NotFoundException`).
    NotFound { message: String },
    /// An unset optional relation was read (`OptionalValueException`).
    OptionalEmpty { message: String },
}

impl PluginError {
    pub(crate) fn external(kind: &'static str, message: impl Into<String>) -> PluginError {
        PluginError::External { kind, message: message.into() }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> PluginError {
        PluginError::Invalid { message: message.into() }
    }
}

impl From<AttributeError> for PluginError {
    fn from(e: AttributeError) -> PluginError {
        match e {
            AttributeError::NotFound(message) => PluginError::NotFound { message },
            AttributeError::NotYetSet => PluginError::NotYetSet,
            AttributeError::OptionalEmpty(message) => PluginError::OptionalEmpty { message },
        }
    }
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PluginError::Explicit { message } | PluginError::Invalid { message } => f.write_str(message),
            PluginError::NotFound { message } | PluginError::OptionalEmpty { message } => f.write_str(message),
            PluginError::External { kind, message } => write!(f, "{kind}: {message}"),
            PluginError::NotYetSet => f.write_str("a value the plugin reads is not set yet"),
        }
    }
}

impl std::error::Error for PluginError {}
