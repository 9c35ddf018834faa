//! Plugins written in Python, as modules ship them (`plugins/` of a v1 module, the
//! `inmanta_plugins.<module>` package of a v2 one): where they are and what `check` needs to
//! know of them, read with a Python parser, so no interpreter runs to check a model.
//!
//! - [`PythonEnv`] chooses the environment a compile uses and finds its installed packages on
//!   the file system.
//! - [`module_python`] finds a module's Python files, in the reference's layouts.
//! - [`read_plugins`] finds the functions decorated with `@plugin` and their signatures: each
//!   parameter's kind, its type (the annotation as a type of the language, `"any"` without one),
//!   its default, and the return type. A `Context` parameter is the compiler's, hidden from the
//!   model. [`signatures`] gives them as the checker and the executor use std's.
//! - [`read_classes`] and [`resolve_resources`] find the `@resource` classes that declare how a
//!   module's entities become resources: their fields merged along the class hierarchy, and
//!   which of them a Python mapper computes.
#![allow(clippy::disallowed_methods, reason = "discovery looks for environments and modules' Python on disk")]

mod classes;
mod discover;
mod env;
mod resources;
mod signature;

pub use classes::{Fields, Import, PyClass, PyFile, ResourceDecorator, read_classes};
pub use discover::{Layout, ModulePython, classes, module_python, signatures};
pub use env::{EnvSource, PythonEnv};
pub use modelc_stdlib::ParamKind;
pub use resources::{FieldSource, PyResource, PyResourceError, ReadFile, resolve_resources};
pub use signature::{PyParam, PyPlugin, read_plugins};
