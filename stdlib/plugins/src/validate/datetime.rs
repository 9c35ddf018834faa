//! `datetime.date`, `datetime.time` and `datetime.datetime` as pydantic validates them in lax
//! mode: ISO 8601 text (`2020-01-01`, `12:00:00.5+01:00`, `2020-01-01T12:00Z`), Unix timestamps
//! as numbers or numeric strings (a date only from a timestamp at midnight), and seconds since
//! midnight for a time given as a number.

use modelc_value::Value;

const DAY: f64 = 86_400.0;

pub(super) fn is_date(v: &Value) -> bool {
    match v {
        Value::Str(s) => {
            let b = s.as_bytes();
            if let Some(rest) = date_prefix(b) {
                return rest.is_empty() || time_after_date(rest).is_some_and(|t| t.is_midnight);
            }
            timestamp(s).is_some_and(day_aligned)
        }
        Value::Int(i) => day_aligned(*i as f64),
        Value::Float(f) => day_aligned(*f),
        _ => false,
    }
}

pub(super) fn is_time(v: &Value) -> bool {
    match v {
        Value::Str(s) => time(s.as_bytes()).is_some_and(|rest| rest.is_empty()),
        Value::Int(i) => (0..86_400).contains(i),
        Value::Float(f) => (0.0..DAY).contains(f),
        _ => false,
    }
}

pub(super) fn is_datetime(v: &Value) -> bool {
    match v {
        Value::Str(s) => match date_prefix(s.as_bytes()) {
            Some(rest) => rest.is_empty() || time_after_date(rest).is_some(),
            None => timestamp(s).is_some(),
        },
        Value::Int(_) => true,
        Value::Float(f) => f.is_finite(),
        _ => false,
    }
}

/// A timestamp in seconds; large values are milliseconds, as pydantic reads them.
fn day_aligned(t: f64) -> bool {
    let seconds = if t.abs() > 2e10 { t / 1000.0 } else { t };
    seconds.is_finite() && seconds % DAY == 0.0
}

/// A numeric string: `-?digits(.digits)?`.
fn timestamp(s: &str) -> Option<f64> {
    let body = s.strip_prefix('-').unwrap_or(s);
    let (int, frac) = body.split_once('.').unwrap_or((body, "0"));
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if digits(int) && digits(frac) { s.parse().ok() } else { None }
}

fn two(b: &[u8], at: usize) -> Option<u32> {
    let d = b.get(at..at + 2)?;
    d.iter().all(u8::is_ascii_digit).then(|| u32::from(d[0] - b'0') * 10 + u32::from(d[1] - b'0'))
}

/// `YYYY-MM-DD` at the start of `b`, a real calendar day; returns what follows.
fn date_prefix(b: &[u8]) -> Option<&[u8]> {
    let year = b.get(..4).filter(|y| y.iter().all(u8::is_ascii_digit))?;
    let year = year.iter().fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0'));
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let (month, day) = (two(b, 5)?, two(b, 8)?);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    (year >= 1 && (1..=days).contains(&day)).then(|| &b[10..])
}

struct TimeOfDay {
    is_midnight: bool,
}

/// `[Tt _]` and a time with optional zone, making up the rest of the text.
fn time_after_date(rest: &[u8]) -> Option<TimeOfDay> {
    let (sep, time_text) = rest.split_first()?;
    if !matches!(sep, b'T' | b't' | b' ' | b'_') {
        return None;
    }
    let zero = time_text.get(..5).is_some_and(|t| t == b"00:00");
    let after = time(time_text)?;
    if !after.is_empty() {
        return None;
    }
    // Midnight: every digit before the zone is zero.
    let clock_end = time_text.iter().position(|c| matches!(c, b'Z' | b'z' | b'+' | b'-')).unwrap_or(time_text.len());
    let is_midnight = zero && time_text[..clock_end].iter().all(|c| !c.is_ascii_digit() || *c == b'0');
    Some(TimeOfDay { is_midnight })
}

/// `HH:MM[:SS[(.|,)fraction]][zone]` at the start of `b`; returns what follows.
fn time(b: &[u8]) -> Option<&[u8]> {
    let (h, m) = (two(b, 0)?, two(b, 3)?);
    if b.get(2) != Some(&b':') || h > 23 || m > 59 {
        return None;
    }
    let mut i = 5;
    if b.get(i) == Some(&b':') {
        if two(b, i + 1)? > 59 {
            return None;
        }
        i += 3;
        if matches!(b.get(i), Some(b'.' | b',')) {
            let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits == 0 {
                return None;
            }
            i += 1 + digits;
        }
    }
    match b.get(i) {
        Some(b'Z' | b'z') => i += 1,
        Some(b'+' | b'-') => {
            let hours = two(b, i + 1)?;
            let colon = usize::from(b.get(i + 3) == Some(&b':'));
            let minutes = two(b, i + 3 + colon)?;
            if hours > 23 || minutes > 59 {
                return None;
            }
            i += 5 + colon;
        }
        _ => {}
    }
    Some(&b[i..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t: &str) -> Value {
        Value::str(t)
    }

    #[test]
    fn dates_as_pydantic_reads_them() {
        for (v, ok) in [
            (s("2020-01-01"), true),
            (s("2020-02-29"), true),
            (s("2021-02-29"), false),
            (s("2020-1-1"), false),
            (s("2020-02-30"), false),
            (s("0000-01-01"), false),
            (s("2020-01-01T00:00:00"), true),
            (s("2020-01-01 00:00:00.000"), true),
            (s("2020-01-01T00:00:00+01:00"), true),
            (s("2020-01-01T01:00:00"), false),
            (s("2020-01-01 "), false),
            (s("20200101"), false),
            (s("0"), true),
            (s("86400"), true),
            (s("-86400"), true),
            (s("86400.0"), true),
            (s("86400.5"), false),
            (s("100"), false),
            (s("1e5"), false),
            (Value::Int(86_400), true),
            (Value::Float(1.5), false),
            (Value::Bool(true), false),
        ] {
            assert_eq!(is_date(&v), ok, "{v:?}");
        }
    }

    #[test]
    fn times_as_pydantic_reads_them() {
        for (v, ok) in [
            (s("12:00"), true),
            (s("12:00:00.123456"), true),
            (s("12:00:00.1234567"), true),
            (s("12:00:00,5"), true),
            (s("12:00:00."), false),
            (s("12:00Z"), true),
            (s("12:00z"), true),
            (s("12:00+01:00"), true),
            (s("12:00+0100"), true),
            (s("12:00+01"), false),
            (s("12:00:00+25:00"), false),
            (s("24:00"), false),
            (s("23:59:60"), false),
            (s("12:5"), false),
            (s("1:00"), false),
            (s("3600"), false),
            (s("12:00 "), false),
            (Value::Int(3600), true),
            (Value::Int(86_400), false),
            (Value::Int(-1), false),
            (Value::Float(1.5), true),
        ] {
            assert_eq!(is_time(&v), ok, "{v:?}");
        }
    }

    #[test]
    fn datetimes_as_pydantic_reads_them() {
        for (v, ok) in [
            (s("2020-01-01T12:00"), true),
            (s("2020-01-01 12:00:00Z"), true),
            (s("2020-01-01"), true),
            (s("2020-01-01t12:00"), true),
            (s("2020-01-01_12:00"), true),
            (s("2020-01-01T12:00:00.123456789012"), true),
            (s("2020-01-01T12:00:00+05:30"), true),
            (s("2020-01-01T12"), false),
            (s("2020-01-01T12:00:60"), false),
            (s("2020-01-01T24:00"), false),
            (s("2020-01-01T12:00+01"), false),
            (s("2020-01-01T12:00:00 "), false),
            (s("1600000000"), true),
            (s("-1"), true),
            (s("1.5"), true),
            (s("1e10"), false),
            (s("nan"), false),
            (Value::Int(1_600_000_000), true),
            (Value::Bool(true), false),
        ] {
            assert_eq!(is_datetime(&v), ok, "{v:?}");
        }
    }
}
