//! Renderers: the only code that turns a [`Diagnostic`](crate::Diagnostic) into text.

pub mod json;
mod long_lines;
pub mod text;
