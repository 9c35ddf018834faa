//! The runtime values of the `.cf` language (spec §3.1): null, booleans, integers, floats,
//! strings, lists, dicts, entity instances and the *unknown* placeholder, with the Python
//! semantics the reference compiler gives them: equality (`1 == 1.0`, `true == 1`), ordering for
//! sorting, truthiness, the string conversions of casts, interpolation and `std::print`
//! ([`display`]), Python's `str.format` mini-language ([`format_spec`]) and JSON ([`json`]).
//!
//! Integers are `i64`: the reference has unbounded integers, we document `i64` as our limit and
//! every arithmetic operation in this crate is checked.

pub mod display;
pub mod dumps;
pub mod float;
pub mod format_spec;
pub mod json;
pub mod ops;
mod ord;

use std::sync::Arc;

pub use arcstr::ArcStr;
pub use indexmap::IndexMap;

pub use display::{cast_string, interpolate, known_string, print_string, py_repr, py_str_repr, write_repr};
pub use float::py_float_repr;

/// The identity of an entity instance; the executor owns the instances and names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstanceId(pub u32);

/// A value of the language.
///
/// Lists and dicts are shared (`Arc`): values are immutable once built, and cloning one is cheap.
#[derive(Clone, Debug)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// A thin shared string (one pointer), so that a value is two words.
    Str(arcstr::ArcStr),
    List(Arc<Vec<Value>>),
    Dict(Arc<IndexMap<String, Value>>),
    Instance(InstanceId),
    /// A value that is not known at compile time (spec §4.10).
    Unknown,
}

impl Value {
    /// A string value.
    pub fn str(s: impl Into<arcstr::ArcStr>) -> Value {
        Value::Str(s.into())
    }

    /// A list value.
    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Arc::new(items))
    }

    /// A dict value.
    pub fn dict(entries: IndexMap<String, Value>) -> Value {
        Value::Dict(Arc::new(entries))
    }

    /// The name of the value's type, as Python names it in messages (`int`, `str`, `list`,
    /// `NoneType`); instances are `Instance`, unknowns `Unknown`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::List(_) => "list",
            Value::Dict(_) => "dict",
            Value::Instance(_) => "Instance",
            Value::Unknown => "Unknown",
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self, Value::Unknown)
    }

    /// Unknown, or a list or dict holding an unknown at any depth (instances are not looked
    /// into).
    pub fn contains_unknown(&self) -> bool {
        match self {
            Value::Unknown => true,
            Value::List(items) => items.iter().any(Value::contains_unknown),
            Value::Dict(entries) => entries.values().any(Value::contains_unknown),
            _ => false,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, if this is an `int` in the DSL sense: integers and booleans.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }

    /// The number as a float, for any int, float or bool.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        }
    }

    /// The list elements, if this is a list.
    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(items) => Some(items),
            _ => None,
        }
    }

    /// The dict, if this is one.
    pub fn as_dict(&self) -> Option<&IndexMap<String, Value>> {
        match self {
            Value::Dict(d) => Some(d),
            _ => None,
        }
    }

    /// Python equality: `1 == 1.0`, `true == 1`, `"1" != 1`, lists and dicts structurally (dicts
    /// ignore order), instances by identity, `null == null`. An unknown equals nothing, itself
    /// included (the executor makes comparisons with unknowns unknown before they get here).
    pub fn py_eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::List(a), Value::List(b)) => {
                Arc::ptr_eq(a, b) || (a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.py_eq(y)))
            }
            (Value::Dict(a), Value::Dict(b)) => {
                Arc::ptr_eq(a, b) || (a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| v.py_eq(w))))
            }
            (Value::Instance(a), Value::Instance(b)) => a == b,
            (a, b) => match (Num::of(a), Num::of(b)) {
                (Some(x), Some(y)) => x.eq(y),
                _ => false,
            },
        }
    }

    /// The same value written the same way: same kind, same contents, floats bit for bit,
    /// dicts in the same order. What caches compare (`py_eq` is the language's `==`).
    pub fn identical(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) | (Value::Unknown, Value::Unknown) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits(),
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::List(a), Value::List(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.identical(y))
            }
            (Value::Dict(a), Value::Dict(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|((k, v), (l, w))| k == l && v.identical(w))
            }
            (Value::Instance(a), Value::Instance(b)) => a == b,
            _ => false,
        }
    }

    /// Python truthiness, as `bool(x)` casts it: `0`, `0.0`, `""`, `[]`, `{}` and `null` are
    /// false. `None` for an unknown.
    pub fn py_bool(&self) -> Option<bool> {
        Some(match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Dict(d) => !d.is_empty(),
            Value::Instance(_) => true,
            Value::Unknown => return None,
        })
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}

impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Value::Float(f)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(s.into())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(s.into())
    }
}

impl From<Vec<Value>> for Value {
    fn from(items: Vec<Value>) -> Value {
        Value::list(items)
    }
}

impl From<IndexMap<String, Value>> for Value {
    fn from(entries: IndexMap<String, Value>) -> Value {
        Value::dict(entries)
    }
}

/// A number for mixed comparisons: bools count as 0/1.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    pub(crate) fn is_zero(self) -> bool {
        match self {
            Num::Int(i) => i == 0,
            Num::Float(f) => f == 0.0,
        }
    }

    #[allow(clippy::cast_precision_loss, reason = "Python converts int to float the same way")]
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    pub(crate) fn of(v: &Value) -> Option<Num> {
        match v {
            Value::Bool(b) => Some(Num::Int(i64::from(*b))),
            Value::Int(i) => Some(Num::Int(*i)),
            Value::Float(f) => Some(Num::Float(*f)),
            _ => None,
        }
    }

    fn eq(self, other: Num) -> bool {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a == b,
            (Num::Float(a), Num::Float(b)) => a == b,
            (Num::Int(i), Num::Float(f)) | (Num::Float(f), Num::Int(i)) => int_eq_float(i, f),
        }
    }
}

/// Exact comparison of an integer with a float (no rounding of the integer).
fn int_eq_float(i: i64, f: f64) -> bool {
    // Every float at or beyond ±2^63 is outside i64; within, an integral float converts exactly.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    f.fract() == 0.0 && (-LIMIT..LIMIT).contains(&f) && f as i64 == i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(items: Vec<Value>) -> Value {
        Value::list(items)
    }

    #[test]
    fn equality_follows_python() {
        assert!(Value::Int(1).py_eq(&Value::Float(1.0)));
        assert!(Value::Bool(true).py_eq(&Value::Int(1)));
        assert!(Value::Bool(false).py_eq(&Value::Float(0.0)));
        assert!(!Value::str("1").py_eq(&Value::Int(1)));
        assert!(Value::Null.py_eq(&Value::Null));
        assert!(!Value::Null.py_eq(&Value::Bool(false)));
        assert!(l(vec![Value::Int(1), Value::str("a")]).py_eq(&l(vec![Value::Float(1.0), Value::str("a")])));
        assert!(!l(vec![Value::Int(1)]).py_eq(&l(vec![Value::Int(1), Value::Int(2)])));
        assert!(!Value::Float(f64::NAN).py_eq(&Value::Float(f64::NAN)));
        assert!(!Value::Int(i64::MAX).py_eq(&Value::Float(9_223_372_036_854_775_808.0)));
        assert!(Value::Instance(InstanceId(3)).py_eq(&Value::Instance(InstanceId(3))));
        assert!(!Value::Instance(InstanceId(3)).py_eq(&Value::Instance(InstanceId(4))));
        assert!(!Value::Unknown.py_eq(&Value::Unknown));
    }

    #[test]
    fn dict_equality_ignores_order() {
        let a: IndexMap<String, Value> = [("a".to_string(), Value::Int(1)), ("b".to_string(), Value::Null)].into();
        let b: IndexMap<String, Value> = [("b".to_string(), Value::Null), ("a".to_string(), Value::Float(1.0))].into();
        assert!(Value::dict(a.clone()).py_eq(&Value::dict(b)));
        let c: IndexMap<String, Value> = [("a".to_string(), Value::Int(2))].into();
        assert!(!Value::dict(a).py_eq(&Value::dict(c)));
    }

    #[test]
    fn truthiness_follows_python() {
        assert_eq!(Value::Int(0).py_bool(), Some(false));
        assert_eq!(Value::str("false").py_bool(), Some(true));
        assert_eq!(Value::list(vec![]).py_bool(), Some(false));
        assert_eq!(Value::Null.py_bool(), Some(false));
        assert_eq!(Value::Float(0.5).py_bool(), Some(true));
        assert_eq!(Value::Unknown.py_bool(), None);
    }

    #[test]
    fn type_names_are_pythons() {
        assert_eq!(Value::Int(1).type_name(), "int");
        assert_eq!(Value::str("").type_name(), "str");
        assert_eq!(Value::Null.type_name(), "NoneType");
        assert_eq!(Value::list(vec![]).type_name(), "list");
    }
}
