//! Binary operators and primitive casts with Python's semantics (spec §3.2, §4.9): the one
//! implementation that execution runs and that analysis evaluates constants with.
//!
//! Integers are 64-bit: where Python's unbounded integers would leave that range, the operation
//! is an error (`integer out of range`), where the reference would go on (a listed difference).

use std::cmp::Ordering;

use crate::{InstanceId, Num, Value};

/// A binary operator other than `and`/`or` (those short-circuit, so their callers evaluate them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    NotIn,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
}

impl Op {
    /// The operator written as `symbol` (`"=="`, `"not in"`, `"**"`); `None` for `and`, `or`
    /// and anything else.
    pub fn from_symbol(symbol: &str) -> Option<Op> {
        Some(match symbol {
            "==" => Op::Eq,
            "!=" => Op::Ne,
            "<" => Op::Lt,
            "<=" => Op::Le,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            "in" => Op::In,
            "not in" => Op::NotIn,
            "+" => Op::Add,
            "-" => Op::Sub,
            "*" => Op::Mul,
            "/" => Op::Div,
            "%" => Op::Mod,
            "**" => Op::Pow,
            _ => return None,
        })
    }

    pub fn symbol(self) -> &'static str {
        match self {
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::In => "in",
            Op::NotIn => "not in",
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
            Op::Mod => "%",
            Op::Pow => "**",
        }
    }
}

/// The kind of a value, as far as operators care: what the typing table is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Null,
    Bool,
    Int,
    Float,
    Str,
    List,
    Dict,
    Instance,
}

impl Kind {
    /// The kind of a value; `None` for an unknown.
    pub fn of(value: &Value) -> Option<Kind> {
        Some(match value {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Bool,
            Value::Int(_) => Kind::Int,
            Value::Float(_) => Kind::Float,
            Value::Str(_) => Kind::Str,
            Value::List(_) => Kind::List,
            Value::Dict(_) => Kind::Dict,
            Value::Instance(_) => Kind::Instance,
            Value::Unknown => return None,
        })
    }

    fn is_number(self) -> bool {
        matches!(self, Kind::Bool | Kind::Int | Kind::Float)
    }

    /// Python's name of the type, as its messages write it.
    pub fn python_name(self) -> &'static str {
        match self {
            Kind::Null => "NoneType",
            Kind::Bool => "bool",
            Kind::Int => "int",
            Kind::Float => "float",
            Kind::Str => "str",
            Kind::List => "list",
            Kind::Dict => "dict",
            Kind::Instance => "Instance",
        }
    }
}

/// The operator typing table, shared by the static checks and execution: the kind of
/// `left op right` for operands of these kinds (`None` when it depends on the values: `int **
/// int` is a float for a negative exponent), or the reference's message for why the operands do
/// not fit the operator.
pub fn typing(op: Op, left: Kind, right: Kind) -> Result<Option<Kind>, String> {
    let unsupported = || {
        format!(
            "unsupported operand type(s) for {}: '{}' and '{}'",
            op.symbol(),
            left.python_name(),
            right.python_name()
        )
    };
    Ok(Some(match op {
        Op::Eq | Op::Ne => Kind::Bool,
        Op::Lt | Op::Le | Op::Gt | Op::Ge if left.is_number() && right.is_number() => Kind::Bool,
        Op::Lt | Op::Le | Op::Gt | Op::Ge => return Err("can only compare numbers".to_owned()),
        Op::In | Op::NotIn if matches!(right, Kind::List | Kind::Dict) => Kind::Bool,
        Op::In | Op::NotIn => {
            return Err(format!("operand two of 'in' can only be a list or dict, not {}", right.python_name()));
        }
        Op::Add if left == Kind::Str && right == Kind::Str => Kind::Str,
        Op::Add if left == Kind::Str => {
            return Err(format!("can only concatenate str (not '{}') to str", right.python_name()));
        }
        _ if !(left.is_number() && right.is_number()) => return Err(unsupported()),
        Op::Div => Kind::Float,
        Op::Pow if left != Kind::Float && right != Kind::Float => return Ok(None),
        _ if left == Kind::Float || right == Kind::Float => Kind::Float,
        _ => Kind::Int,
    }))
}

/// `left op right`. An unknown operand gives an unknown, and so does `in` over a list that
/// holds unknowns when no known element matches. An error is the reference's message.
pub fn binary(op: Op, left: &Value, right: &Value) -> Result<Value, String> {
    if left.is_unknown() || right.is_unknown() {
        return Ok(Value::Unknown);
    }
    // The operands fit the operator (the table the static checks use too); then the values.
    if let (Some(l), Some(r)) = (Kind::of(left), Kind::of(right)) {
        typing(op, l, r)?;
    }
    Ok(match op {
        Op::Eq => Value::Bool(left.py_eq(right)),
        Op::Ne => Value::Bool(!left.py_eq(right)),
        Op::Lt | Op::Le | Op::Gt | Op::Ge => {
            let (Some(a), Some(b)) = (Num::of(left), Num::of(right)) else {
                return Err("can only compare numbers".to_owned());
            };
            // Every comparison with NaN is false, as in Python.
            let Some(ordering) = compare(a, b) else { return Ok(Value::Bool(false)) };
            Value::Bool(match op {
                Op::Lt => ordering.is_lt(),
                Op::Le => ordering.is_le(),
                Op::Gt => ordering.is_gt(),
                _ => ordering.is_ge(),
            })
        }
        Op::In | Op::NotIn => {
            let found = match right {
                Value::List(items) => {
                    if items.iter().any(|i| i.py_eq(left)) {
                        true
                    } else if items.iter().any(Value::is_unknown) {
                        return Ok(Value::Unknown);
                    } else {
                        false
                    }
                }
                Value::Dict(d) => left.as_str().is_some_and(|k| d.contains_key(k)),
                _ => false,
            };
            Value::Bool(found == (op == Op::In))
        }
        Op::Add => match (left, right) {
            (Value::Str(a), Value::Str(b)) => Value::str(format!("{a}{b}")),
            _ => arithmetic(op, left, right)?,
        },
        Op::Div if Num::of(right).is_some_and(Num::is_zero) => return Err("division by zero".to_owned()),
        Op::Mod if Num::of(right).is_some_and(Num::is_zero) => return Err("modulo by zero".to_owned()),
        _ => arithmetic(op, left, right)?,
    })
}

/// A chain `a + b + …` folded left to right, as `binary(Op::Add, …)` would fold it, with a run
/// of strings appended to one buffer: folding operator by operator copied every partial sum
/// again (n² bytes for n strings).
pub struct Sum {
    total: Value,
    /// The sum so far while it is a string being built; `total` is stale meanwhile.
    text: Option<String>,
}

impl Sum {
    pub fn new(first: Value) -> Sum {
        Sum { total: first, text: None }
    }

    /// Adds the next operand; the error is `binary`'s.
    pub fn add(&mut self, right: &Value) -> Result<(), String> {
        if let Value::Str(r) = right {
            if let Some(text) = self.text.as_mut() {
                text.push_str(r);
                return Ok(());
            }
            if let Value::Str(l) = &self.total {
                self.text = Some(format!("{l}{r}"));
                return Ok(());
            }
        }
        if let Some(text) = self.text.take() {
            self.total = Value::str(text);
        }
        self.total = binary(Op::Add, &self.total, right)?;
        Ok(())
    }

    pub fn finish(self) -> Value {
        self.text.map_or(self.total, Value::str)
    }
}

/// Exact ordering of two numbers (an integer and a float compared without rounding); `None`
/// when one is NaN.
fn compare(a: Num, b: Num) -> Option<Ordering> {
    let nan = |n: Num| matches!(n, Num::Float(f) if f.is_nan());
    if nan(a) || nan(b) {
        return None;
    }
    Some(crate::ord::cmp_num(a, b))
}

fn arithmetic(op: Op, left: &Value, right: &Value) -> Result<Value, String> {
    let unsupported = || {
        format!("unsupported operand type(s) for {}: '{}' and '{}'", op.symbol(), left.type_name(), right.type_name())
    };
    let (Some(a), Some(b)) = (Num::of(left), Num::of(right)) else { return Err(unsupported()) };
    let out_of_range = || "integer out of range".to_owned();
    if let (Num::Int(x), Num::Int(y)) = (a, b) {
        return Ok(match op {
            Op::Add => Value::Int(x.checked_add(y).ok_or_else(out_of_range)?),
            Op::Sub => Value::Int(x.checked_sub(y).ok_or_else(out_of_range)?),
            Op::Mul => Value::Int(x.checked_mul(y).ok_or_else(out_of_range)?),
            #[allow(clippy::cast_precision_loss, reason = "true division")]
            Op::Div => Value::Float(x as f64 / y as f64),
            Op::Mod => {
                // Python: the result has the sign of the divisor. `i64::MIN % -1` overflows in
                // Rust; any number modulo ±1 is 0.
                let r = if y.abs() == 1 { 0 } else { x.checked_rem_euclid(y).ok_or_else(out_of_range)? };
                Value::Int(if y < 0 && r != 0 { r + y } else { r })
            }
            Op::Pow if y >= 0 => {
                let exponent = u32::try_from(y).map_err(|_| out_of_range())?;
                Value::Int(x.checked_pow(exponent).ok_or_else(out_of_range)?)
            }
            #[allow(clippy::cast_precision_loss, reason = "negative powers are floats in Python")]
            Op::Pow => Value::Float((x as f64).powf(y as f64)),
            _ => return Err(unsupported()),
        });
    }
    let (x, y) = (a.as_f64(), b.as_f64());
    Ok(Value::Float(match op {
        Op::Add => x + y,
        Op::Sub => x - y,
        Op::Mul => x * y,
        Op::Div => x / y,
        Op::Mod => {
            let r = x % y;
            if r != 0.0 && (r < 0.0) != (y < 0.0) { r + y } else { r }
        }
        Op::Pow => x.powf(y),
        _ => return Err(unsupported()),
    }))
}

/// A primitive cast (`int(x)`, `string(x)`, …), with Python's semantics.
pub fn cast(name: &str, value: &Value, describe: &dyn Fn(InstanceId) -> String) -> Result<Value, String> {
    if value.is_unknown() {
        return Ok(Value::Unknown);
    }
    let failed = || format!("Failed to cast '{}' to {name}", crate::cast_string(value, describe));
    Ok(match name {
        "string" => Value::str(crate::cast_string(value, describe)),
        "bool" => Value::Bool(value.py_bool().ok_or_else(failed)?),
        "int" => match value {
            Value::Bool(b) => Value::Int(i64::from(*b)),
            Value::Int(i) => Value::Int(*i),
            #[allow(clippy::cast_possible_truncation, reason = "Python truncates towards zero")]
            Value::Float(f) if f.is_finite() => Value::Int(f.trunc() as i64),
            Value::Str(s) => Value::Int(python_number_text(s).parse::<i64>().map_err(|_| failed())?),
            _ => return Err(failed()),
        },
        "float" => match value {
            #[allow(clippy::cast_precision_loss, reason = "Python float()")]
            Value::Bool(_) | Value::Int(_) => Value::Float(value.as_int().unwrap_or(0) as f64),
            Value::Float(f) => Value::Float(*f),
            Value::Str(s) => Value::Float(python_number_text(s).parse::<f64>().map_err(|_| failed())?),
            _ => return Err(failed()),
        },
        _ => match value {
            // `number(true)` is 1: a bool is an int, as in Python.
            Value::Bool(b) => Value::Int(i64::from(*b)),
            Value::Int(_) | Value::Float(_) => value.clone(),
            #[allow(clippy::cast_precision_loss, reason = "Python float()")]
            Value::Str(s) => {
                let text = python_number_text(s);
                match text.parse::<i64>() {
                    Ok(i) => Value::Float(i as f64),
                    Err(_) => Value::Float(text.parse::<f64>().map_err(|_| failed())?),
                }
            }
            _ => return Err(failed()),
        },
    })
}

/// The text of a number as Python's `int()` and `float()` read it: surrounding whitespace
/// dropped, and digits grouped with single underscores (`1_000`, `1_0.5`) joined. An underscore
/// anywhere else (`_1`, `1__0`, `1_`, `1_.5`) is left in place, so the parse fails, as in Python.
fn python_number_text(text: &str) -> std::borrow::Cow<'_, str> {
    let text = text.trim();
    if !text.contains('_') {
        return std::borrow::Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let between_digits =
        |i: usize| i > 0 && i + 1 < bytes.len() && bytes[i - 1].is_ascii_digit() && bytes[i + 1].is_ascii_digit();
    if bytes.iter().enumerate().all(|(i, b)| *b != b'_' || between_digits(i)) {
        std::borrow::Cow::Owned(text.replace('_', ""))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use indexmap::IndexMap;

    use super::*;

    /// The result as a comparable text (values have no `PartialEq`: Python's equality is `py_eq`).
    fn run(op: Op, left: Value, right: Value) -> String {
        format!("{:?}", binary(op, &left, &right))
    }

    fn ok(value: Value) -> String {
        format!("{:?}", Ok::<Value, String>(value))
    }

    #[test]
    fn casts_read_digit_groups_as_python_does() {
        let cast = |name: &str, text: &str| format!("{:?}", super::cast(name, &Value::str(text), &|_| String::new()));
        assert_eq!(cast("int", "1_000"), ok(Value::Int(1000)));
        assert_eq!(cast("float", "1_0.5"), ok(Value::Float(10.5)));
        assert_eq!(cast("float", "1_0e1_0"), ok(Value::Float(1e11)));
        assert_eq!(cast("number", " 2_5 "), ok(Value::Float(25.0)));
        for bad in ["1__0", "_10", "10_", "1_.5", "1._5"] {
            assert!(cast("int", bad).contains("Failed to cast"), "{bad}");
        }
        let number_of = |v: Value| format!("{:?}", super::cast("number", &v, &|_| String::new()));
        assert_eq!(number_of(Value::Bool(true)), ok(Value::Int(1)));
    }

    #[test]
    fn a_sum_folds_as_the_operator_does() {
        let fold = |operands: Vec<Value>| {
            let mut operands = operands.into_iter();
            let mut sum = Sum::new(operands.next().expect("an operand"));
            for right in operands {
                if let Err(message) = sum.add(&right) {
                    return format!("{:?}", Err::<Value, String>(message));
                }
            }
            ok(sum.finish())
        };
        let strings = |n: usize| (0..n).map(|i| Value::str(i.to_string())).collect::<Vec<_>>();
        assert_eq!(fold(strings(12)), ok(Value::str("01234567891011")));
        assert_eq!(fold(vec![Value::Int(1), Value::Int(2), Value::Float(0.5)]), ok(Value::Float(3.5)));
        // A string run then a number: the error `binary` gives for `"ab" + 1`.
        assert_eq!(
            fold(vec![Value::str("a"), Value::str("b"), Value::Int(1)]),
            run(Op::Add, Value::str("ab"), Value::Int(1))
        );
        assert_eq!(fold(vec![Value::str("a"), Value::Unknown, Value::str("b")]), ok(Value::Unknown));
    }

    #[test]
    fn numbers_follow_python() {
        let big = Value::Int(9_007_199_254_740_993);
        assert_eq!(run(Op::Gt, big, Value::Float(9_007_199_254_740_992.0)), ok(Value::Bool(true)));
        assert_eq!(run(Op::Lt, Value::Float(f64::NAN), Value::Int(1)), ok(Value::Bool(false)));
        assert_eq!(run(Op::Mod, Value::Int(7), Value::Int(-3)), ok(Value::Int(-2)));
        assert_eq!(run(Op::Mod, Value::Int(i64::MIN), Value::Int(-1)), ok(Value::Int(0)));
        assert_eq!(run(Op::Div, Value::Int(1), Value::Int(2)), ok(Value::Float(0.5)));
        assert_eq!(run(Op::Pow, Value::Int(2), Value::Int(-1)), ok(Value::Float(0.5)));
        assert!(run(Op::Mul, Value::Int(i64::MAX), Value::Int(2)).contains("integer out of range"));
        assert!(run(Op::Div, Value::Int(1), Value::Int(0)).contains("division by zero"));
        assert!(run(Op::Add, Value::str("a"), Value::Int(1)).contains("can only concatenate str (not 'int') to str"));
    }

    #[test]
    fn the_typing_table_gives_result_kinds_and_the_reference_messages() {
        assert_eq!(typing(Op::Add, Kind::Int, Kind::Float), Ok(Some(Kind::Float)));
        assert_eq!(typing(Op::Div, Kind::Int, Kind::Int), Ok(Some(Kind::Float)));
        assert_eq!(typing(Op::Pow, Kind::Int, Kind::Int), Ok(None));
        assert_eq!(typing(Op::In, Kind::Str, Kind::Dict), Ok(Some(Kind::Bool)));
        assert_eq!(
            typing(Op::Add, Kind::Int, Kind::Str).unwrap_err(),
            "unsupported operand type(s) for +: 'int' and 'str'"
        );
        assert_eq!(typing(Op::Lt, Kind::Str, Kind::Str).unwrap_err(), "can only compare numbers");
    }

    #[test]
    fn membership_with_unknowns_is_unknown_only_when_nothing_matches() {
        let list = || Value::list(vec![Value::Int(1), Value::Unknown]);
        assert_eq!(run(Op::In, Value::Int(1), list()), ok(Value::Bool(true)));
        assert_eq!(run(Op::In, Value::Int(2), list()), ok(Value::Unknown));
        assert_eq!(run(Op::NotIn, Value::str("k"), Value::dict(IndexMap::new())), ok(Value::Bool(true)));
    }
}
