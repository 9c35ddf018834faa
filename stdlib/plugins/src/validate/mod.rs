//! `std::validate_type(fq_type_name, value, validation_parameters)`: whether pydantic (in lax
//! mode) would accept `value` as the named Python type. Supported names:
//!
//! * `datetime.date`, `datetime.time`, `datetime.datetime`;
//! * `ipaddress.IPv4Address`/`Interface`/`Network`, the `IPv6` ones, and pydantic's
//!   `IPvAnyAddress`/`IPvAnyInterface`/`IPvAnyNetwork` (networks are strict: no host bits);
//! * `uuid.UUID`;
//! * pydantic's `EmailStr`, `NameEmail`, `AnyUrl`, `AnyHttpUrl`, `HttpUrl`;
//! * pydantic's number types `PositiveInt`, `NegativeInt`, `NonNegativeInt`, `NonPositiveInt`,
//!   `PositiveFloat`, `NegativeFloat`, `NonNegativeFloat`, `NonPositiveFloat`, `FiniteFloat`,
//!   `StrictInt`, `StrictFloat`, `StrictBool`, `StrictStr`;
//! * the parametrised `pydantic.constr` (see [`text::constr`]), `pydantic.conint` and
//!   `pydantic.confloat` (`gt`, `ge`, `lt`, `le`, `multiple_of`, `strict`, `allow_inf_nan`), and
//!   `pydantic.condecimal` (those and `max_digits`, `decimal_places`; exact, see `decimal.rs`).
//!
//! Any other name gives false. Lax mode converts as pydantic does: `"5"`, `5.0` and `true` are
//! integers, numeric strings are floats, and only strings are strings.

mod datetime;
mod decimal;
mod text;

use indexmap::IndexMap;
use modelc_value::Value;

use super::bind::BoundArgs;
use super::error::PluginError;
use super::net::{Version, parse_prefixed, parse_v4, parse_v6};
use text::{UrlKind, bad_param};

type Result<T> = std::result::Result<T, PluginError>;

pub(crate) fn validate_type(args: &BoundArgs) -> Result<Value> {
    let name = args.str_arg("fq_type_name")?;
    let value = args.value("value")?;
    let empty = IndexMap::new();
    let params = match args.value("validation_parameters")? {
        Value::Null => &empty,
        _ => args.dict_arg("validation_parameters")?,
    };
    check(name, value, params).map(Value::Bool)
}

fn check(name: &str, v: &Value, params: &IndexMap<String, Value>) -> Result<bool> {
    let s = v.as_str();
    let string = |f: &dyn Fn(&str) -> bool| s.is_some_and(f);
    Ok(match name {
        "datetime.date" => datetime::is_date(v),
        "datetime.time" => datetime::is_time(v),
        "datetime.datetime" => datetime::is_datetime(v),
        "ipaddress.IPv4Address" => address(v, Version::V4),
        "ipaddress.IPv6Address" => address(v, Version::V6),
        "pydantic.IPvAnyAddress" => address(v, Version::Any),
        "ipaddress.IPv4Interface" => prefixed(v, Version::V4, false),
        "ipaddress.IPv6Interface" => prefixed(v, Version::V6, false),
        "pydantic.IPvAnyInterface" => prefixed(v, Version::Any, false),
        "ipaddress.IPv4Network" => prefixed(v, Version::V4, true),
        "ipaddress.IPv6Network" => prefixed(v, Version::V6, true),
        "pydantic.IPvAnyNetwork" => prefixed(v, Version::Any, true),
        "uuid.UUID" => string(&text::is_uuid),
        "pydantic.EmailStr" | "pydantic.NameEmail" => string(&text::is_email),
        "pydantic.AnyUrl" => string(&|s| text::is_url(s, UrlKind::Any)),
        "pydantic.AnyHttpUrl" => string(&|s| text::is_url(s, UrlKind::AnyHttp)),
        "pydantic.HttpUrl" => string(&|s| text::is_url(s, UrlKind::Http)),
        "pydantic.constr" => text::constr(v, params)?,
        "pydantic.conint" => conint(v, params)?,
        "pydantic.confloat" => confloat(v, params)?,
        "pydantic.condecimal" => decimal::condecimal(v, params)?,
        "pydantic.StrictStr" => s.is_some(),
        "pydantic.StrictInt" => matches!(v, Value::Int(_)),
        "pydantic.StrictBool" => matches!(v, Value::Bool(_)),
        "pydantic.StrictFloat" => matches!(v, Value::Int(_) | Value::Float(_)),
        "pydantic.PositiveInt" => lax_int(v).is_some_and(|i| i > 0),
        "pydantic.NegativeInt" => lax_int(v).is_some_and(|i| i < 0),
        "pydantic.NonNegativeInt" => lax_int(v).is_some_and(|i| i >= 0),
        "pydantic.NonPositiveInt" => lax_int(v).is_some_and(|i| i <= 0),
        "pydantic.PositiveFloat" => lax_float(v).is_some_and(|f| f > 0.0),
        "pydantic.NegativeFloat" => lax_float(v).is_some_and(|f| f < 0.0),
        "pydantic.NonNegativeFloat" => lax_float(v).is_some_and(|f| f >= 0.0),
        "pydantic.NonPositiveFloat" => lax_float(v).is_some_and(|f| f <= 0.0),
        "pydantic.FiniteFloat" => lax_float(v).is_some_and(f64::is_finite),
        _ => false,
    })
}

/// `text` without the scope id of an IPv6 address (`fe80::1%eth0`, Python 3.9 and later), in
/// the address part before any `/prefix`; `None` when the scope is empty or holds another `%`.
/// Only IPv6 takes a scope: the address must still parse as one.
fn without_v6_scope(text: &str) -> Option<String> {
    let (address, prefix) = match text.split_once('/') {
        Some((address, prefix)) => (address, Some(prefix)),
        None => (text, None),
    };
    let address = match address.split_once('%') {
        Some((address, scope)) if !scope.is_empty() && !scope.contains('%') && parse_v6(address).is_some() => address,
        Some(_) => return None,
        None => address,
    };
    Some(match prefix {
        Some(prefix) => format!("{address}/{prefix}"),
        None => address.to_owned(),
    })
}

/// An address as text, or as an integer (Python's `IPv4Address(5)`).
fn address(v: &Value, version: Version) -> bool {
    match v {
        Value::Str(s) => match version {
            Version::V4 => parse_v4(s).is_some(),
            Version::V6 => without_v6_scope(s).is_some_and(|s| parse_v6(&s).is_some()),
            Version::Any => parse_v4(s).is_some() || without_v6_scope(s).is_some_and(|s| parse_v6(&s).is_some()),
        },
        Value::Int(i) => int_address(*i, version),
        _ => false,
    }
}

/// Whether Python accepts the integer as an address of `version` (`IPv4Address(5)`); `Any`
/// takes IPv6 beyond the IPv4 range.
fn int_address(i: i64, version: Version) -> bool {
    match version {
        Version::V4 => u32::try_from(i).is_ok(),
        Version::V6 | Version::Any => i >= 0,
    }
}

fn prefixed(v: &Value, version: Version, strict: bool) -> bool {
    match v {
        Value::Str(s) => match version {
            Version::V4 => parse_prefixed(s, version, strict).is_some(),
            _ => without_v6_scope(s).is_some_and(|s| parse_prefixed(&s, version, strict).is_some()),
        },
        Value::Int(i) => int_address(*i, version),
        _ => false,
    }
}

/// pydantic's lax integer: ints, bools, integral floats, and strings of digits (with sign,
/// surrounding whitespace, `_` separators and a `.0` tail).
fn lax_int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Bool(b) => Some(i64::from(*b)),
        Value::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.2e18 => Some(*f as i64),
        Value::Str(s) => {
            let t = s.trim();
            let t = match t.split_once('.') {
                Some((int, zeros)) if !zeros.is_empty() && zeros.bytes().all(|b| b == b'0') => int,
                _ => t,
            };
            super::strings::parse_py_int(t)
        }
        _ => None,
    }
}

/// pydantic's lax float: numbers, bools, and numeric strings (`1e3`, `inf`, `1_0.5`).
fn lax_float(v: &Value) -> Option<f64> {
    match v {
        Value::Str(s) => {
            let t = s.trim();
            let chars: Vec<char> = t.chars().collect();
            // Underscores only between digits, as Python's float() allows them.
            let ok_underscores = chars.iter().enumerate().all(|(i, &c)| {
                c != '_'
                    || (i > 0 && chars[i - 1].is_ascii_digit() && chars.get(i + 1).is_some_and(char::is_ascii_digit))
            });
            if !ok_underscores {
                return None;
            }
            t.replace('_', "").parse().ok()
        }
        other => other.as_f64(),
    }
}

struct Bounds {
    gt: Option<f64>,
    ge: Option<f64>,
    lt: Option<f64>,
    le: Option<f64>,
    multiple_of: Option<f64>,
    strict: bool,
    allow_inf_nan: bool,
}

fn bounds(params: &IndexMap<String, Value>, function: &str, allow_inf_nan_param: bool) -> Result<Bounds> {
    let mut b =
        Bounds { gt: None, ge: None, lt: None, le: None, multiple_of: None, strict: false, allow_inf_nan: true };
    for (k, v) in params {
        let number = || match v {
            Value::Null => Ok(None),
            other => {
                other.as_f64().filter(|_| !matches!(other, Value::Bool(_))).map(Some).ok_or_else(|| bad_param(k, v))
            }
        };
        let boolean = || match v {
            Value::Bool(x) => Ok(*x),
            _ => Err(bad_param(k, v)),
        };
        match k.as_str() {
            "gt" => b.gt = number()?,
            "ge" => b.ge = number()?,
            "lt" => b.lt = number()?,
            "le" => b.le = number()?,
            "multiple_of" => b.multiple_of = number()?,
            "strict" => b.strict = boolean()?,
            "allow_inf_nan" if allow_inf_nan_param => b.allow_inf_nan = boolean()?,
            _ => {
                return Err(PluginError::external(
                    "TypeError",
                    format!("{function}() got an unexpected keyword argument '{k}'"),
                ));
            }
        }
    }
    Ok(b)
}

impl Bounds {
    fn accept(&self, x: f64) -> bool {
        self.gt.is_none_or(|g| x > g)
            && self.ge.is_none_or(|g| x >= g)
            && self.lt.is_none_or(|l| x < l)
            && self.le.is_none_or(|l| x <= l)
            && self.multiple_of.is_none_or(|m| m != 0.0 && (x % m).abs() < 1e-9)
    }
}

/// `pydantic.conint(gt=…, ge=…, lt=…, le=…, multiple_of=…, strict=…)`.
fn conint(v: &Value, params: &IndexMap<String, Value>) -> Result<bool> {
    let b = bounds(params, "conint", false)?;
    let i = if b.strict {
        match v {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    } else {
        lax_int(v)
    };
    Ok(i.is_some_and(|i| b.accept(i as f64)))
}

/// `pydantic.confloat(gt=…, ge=…, lt=…, le=…, multiple_of=…, strict=…, allow_inf_nan=…)`.
fn confloat(v: &Value, params: &IndexMap<String, Value>) -> Result<bool> {
    let b = bounds(params, "confloat", true)?;
    let f = if b.strict {
        match v {
            Value::Int(_) | Value::Float(_) => v.as_f64(),
            _ => None,
        }
    } else {
        lax_float(v)
    };
    Ok(f.is_some_and(|f| (b.allow_inf_nan || f.is_finite()) && b.accept(f)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validate(name: &str, v: Value, params: &[(&str, Value)]) -> Result<bool> {
        let params: IndexMap<String, Value> = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        let p = if params.is_empty() { Value::Null } else { Value::dict(params) };
        let args = BoundArgs::new().with("fq_type_name", name).with("value", v).with("validation_parameters", p);
        validate_type(&args).map(|v| matches!(v, Value::Bool(true)))
    }

    fn ok(name: &str, v: Value) -> bool {
        validate(name, v, &[]).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_std_typedefs() {
        assert!(ok("pydantic.PositiveInt", Value::Int(5)));
        assert!(!ok("pydantic.PositiveInt", Value::Int(0)));
        assert!(ok("pydantic.NegativeInt", Value::Int(-1)));
        assert!(ok("pydantic.PositiveFloat", Value::Float(0.5)));
        assert!(!ok("pydantic.NegativeFloat", Value::Float(0.0)));
        assert!(ok("ipaddress.IPv4Address", Value::str("1.2.3.4")));
        assert!(!ok("ipaddress.IPv4Address", Value::str("1.2.3.400")));
        assert!(ok("ipaddress.IPv4Interface", Value::str("1.2.3.4/24")));
        assert!(ok("ipaddress.IPv4Network", Value::str("1.2.3.0/24")));
        assert!(!ok("ipaddress.IPv4Network", Value::str("1.2.3.4/24")));
        assert!(ok("ipaddress.IPv6Address", Value::str("::1")));
        assert!(!ok("ipaddress.IPv6Address", Value::str("1.2.3.4")));
        assert!(ok("ipaddress.IPv6Network", Value::str("2001:db8::/32")));
        // Scope ids, as Python 3.9 and later accept them.
        assert!(ok("ipaddress.IPv6Address", Value::str("fe80::1%eth0")));
        assert!(ok("ipaddress.IPv6Interface", Value::str("fe80::1%eth0/64")));
        assert!(!ok("ipaddress.IPv6Address", Value::str("fe80::1%")));
        assert!(!ok("ipaddress.IPv6Address", Value::str("fe80::1%a%b")));
        assert!(!ok("ipaddress.IPv4Address", Value::str("1.2.3.4%eth0")));
        assert!(ok("pydantic.IPvAnyAddress", Value::str("fe80::1")));
        assert!(ok("pydantic.IPvAnyInterface", Value::str("::1/64")));
        assert!(!ok("pydantic.IPvAnyInterface", Value::str("x")));
        assert!(ok("pydantic.IPvAnyNetwork", Value::str("10.0.0.0/8")));
        assert!(ok("uuid.UUID", Value::str("12345678-1234-5678-1234-567812345678")));
        assert!(ok("pydantic.EmailStr", Value::str("a@example.com")));
        assert!(ok("pydantic.NameEmail", Value::str("A <a@example.com>")));
        assert!(ok("pydantic.AnyUrl", Value::str("ftp://x")));
        assert!(ok("pydantic.HttpUrl", Value::str("https://example.com/x")));
        assert!(ok("datetime.date", Value::str("2024-02-29")));
        assert!(ok("datetime.time", Value::str("23:59")));
        assert!(ok("datetime.datetime", Value::str("2024-02-29T23:59:00Z")));
        let printable = [("regex", Value::str("^[ -~]*$"))];
        assert_eq!(validate("pydantic.constr", Value::str("abc ~"), &printable), Ok(true));
        assert_eq!(validate("pydantic.constr", Value::str("é"), &printable), Ok(false));
    }

    #[test]
    fn lax_conversions_follow_pydantic() {
        for (v, expected) in [
            (Value::str("5"), true),
            (Value::Float(5.0), true),
            (Value::Float(5.5), false),
            (Value::Bool(true), true),
            (Value::str(" 5 "), true),
            (Value::str("1_000"), true),
            (Value::str("5.00"), true),
            (Value::str("+5"), true),
            (Value::str("0x5"), false),
            (Value::str("5e0"), false),
            (Value::Null, false),
        ] {
            assert_eq!(ok("pydantic.PositiveInt", v.clone()), expected, "{v:?}");
        }
        for (v, expected) in [
            (Value::Int(1), true),
            (Value::str("1.5"), true),
            (Value::str("inf"), true),
            (Value::str("nan"), false),
            (Value::str("1_0.5"), true),
            (Value::str("1__0"), false),
            (Value::str("1e3"), true),
        ] {
            assert_eq!(ok("pydantic.PositiveFloat", v.clone()), expected, "{v:?}");
        }
        assert!(ok("pydantic.StrictStr", Value::str("a")));
        assert!(!ok("pydantic.StrictStr", Value::Int(1)));
        assert!(!ok("pydantic.StrictInt", Value::Bool(true)));
        assert!(ok("pydantic.StrictFloat", Value::Int(1)));
        assert!(!ok("pydantic.StrictBool", Value::Int(1)));
        assert!(ok("ipaddress.IPv4Address", Value::Int(5)));
    }

    #[test]
    fn parametrised_numbers() {
        let port = [("ge", Value::Int(0)), ("lt", Value::Int(65536))];
        assert_eq!(validate("pydantic.conint", Value::Int(80), &port), Ok(true));
        assert_eq!(validate("pydantic.conint", Value::Int(70000), &port), Ok(false));
        assert_eq!(validate("pydantic.conint", Value::str("80"), &port), Ok(true));
        let strict = [("strict", Value::Bool(true)), ("gt", Value::Int(0))];
        assert_eq!(validate("pydantic.conint", Value::str("80"), &strict), Ok(false));
        assert_eq!(validate("pydantic.conint", Value::Int(10), &[("multiple_of", Value::Int(5))]), Ok(true));
        assert_eq!(validate("pydantic.conint", Value::Int(11), &[("multiple_of", Value::Int(5))]), Ok(false));
        assert_eq!(validate("pydantic.confloat", Value::Float(0.5), &[("le", Value::Float(1.0))]), Ok(true));
        assert_eq!(
            validate("pydantic.confloat", Value::str("inf"), &[("allow_inf_nan", Value::Bool(false))]),
            Ok(false)
        );
        assert_eq!(
            validate("pydantic.conint", Value::Int(1), &[("regex", Value::str("x"))]).unwrap_err().to_string(),
            "TypeError: conint() got an unexpected keyword argument 'regex'"
        );
    }

    #[test]
    fn unknown_type_names_are_false() {
        assert!(!ok("pydantic.NoSuchType", Value::str("x")));
        assert!(!ok("int", Value::Int(1)));
    }
}
