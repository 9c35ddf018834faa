//! Python's ordering of values (`<` as `sorted` uses it): numbers (bools included) with numbers,
//! strings with strings by code point, lists lexicographically. Anything else is unorderable, as
//! Python's `TypeError: '<' not supported between instances of …` says.

use std::cmp::Ordering;

use crate::{Num, Value};

impl Value {
    /// Python's ordering of `self` and `other`, or `None` where Python raises a `TypeError`.
    ///
    /// To give sorting a total order, NaN sorts after every other number and equal to itself
    /// (Python's own order with NaN is inconsistent).
    pub fn py_cmp(&self, other: &Value) -> Option<Ordering> {
        match (self, other) {
            (Value::Str(a), Value::Str(b)) => Some(a.as_bytes().cmp(b.as_bytes())),
            (Value::List(a), Value::List(b)) => {
                for (x, y) in a.iter().zip(b.iter()) {
                    if !x.py_eq(y) {
                        return x.py_cmp(y);
                    }
                }
                Some(a.len().cmp(&b.len()))
            }
            (a, b) => match (Num::of(a), Num::of(b)) {
                (Some(x), Some(y)) => Some(cmp_num(x, y)),
                _ => None,
            },
        }
    }

    /// Python's message for an unorderable pair: `'<' not supported between instances of 'str'
    /// and 'int'`.
    pub fn unorderable_message(&self, other: &Value) -> String {
        format!("'<' not supported between instances of '{}' and '{}'", self.type_name(), other.type_name())
    }
}

pub(crate) fn cmp_num(a: Num, b: Num) -> Ordering {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x.cmp(&y),
        (Num::Float(x), Num::Float(y)) => cmp_float(x, y),
        (Num::Int(i), Num::Float(f)) => cmp_int_float(i, f),
        (Num::Float(f), Num::Int(i)) => cmp_int_float(i, f).reverse(),
    }
}

fn cmp_float(x: f64, y: f64) -> Ordering {
    match (x.is_nan(), y.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        // -0.0 == 0.0, as in Python; no NaN is left, so partial_cmp is total here.
        (false, false) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
    }
}

/// Exact comparison of an integer with a float.
fn cmp_int_float(i: i64, f: f64) -> Ordering {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    if f.is_nan() {
        return Ordering::Less;
    }
    if f >= LIMIT {
        return Ordering::Less;
    }
    if f < -LIMIT {
        return Ordering::Greater;
    }
    // In range: compare with the float's floor exactly, then the fraction decides ties.
    let floor = f.floor();
    let fi = floor as i64;
    match i.cmp(&fi) {
        Ordering::Equal if f > floor => Ordering::Less,
        ord => ord,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_order_across_types() {
        assert_eq!(Value::Int(1).py_cmp(&Value::Float(1.5)), Some(Ordering::Less));
        assert_eq!(Value::Float(2.0).py_cmp(&Value::Int(2)), Some(Ordering::Equal));
        assert_eq!(Value::Bool(true).py_cmp(&Value::Int(0)), Some(Ordering::Greater));
        assert_eq!(Value::Int(-3).py_cmp(&Value::Float(-2.5)), Some(Ordering::Less));
        assert_eq!(Value::Int(i64::MAX).py_cmp(&Value::Float(1e19)), Some(Ordering::Less));
        assert_eq!(Value::Float(f64::NAN).py_cmp(&Value::Int(5)), Some(Ordering::Greater));
    }

    #[test]
    fn strings_and_lists_order_like_python() {
        assert_eq!(Value::str("B").py_cmp(&Value::str("a")), Some(Ordering::Less));
        assert_eq!(Value::str("é").py_cmp(&Value::str("z")), Some(Ordering::Greater));
        let a = Value::list(vec![Value::Int(1), Value::Int(2)]);
        let b = Value::list(vec![Value::Int(1), Value::Int(3)]);
        let c = Value::list(vec![Value::Int(1)]);
        assert_eq!(a.py_cmp(&b), Some(Ordering::Less));
        assert_eq!(c.py_cmp(&a), Some(Ordering::Less));
    }

    #[test]
    fn mixed_kinds_are_unorderable() {
        assert_eq!(Value::str("a").py_cmp(&Value::Int(1)), None);
        assert_eq!(Value::Null.py_cmp(&Value::Null), None);
        assert_eq!(
            Value::str("a").unorderable_message(&Value::Int(1)),
            "'<' not supported between instances of 'str' and 'int'"
        );
    }
}
