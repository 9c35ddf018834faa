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
    eval_with(expr, &|name: &str| if name == "self" { self_value.cloned() } else { None })
}

/// Evaluates `expr` with no variable known (a lowered expression's, or a syntax tree's).
pub(crate) fn eval_alone<E: ConstExpr>(expr: &E) -> Option<Value> {
    eval_with(expr, &|_| None)
}

/// [`eval`], with the value of each name (`x`, `self`) that `names` knows: a plain name of the
/// syntax tree, a resolved variable of the lowered program.
pub(crate) fn eval_with<E: ConstExpr>(expr: &E, names: &dyn Fn(&E::Name) -> Option<Value>) -> Option<Value> {
    modelc_syntax::stack::deep(|| eval_level(expr, names))
}

/// What constant evaluation needs to see of an expression. The syntax tree (defaults, typedef
/// constraints) and the lowered program (statement blocks) both show it, so the rules of what
/// is constant are written once, here.
pub(crate) trait ConstExpr: Sized {
    /// How a variable is named: the written name, or the resolved variable.
    type Name: ?Sized;
    fn shape(&self) -> Shape<'_, Self>;
}

pub(crate) enum Shape<'e, E: ConstExpr> {
    /// A literal.
    Literal(Value),
    /// A variable, looked up by the caller.
    Name(&'e E::Name),
    List(&'e [E]),
    /// `None` when a key is not a constant string.
    Dict(Option<Vec<(String, &'e E)>>),
    Not(&'e E),
    Conditional(&'e E, &'e E, &'e E),
    /// A regex as a value: whether the variable (`self`) matches it.
    Regex(&'e str, &'e E::Name),
    And(&'e E, &'e E),
    Or(&'e E, &'e E),
    Binary(Op, &'e E, &'e E),
    /// Anything else: not known statically.
    Unknown,
}

impl ConstExpr for Expr {
    type Name = str;

    fn shape(&self) -> Shape<'_, Expr> {
        match &self.kind {
            ExprKind::Int(text) => text.parse().map_or(Shape::Unknown, |i| Shape::Literal(Value::Int(i))),
            ExprKind::Float(f) => Shape::Literal(Value::Float(*f)),
            ExprKind::Bool(b) => Shape::Literal(Value::Bool(*b)),
            ExprKind::Null => Shape::Literal(Value::Null),
            ExprKind::Str(s) => s.as_constant().map_or(Shape::Unknown, |s| Shape::Literal(Value::str(s))),
            ExprKind::Var(path) if path.segments.len() == 1 => Shape::Name(path.segments[0].name.as_str()),
            ExprKind::List(items) => Shape::List(items),
            ExprKind::Dict(entries) => {
                Shape::Dict(entries.iter().map(|e| Some((e.key.as_constant()?, &e.value))).collect())
            }
            ExprKind::Not(inner) => Shape::Not(inner),
            ExprKind::Conditional { condition, then, otherwise } => Shape::Conditional(condition, then, otherwise),
            ExprKind::Regex(regex) => Shape::Regex(&regex.pattern, "self"),
            ExprKind::Binary { op: BinOp::And, lhs, rhs } => Shape::And(lhs, rhs),
            ExprKind::Binary { op: BinOp::Or, lhs, rhs } => Shape::Or(lhs, rhs),
            ExprKind::Binary { op, lhs, rhs } => {
                Op::from_symbol(op.symbol()).map_or(Shape::Unknown, |op| Shape::Binary(op, lhs, rhs))
            }
            _ => Shape::Unknown,
        }
    }
}

impl ConstExpr for crate::hir::Expr {
    type Name = crate::hir::Var;

    fn shape(&self) -> Shape<'_, crate::hir::Expr> {
        use crate::hir::{BinOp as HirOp, ExprKind as Hir};
        match &self.kind {
            Hir::Int(i) => Shape::Literal(Value::Int(*i)),
            Hir::Float(f) => Shape::Literal(Value::Float(*f)),
            Hir::Bool(b) => Shape::Literal(Value::Bool(*b)),
            Hir::Null => Shape::Literal(Value::Null),
            Hir::Str(parts) => {
                crate::hir::constant_text(parts).map_or(Shape::Unknown, |t| Shape::Literal(Value::str(t)))
            }
            Hir::Var(var) => Shape::Name(var),
            Hir::List(items) => Shape::List(items),
            Hir::Dict(entries) => Shape::Dict(Some(entries.iter().map(|(k, v)| (k.clone(), v)).collect())),
            Hir::Not(inner) => Shape::Not(inner),
            Hir::Conditional { condition, then, otherwise } => Shape::Conditional(condition, then, otherwise),
            Hir::Regex { pattern, subject } => Shape::Regex(pattern, subject),
            Hir::Binary { op: HirOp::And, lhs, rhs } => Shape::And(lhs, rhs),
            Hir::Binary { op: HirOp::Or, lhs, rhs } => Shape::Or(lhs, rhs),
            Hir::Binary { op: HirOp::Value(op), lhs, rhs } => Shape::Binary(*op, lhs, rhs),
            _ => Shape::Unknown,
        }
    }
}

type Names<'n, N> = &'n dyn Fn(&N) -> Option<Value>;

fn eval_level<E: ConstExpr>(expr: &E, names: Names<'_, E::Name>) -> Option<Value> {
    Some(match expr.shape() {
        Shape::Literal(value) => value,
        Shape::Name(name) => names(name)?,
        Shape::List(items) => {
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
        Shape::Dict(entries) => {
            let mut out = modelc_value::IndexMap::new();
            for (key, value) in entries? {
                out.insert(key, eval_with(value, names)?);
            }
            Value::dict(out)
        }
        Shape::Not(inner) => match eval_with(inner, names)? {
            Value::Bool(b) => Value::Bool(!b),
            _ => return None,
        },
        Shape::Conditional(condition, then, otherwise) => match eval_with(condition, names)? {
            Value::Bool(true) => eval_with(then, names)?,
            Value::Bool(false) => eval_with(otherwise, names)?,
            _ => return None,
        },
        Shape::Regex(pattern, subject) => match names(subject)? {
            Value::Str(s) => Value::Bool(regex_match(pattern, &s)?),
            _ => return None,
        },
        Shape::And(lhs, rhs) => logic(false, lhs, rhs, names)?,
        Shape::Or(lhs, rhs) => logic(true, lhs, rhs, names)?,
        Shape::Binary(Op::Add, lhs, _) if matches!(lhs.shape(), Shape::Binary(Op::Add, ..)) => sum(expr, names)?,
        Shape::Binary(op, lhs, rhs) => {
            let (left, right) = (eval_with(lhs, names)?, eval_with(rhs, names)?);
            ops::binary(op, &left, &right).ok()?
        }
        Shape::Unknown => return None,
    })
}

/// A chain `a + b + …`, folded by `ops::Sum`.
fn sum<E: ConstExpr>(expr: &E, names: Names<'_, E::Name>) -> Option<Value> {
    let mut links = Vec::new();
    let mut first = expr;
    while let Shape::Binary(Op::Add, lhs, rhs) = first.shape() {
        links.push(rhs);
        first = lhs;
    }
    let mut total = ops::Sum::new(eval_with(first, names)?);
    for operand in links.into_iter().rev() {
        total.add(&eval_with(operand, names)?).ok()?;
    }
    Some(total.finish())
}

/// `and` (`decides_on` false) or `or` (true): the right operand only when the left does not
/// decide, and only booleans.
fn logic<E: ConstExpr>(decides_on: bool, lhs: &E, rhs: &E, names: Names<'_, E::Name>) -> Option<Value> {
    let Value::Bool(l) = eval_with(lhs, names)? else { return None };
    if l == decides_on {
        return Some(Value::Bool(l));
    }
    match eval_with(rhs, names)? {
        Value::Bool(r) => Some(Value::Bool(r)),
        _ => None,
    }
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
