//! Python's format-specification mini-language (`format(value, spec)`), used by `std::format`
//! and by f-strings with a spec (`f"{x:>5}"`, `f"{x:8.2f}"`).
//!
//! Grammar: `[[fill]align][sign]["z"]["#"]["0"][width][grouping]["." precision][type]` with the
//! presentation types of `str` (`s`), `int` (`b c d o x X n`, and the float types, which convert)
//! and `float` (`e E f F g G n %`). `n` is treated as `d`/`g` (no locale). Null, lists, dicts and
//! instances accept only the empty spec (Python's `object.__format__`).

use crate::float::format_abs;
use crate::{InstanceId, Value, print_string};

/// The largest width or precision we accept; Python's limit is the memory.
const MAX_WIDTH: usize = 1_000_000;

/// A formatting failure, named like the Python exception it stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError {
    /// `ValueError`, `TypeError` or `OverflowError`.
    pub kind: &'static str,
    pub message: String,
}

impl FormatError {
    fn value(message: String) -> FormatError {
        FormatError { kind: "ValueError", message }
    }
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for FormatError {}

/// A parsed format spec.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Spec {
    pub fill: Option<char>,
    pub align: Option<char>,
    pub sign: Option<char>,
    /// `z`: negative zero becomes zero.
    pub coerce_zero: bool,
    /// `#`: alternate form.
    pub alternate: bool,
    /// `0` before the width.
    pub zero: bool,
    pub width: usize,
    pub grouping: Option<char>,
    pub precision: Option<usize>,
    pub ty: Option<char>,
}

/// Parses `spec`; `type_name` is only used in the error message.
pub fn parse_spec(spec: &str, type_name: &str) -> Result<Spec, FormatError> {
    let invalid = || FormatError::value(format!("Invalid format specifier '{spec}' for object of type '{type_name}'"));
    let chars: Vec<char> = spec.chars().collect();
    let mut i = 0;
    let mut out = Spec::default();
    let is_align = |c: char| matches!(c, '<' | '>' | '=' | '^');
    if chars.len() >= 2 && is_align(chars[1]) {
        out.fill = Some(chars[0]);
        out.align = Some(chars[1]);
        i = 2;
    } else if !chars.is_empty() && is_align(chars[0]) {
        out.align = Some(chars[0]);
        i = 1;
    }
    if let Some(&c) = chars.get(i)
        && matches!(c, '+' | '-' | ' ')
    {
        out.sign = Some(c);
        i += 1;
    }
    if chars.get(i) == Some(&'z') {
        out.coerce_zero = true;
        i += 1;
    }
    if chars.get(i) == Some(&'#') {
        out.alternate = true;
        i += 1;
    }
    if chars.get(i) == Some(&'0') {
        out.zero = true;
        i += 1;
    }
    let (width, next) = number(&chars, i)?;
    out.width = width.unwrap_or(0);
    i = next;
    if let Some(&c) = chars.get(i)
        && matches!(c, ',' | '_')
    {
        out.grouping = Some(c);
        i += 1;
    }
    if chars.get(i) == Some(&'.') {
        let (precision, next) = number(&chars, i + 1)?;
        out.precision = Some(precision.ok_or_else(|| FormatError::value("Format specifier missing precision".into()))?);
        i = next;
    }
    if let Some(&c) = chars.get(i) {
        out.ty = Some(c);
        i += 1;
    }
    if i != chars.len() {
        return Err(invalid());
    }
    Ok(out)
}

fn number(chars: &[char], start: usize) -> Result<(Option<usize>, usize), FormatError> {
    let mut i = start;
    let mut n: usize = 0;
    while let Some(d) = chars.get(i).and_then(|c| c.to_digit(10)) {
        n = n.saturating_mul(10).saturating_add(d as usize);
        i += 1;
    }
    if n > MAX_WIDTH {
        return Err(FormatError::value(format!("Too many decimal digits in format string (limit {MAX_WIDTH})")));
    }
    Ok(((i > start).then_some(n), i))
}

/// `format(value, spec)`. The empty spec gives Python's `str(value)` as a plugin sees it
/// ([`print_string`]); instances are named by `instance`.
pub fn format_value(value: &Value, spec: &str, instance: &dyn Fn(InstanceId) -> String) -> Result<String, FormatError> {
    if spec.is_empty() {
        return Ok(print_string(value, instance));
    }
    match value {
        Value::Str(s) => format_str(s, &parse_spec(spec, "str")?),
        Value::Bool(b) => format_int(i64::from(*b), &parse_spec(spec, "bool")?, "bool"),
        Value::Int(i) => format_int(*i, &parse_spec(spec, "int")?, "int"),
        Value::Float(f) => format_float(*f, &parse_spec(spec, "float")?),
        other => Err(FormatError {
            kind: "TypeError",
            message: format!("unsupported format string passed to {}.__format__", other.type_name()),
        }),
    }
}

fn format_str(s: &str, spec: &Spec) -> Result<String, FormatError> {
    match spec.ty {
        None | Some('s') => {}
        Some(t) => return Err(unknown_code(t, "str")),
    }
    if spec.sign.is_some() {
        return Err(FormatError::value("Sign not allowed in string format specifier".into()));
    }
    if spec.alternate {
        return Err(FormatError::value("Alternate form (#) not allowed in string format specifier".into()));
    }
    if spec.align == Some('=') {
        return Err(FormatError::value("'=' alignment not allowed in string format specifier".into()));
    }
    if let Some(g) = spec.grouping {
        return Err(FormatError::value(format!("Cannot specify '{g}' with 's'.")));
    }
    let body: String = match spec.precision {
        Some(p) => s.chars().take(p).collect(),
        None => s.to_string(),
    };
    let fill = spec.fill.unwrap_or(if spec.zero { '0' } else { ' ' });
    Ok(pad("", &body, spec.width, fill, spec.align.unwrap_or('<')))
}

fn format_int(i: i64, spec: &Spec, type_name: &str) -> Result<String, FormatError> {
    let ty = spec.ty.unwrap_or('d');
    if matches!(ty, 'e' | 'E' | 'f' | 'F' | 'g' | 'G' | '%') {
        return format_float(i as f64, spec);
    }
    if spec.precision.is_some() {
        return Err(FormatError::value("Precision not allowed in integer format specifier".into()));
    }
    let negative = i < 0;
    let magnitude = i.unsigned_abs();
    let (prefix, digits, group_size) = match ty {
        'd' | 'n' => ("", magnitude.to_string(), 3),
        'b' => ("0b", format!("{magnitude:b}"), 4),
        'o' => ("0o", format!("{magnitude:o}"), 4),
        'x' => ("0x", format!("{magnitude:x}"), 4),
        'X' => ("0X", format!("{magnitude:X}"), 4),
        'c' => {
            if spec.sign.is_some() {
                return Err(FormatError::value("Sign not allowed with integer format specifier 'c'".into()));
            }
            let c = u32::try_from(i).ok().and_then(char::from_u32).ok_or_else(|| FormatError {
                kind: "OverflowError",
                message: "%c arg not in range(0x110000)".into(),
            })?;
            let fill = spec.fill.unwrap_or(' ');
            return Ok(pad("", &c.to_string(), spec.width, fill, spec.align.unwrap_or('<')));
        }
        t => return Err(unknown_code(t, type_name)),
    };
    if spec.grouping == Some(',') && ty != 'd' && ty != 'n' {
        return Err(FormatError::value(format!("Cannot specify ',' with '{ty}'.")));
    }
    let prefix = if spec.alternate { prefix } else { "" };
    let sign = sign_text(negative, spec.sign);
    Ok(finish_number(&format!("{sign}{prefix}"), &digits, "", spec, group_size))
}

fn format_float(f: f64, spec: &Spec) -> Result<String, FormatError> {
    let (ty, add_dot_0) = match spec.ty {
        None => (if spec.precision.is_some() { 'g' } else { 'r' }, true),
        Some('n') => ('g', false),
        Some(t @ ('e' | 'E' | 'f' | 'F' | 'g' | 'G' | '%')) => (t, false),
        Some(t) => return Err(unknown_code(t, "float")),
    };
    let mut negative = f.is_sign_negative() && !f.is_nan();
    let mut text = format_abs(f.abs(), ty, spec.precision, spec.alternate, add_dot_0);
    if spec.coerce_zero && negative && text.chars().all(|c| !matches!(c, '1'..='9')) {
        negative = false;
    }
    // Split the digits before the point (grouped and zero-padded) from the rest.
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let rest = text.split_off(split);
    let sign = sign_text(negative, spec.sign);
    Ok(finish_number(&sign, &text, &rest, spec, 3))
}

fn sign_text(negative: bool, sign: Option<char>) -> String {
    match (negative, sign) {
        (true, _) => "-".into(),
        (false, Some('+')) => "+".into(),
        (false, Some(' ')) => " ".into(),
        _ => String::new(),
    }
}

/// Groups the integer digits, pads with zeros (`0` flag: separators run into the padding, as
/// in Python) or with the fill character.
fn finish_number(lead: &str, int_digits: &str, rest: &str, spec: &Spec, group_size: usize) -> String {
    let zero_pad = spec.fill.is_none() && spec.align.is_none() && spec.zero;
    let fill = spec.fill.unwrap_or(if zero_pad { '0' } else { ' ' });
    let align = spec.align.unwrap_or(if zero_pad { '=' } else { '>' });
    let mut digits = int_digits.to_string();
    if zero_pad {
        let used = lead.chars().count() + rest.chars().count();
        let mut grouped = group(&digits, spec.grouping, group_size);
        while used + grouped.chars().count() < spec.width {
            digits.insert(0, '0');
            grouped = group(&digits, spec.grouping, group_size);
        }
        return format!("{lead}{grouped}{rest}");
    }
    let body = format!("{}{rest}", group(&digits, spec.grouping, group_size));
    pad(lead, &body, spec.width, fill, align)
}

fn group(digits: &str, sep: Option<char>, size: usize) -> String {
    let Some(sep) = sep else { return digits.to_string() };
    let chars: Vec<char> = digits.chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        if i > 0 && (chars.len() - i).is_multiple_of(size) {
            out.push(sep);
        }
        out.push(*c);
    }
    out
}

/// Pads `lead + body` to `width`; `=` puts the padding between them.
fn pad(lead: &str, body: &str, width: usize, fill: char, align: char) -> String {
    let len = lead.chars().count() + body.chars().count();
    let missing = width.saturating_sub(len);
    let fills = |n: usize| std::iter::repeat_n(fill, n).collect::<String>();
    match align {
        '<' => format!("{lead}{body}{}", fills(missing)),
        '^' => format!("{}{lead}{body}{}", fills(missing / 2), fills(missing - missing / 2)),
        '=' => format!("{lead}{}{body}", fills(missing)),
        _ => format!("{}{lead}{body}", fills(missing)),
    }
}

fn unknown_code(ty: char, type_name: &str) -> FormatError {
    FormatError::value(format!("Unknown format code '{ty}' for object of type '{type_name}'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(v: Value, spec: &str) -> Result<String, FormatError> {
        format_value(&v, spec, &|id| format!("I{}", id.0))
    }

    fn ok(v: Value, spec: &str) -> String {
        fmt(v, spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
    }

    #[test]
    fn strings_align_and_truncate() {
        assert_eq!(ok(Value::str("ab"), ">5"), "   ab");
        assert_eq!(ok(Value::str("ab"), "5"), "ab   ");
        assert_eq!(ok(Value::str("ab"), "*^6"), "**ab**");
        assert_eq!(ok(Value::str("abcdef"), ".3"), "abc");
        assert_eq!(ok(Value::str("ab"), "05"), "ab000");
        assert_eq!(fmt(Value::str("ab"), "+5").unwrap_err().message, "Sign not allowed in string format specifier");
        assert_eq!(fmt(Value::str("ab"), "d").unwrap_err().message, "Unknown format code 'd' for object of type 'str'");
    }

    #[test]
    fn integers_follow_python() {
        assert_eq!(ok(Value::Int(5), ">4"), "   5");
        assert_eq!(ok(Value::Int(-5), "05"), "-0005");
        assert_eq!(ok(Value::Int(1234567), ","), "1,234,567");
        assert_eq!(ok(Value::Int(1234), "08,"), "0,001,234");
        assert_eq!(ok(Value::Int(255), "#x"), "0xff");
        assert_eq!(ok(Value::Int(255), "#010b"), "0b11111111");
        assert_eq!(ok(Value::Int(5), "+d"), "+5");
        assert_eq!(ok(Value::Int(-5), "=+5"), "-   5");
        assert_eq!(ok(Value::Int(65), "c"), "A");
        assert_eq!(ok(Value::Int(3), ".2f"), "3.00");
        assert_eq!(ok(Value::Bool(true), ">3"), "  1");
        assert_eq!(ok(Value::Int(i64::MIN), "d"), "-9223372036854775808");
        assert_eq!(fmt(Value::Int(1), ".2").unwrap_err().message, "Precision not allowed in integer format specifier");
    }

    #[test]
    fn floats_follow_python() {
        assert_eq!(ok(Value::Float(1.23456), "8.2f"), "    1.23");
        assert_eq!(ok(Value::Float(1.0), ">5"), "  1.0");
        assert_eq!(ok(Value::Float(1234.5), ",.1f"), "1,234.5");
        assert_eq!(ok(Value::Float(-1.5), "08.2f"), "-0001.50");
        assert_eq!(ok(Value::Float(0.5), ".0%"), "50%");
        assert_eq!(ok(Value::Float(-0.0001), "z.1f"), "0.0");
        assert_eq!(ok(Value::Float(1e20), "e"), "1.000000e+20");
        assert_eq!(ok(Value::Float(f64::INFINITY), "f"), "inf");
        assert_eq!(
            fmt(Value::Float(1.0), "d").unwrap_err().message,
            "Unknown format code 'd' for object of type 'float'"
        );
    }

    #[test]
    fn other_values_take_only_the_empty_spec() {
        assert_eq!(ok(Value::Null, ""), "None");
        assert_eq!(ok(Value::list(vec![Value::Int(1)]), ""), "@[1]");
        let err = fmt(Value::list(vec![]), ">3").unwrap_err();
        assert_eq!(
            (err.kind, err.message.as_str()),
            ("TypeError", "unsupported format string passed to list.__format__")
        );
        assert!(fmt(Value::Int(1), "<<<").is_err());
        assert!(fmt(Value::Int(1), "99999999999").is_err());
    }
}
