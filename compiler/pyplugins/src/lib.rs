//! Plugins written in Python, as modules ship them (`plugins/` of a v1 module, the
//! `inmanta_plugins.<module>` package of a v2 one): what `check` needs to know of them, read from
//! the source with a Python parser, so no interpreter runs to check a model.
//!
//! [`read_plugins`] finds the functions decorated with `@plugin` and their signatures: each
//! parameter's kind, its type (the annotation as a type of the language, `"any"` without one),
//! its default, and the return type. A `Context` parameter is the compiler's, hidden from the
//! model.

mod signature;

pub use modelc_stdlib::ParamKind;
pub use signature::{PyParam, PyPlugin, read_plugins};
