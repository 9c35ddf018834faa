//! String formats of `std::validate_type`: `uuid.UUID`, pydantic's URL types (with the `url`
//! crate, the parser pydantic itself uses), `EmailStr`/`NameEmail` (the syntax rules of the
//! `email-validator` package pydantic calls, without deliverability checks) and `constr`.

use fancy_regex::Regex;
use indexmap::IndexMap;
use modelc_value::Value;

use crate::error::PluginError;

/// `uuid.UUID`: 32 hex digits, plain, hyphenated (8-4-4-4-12), in braces or as a `urn:uuid:`.
pub(super) fn is_uuid(s: &str) -> bool {
    let body = if let Some(inner) = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        inner
    } else {
        s.strip_prefix("urn:uuid:").unwrap_or(s)
    };
    let hex = |t: &str| t.bytes().all(|b| b.is_ascii_hexdigit());
    match body.len() {
        32 => hex(body) && body.len() == s.len(),
        36 => {
            let groups: Vec<&str> = body.split('-').collect();
            groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12]) && groups.iter().all(|g| hex(g))
        }
        _ => false,
    }
}

/// Which of pydantic's URL types.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum UrlKind {
    Any,
    AnyHttp,
    Http,
}

pub(super) fn is_url(s: &str, kind: UrlKind) -> bool {
    if s.is_empty() || (kind == UrlKind::Http && s.chars().count() > 2083) {
        return false;
    }
    match url::Url::parse(s) {
        Ok(u) => kind == UrlKind::Any || matches!(u.scheme(), "http" | "https"),
        Err(_) => false,
    }
}

/// Whether pydantic's `EmailStr` (and `NameEmail`) accepts `s`: an address, optionally as
/// `Name <address>` or `"Name" <address>`.
pub(super) fn is_email(s: &str) -> bool {
    if s.chars().count() > 2048 {
        return false;
    }
    let address = pretty_address(s).unwrap_or(s).trim();
    let Some((local, domain)) = address.rsplit_once('@') else { return false };
    address.chars().count() <= 254 && valid_local_part(local) && valid_domain(domain)
}

/// The address inside `Name <address>`, as pydantic's pretty-email pattern finds it.
fn pretty_address(s: &str) -> Option<&str> {
    let t = s.trim();
    let inner = t.strip_suffix('>')?;
    let open = inner.find('<')?;
    let name = inner[..open].trim();
    let address = &inner[open + 1..];
    if address.is_empty() {
        return None;
    }
    let name_char = |c: char| c.is_alphanumeric() || c == '_' || "!#$%&'*+-/=?^`{|}~".contains(c);
    let quoted = name.len() >= 2 && name.starts_with('"') && name.ends_with('"');
    let unquoted = name.split_whitespace().all(|word| word.chars().all(name_char));
    (name.is_empty() || quoted || unquoted).then_some(address)
}

fn is_atext(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c) || (!c.is_ascii() && is_safe_intl(c))
}

/// Non-ASCII characters email-validator accepts (SMTPUTF8): no controls, spaces or format
/// characters.
fn is_safe_intl(c: char) -> bool {
    !(c.is_control() || c.is_whitespace() || matches!(u32::from(c), 0x200B..=0x200F | 0x2028..=0x202E | 0xFEFF))
}

/// A dot-atom of at most 64 characters.
fn valid_local_part(local: &str) -> bool {
    !local.is_empty()
        && local.chars().count() <= 64
        && local.split('.').all(|atom| !atom.is_empty() && atom.chars().all(is_atext))
}

/// Dot-separated labels of letters, digits and hyphens (or non-ASCII letters), with a period,
/// ending in a letter, not a special-use name.
fn valid_domain(domain: &str) -> bool {
    let domain = domain.to_lowercase();
    if domain.is_empty() || domain.len() > 255 || !domain.contains('.') {
        return false;
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.chars().count() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || (!c.is_ascii() && c.is_alphanumeric()))
    };
    if !domain.split('.').all(label_ok) || !domain.chars().last().is_some_and(char::is_alphabetic) {
        return false;
    }
    const SPECIAL_USE: [&str; 6] = ["arpa", "invalid", "local", "localhost", "onion", "test"];
    !SPECIAL_USE.iter().any(|d| domain == *d || domain.ends_with(&format!(".{d}")))
}

/// `pydantic.constr(...)`: `strip_whitespace`, `to_lower`, `to_upper`, `min_length`,
/// `max_length`, `pattern` (or the older `regex`, searched anywhere in the text) and `strict`.
pub(super) fn constr(value: &Value, params: &IndexMap<String, Value>) -> Result<bool, PluginError> {
    let mut strip = false;
    let mut lower = false;
    let mut upper = false;
    let mut min = None;
    let mut max = None;
    let mut pattern = None;
    for (k, v) in params {
        match k.as_str() {
            "strip_whitespace" => strip = flag(k, v)?,
            "to_lower" => lower = flag(k, v)?,
            "to_upper" => upper = flag(k, v)?,
            "strict" => {
                flag(k, v)?;
            }
            "min_length" => min = Some(count(k, v)?),
            "max_length" => max = Some(count(k, v)?),
            "pattern" | "regex" => match v {
                Value::Str(p) => pattern = Some(p.clone()),
                Value::Null => {}
                _ => return Err(bad_param(k, v)),
            },
            _ => {
                return Err(PluginError::external(
                    "TypeError",
                    format!("constr() got an unexpected keyword argument '{k}'"),
                ));
            }
        }
    }
    let Value::Str(s) = value else { return Ok(false) };
    let mut s = if strip { s.trim().to_string() } else { s.to_string() };
    if lower {
        s = s.to_lowercase();
    }
    if upper {
        s = s.to_uppercase();
    }
    let len = s.chars().count();
    if min.is_some_and(|m| len < m) || max.is_some_and(|m| len > m) {
        return Ok(false);
    }
    match pattern {
        None => Ok(true),
        Some(p) => {
            let re =
                Regex::new(&p).map_err(|e| PluginError::external("ValueError", format!("bad pattern {p:?}: {e}")))?;
            re.is_match(&s).map_err(|e| PluginError::external("ValueError", format!("pattern {p:?} failed: {e}")))
        }
    }
}

fn flag(k: &str, v: &Value) -> Result<bool, PluginError> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Null => Ok(false),
        _ => Err(bad_param(k, v)),
    }
}

fn count(k: &str, v: &Value) -> Result<usize, PluginError> {
    match v {
        Value::Int(i) => usize::try_from(*i).map_err(|_| bad_param(k, v)),
        _ => Err(bad_param(k, v)),
    }
}

pub(super) fn bad_param(k: &str, v: &Value) -> PluginError {
    PluginError::external(
        "TypeError",
        format!("invalid value for validation parameter '{k}': {}", crate::args::shown(v)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids() {
        for (s, ok) in [
            ("12345678-1234-5678-1234-567812345678", true),
            ("12345678123456781234567812345678", true),
            ("{12345678-1234-5678-1234-567812345678}", true),
            ("urn:uuid:12345678-1234-5678-1234-567812345678", true),
            ("ABCDEF78-1234-5678-1234-567812345678", true),
            ("12345678-1234-5678-1234-56781234567", false),
            ("12345678-1234-5678-12345-67812345678", false),
            ("{12345678123456781234567812345678}", false),
            ("x", false),
        ] {
            assert_eq!(is_uuid(s), ok, "{s}");
        }
    }

    #[test]
    fn urls() {
        for (s, kind, ok) in [
            ("http://x", UrlKind::Any, true),
            ("foo:bar", UrlKind::Any, true),
            ("mailto:a@b.c", UrlKind::Any, true),
            (" http://x ", UrlKind::Any, true),
            ("x", UrlKind::Any, false),
            ("", UrlKind::Any, false),
            ("http://", UrlKind::Any, false),
            ("http://x:99999", UrlKind::Any, false),
            ("1http://x", UrlKind::Any, false),
            ("https://a.b/c?d#e", UrlKind::AnyHttp, true),
            ("ftp://x", UrlKind::AnyHttp, false),
            ("http://x", UrlKind::Http, true),
        ] {
            assert_eq!(is_url(s, kind), ok, "{s}");
        }
        assert!(!is_url(&format!("http://{}", "a".repeat(2100)), UrlKind::Http));
    }

    #[test]
    fn emails() {
        for (s, ok) in [
            ("user@example.com", true),
            ("first.last+tag@sub.example.org", true),
            ("  user@example.com ", true),
            ("John Doe <jd@example.com>", true),
            ("\"Doe, John\" <jd@example.com>", true),
            ("δοκιμή@παράδειγμα.δοκιμή", true),
            ("user@localhost", false),
            ("user@host.local", false),
            ("user@example", false),
            ("user@example.123", false),
            ("@example.com", false),
            ("user@", false),
            ("user", false),
            (".user@example.com", false),
            ("us..er@example.com", false),
            ("us er@example.com", false),
            ("user@-example.com", false),
            ("user@example..com", false),
        ] {
            assert_eq!(is_email(s), ok, "{s}");
        }
    }

    #[test]
    fn constr_checks_pattern_and_lengths() {
        let params = |pairs: &[(&str, Value)]| pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        let alnum = params(&[("regex", Value::str("^[a-zA-Z0-9]*$"))]);
        assert_eq!(constr(&Value::str("abc123"), &alnum), Ok(true));
        assert_eq!(constr(&Value::str("abc-123"), &alnum), Ok(false));
        assert_eq!(constr(&Value::Int(1), &alnum), Ok(false));
        let searched = params(&[("pattern", Value::str("b+"))]);
        assert_eq!(constr(&Value::str("abbc"), &searched), Ok(true));
        let lengths = params(&[
            ("min_length", Value::Int(2)),
            ("max_length", Value::Int(3)),
            ("strip_whitespace", Value::Bool(true)),
        ]);
        assert_eq!(constr(&Value::str(" ab "), &lengths), Ok(true));
        assert_eq!(constr(&Value::str("a"), &lengths), Ok(false));
        assert_eq!(constr(&Value::str("abcd"), &lengths), Ok(false));
        let bad = params(&[("nope", Value::Int(1))]);
        assert_eq!(
            constr(&Value::str("a"), &bad).unwrap_err().to_string(),
            "TypeError: constr() got an unexpected keyword argument 'nope'"
        );
        assert!(constr(&Value::str("a"), &params(&[("pattern", Value::str("("))])).is_err());
    }
}
