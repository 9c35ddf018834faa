//! The string plugins: `capitalize`, `upper`, `lower`, `limit`, `length`, `replace`, `split`,
//! `hostname`, `unique_file` and `is_base64_encoded`, with the semantics of the Python string
//! methods they wrap.

use md5::{Digest, Md5};
use modelc_value::Value;

use super::bind::BoundArgs;
use super::error::PluginError;

type Result<T> = std::result::Result<T, PluginError>;

/// `str.capitalize`: the first character upper case, the rest lower case.
pub(crate) fn capitalize(args: &BoundArgs) -> Result<Value> {
    let s = args.str_arg("string")?;
    let mut chars = s.chars();
    let mut out = String::with_capacity(s.len());
    if let Some(first) = chars.next() {
        out.extend(first.to_uppercase());
        out.push_str(&chars.as_str().to_lowercase());
    }
    Ok(Value::from(out))
}

pub(crate) fn upper(args: &BoundArgs) -> Result<Value> {
    Ok(Value::from(args.str_arg("string")?.to_uppercase()))
}

pub(crate) fn lower(args: &BoundArgs) -> Result<Value> {
    Ok(Value::from(args.str_arg("string")?.to_lowercase()))
}

/// `string[:length]`: a negative length drops characters from the end, as a Python slice does.
pub(crate) fn limit(args: &BoundArgs) -> Result<Value> {
    let s = args.str_arg("string")?;
    let length = args.int_arg("length")?;
    let count = s.chars().count();
    let end = if length >= 0 {
        usize::try_from(length).unwrap_or(usize::MAX).min(count)
    } else {
        count.saturating_sub(usize::try_from(length.unsigned_abs()).unwrap_or(usize::MAX))
    };
    Ok(Value::from(s.chars().take(end).collect::<String>()))
}

/// The number of characters (code points).
pub(crate) fn length(args: &BoundArgs) -> Result<Value> {
    let n = args.str_arg("value")?.chars().count();
    Ok(Value::Int(i64::try_from(n).unwrap_or(i64::MAX)))
}

/// `str.replace(old, new)`; an empty `old` inserts `new` around every character.
pub(crate) fn replace(args: &BoundArgs) -> Result<Value> {
    let s = args.str_arg("string")?;
    Ok(Value::from(s.replace(args.str_arg("old")?, args.str_arg("new")?)))
}

/// `str.split(delim)`.
pub(crate) fn split(args: &BoundArgs) -> Result<Value> {
    let s = args.str_arg("string_list")?;
    let delim = args.str_arg("delim")?;
    if delim.is_empty() {
        return Err(PluginError::external("ValueError", "empty separator"));
    }
    Ok(Value::list(s.split(delim).map(Value::from).collect()))
}

/// The part of a name before its first dot.
pub(crate) fn hostname(args: &BoundArgs) -> Result<Value> {
    let fqdn = args.str_arg("fqdn")?;
    Ok(Value::from(fqdn.split('.').next().unwrap_or_default()))
}

/// `prefix + md5hex(seed) + suffix`; `length` is ignored, as in the reference.
pub(crate) fn unique_file(args: &BoundArgs) -> Result<Value> {
    let prefix = args.str_arg("prefix")?;
    let seed = args.str_arg("seed")?;
    let suffix = args.str_arg("suffix")?;
    let digest = Md5::digest(seed.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok(Value::from(format!("{prefix}{hex}{suffix}")))
}

/// Whether Python's `base64.b64decode(s, validate=True)` accepts `s` (strict mode: only
/// alphabet characters, correct padding, nothing after the padding).
pub(crate) fn is_base64_encoded(args: &BoundArgs) -> Result<Value> {
    Ok(Value::Bool(strict_base64(args.str_arg("s")?)))
}

fn strict_base64(s: &str) -> bool {
    let bytes = s.as_bytes();
    if !s.is_ascii() || bytes.first() == Some(&b'=') {
        return false;
    }
    let mut quad_pos = 0;
    let mut pads = 0;
    let mut padding_started = false;
    for (i, &c) in bytes.iter().enumerate() {
        if c == b'=' {
            padding_started = true;
            if quad_pos >= 2 {
                pads += 1;
                if quad_pos + pads >= 4 {
                    // Complete: anything after the padding is an error.
                    return i + 1 == bytes.len();
                }
            }
            continue;
        }
        if !(c.is_ascii_alphanumeric() || c == b'+' || c == b'/') || padding_started {
            return false;
        }
        pads = 0;
        quad_pos = (quad_pos + 1) % 4;
    }
    quad_pos == 0
}

/// Python's `int(text)` for base 10: surrounding whitespace, a sign, digits with single
/// underscores between them. `None` when Python raises (or the value does not fit `i64`).
pub(crate) fn parse_py_int(text: &str) -> Option<i64> {
    let t = text.trim();
    let (negative, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || digits.starts_with('_') || digits.ends_with('_') || digits.contains("__") {
        return None;
    }
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    if !clean.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let magnitude: i128 = clean.parse().ok()?;
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(f: fn(&BoundArgs) -> Result<Value>, args: BoundArgs) -> Value {
        f(&args).unwrap_or_else(|e| panic!("{e}"))
    }

    fn text(v: Value) -> String {
        v.as_str().map(str::to_string).unwrap_or_else(|| panic!("not a string: {v:?}"))
    }

    #[test]
    fn case_plugins() {
        assert_eq!(text(run(capitalize, BoundArgs::new().with("string", "hello World"))), "Hello world");
        assert_eq!(text(run(capitalize, BoundArgs::new().with("string", ""))), "");
        assert_eq!(text(run(upper, BoundArgs::new().with("string", "abC straße"))), "ABC STRASSE");
        assert_eq!(text(run(lower, BoundArgs::new().with("string", "ABc"))), "abc");
    }

    #[test]
    fn limit_slices_like_python() {
        let lim = |s: &str, n: i64| text(run(limit, BoundArgs::new().with("string", s).with("length", n)));
        assert_eq!(lim("abcdef", 3), "abc");
        assert_eq!(lim("abc", 10), "abc");
        assert_eq!(lim("abcdef", -2), "abcd");
        assert_eq!(lim("ab", -5), "");
        assert_eq!(lim("café", 4), "café");
        assert_eq!(lim("abc", i64::MIN), "");
    }

    #[test]
    fn length_counts_characters() {
        assert!(run(length, BoundArgs::new().with("value", "café")).py_eq(&Value::Int(4)));
    }

    #[test]
    fn replace_and_split() {
        let r = |s: &str, o: &str, n: &str| {
            text(run(replace, BoundArgs::new().with("string", s).with("old", o).with("new", n)))
        };
        assert_eq!(r("hello", "l", "L"), "heLLo");
        assert_eq!(r("ab", "", "-"), "-a-b-");
        let parts = run(split, BoundArgs::new().with("string_list", ",a,,b").with("delim", ","));
        let parts: Vec<String> = parts.as_list().unwrap().iter().map(|v| text(v.clone())).collect();
        assert_eq!(parts, ["", "a", "", "b"]);
        let err = split(&BoundArgs::new().with("string_list", "a").with("delim", "")).unwrap_err();
        assert_eq!(err.to_string(), "ValueError: empty separator");
    }

    #[test]
    fn hostname_is_the_first_label() {
        assert_eq!(text(run(hostname, BoundArgs::new().with("fqdn", "host.example.com"))), "host");
        assert_eq!(text(run(hostname, BoundArgs::new().with("fqdn", "host"))), "host");
    }

    #[test]
    fn unique_file_is_prefix_md5_suffix() {
        let args = BoundArgs::new().with("prefix", "p").with("seed", "seed").with("suffix", ".s").with("length", 3);
        assert_eq!(text(run(unique_file, args)), "pfe4c0f30aa359c41d9f9a5f69c8c4192.s");
    }

    #[test]
    fn base64_is_checked_strictly() {
        for (s, ok) in [
            ("aGVsbG8=", true),
            ("", true),
            ("aGk=", true),
            ("aGl=", true),
            ("aGVs=", true),
            ("aaaa====", true),
            ("aa==", true),
            ("==", false),
            ("aGk==", false),
            ("aGk", false),
            ("a", false),
            ("a===", false),
            ("aa=", false),
            ("aaaa=a", false),
            ("aaa=aaaa", false),
            ("aGVs bG8=", false),
            ("aGVsbG8=\n", false),
            ("é", false),
        ] {
            assert_eq!(strict_base64(s), ok, "{s:?}");
        }
    }

    #[test]
    fn python_int_parsing() {
        assert_eq!(parse_py_int(" 42\n"), Some(42));
        assert_eq!(parse_py_int("-1_000"), Some(-1000));
        assert_eq!(parse_py_int("+7"), Some(7));
        assert_eq!(parse_py_int("1.5"), None);
        assert_eq!(parse_py_int("1__0"), None);
        assert_eq!(parse_py_int(""), None);
        assert_eq!(parse_py_int("99999999999999999999"), None);
    }
}
