//! `pydantic.condecimal(gt=…, ge=…, lt=…, le=…, multiple_of=…, max_digits=…, decimal_places=…,
//! strict=…, allow_inf_nan=…)` as pydantic 2 validates it in lax mode: an int, a float (by its
//! shortest text, as Python's `str`) or a string (spaces around it stripped, every `_` dropped,
//! an exponent) is read as an exact decimal; a bool is not a decimal, nor are NaN and infinities
//! unless allowed. Strict mode takes only `Decimal` instances, which a model cannot hold. Digits
//! and decimal places are counted on the normalised value (`1.50` has one decimal place, `100`
//! three digits), as pydantic counts them. Comparisons are exact. (Each rule as the reference
//! answers it: `tests/parity/cases/validate-decimal/`.)

use std::cmp::Ordering;

use indexmap::IndexMap;
use modelc_value::Value;

use super::Result;
use super::text::bad_param;
use crate::error::PluginError;

/// An exact finite decimal: `(-1)^negative × digits × 10^exponent`, `digits` without leading
/// zeros (empty for zero).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Decimal {
    negative: bool,
    digits: Vec<u8>,
    exponent: i64,
}

/// What a value reads as: a finite decimal, or NaN or an infinity.
enum Read {
    Finite(Decimal),
    NotFinite,
}

pub(super) fn condecimal(v: &Value, params: &IndexMap<String, Value>) -> Result<bool> {
    let mut strict = false;
    let mut allow_inf_nan = false;
    let (mut gt, mut ge, mut lt, mut le, mut multiple_of) = (None, None, None, None, None);
    let (mut max_digits, mut decimal_places) = (None, None);
    for (k, p) in params {
        let decimal = || match p {
            Value::Null => Ok(None),
            other => match read(other) {
                Some(Read::Finite(d)) => Ok(Some(d)),
                _ => Err(bad_param(k, p)),
            },
        };
        let count = || match p {
            Value::Null => Ok(None),
            Value::Int(n) if *n >= 0 => Ok(Some(*n as u64)),
            _ => Err(bad_param(k, p)),
        };
        let boolean = || match p {
            Value::Bool(b) => Ok(*b),
            _ => Err(bad_param(k, p)),
        };
        match k.as_str() {
            "gt" => gt = decimal()?,
            "ge" => ge = decimal()?,
            "lt" => lt = decimal()?,
            "le" => le = decimal()?,
            "multiple_of" => multiple_of = decimal()?,
            "max_digits" => max_digits = count()?,
            "decimal_places" => decimal_places = count()?,
            "strict" => strict = boolean()?,
            "allow_inf_nan" => allow_inf_nan = boolean()?,
            _ => {
                return Err(PluginError::external(
                    "TypeError",
                    format!("condecimal() got an unexpected keyword argument '{k}'"),
                ));
            }
        }
    }
    if strict {
        return Ok(false);
    }
    let x = match read(v) {
        Some(Read::Finite(x)) => x,
        Some(Read::NotFinite) => return Ok(allow_inf_nan),
        None => return Ok(false),
    };
    let holds =
        |bound: &Option<Decimal>, wanted: &[Ordering]| bound.as_ref().is_none_or(|b| wanted.contains(&compare(&x, b)));
    let (digits, places) = x.counted();
    Ok(holds(&gt, &[Ordering::Greater])
        && holds(&ge, &[Ordering::Greater, Ordering::Equal])
        && holds(&lt, &[Ordering::Less])
        && holds(&le, &[Ordering::Less, Ordering::Equal])
        && multiple_of.as_ref().is_none_or(|m| is_multiple(&x, m))
        && max_digits.is_none_or(|max| digits <= max)
        && decimal_places.is_none_or(|max| places <= max))
}

/// A value as pydantic reads a decimal; `None` when it is not one.
fn read(v: &Value) -> Option<Read> {
    match v {
        Value::Int(i) => parse(&i.to_string()),
        Value::Float(f) if !f.is_finite() => Some(Read::NotFinite),
        // Rust's shortest text reads back as the same float, as Python's `str` does.
        Value::Float(f) => parse(&f.to_string()),
        Value::Str(s) => parse(&s.trim().replace('_', "")),
        _ => None,
    }
}

/// Python's `Decimal(text)` for finite values and the words for the others.
fn parse(text: &str) -> Option<Read> {
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let lower = body.to_ascii_lowercase();
    if ["inf", "infinity", "nan", "snan"].contains(&lower.as_str()) {
        return Some(Read::NotFinite);
    }
    let (mantissa, exponent) = match lower.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (lower.as_str(), None),
    };
    let exponent: i64 = match exponent {
        Some(e) => {
            let unsigned = e.strip_prefix(['+', '-']).unwrap_or(e);
            if !all_digits(unsigned) {
                return None;
            }
            e.parse().ok()?
        }
        None => 0,
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let valid = |part: &str| part.is_empty() || all_digits(part);
    if !valid(whole) || !valid(fraction) {
        return None;
    }
    let all: Vec<u8> = whole.bytes().chain(fraction.bytes()).map(|b| b - b'0').collect();
    let exponent = exponent.checked_sub(i64::try_from(fraction.len()).ok()?)?;
    let first = all.iter().position(|&d| d != 0).unwrap_or(all.len());
    let digits = all[first..].to_vec();
    Some(Read::Finite(Decimal { negative: negative && !digits.is_empty(), digits, exponent }))
}

fn all_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

impl Decimal {
    fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// The value without trailing zeros in its digits (Python's `normalize()`).
    fn normalized(&self) -> Decimal {
        let kept = self.digits.iter().rposition(|&d| d != 0).map_or(0, |p| p + 1);
        let dropped = (self.digits.len() - kept) as i64;
        let exponent = if kept == 0 { 0 } else { self.exponent + dropped };
        Decimal { negative: self.negative, digits: self.digits[..kept].to_vec(), exponent }
    }

    /// (digits, decimal places) as pydantic counts them, on the normalised value.
    fn counted(&self) -> (u64, u64) {
        let n = self.normalized();
        let len = n.digits.len().max(1) as u64;
        if n.exponent >= 0 {
            (len + n.exponent as u64, 0)
        } else {
            let places = n.exponent.unsigned_abs();
            (len.max(places), places)
        }
    }

    /// Where its first digit stands: the exponent of its leading digit.
    fn magnitude(&self) -> i64 {
        self.exponent + self.digits.len() as i64 - 1
    }
}

/// Exact comparison.
fn compare(a: &Decimal, b: &Decimal) -> Ordering {
    match (a.is_zero(), b.is_zero()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return if b.negative { Ordering::Greater } else { Ordering::Less },
        (false, true) => return if a.negative { Ordering::Less } else { Ordering::Greater },
        (false, false) => {}
    }
    if a.negative != b.negative {
        return if a.negative { Ordering::Less } else { Ordering::Greater };
    }
    let (a, b) = (a.normalized(), b.normalized());
    let magnitudes = a.magnitude().cmp(&b.magnitude());
    let absolute = magnitudes.then_with(|| a.digits.cmp(&b.digits));
    if a.negative { absolute.reverse() } else { absolute }
}

/// Whether `x` is a whole multiple of `m` (`x % m == 0`, exactly; a zero `m` divides nothing).
fn is_multiple(x: &Decimal, m: &Decimal) -> bool {
    if m.is_zero() {
        return false;
    }
    if x.is_zero() {
        return true;
    }
    let (x, m) = (x.normalized(), m.normalized());
    // Both as integers over the same power of ten, then the remainder digit by digit.
    let base = x.exponent.min(m.exponent);
    let scaled = |d: &Decimal| -> Option<Vec<u8>> {
        let zeros = usize::try_from(d.exponent - base).ok().filter(|&z| z <= 4_096)?;
        Some(d.digits.iter().copied().chain(std::iter::repeat_n(0, zeros)).collect())
    };
    let (Some(dividend), Some(divisor)) = (scaled(&x), scaled(&m)) else { return false };
    let Some(divisor) = small(&divisor) else { return false };
    let mut remainder: u128 = 0;
    for digit in dividend {
        remainder = (remainder * 10 + u128::from(digit)) % divisor;
    }
    remainder == 0
}

/// The digits as a number, when they fit (a divisor of up to 38 digits).
fn small(digits: &[u8]) -> Option<u128> {
    digits.iter().try_fold(0u128, |n, &d| n.checked_mul(10)?.checked_add(u128::from(d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(v: Value, params: &[(&str, Value)]) -> bool {
        let params: IndexMap<String, Value> = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        condecimal(&v, &params).unwrap()
    }

    /// Each as the reference (pydantic 2 under inmanta-core 14) answers it.
    #[test]
    fn bounds_digits_and_places_as_pydantic() {
        let s = Value::str;
        assert!(check(Value::Int(8), &[("gt", Value::Int(0)), ("lt", Value::Int(10))]));
        assert!(!check(Value::Int(10), &[("gt", Value::Int(0)), ("lt", Value::Int(10))]));
        assert!(!check(Value::Int(0), &[("gt", Value::Int(0))]));
        assert!(check(Value::Int(0), &[("ge", Value::Int(0))]));
        assert!(check(s("1.25"), &[("decimal_places", Value::Int(2))]));
        assert!(!check(s("1.255"), &[("decimal_places", Value::Int(2))]));
        assert!(check(Value::Float(1.5), &[("max_digits", Value::Int(2))]));
        assert!(!check(Value::Float(123.5), &[("max_digits", Value::Int(3))]));
        assert!(!check(s("abc"), &[]));
        assert!(!check(Value::Bool(true), &[]));
        assert!(check(s("1e3"), &[("le", Value::Int(1000))]));
        assert!(check(Value::Float(7.5), &[("multiple_of", Value::Float(2.5))]));
        assert!(!check(Value::Int(7), &[("multiple_of", Value::Int(2))]));
        assert!(!check(s("NaN"), &[]));
        assert!(check(s("  3.0  "), &[]));
        assert!(check(s("1_000"), &[]) && check(s("_1"), &[]) && check(s("1__0"), &[("max_digits", Value::Int(2))]));
        assert!(!check(s("_"), &[]) && !check(Value::Int(5), &[("strict", Value::Bool(true))]));
        assert!(!check(s("100"), &[("max_digits", Value::Int(2))]));
        assert!(check(s("1.50"), &[("decimal_places", Value::Int(1))]));
        assert!(check(s("0.00"), &[("max_digits", Value::Int(1))]));
        assert!(check(s("-5"), &[("lt", Value::Int(0)), ("ge", Value::Int(-5))]));
    }

    #[test]
    fn texts_read_as_python_reads_them() {
        let finite = |t: &str| matches!(parse(t), Some(Read::Finite(_)));
        assert!(finite(".5") && finite("5.") && finite("-0") && finite("1E+2") && finite("+5"));
        assert!(!finite("") && !finite(".") && !finite("- 5") && !finite("1e") && !finite("0x10") && !finite("1_0"));
        assert!(matches!(parse("-Infinity"), Some(Read::NotFinite)));
        assert_eq!(compare(&decimal("-1.5"), &decimal("-1.25")), Ordering::Less);
        assert_eq!(compare(&decimal("100"), &decimal("1e2")), Ordering::Equal);
        assert_eq!(compare(&decimal("-0"), &decimal("0.000")), Ordering::Equal);
        assert!(is_multiple(&decimal("0.75"), &decimal("0.25")) && !is_multiple(&decimal("1"), &decimal("0")));
    }

    fn decimal(text: &str) -> Decimal {
        match parse(text) {
            Some(Read::Finite(d)) => d,
            _ => panic!("{text} is not a finite decimal"),
        }
    }
}
