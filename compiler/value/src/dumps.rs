//! The one writer of JSON as Python's `json.dumps` writes it: `", "` and `": "` separators,
//! ASCII only (`\uXXXX`), floats as Python's `repr`, `NaN` and `Infinity`, optionally keys
//! sorted (`sort_keys=True`) and `</` written `<\/` (the reference exporter's encoder).
//!
//! It walks any tree that says what each node is ([`Tree`]): the language's values
//! (`std::json_dumps`) and serde_json values (the reference's `export -j`, the store's attribute
//! hash) are written by the same code.

use std::fmt::Write as _;

use crate::py_float_repr;

/// How `json.dumps` is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    /// `sort_keys=True`.
    pub sort_keys: bool,
    /// Write `</` as `<\/` (the reference exporter's custom encoder).
    pub escape_slash: bool,
}

/// One node of a tree, as JSON sees it.
pub enum Node<'a, T: ?Sized> {
    Null,
    Bool(bool),
    /// An integer, as its digits.
    Int(String),
    Float(f64),
    Str(&'a str),
    List(Vec<&'a T>),
    Map(Vec<(&'a str, &'a T)>),
    /// Not serializable; the Python type name for the message.
    Invalid(&'static str),
}

/// A tree [`dumps`] can write.
pub trait Tree {
    fn node(&self) -> Node<'_, Self>;
}

/// Why a tree cannot be written (Python's `TypeError` / `RecursionError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DumpError {
    NotSerializable(&'static str),
    TooDeep,
}

/// `json.dumps(tree)` in `style`, nesting at most `max_depth` deep.
pub fn dumps<T: Tree + ?Sized>(tree: &T, style: Style, max_depth: usize) -> Result<String, DumpError> {
    let mut out = String::new();
    write(&mut out, tree, style, 0, max_depth)?;
    Ok(out)
}

fn write<T: Tree + ?Sized>(
    out: &mut String,
    tree: &T,
    style: Style,
    depth: usize,
    max_depth: usize,
) -> Result<(), DumpError> {
    if depth > max_depth {
        return Err(DumpError::TooDeep);
    }
    match tree.node() {
        Node::Null => out.push_str("null"),
        Node::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        Node::Int(digits) => out.push_str(&digits),
        Node::Float(f) if f.is_nan() => out.push_str("NaN"),
        Node::Float(f) if f.is_infinite() => out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" }),
        Node::Float(f) => out.push_str(&py_float_repr(f)),
        Node::Str(s) => write_str(out, s, style),
        Node::List(items) => {
            out.push('[');
            for (i, item) in items.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(out, item, style, depth + 1, max_depth)?;
            }
            out.push(']');
        }
        Node::Map(mut entries) => {
            if style.sort_keys {
                entries.sort_by_key(|(key, _)| *key);
            }
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str(out, key, style);
                out.push_str(": ");
                write(out, item, style, depth + 1, max_depth)?;
            }
            out.push('}');
        }
        Node::Invalid(type_name) => return Err(DumpError::NotSerializable(type_name)),
    }
    Ok(())
}

/// A JSON string as Python writes it: ASCII only, control characters escaped.
pub fn write_str(out: &mut String, text: &str, style: Style) {
    out.push('"');
    let mut previous = '\0';
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '/' if style.escape_slash && previous == '<' => out.push_str("\\/"),
            ' '..='~' => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
        previous = c;
    }
    out.push('"');
}

impl Tree for serde_json::Value {
    fn node(&self) -> Node<'_, Self> {
        match self {
            serde_json::Value::Null => Node::Null,
            serde_json::Value::Bool(b) => Node::Bool(*b),
            serde_json::Value::Number(n) => match n.as_f64() {
                Some(f) if n.is_f64() => Node::Float(f),
                _ => Node::Int(n.to_string()),
            },
            serde_json::Value::String(s) => Node::Str(s),
            serde_json::Value::Array(items) => Node::List(items.iter().collect()),
            serde_json::Value::Object(entries) => Node::Map(entries.iter().map(|(k, v)| (k.as_str(), v)).collect()),
        }
    }
}

impl Tree for crate::Value {
    fn node(&self) -> Node<'_, Self> {
        match self {
            crate::Value::Null => Node::Null,
            crate::Value::Bool(b) => Node::Bool(*b),
            crate::Value::Int(i) => Node::Int(i.to_string()),
            crate::Value::Float(f) => Node::Float(*f),
            crate::Value::Str(s) => Node::Str(s),
            crate::Value::List(items) => Node::List(items.iter().collect()),
            crate::Value::Dict(entries) => Node::Map(entries.iter().map(|(k, v)| (k.as_str(), v)).collect()),
            other @ (crate::Value::Instance(_) | crate::Value::Unknown) => Node::Invalid(other.type_name()),
        }
    }
}
