//! Python's float-to-text conversions: `repr`/`str` (shortest round-trip digits, `1.0`,
//! `1e+16`, `1e-05`) and the `e`, `f`, `g` and `%` presentations of the format mini-language.
//!
//! Rust's formatter gives the exact digits (shortest with `{:e}`, correctly rounded with a
//! precision); this module only lays them out the way CPython's `format_float_short` does.

/// `repr(x)` (and `str(x)`) of a Python float: `1.0`, `0.1`, `1e+16`, `1e-05`, `inf`, `nan`.
pub fn py_float_repr(f: f64) -> String {
    let mut out = String::new();
    if f.is_sign_negative() && !f.is_nan() {
        out.push('-');
    }
    out.push_str(&format_abs(f.abs(), 'r', None, false, true));
    out
}

/// The text of `|f|` in presentation `ty` (`'e'`, `'E'`, `'f'`, `'F'`, `'g'`, `'G'`, `'%'`,
/// or `'r'` for repr), without a sign. `alternate` is the `#` flag; `add_dot_0` makes integral
/// fixed-point results end in `.0` (repr, and the format type that is left out).
pub(crate) fn format_abs(f: f64, ty: char, precision: Option<usize>, alternate: bool, add_dot_0: bool) -> String {
    let upper = matches!(ty, 'E' | 'F' | 'G');
    if !f.is_finite() {
        let text = if f.is_nan() { "nan" } else { "inf" };
        let text = if upper { text.to_ascii_uppercase() } else { text.to_string() };
        return if ty == '%' { text + "%" } else { text };
    }
    match ty {
        'f' | 'F' => {
            let p = precision.unwrap_or(6);
            let mut s = format!("{f:.p$}");
            if alternate && p == 0 {
                s.push('.');
            }
            s
        }
        '%' => {
            let p = precision.unwrap_or(6);
            let mut s = format!("{:.p$}", f * 100.0);
            if alternate && p == 0 {
                s.push('.');
            }
            s.push('%');
            s
        }
        'e' | 'E' => {
            let p = precision.unwrap_or(6);
            let (digits, decpt) = significant_digits(f, p + 1);
            let s = layout(&digits, decpt, true, alternate || p > 0, false);
            if upper { s.to_ascii_uppercase() } else { s }
        }
        'g' | 'G' => {
            let p = precision.unwrap_or(6).max(1);
            let (mut digits, decpt) = significant_digits(f, p);
            if !alternate {
                trim_zeros(&mut digits);
            }
            let limit = if add_dot_0 { p as i64 - 1 } else { p as i64 };
            let use_exp = decpt <= -4 || i64::from(decpt) > limit;
            let s = if use_exp {
                layout(&digits, decpt, true, alternate || digits.len() > 1, false)
            } else {
                // The `#` flag keeps trailing zeros up to the precision.
                let s = layout(&digits, decpt, false, alternate, add_dot_0);
                if alternate && !s.contains('.') { s + "." } else { s }
            };
            if upper { s.to_ascii_uppercase() } else { s }
        }
        _ => {
            let (digits, decpt) = shortest_digits(f);
            let use_exp = decpt <= -4 || decpt > 16;
            layout(&digits, decpt, use_exp, use_exp && digits.len() > 1, true)
        }
    }
}

/// The shortest digits that round-trip, and the position of the decimal point relative to them
/// (`1.5` → `("15", 1)`, `0.001` → `("1", -2)`).
fn shortest_digits(f: f64) -> (String, i32) {
    split_exp(&format!("{f:e}"))
}

/// `n` (at least 1) correctly rounded significant digits and the decimal point position.
fn significant_digits(f: f64, n: usize) -> (String, i32) {
    let p = n.max(1) - 1;
    split_exp(&format!("{f:.p$e}"))
}

fn split_exp(s: &str) -> (String, i32) {
    let (mantissa, exp) = s.split_once('e').unwrap_or((s, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    (digits, exp.saturating_add(1))
}

fn trim_zeros(digits: &mut String) {
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
}

/// Lays out digits with the decimal point at `decpt`, either fixed-point or as `d.ddde+XX`.
fn layout(digits: &str, decpt: i32, use_exp: bool, point_in_exp: bool, add_dot_0: bool) -> String {
    let mut out = String::new();
    if use_exp {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        out.push_str(first);
        if point_in_exp {
            out.push('.');
            out.push_str(rest);
        }
        let exp = i64::from(decpt) - 1;
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.unsigned_abs()));
        return out;
    }
    if decpt <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', decpt.unsigned_abs() as usize));
        out.push_str(digits);
    } else {
        let point = decpt as usize;
        if point >= digits.len() {
            out.push_str(digits);
            out.extend(std::iter::repeat_n('0', point - digits.len()));
            if add_dot_0 {
                out.push_str(".0");
            }
        } else {
            out.push_str(&digits[..point]);
            out.push('.');
            out.push_str(&digits[point..]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repr_matches_python() {
        for (f, s) in [
            (1.0, "1.0"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1.0 / 3.0, "0.3333333333333333"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (123456789012345680.0, "1.2345678901234568e+17"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (-2.5, "-2.5"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (1e100, "1e+100"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
        ] {
            assert_eq!(py_float_repr(f), s, "{f}");
        }
    }

    #[test]
    fn presentations_match_python() {
        assert_eq!(format_abs(1.23456, 'f', Some(2), false, false), "1.23");
        assert_eq!(format_abs(2.5, 'f', Some(0), false, false), "2");
        assert_eq!(format_abs(1234.5, 'e', None, false, false), "1.234500e+03");
        assert_eq!(format_abs(1234.5, 'E', Some(1), false, false), "1.2E+03");
        assert_eq!(format_abs(0.0, 'e', Some(0), false, false), "0e+00");
        assert_eq!(format_abs(1234567.0, 'g', None, false, false), "1.23457e+06");
        assert_eq!(format_abs(123456.0, 'g', None, false, false), "123456");
        assert_eq!(format_abs(0.00001, 'g', None, false, false), "1e-05");
        assert_eq!(format_abs(1.5, 'g', None, false, false), "1.5");
        assert_eq!(format_abs(0.0, 'g', None, false, false), "0");
        assert_eq!(format_abs(1.0, 'g', Some(3), true, false), "1.00");
        assert_eq!(format_abs(0.25, '%', Some(1), false, false), "25.0%");
        // The left-out type with a precision: 'g' that keeps a digit after the point.
        assert_eq!(format_abs(10.0, 'g', Some(2), false, true), "1e+01");
        assert_eq!(format_abs(1.5, 'g', Some(1), false, true), "2e+00");
        assert_eq!(format_abs(1.0, 'g', Some(3), false, true), "1.0");
        assert_eq!(format_abs(1.2345, 'g', Some(2), false, true), "1.2");
    }
}
