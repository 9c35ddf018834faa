//! Renderers: the only code that turns a [`Diagnostic`](crate::Diagnostic) into text.

pub mod json;
pub mod text;
