//! One wording for a value that is not of an attribute's type, used by `check` (constants it
//! sees) and by execution (any value), so that the two say the same thing, with the fix where
//! the value converts cleanly: `"9090"` for an `int` is `9090`, `"0644"` is `644`, `80` for a
//! `string` is `"80"`.

use modelc_value::Value;

use crate::index::Declarations;
use crate::types::{BaseType, ValueType};

/// What to say about the value.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeMismatch {
    pub message: String,
    /// What the value is, for the label under it.
    pub label: String,
    pub conversion: Option<Conversion>,
}

/// The value written so that it has the type.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversion {
    pub help: String,
    /// The literal to write instead, in `.cf` syntax.
    pub replacement: String,
}

/// The primitive an attribute type comes down to, through typedefs.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Primitive {
    String,
    Int,
    Float,
    Number,
    Bool,
}

/// Describes `value` (shown as `shown`) set to attribute `attribute` of type `ty`, which it does
/// not fit.
pub fn type_mismatch(
    index: &(impl Declarations + ?Sized),
    attribute: &str,
    ty: &ValueType,
    value: &Value,
    shown: &str,
) -> TypeMismatch {
    let message = format!("can not set attribute `{attribute}` of type `{ty}` to {shown}");
    let label = format!("{}, where `{ty}` is expected", kind(value));
    let conversion = if ty.list { None } else { primitive(index, &ty.base, 0).and_then(|p| convert(value, p)) };
    let conversion = conversion.map(|replacement| Conversion {
        help: format!("write it as `{replacement}`, which is of type `{ty}`"),
        replacement,
    });
    TypeMismatch { message, label, conversion }
}

/// What kind of value it is, in words.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Int(_) => "an int",
        Value::Float(_) => "a float",
        Value::Str(_) => "a string",
        Value::List(_) => "a list",
        Value::Dict(_) => "a dict",
        Value::Instance(_) => "an entity instance",
        Value::Unknown => "an unknown value",
    }
}

fn primitive(index: &(impl Declarations + ?Sized), base: &BaseType, depth: usize) -> Option<Primitive> {
    match base {
        BaseType::String => Some(Primitive::String),
        BaseType::Int => Some(Primitive::Int),
        BaseType::Float => Some(Primitive::Float),
        BaseType::Number => Some(Primitive::Number),
        BaseType::Bool => Some(Primitive::Bool),
        // Typedef chains are short; a cycle (reported elsewhere) stops here.
        BaseType::Typedef(fqn) if depth < 16 => primitive(index, &index.typedef(fqn)?.base, depth + 1),
        _ => None,
    }
}

/// The `.cf` literal of the same value in type `to`, when it converts without loss or guess.
fn convert(value: &Value, to: Primitive) -> Option<String> {
    match (value, to) {
        (Value::Str(text), Primitive::Int) => int_literal(text),
        (Value::Str(text), Primitive::Float) => float_literal(text),
        (Value::Str(text), Primitive::Number) => int_literal(text).or_else(|| float_literal(text)),
        (Value::Str(text), Primitive::Bool) => match text.trim().to_ascii_lowercase().as_str() {
            "true" => Some("true".to_owned()),
            "false" => Some("false".to_owned()),
            _ => None,
        },
        (Value::Int(n), Primitive::String) => Some(format!("\"{n}\"")),
        (Value::Float(x), Primitive::String) if x.is_finite() => Some(format!("\"{x}\"")),
        (Value::Float(x), Primitive::Int) if x.fract() == 0.0 && x.abs() < 1e15 => Some(format!("{}", *x as i64)),
        (Value::Int(n), Primitive::Float) => Some(format!("{n}.0")),
        _ => None,
    }
}

/// `"9090"` → `9090`, `"0644"` → `644` (as Python's `int()` reads it), `"-3"` → `-3`.
fn int_literal(text: &str) -> Option<String> {
    let text = text.trim();
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<i64>().ok().map(|n| n.to_string())
}

/// `"1.5"` → `1.5`, `"2"` → `2.0`.
fn float_literal(text: &str) -> Option<String> {
    let text = text.trim();
    let plain = text.bytes().all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b));
    let x: f64 = text.parse().ok().filter(|x: &f64| x.is_finite() && plain)?;
    let shown = x.to_string();
    Some(if shown.contains(['.', 'e', 'E']) { shown } else { format!("{shown}.0") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_of_digits_become_numbers() {
        assert_eq!(convert(&Value::str("9090"), Primitive::Int).as_deref(), Some("9090"));
        assert_eq!(convert(&Value::str("0644"), Primitive::Int).as_deref(), Some("644"));
        assert_eq!(convert(&Value::str(" -3 "), Primitive::Int).as_deref(), Some("-3"));
        assert_eq!(convert(&Value::str("1.5"), Primitive::Float).as_deref(), Some("1.5"));
        assert_eq!(convert(&Value::str("2"), Primitive::Float).as_deref(), Some("2.0"));
        assert_eq!(convert(&Value::str("2"), Primitive::Number).as_deref(), Some("2"));
        assert_eq!(convert(&Value::str("True"), Primitive::Bool).as_deref(), Some("true"));
    }

    #[test]
    fn what_does_not_convert_cleanly_gets_no_fix() {
        assert_eq!(convert(&Value::str("90a"), Primitive::Int), None);
        assert_eq!(convert(&Value::str("1e400"), Primitive::Float), None);
        assert_eq!(convert(&Value::str("inf"), Primitive::Float), None);
        assert_eq!(convert(&Value::str("yes"), Primitive::Bool), None);
        assert_eq!(convert(&Value::str(""), Primitive::Int), None);
        assert_eq!(convert(&Value::Float(1.5), Primitive::Int), None);
        assert_eq!(convert(&Value::Bool(true), Primitive::String), None);
    }

    #[test]
    fn numbers_become_strings_and_floats() {
        assert_eq!(convert(&Value::Int(80), Primitive::String).as_deref(), Some("\"80\""));
        assert_eq!(convert(&Value::Int(80), Primitive::Float).as_deref(), Some("80.0"));
        assert_eq!(convert(&Value::Float(80.0), Primitive::Int).as_deref(), Some("80"));
    }
}
