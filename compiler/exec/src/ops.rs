//! Operators and casts with Python's semantics (spec §4.9, §3.2).

use modelc_diagnostics::{Diagnostic, Span, codes};
use modelc_syntax::ast::{BinOp, Expr};
use modelc_value::Value;

use crate::cells::{ScopeId, TaskId};
use crate::engine::{Engine, Eval};

impl<'a> Engine<'a> {
    pub(crate) fn eval_binary(
        &mut self,
        task: TaskId,
        op: BinOp,
        lhs: &'a Expr,
        rhs: &'a Expr,
        span: Span,
        scope: ScopeId,
    ) -> Eval<Value> {
        let left = self.eval(task, lhs, scope)?;
        if matches!(op, BinOp::And | BinOp::Or) {
            let l = match left {
                Value::Bool(b) => b,
                Value::Unknown => return Ok(Value::Unknown),
                other => {
                    return Err(self.fail(
                        scope,
                        lhs.span,
                        Diagnostic::new(
                            &codes::INVALID_OPERAND,
                            format!(
                                "invalid left hand value `{}`: `{}` expects a boolean",
                                self.interpolate(&other),
                                op.symbol()
                            ),
                        ),
                        "not a boolean",
                    ));
                }
            };
            if (op == BinOp::And && !l) || (op == BinOp::Or && l) {
                return Ok(Value::Bool(l));
            }
            return match self.eval(task, rhs, scope)? {
                Value::Bool(r) => Ok(Value::Bool(r)),
                Value::Unknown => Ok(Value::Unknown),
                other => Err(self.fail(
                    scope,
                    rhs.span,
                    Diagnostic::new(
                        &codes::INVALID_OPERAND,
                        format!("invalid value '{}', expected bool", self.interpolate(&other)),
                    ),
                    "not a boolean",
                )),
            };
        }
        let right = self.eval(task, rhs, scope)?;
        if left.is_unknown() || right.is_unknown() {
            return Ok(Value::Unknown);
        }
        let fail = |e: &Self, message: String| {
            Err(e.fail(scope, span, Diagnostic::new(&codes::INVALID_OPERAND, message), "invalid operands"))
        };
        Ok(match op {
            BinOp::Eq => Value::Bool(left.py_eq(&right)),
            BinOp::Ne => Value::Bool(!left.py_eq(&right)),
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let (Some(a), Some(b)) = (number(&left), number(&right)) else {
                    return fail(self, "can only compare numbers".to_owned());
                };
                let ordering = compare(a, b);
                Value::Bool(match op {
                    BinOp::Lt => ordering.is_lt(),
                    BinOp::Le => ordering.is_le(),
                    BinOp::Gt => ordering.is_gt(),
                    _ => ordering.is_ge(),
                })
            }
            BinOp::In | BinOp::NotIn => {
                let found = match &right {
                    Value::List(items) => {
                        if items.iter().any(|i| i.py_eq(&left)) {
                            Some(true)
                        } else if items.iter().any(Value::is_unknown) {
                            None
                        } else {
                            Some(false)
                        }
                    }
                    Value::Dict(d) => Some(left.as_str().is_some_and(|k| d.contains_key(k))),
                    other => {
                        return fail(
                            self,
                            format!("operand two of 'in' can only be a list or dict, not {}", other.type_name()),
                        );
                    }
                };
                match found {
                    Some(f) => Value::Bool(f == (op == BinOp::In)),
                    None => Value::Unknown,
                }
            }
            BinOp::Add => match (&left, &right) {
                (Value::Str(a), Value::Str(b)) => Value::str(format!("{a}{b}")),
                (Value::Str(_), other) => {
                    return fail(self, format!("can only concatenate str (not '{}') to str", other.type_name()));
                }
                _ => match arithmetic(op, &left, &right) {
                    Some(v) => v,
                    None => return fail(self, unsupported(op, &left, &right)),
                },
            },
            BinOp::Div if number(&right).is_some_and(|n| n.is_zero()) => {
                return fail(self, "division by zero".to_owned());
            }
            BinOp::Mod if number(&right).is_some_and(|n| n.is_zero()) => {
                return fail(self, "modulo by zero".to_owned());
            }
            _ => match arithmetic(op, &left, &right) {
                Some(v) => v,
                None => return fail(self, unsupported(op, &left, &right)),
            },
        })
    }
}

fn unsupported(op: BinOp, left: &Value, right: &Value) -> String {
    format!("unsupported operand type(s) for {}: '{}' and '{}'", op.symbol(), left.type_name(), right.type_name())
}

#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    fn is_zero(self) -> bool {
        match self {
            Num::Int(i) => i == 0,
            Num::Float(f) => f == 0.0,
        }
    }

    #[allow(clippy::cast_precision_loss, reason = "Python converts int to float the same way")]
    fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

fn number(value: &Value) -> Option<Num> {
    match value {
        Value::Bool(b) => Some(Num::Int(i64::from(*b))),
        Value::Int(i) => Some(Num::Int(*i)),
        Value::Float(f) => Some(Num::Float(*f)),
        _ => None,
    }
}

fn compare(a: Num, b: Num) -> std::cmp::Ordering {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x.cmp(&y),
        _ => a.as_f64().partial_cmp(&b.as_f64()).unwrap_or(std::cmp::Ordering::Equal),
    }
}

fn arithmetic(op: BinOp, left: &Value, right: &Value) -> Option<Value> {
    let (a, b) = (number(left)?, number(right)?);
    if let (Num::Int(x), Num::Int(y)) = (a, b) {
        return Some(match op {
            BinOp::Add => Value::Int(x.checked_add(y)?),
            BinOp::Sub => Value::Int(x.checked_sub(y)?),
            BinOp::Mul => Value::Int(x.checked_mul(y)?),
            #[allow(clippy::cast_precision_loss, reason = "true division")]
            BinOp::Div => Value::Float(x as f64 / y as f64),
            BinOp::Mod => {
                let r = if y.abs() == 1 { 0 } else { x.checked_rem_euclid(y)? };
                Value::Int(if y < 0 && r != 0 { r + y } else { r })
            }
            BinOp::Pow if y >= 0 => Value::Int(x.checked_pow(u32::try_from(y).ok()?)?),
            #[allow(clippy::cast_precision_loss, reason = "negative powers are floats in Python")]
            BinOp::Pow => Value::Float((x as f64).powf(y as f64)),
            _ => return None,
        });
    }
    let (x, y) = (a.as_f64(), b.as_f64());
    Some(Value::Float(match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => x / y,
        BinOp::Mod => {
            let r = x % y;
            if r != 0.0 && (r < 0.0) != (y < 0.0) { r + y } else { r }
        }
        BinOp::Pow => x.powf(y),
        _ => return None,
    }))
}

/// A primitive cast (`int(x)`), with Python's semantics.
pub(crate) fn cast(
    name: &str,
    value: &Value,
    describe: &dyn Fn(modelc_value::InstanceId) -> String,
) -> Result<Value, String> {
    if value.is_unknown() {
        return Ok(Value::Unknown);
    }
    let failed = || format!("Failed to cast '{}' to {name}", modelc_value::cast_string(value, describe));
    Ok(match name {
        "string" => Value::str(modelc_value::cast_string(value, describe)),
        "bool" => Value::Bool(value.py_bool().ok_or_else(failed)?),
        "int" => match value {
            Value::Bool(b) => Value::Int(i64::from(*b)),
            Value::Int(i) => Value::Int(*i),
            #[allow(clippy::cast_possible_truncation, reason = "Python truncates towards zero")]
            Value::Float(f) if f.is_finite() => Value::Int(f.trunc() as i64),
            Value::Str(s) => Value::Int(s.trim().parse::<i64>().map_err(|_| failed())?),
            _ => return Err(failed()),
        },
        "float" => match value {
            #[allow(clippy::cast_precision_loss, reason = "Python float()")]
            Value::Bool(_) | Value::Int(_) => Value::Float(value.as_int().unwrap_or(0) as f64),
            Value::Float(f) => Value::Float(*f),
            Value::Str(s) => Value::Float(s.trim().parse::<f64>().map_err(|_| failed())?),
            _ => return Err(failed()),
        },
        _ => match value {
            Value::Bool(_) | Value::Int(_) | Value::Float(_) => value.clone(),
            Value::Str(s) => match s.trim().parse::<i64>() {
                Ok(i) => Value::Float(i as f64),
                Err(_) => Value::Float(s.trim().parse::<f64>().map_err(|_| failed())?),
            },
            _ => return Err(failed()),
        },
    })
}
