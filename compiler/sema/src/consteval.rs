//! Evaluating constant expressions at check time: attribute defaults, typedef constraints on
//! constants. Only what is certain is evaluated; anything else (variables other than `self`,
//! plugin calls, interpolation) gives `None`, meaning "not known statically".

use modelc_syntax::ast::{BinOp, Constraint, Expr, ExprKind};

use crate::index::ModelIndex;
use crate::types::{BaseType, ValueType};

/// A constant value.
#[derive(Debug, Clone, PartialEq)]
pub enum Const {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    List(Vec<Const>),
    Dict(Vec<(String, Const)>),
}

impl Const {
    /// The value as the reference prints it in messages (`'x'`, `1`, `True`, `None`).
    pub fn repr(&self) -> String {
        match self {
            Const::Null => "None".to_owned(),
            Const::Bool(true) => "True".to_owned(),
            Const::Bool(false) => "False".to_owned(),
            Const::Int(i) => i.to_string(),
            Const::Float(f) => format_float(*f),
            Const::Str(s) => format!("'{s}'"),
            Const::List(items) => format!("[{}]", items.iter().map(Const::repr).collect::<Vec<_>>().join(", ")),
            Const::Dict(entries) => format!(
                "{{{}}}",
                entries.iter().map(|(k, v)| format!("'{k}': {}", v.repr())).collect::<Vec<_>>().join(", ")
            ),
        }
    }

    fn as_number(&self) -> Option<f64> {
        match self {
            Const::Bool(b) => Some(f64::from(u8::from(*b))),
            #[allow(clippy::cast_precision_loss, reason = "Python compares int and float the same way")]
            Const::Int(i) => Some(*i as f64),
            Const::Float(f) => Some(*f),
            _ => None,
        }
    }

    fn as_int(&self) -> Option<i128> {
        match self {
            Const::Bool(b) => Some(i128::from(*b)),
            Const::Int(i) => Some(*i),
            _ => None,
        }
    }

    fn py_eq(&self, other: &Const) -> bool {
        if let (Some(a), Some(b)) = (self.as_int(), other.as_int()) {
            return a == b;
        }
        match (self, other) {
            (Const::Str(a), Const::Str(b)) => a == b,
            (Const::Null, Const::Null) => true,
            (Const::List(a), Const::List(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.py_eq(y)),
            (Const::Dict(a), Const::Dict(b)) => {
                a.len() == b.len() && a.iter().all(|(k, v)| b.iter().any(|(k2, v2)| k == k2 && v.py_eq(v2)))
            }
            (a, b) => match (a.as_number(), b.as_number()) {
                (Some(x), Some(y)) => x == y,
                _ => false,
            },
        }
    }
}

fn format_float(f: f64) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e16 { format!("{f:.1}") } else { format!("{f}") }
}

/// Evaluates `expr` with `self` bound to `self_value` (typedef constraints), if it is constant.
pub fn eval(expr: &Expr, self_value: Option<&Const>) -> Option<Const> {
    Some(match &expr.kind {
        ExprKind::Int(text) => Const::Int(text.parse().ok()?),
        ExprKind::Float(f) => Const::Float(*f),
        ExprKind::Bool(b) => Const::Bool(*b),
        ExprKind::Null => Const::Null,
        ExprKind::Str(s) => Const::Str(s.as_constant()?),
        ExprKind::Var(path) if path.segments.len() == 1 && path.segments[0].name == "self" => self_value?.clone(),
        ExprKind::List(items) => {
            let mut out = Vec::new();
            for item in items {
                match eval(item, self_value)? {
                    // List literals flatten one level.
                    Const::List(inner) => out.extend(inner),
                    other => out.push(other),
                }
            }
            Const::List(out)
        }
        ExprKind::Dict(entries) => {
            let mut out = Vec::new();
            for entry in entries {
                out.push((entry.key.as_constant()?, eval(&entry.value, self_value)?));
            }
            Const::Dict(out)
        }
        ExprKind::Not(inner) => match eval(inner, self_value)? {
            Const::Bool(b) => Const::Bool(!b),
            _ => return None,
        },
        ExprKind::Conditional { condition, then, otherwise } => match eval(condition, self_value)? {
            Const::Bool(true) => eval(then, self_value)?,
            Const::Bool(false) => eval(otherwise, self_value)?,
            _ => return None,
        },
        ExprKind::Regex(regex) => match self_value? {
            Const::Str(s) => Const::Bool(regex_match(&regex.pattern, s)?),
            _ => return None,
        },
        ExprKind::Binary { op, lhs, rhs } => binary(*op, lhs, rhs, self_value)?,
        _ => return None,
    })
}

fn binary(op: BinOp, lhs: &Expr, rhs: &Expr, self_value: Option<&Const>) -> Option<Const> {
    let left = eval(lhs, self_value)?;
    if matches!(op, BinOp::And | BinOp::Or) {
        let Const::Bool(l) = left else { return None };
        if (op == BinOp::And && !l) || (op == BinOp::Or && l) {
            return Some(Const::Bool(l));
        }
        return match eval(rhs, self_value)? {
            Const::Bool(r) => Some(Const::Bool(r)),
            _ => None,
        };
    }
    let right = eval(rhs, self_value)?;
    Some(match op {
        BinOp::Eq => Const::Bool(left.py_eq(&right)),
        BinOp::Ne => Const::Bool(!left.py_eq(&right)),
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            let ordering = compare(&left, &right)?;
            Const::Bool(match op {
                BinOp::Lt => ordering.is_lt(),
                BinOp::Le => ordering.is_le(),
                BinOp::Gt => ordering.is_gt(),
                _ => ordering.is_ge(),
            })
        }
        BinOp::In | BinOp::NotIn => {
            let found = match &right {
                Const::List(items) => items.iter().any(|i| i.py_eq(&left)),
                Const::Dict(entries) => match &left {
                    Const::Str(k) => entries.iter().any(|(key, _)| key == k),
                    _ => return None,
                },
                _ => return None,
            };
            Const::Bool(found == (op == BinOp::In))
        }
        BinOp::Add => match (&left, &right) {
            (Const::Str(a), Const::Str(b)) => Const::Str(format!("{a}{b}")),
            _ => arithmetic(op, &left, &right)?,
        },
        _ => arithmetic(op, &left, &right)?,
    })
}

fn arithmetic(op: BinOp, left: &Const, right: &Const) -> Option<Const> {
    if let (Some(a), Some(b)) = (left.as_int(), right.as_int()) {
        return Some(match op {
            BinOp::Add => Const::Int(a.checked_add(b)?),
            BinOp::Sub => Const::Int(a.checked_sub(b)?),
            BinOp::Mul => Const::Int(a.checked_mul(b)?),
            BinOp::Mod if b != 0 => {
                // Python: the result has the sign of the divisor.
                // `i128::MIN % -1` overflows in Rust; any number modulo ±1 is 0.
                let r = if b.abs() == 1 { 0 } else { a.checked_rem_euclid(b)? };
                Const::Int(if b < 0 && r != 0 { r + b } else { r })
            }
            _ => return None,
        });
    }
    let (a, b) = (left.as_number()?, right.as_number()?);
    Some(Const::Float(match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div if b != 0.0 => a / b,
        _ => return None,
    }))
}

/// Compares two numbers the way Python does: integers exactly, mixed int and float only
/// where the integer converts exactly (otherwise not decided here).
fn compare(left: &Const, right: &Const) -> Option<std::cmp::Ordering> {
    if let (Some(a), Some(b)) = (left.as_int(), right.as_int()) {
        return Some(a.cmp(&b));
    }
    const EXACT: i128 = 1 << 53;
    let exact = |c: &Const| c.as_int().is_none_or(|i| (-EXACT..=EXACT).contains(&i));
    if !exact(left) || !exact(right) {
        return None;
    }
    left.as_number()?.partial_cmp(&right.as_number()?)
}

/// Python `re.match`: anchored at the start only.
///
/// Compiled patterns are cached per thread: a typedef's regex is checked against every value
/// of the type, and compiling it costs far more than matching.
pub fn regex_match(pattern: &str, text: &str) -> Option<bool> {
    thread_local! {
        static COMPILED: std::cell::RefCell<std::collections::HashMap<String, Option<fancy_regex::Regex>>> =
            std::cell::RefCell::default();
    }
    COMPILED.with(|cache| {
        let mut cache = cache.borrow_mut();
        if !cache.contains_key(pattern) {
            let compiled = fancy_regex::Regex::new(&format!("\\A(?:{})", python_dollar(pattern))).ok();
            cache.insert(pattern.to_owned(), compiled);
        }
        cache.get(pattern)?.as_ref()?.is_match(text).ok()
    })
}

/// In Python, `$` also matches just before a final newline; here it does only at the very
/// end. Rewrites each `$` outside a character class to Python's meaning.
fn python_dollar(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let (mut escaped, mut in_class) = (false, false);
    for c in pattern.chars() {
        match c {
            _ if escaped => {
                escaped = false;
                out.push(c);
                continue;
            }
            '\\' => escaped = true,
            '[' => in_class = true,
            ']' => in_class = false,
            '$' if !in_class => {
                out.push_str("(?=\\n?\\z)");
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// Why a constant does not fit a type.
#[derive(Debug, Clone, PartialEq)]
pub enum Violation {
    /// The value is not of the type at all.
    Type(String),
    /// The value has the base type but fails the typedef's constraint.
    Constraint { typedef: String, message: String },
}

/// Checks a constant against a declared type, typedef constraints included (where they can
/// be evaluated statically).
pub fn validate(index: &ModelIndex, ty: &ValueType, value: &Const) -> Result<(), Violation> {
    if *value == Const::Null {
        return if ty.nullable { Ok(()) } else { Err(Violation::Type(format!("Invalid value 'null', expected {ty}"))) };
    }
    if ty.list {
        let Const::List(items) = value else {
            return Err(Violation::Type(format!("Invalid value {}, expected {ty}", value.repr())));
        };
        let element = ValueType { base: ty.base.clone(), list: false, nullable: false };
        return items.iter().try_for_each(|item| validate(index, &element, item));
    }
    validate_base(index, &ty.base, value, 0)
}

fn validate_base(index: &ModelIndex, base: &BaseType, value: &Const, depth: usize) -> Result<(), Violation> {
    let ok = match base {
        BaseType::String => matches!(value, Const::Str(_)),
        BaseType::Int => matches!(value, Const::Int(_) | Const::Bool(_)),
        BaseType::Float => matches!(value, Const::Float(_)),
        BaseType::Number => matches!(value, Const::Int(_) | Const::Bool(_) | Const::Float(_)),
        BaseType::Bool => matches!(value, Const::Bool(_)),
        BaseType::List => matches!(value, Const::List(_)),
        BaseType::Dict => matches!(value, Const::Dict(_)),
        BaseType::Entity(_) => false,
        BaseType::Any | BaseType::Unresolved => true,
        BaseType::Typedef(fqn) => {
            let Some(def) = index.typedefs.get(fqn) else { return Ok(()) };
            // Typedef chains are short; a cycle (an error reported elsewhere) stops here.
            if depth < 16 {
                validate_base(index, &def.base, value, depth + 1)?;
            }
            let holds = match &def.constraint {
                Some(Constraint::Expr(expr)) => eval(expr, Some(value)),
                Some(Constraint::Regex(regex)) => match value {
                    Const::Str(s) => regex_match(&regex.pattern, s).map(Const::Bool),
                    _ => None,
                },
                None => None,
            };
            if holds == Some(Const::Bool(false)) {
                return Err(Violation::Constraint {
                    typedef: fqn.clone(),
                    message: format!("Invalid value {}, does not match the constraint of {fqn}", value.repr()),
                });
            }
            true
        }
    };
    if ok { Ok(()) } else { Err(Violation::Type(format!("Invalid value {}, expected {base}", value.repr()))) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_regex_and_number_semantics() {
        assert_eq!(regex_match("^a$", "a\n"), Some(true));
        assert_eq!(regex_match("^a[$]", "a$"), Some(true));
        assert_eq!(regex_match("ab", "abzzz"), Some(true));
        assert_eq!(regex_match("ab", "zab"), Some(false));
        let (big, bigger) = (Const::Int(9_007_199_254_740_992), Const::Int(9_007_199_254_740_993));
        assert!(!big.py_eq(&bigger));
        assert_eq!(compare(&big, &bigger), Some(std::cmp::Ordering::Less));
        assert_eq!(arithmetic(BinOp::Mod, &Const::Int(i128::MIN), &Const::Int(-1)), Some(Const::Int(0)));
        assert_eq!(arithmetic(BinOp::Mod, &Const::Int(7), &Const::Int(-3)), Some(Const::Int(-2)));
    }
}
