//! Evaluating constant expressions at check time: attribute defaults, typedef constraints on
//! constants. Only what is certain is evaluated; anything else (variables other than `self`,
//! plugin calls, interpolation) gives `None`, meaning "not known statically".

use modelc_syntax::ast::{BinOp, Constraint, Expr, ExprKind};
use modelc_value::Value;
use modelc_value::ops::{self, Op};

use crate::index::Declarations;
use crate::types::{BaseType, ValueType};
use crate::validate::{Constraints, Misfit};

/// A value as the reference shows it in messages (`'x'`, `1`, `1e+16`, `True`, `None`): the
/// same Python `repr` execution uses.
pub fn repr(value: &Value) -> String {
    modelc_value::py_repr(value, &|_| String::new())
}

/// Evaluates `expr` with `self` bound to `self_value` (typedef constraints), if it is constant.
/// Operators are the same as execution's (`modelc_value::ops`); an integer literal beyond 64
/// bits, or an operation that fails, is not decided here (execution reports it).
pub(crate) fn eval(expr: &Expr, self_value: Option<&Value>) -> Option<Value> {
    eval_with(expr, &|name| if name == "self" { self_value.cloned() } else { None })
}

/// [`eval`], with the value of each plain name (`x`, `self`) that `names` knows.
pub(crate) fn eval_with(expr: &Expr, names: &dyn Fn(&str) -> Option<Value>) -> Option<Value> {
    modelc_syntax::stack::deep(|| eval_level(expr, names))
}

type Names<'n> = &'n dyn Fn(&str) -> Option<Value>;

fn eval_level(expr: &Expr, names: Names<'_>) -> Option<Value> {
    Some(match &expr.kind {
        ExprKind::Int(text) => Value::Int(text.parse().ok()?),
        ExprKind::Float(f) => Value::Float(*f),
        ExprKind::Bool(b) => Value::Bool(*b),
        ExprKind::Null => Value::Null,
        ExprKind::Str(s) => Value::str(s.as_constant()?),
        ExprKind::Var(path) if path.segments.len() == 1 => names(&path.segments[0].name)?,
        ExprKind::List(items) => {
            let mut out = Vec::new();
            for item in items {
                match eval_with(item, names)? {
                    // List literals flatten one level.
                    Value::List(inner) => out.extend(inner.iter().cloned()),
                    other => out.push(other),
                }
            }
            Value::list(out)
        }
        ExprKind::Dict(entries) => {
            let mut out = modelc_value::IndexMap::new();
            for entry in entries {
                out.insert(entry.key.as_constant()?, eval_with(&entry.value, names)?);
            }
            Value::dict(out)
        }
        ExprKind::Not(inner) => match eval_with(inner, names)? {
            Value::Bool(b) => Value::Bool(!b),
            _ => return None,
        },
        ExprKind::Conditional { condition, then, otherwise } => match eval_with(condition, names)? {
            Value::Bool(true) => eval_with(then, names)?,
            Value::Bool(false) => eval_with(otherwise, names)?,
            _ => return None,
        },
        ExprKind::Regex(regex) => match names("self")? {
            Value::Str(s) => Value::Bool(regex_match(&regex.pattern, &s)?),
            _ => return None,
        },
        ExprKind::Binary { op: BinOp::Add, lhs, .. } if matches!(lhs.kind, ExprKind::Binary { op: BinOp::Add, .. }) => {
            sum(expr, names)?
        }
        ExprKind::Binary { op, lhs, rhs } => binary(*op, lhs, rhs, names)?,
        _ => return None,
    })
}

/// A chain `a + b + …`, folded by `ops::Sum`.
fn sum(expr: &Expr, names: Names<'_>) -> Option<Value> {
    let mut links = Vec::new();
    let mut first = expr;
    while let ExprKind::Binary { op: BinOp::Add, lhs, rhs } = &first.kind {
        links.push(rhs);
        first = lhs;
    }
    let mut total = ops::Sum::new(eval_with(first, names)?);
    for operand in links.into_iter().rev() {
        total.add(&eval_with(operand, names)?).ok()?;
    }
    Some(total.finish())
}

fn binary(op: BinOp, lhs: &Expr, rhs: &Expr, names: Names<'_>) -> Option<Value> {
    let left = eval_with(lhs, names)?;
    if matches!(op, BinOp::And | BinOp::Or) {
        let Value::Bool(l) = left else { return None };
        if (op == BinOp::And && !l) || (op == BinOp::Or && l) {
            return Some(Value::Bool(l));
        }
        return match eval_with(rhs, names)? {
            Value::Bool(r) => Some(Value::Bool(r)),
            _ => None,
        };
    }
    let right = eval_with(rhs, names)?;
    ops::binary(Op::from_symbol(op.symbol())?, &left, &right).ok()
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

/// Checks a constant against a declared type ([`crate::validate`]), typedef constraints
/// included where they can be evaluated statically (a constraint that calls a plugin is
/// decided when the model runs).
pub fn validate(
    index: &(impl Declarations + ?Sized),
    ty: &ValueType,
    value: &Value,
) -> Result<(), Misfit<std::convert::Infallible>> {
    crate::validate::validate(&mut Static { index }, ty, value)
}

/// Constraints decided at check time.
struct Static<'i, D: Declarations + ?Sized> {
    index: &'i D,
}

impl<D: Declarations + ?Sized> Constraints for Static<'_, D> {
    type Failure = std::convert::Infallible;

    fn typedef_base(&self, fqn: &str) -> Option<BaseType> {
        self.index.typedef(fqn).map(|def| def.base.clone())
    }

    fn holds(&mut self, fqn: &str, value: &Value) -> Result<bool, Self::Failure> {
        let decided = match self.index.typedef(fqn).and_then(|def| def.constraint.as_ref()) {
            Some(Constraint::Expr(expr)) => eval(expr, Some(value)),
            Some(Constraint::Regex(regex)) => match value {
                Value::Str(s) => regex_match(&regex.pattern, s).map(Value::Bool),
                _ => None,
            },
            None => None,
        };
        Ok(!matches!(decided, Some(Value::Bool(false))))
    }

    fn show(&self, value: &Value) -> String {
        repr(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_regex_semantics() {
        assert_eq!(regex_match("^a$", "a\n"), Some(true));
        assert_eq!(regex_match("^a[$]", "a$"), Some(true));
        assert_eq!(regex_match("ab", "abzzz"), Some(true));
        assert_eq!(regex_match("ab", "zab"), Some(false));
    }

    #[test]
    fn messages_show_values_as_execution_does() {
        assert_eq!(repr(&Value::Float(1e16)), "1e+16");
        assert_eq!(repr(&Value::str("x")), "'x'");
        assert_eq!(repr(&Value::list(vec![Value::Bool(true), Value::Null])), "[True, null]");
    }
}
