//! The ways a value becomes text. The reference has three, and the conformance cases pin each:
//!
//! | value | [`cast_string`] (`string(x)`) | [`interpolate`] (f-strings, `{{x}}`) | [`print_string`] (`std::print`) |
//! |---|---|---|---|
//! | `null` | `null` | `null` | `None` |
//! | `true` | `true` | `True` | `True` |
//! | `1.0` | `1.0` | `1` | `1.0` |
//! | `1e16` | `1e+16` | `10000000000000000` | `1e+16` |
//! | `[1, "a"]` | `[1, 'a']` | `[1, 'a']` | `@[1, 'a']` |
//! | `{"k": null}` | `{'k': null}` | `{'k': null}` | `@{'k': null}` |
//!
//! Inside lists and dicts every conversion uses the same element form, [`py_repr`]: Python's
//! `repr` with `null` for null (the reference's null object prints that way). `std::print` shows
//! what Python's `print` shows for the value as a plugin sees it: `None` for null, and `@` before
//! lists and dicts, which reach plugins as proxies.
//!
//! Instances are named by the caller (the executor knows their type and where they were made),
//! through the `instance` closure every function takes.

use crate::float::py_float_repr;
use crate::{InstanceId, Value};

/// A value as an exported resource id writes it ([`cast_string`]); `None` when (part of) it is
/// unknown.
pub fn known_string(value: &Value, instance: &dyn Fn(InstanceId) -> String) -> Option<String> {
    match value {
        // The common keys, without the general conversion (one per resource and key).
        Value::Str(s) => Some(s.to_string()),
        Value::Int(i) => Some(itoa::Buffer::new().format(*i).to_owned()),
        _ if value.contains_unknown() => None,
        _ => Some(cast_string(value, instance)),
    }
}

/// `string(x)`: `true`/`false` in lower case, `null`, floats as Python's `str` (`1.0`).
pub fn cast_string(value: &Value, instance: &dyn Fn(InstanceId) -> String) -> String {
    match value {
        Value::Bool(b) => if *b { "true" } else { "false" }.to_string(),
        Value::Str(s) => s.to_string(),
        other => py_repr(other, instance),
    }
}

/// String interpolation (`"{{x}}"`) and f-strings: `True`/`False`, `null`, and floats without a
/// fraction as integers (`1.0` → `1`, `1e16` → `10000000000000000`).
pub fn interpolate(value: &Value, instance: &dyn Fn(InstanceId) -> String) -> String {
    match value {
        Value::Str(s) => s.to_string(),
        Value::Float(f) if f.is_finite() && f.fract() == 0.0 => {
            if *f == 0.0 {
                "0".to_string()
            } else {
                format!("{f:.0}")
            }
        }
        other => py_repr(other, instance),
    }
}

/// What `std::print` prints: Python's `str` of the value as a plugin receives it — `None` for
/// null, `True`/`False`, floats as `1.0`, strings bare, lists and dicts as `@[...]`/`@{...}`.
/// Messages of plugins that show their arguments (`std::equals`, `std::format`) use it too.
pub fn print_string(value: &Value, instance: &dyn Fn(InstanceId) -> String) -> String {
    match value {
        Value::Null => "None".to_string(),
        Value::Str(s) => s.to_string(),
        Value::List(_) | Value::Dict(_) => format!("@{}", py_repr(value, instance)),
        other => py_repr(other, instance),
    }
}

/// The form of a value inside a list or dict: Python's `repr`, except that null is `null`.
pub fn py_repr(value: &Value, instance: &dyn Fn(InstanceId) -> String) -> String {
    let mut out = String::new();
    write_repr(&mut out, value, instance);
    out
}

/// Appends Python's `repr()` of a value to `out` (what [`py_repr`] returns).
pub fn write_repr(out: &mut String, value: &Value, instance: &dyn Fn(InstanceId) -> String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) => out.push_str(&py_float_repr(*f)),
        Value::Str(s) => out.push_str(&py_str_repr(s)),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, item, instance);
            }
            out.push(']');
        }
        Value::Dict(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&py_str_repr(k));
                out.push_str(": ");
                write_repr(out, v, instance);
            }
            out.push('}');
        }
        Value::Instance(id) => out.push_str(&instance(*id)),
        Value::Unknown => out.push_str("Unknown"),
    }
}

/// Python's `repr` of a string: single quotes unless the text has a single quote and no double
/// quote; backslash escapes for the quote, `\\`, `\n`, `\r`, `\t` and non-printable characters.
pub fn py_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !is_printable(c) => {
                let code = u32::from(c);
                if code < 0x100 {
                    out.push_str(&format!("\\x{code:02x}"));
                } else if code < 0x10000 {
                    out.push_str(&format!("\\u{code:04x}"));
                } else {
                    out.push_str(&format!("\\U{code:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `str.isprintable` for one character, without the Unicode tables: controls,
/// separators other than the ASCII space, the common format characters and private-use
/// characters are not printable; unassigned code points count as printable here.
fn is_printable(c: char) -> bool {
    let code = u32::from(c);
    let separator = matches!(code, 0xA0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000);
    let format = matches!(
        code,
        0xAD | 0x600..=0x605
            | 0x61C
            | 0x6DD
            | 0x70F
            | 0x180E
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x2064
            | 0x2066..=0x206F
            | 0xFEFF
            | 0xFFF9..=0xFFFB
    );
    let private = matches!(code, 0xE000..=0xF8FF | 0xF0000..=0x10FFFF);
    !(c.is_control() || separator || format || private)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IndexMap;

    fn name(id: InstanceId) -> String {
        format!("__config__::A {}", id.0)
    }

    fn sample_list() -> Value {
        Value::list(vec![Value::Int(1), Value::str("a"), Value::Null, Value::Bool(true), Value::Float(2.0)])
    }

    #[test]
    fn cast_string_matches_the_reference() {
        assert_eq!(cast_string(&Value::Bool(true), &name), "true");
        assert_eq!(cast_string(&Value::Null, &name), "null");
        assert_eq!(cast_string(&Value::Float(1.0), &name), "1.0");
        assert_eq!(cast_string(&Value::Float(1e16), &name), "1e+16");
        assert_eq!(cast_string(&Value::list(vec![Value::Int(1), Value::Int(2)]), &name), "[1, 2]");
        assert_eq!(cast_string(&Value::Int(5), &name), "5");
    }

    #[test]
    fn interpolation_matches_the_reference() {
        assert_eq!(interpolate(&Value::Float(1.0), &name), "1");
        assert_eq!(interpolate(&Value::Float(1e16), &name), "10000000000000000");
        assert_eq!(interpolate(&Value::Float(1.5), &name), "1.5");
        assert_eq!(interpolate(&Value::Float(-0.0), &name), "0");
        assert_eq!(interpolate(&Value::Bool(false), &name), "False");
        assert_eq!(interpolate(&Value::Null, &name), "null");
        assert_eq!(interpolate(&sample_list(), &name), "[1, 'a', null, True, 2.0]");
        let d: IndexMap<String, Value> = [("k".to_string(), Value::str("v"))].into();
        assert_eq!(interpolate(&Value::dict(d), &name), "{'k': 'v'}");
    }

    #[test]
    fn print_matches_the_reference() {
        assert_eq!(print_string(&Value::Null, &name), "None");
        assert_eq!(print_string(&Value::Bool(true), &name), "True");
        assert_eq!(print_string(&Value::Float(2.0), &name), "2.0");
        assert_eq!(print_string(&Value::str("a\tb"), &name), "a\tb");
        assert_eq!(print_string(&sample_list(), &name), "@[1, 'a', null, True, 2.0]");
        assert_eq!(print_string(&Value::list(vec![]), &name), "@[]");
        let inner: IndexMap<String, Value> = [("k".to_string(), Value::list(vec![Value::Int(2)]))].into();
        let nested = Value::list(vec![Value::Int(1), Value::dict(inner)]);
        assert_eq!(print_string(&nested, &name), "@[1, {'k': [2]}]");
        assert_eq!(print_string(&Value::Instance(InstanceId(7)), &name), "__config__::A 7");
    }

    #[test]
    fn string_repr_quotes_like_python() {
        assert_eq!(py_str_repr("a"), "'a'");
        assert_eq!(py_str_repr("it's"), "\"it's\"");
        assert_eq!(py_str_repr("'\""), "'\\'\"'");
        assert_eq!(py_str_repr("a\nb\\"), "'a\\nb\\\\'");
        assert_eq!(py_str_repr("\u{7}é\u{200b}"), "'\\x07é\\u200b'");
    }
}
