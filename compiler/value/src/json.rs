//! JSON as Python's `json` module writes and reads it, for `std::json_dumps` and
//! `std::json_loads`: `json.dumps` with its default separators (`", "`, `": "`), ASCII-only
//! output and `NaN`/`Infinity`; `json.loads` with Python's error messages ("Expecting value:
//! line 1 column 1 (char 0)") and dicts in document order.
//!
//! The text is written by the one `json.dumps` writer (`crate::dumps`), which the reference
//! exporter's output and the store's hash use too; serde_json's own output differs (compact
//! separators, raw UTF-8). [`to_serde_json`] converts for Rust-side consumers.
//!
//! Limits: integers must fit in `i64` (Python's are unbounded); lone UTF-16 surrogates in
//! `\u` escapes become U+FFFD (Rust strings cannot hold them); nesting deeper than
//! [`MAX_DEPTH`] fails like Python's `RecursionError`.

use crate::{IndexMap, Value, py_float_repr};

/// The deepest nesting read or written, about Python's default recursion limit.
pub const MAX_DEPTH: usize = 1000;

/// A JSON failure, named like the Python exception it stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    /// `JSONDecodeError`, `TypeError`, `ValueError` or `RecursionError`.
    pub kind: &'static str,
    pub message: String,
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for JsonError {}

fn recursion() -> JsonError {
    JsonError { kind: "RecursionError", message: "maximum recursion depth exceeded".into() }
}

/// `json.dumps(value)`. Instances and unknowns are not serializable (`TypeError`).
pub fn to_json(value: &Value) -> Result<String, JsonError> {
    crate::dumps::dumps(value, crate::dumps::Style::default(), MAX_DEPTH).map_err(|e| match e {
        crate::dumps::DumpError::TooDeep => recursion(),
        crate::dumps::DumpError::NotSerializable(type_name) => {
            JsonError { kind: "TypeError", message: format!("Object of type {type_name} is not JSON serializable") }
        }
    })
}

/// `json.loads(text)`.
pub fn from_json(text: &str) -> Result<Value, JsonError> {
    let chars: Vec<char> = text.chars().collect();
    let mut parser = Parser { chars: &chars, pos: 0 };
    parser.skip_ws();
    let value = parser.value()?;
    parser.skip_ws();
    if parser.pos != chars.len() {
        return Err(parser.error("Extra data", parser.pos));
    }
    Ok(value)
}

struct Parser<'a> {
    chars: &'a [char],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, what: &str, pos: usize) -> JsonError {
        let before = &self.chars[..pos.min(self.chars.len())];
        let line = before.iter().filter(|&&c| c == '\n').count() + 1;
        let column = match before.iter().rposition(|&c| c == '\n') {
            Some(nl) => pos - nl,
            None => pos + 1,
        };
        JsonError { kind: "JSONDecodeError", message: format!("{what}: line {line} column {column} (char {pos})") }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
            self.pos += 1;
        }
    }

    fn starts_with(&self, word: &str) -> bool {
        word.chars().enumerate().all(|(i, c)| self.chars.get(self.pos + i) == Some(&c))
    }

    /// One value, containers included, with an explicit stack (no recursion, so no depth
    /// can exhaust the thread's stack).
    fn value(&mut self) -> Result<Value, JsonError> {
        let mut stack: Vec<Open> = Vec::new();
        loop {
            // Read a value, or open a container and go on with its first element.
            let mut value = match self.peek() {
                Some('[') => {
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(']') {
                        self.pos += 1;
                        Value::list(Vec::new())
                    } else {
                        push(&mut stack, Open::List(Vec::new()))?;
                        continue;
                    }
                }
                Some('{') => {
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some('}') {
                        self.pos += 1;
                        Value::dict(IndexMap::new())
                    } else {
                        let key = self.key()?;
                        push(&mut stack, Open::Dict(IndexMap::new(), key))?;
                        continue;
                    }
                }
                _ => self.scalar()?,
            };
            // Hand the value to the open containers, closing those that end here.
            loop {
                let Some(open) = stack.last_mut() else { return Ok(value) };
                self.skip_ws();
                match open {
                    Open::List(items) => {
                        items.push(value);
                        match self.peek() {
                            Some(',') => {
                                self.pos += 1;
                                self.skip_ws();
                                break;
                            }
                            Some(']') => self.pos += 1,
                            _ => return Err(self.error("Expecting ',' delimiter", self.pos)),
                        }
                    }
                    Open::Dict(entries, key) => {
                        entries.insert(std::mem::take(key), value);
                        match self.peek() {
                            Some(',') => {
                                self.pos += 1;
                                self.skip_ws();
                                *key = self.key()?;
                                break;
                            }
                            Some('}') => self.pos += 1,
                            _ => return Err(self.error("Expecting ',' delimiter", self.pos)),
                        }
                    }
                }
                value = match stack.pop() {
                    Some(Open::List(items)) => Value::list(items),
                    Some(Open::Dict(entries, _)) => Value::dict(entries),
                    // `last_mut` just found one.
                    None => return Err(self.error("Expecting value", self.pos)),
                };
            }
        }
    }

    /// A dict key and its colon, leaving the position at the value.
    fn key(&mut self) -> Result<String, JsonError> {
        if self.peek() != Some('"') {
            return Err(self.error("Expecting property name enclosed in double quotes", self.pos));
        }
        let key = self.string()?;
        self.skip_ws();
        if self.peek() != Some(':') {
            return Err(self.error("Expecting ':' delimiter", self.pos));
        }
        self.pos += 1;
        self.skip_ws();
        Ok(key)
    }

    fn scalar(&mut self) -> Result<Value, JsonError> {
        let start = self.pos;
        match self.peek() {
            Some('"') => return Ok(Value::from(self.string()?)),
            Some('-' | '0'..='9') if !self.starts_with("-Infinity") => return self.number(),
            _ => {}
        }
        for (word, value) in [
            ("null", Value::Null),
            ("true", Value::Bool(true)),
            ("false", Value::Bool(false)),
            ("NaN", Value::Float(f64::NAN)),
            ("Infinity", Value::Float(f64::INFINITY)),
            ("-Infinity", Value::Float(f64::NEG_INFINITY)),
        ] {
            if self.starts_with(word) {
                self.pos += word.chars().count();
                return Ok(value);
            }
        }
        Err(self.error("Expecting value", start))
    }

    fn number(&mut self) -> Result<Value, JsonError> {
        let start = self.pos;
        let digits = |p: &mut Parser<'_>| {
            let s = p.pos;
            while matches!(p.peek(), Some('0'..='9')) {
                p.pos += 1;
            }
            p.pos - s
        };
        if self.peek() == Some('-') {
            self.pos += 1;
        }
        if self.peek() == Some('0') {
            self.pos += 1;
        } else if digits(self) == 0 {
            return Err(self.error("Expecting value", start));
        }
        let mut is_float = false;
        if self.peek() == Some('.') && matches!(self.chars.get(self.pos + 1), Some('0'..='9')) {
            self.pos += 1;
            digits(self);
            is_float = true;
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            let save = self.pos;
            self.pos += 1;
            if matches!(self.peek(), Some('+' | '-')) {
                self.pos += 1;
            }
            if digits(self) == 0 {
                self.pos = save;
            } else {
                is_float = true;
            }
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        if is_float {
            text.parse::<f64>().map(Value::Float).map_err(|_| self.error("Expecting value", start))
        } else {
            text.parse::<i64>().map(Value::Int).map_err(|_| JsonError {
                kind: "ValueError",
                message: format!("integer {text} is out of range (integers are 64-bit)"),
            })
        }
    }

    fn string(&mut self) -> Result<String, JsonError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error("Unterminated string starting at", start));
            };
            match c {
                '"' => {
                    self.pos += 1;
                    return Ok(out);
                }
                '\\' => {
                    let escape_at = self.pos;
                    self.pos += 1;
                    let Some(e) = self.peek() else {
                        return Err(self.error("Unterminated string starting at", start));
                    };
                    self.pos += 1;
                    match e {
                        '"' => out.push('"'),
                        '\\' => out.push('\\'),
                        '/' => out.push('/'),
                        'b' => out.push('\u{8}'),
                        'f' => out.push('\u{c}'),
                        'n' => out.push('\n'),
                        'r' => out.push('\r'),
                        't' => out.push('\t'),
                        'u' => out.push(self.unicode_escape(escape_at)?),
                        _ => return Err(self.error("Invalid \\escape", escape_at)),
                    }
                }
                c if (c as u32) < 0x20 => return Err(self.error("Invalid control character at", self.pos)),
                c => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// After `\u`: four hex digits, and a low surrogate after a high one.
    fn unicode_escape(&mut self, escape_at: usize) -> Result<char, JsonError> {
        let first = self.hex4(escape_at)?;
        if (0xD800..0xDC00).contains(&first) && self.starts_with("\\u") {
            let save = self.pos;
            self.pos += 2;
            let second = self.hex4(save)?;
            if (0xDC00..0xE000).contains(&second) {
                let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                return Ok(char::from_u32(code).unwrap_or('\u{FFFD}'));
            }
            self.pos = save;
        }
        Ok(char::from_u32(first).unwrap_or('\u{FFFD}'))
    }

    fn hex4(&mut self, escape_at: usize) -> Result<u32, JsonError> {
        let mut code = 0;
        for _ in 0..4 {
            let digit = self.peek().and_then(|c| c.to_digit(16));
            let Some(d) = digit else {
                return Err(self.error("Invalid \\uXXXX escape", escape_at));
            };
            code = code * 16 + d;
            self.pos += 1;
        }
        Ok(code)
    }
}

/// A container being read: a list, or a dict and the key of the value being read.
enum Open {
    List(Vec<Value>),
    Dict(IndexMap<String, Value>, String),
}

fn push(stack: &mut Vec<Open>, open: Open) -> Result<(), JsonError> {
    if stack.len() >= MAX_DEPTH {
        return Err(JsonError {
            kind: "RecursionError",
            message: "maximum recursion depth exceeded while decoding a JSON document".into(),
        });
    }
    stack.push(open);
    Ok(())
}

/// The value as a `serde_json::Value`, for Rust-side consumers. Dicts keep their order (the
/// workspace enables serde_json's `preserve_order`); NaN and infinities have no JSON form (`ValueError`).
pub fn to_serde_json(value: &Value) -> Result<serde_json::Value, JsonError> {
    to_serde(value, 0)
}

fn to_serde(value: &Value, depth: usize) -> Result<serde_json::Value, JsonError> {
    if depth > MAX_DEPTH {
        return Err(recursion());
    }
    Ok(match value {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Int(i) => serde_json::Value::from(*i),
        Value::Float(f) => {
            serde_json::Number::from_f64(*f).map(serde_json::Value::Number).ok_or_else(|| JsonError {
                kind: "ValueError",
                message: format!("Out of range float values are not JSON compliant: {}", py_float_repr(*f)),
            })?
        }
        Value::Str(s) => serde_json::Value::String(s.to_string()),
        Value::List(items) => {
            serde_json::Value::Array(items.iter().map(|v| to_serde(v, depth + 1)).collect::<Result<_, _>>()?)
        }
        Value::Dict(entries) => serde_json::Value::Object(
            entries.iter().map(|(k, v)| Ok((k.clone(), to_serde(v, depth + 1)?))).collect::<Result<_, JsonError>>()?,
        ),
        Value::Instance(_) | Value::Unknown => {
            return Err(JsonError {
                kind: "TypeError",
                message: format!("Object of type {} is not JSON serializable", value.type_name()),
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InstanceId;

    fn dumps(v: &Value) -> String {
        to_json(v).unwrap_or_else(|e| panic!("{e}"))
    }

    fn loads(s: &str) -> Value {
        from_json(s).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn dumps_like_python() {
        let inner = Value::list(vec![Value::Int(1), Value::Int(2)]);
        let d: IndexMap<String, Value> = [
            ("a".to_string(), inner),
            ("b".to_string(), Value::Null),
            ("c".to_string(), Value::Float(1.0)),
            ("é".to_string(), Value::str("x\"\n😀\u{7f}")),
        ]
        .into();
        assert_eq!(
            dumps(&Value::dict(d)),
            r#"{"a": [1, 2], "b": null, "c": 1.0, "\u00e9": "x\"\n\ud83d\ude00\u007f"}"#
        );
        assert_eq!(dumps(&Value::Float(1e16)), "1e+16");
        assert_eq!(dumps(&Value::Float(f64::NAN)), "NaN");
        assert_eq!(dumps(&Value::list(vec![])), "[]");
        assert_eq!(dumps(&Value::Bool(true)), "true");
        let err = to_json(&Value::Instance(InstanceId(1))).unwrap_err();
        assert_eq!((err.kind, err.message.as_str()), ("TypeError", "Object of type Instance is not JSON serializable"));
    }

    #[test]
    fn loads_like_python() {
        let v = loads(r#" {"b": [1, 2.5, -3e2, true, null], "a": "\u00e9\ud83d\ude00\/", "b": 7} "#);
        let d = v.as_dict().unwrap();
        assert_eq!(d.keys().collect::<Vec<_>>(), ["b", "a"]);
        assert!(d["b"].py_eq(&Value::Int(7)));
        assert_eq!(d["a"].as_str(), Some("é😀/"));
        let l = loads("[1, 2.5, -3e2, true, null, NaN, -Infinity]");
        let l = l.as_list().unwrap();
        assert!(matches!(l[0], Value::Int(1)));
        assert!(matches!(l[2], Value::Float(f) if f == -300.0));
        assert!(matches!(l[5], Value::Float(f) if f.is_nan()));
        assert!(matches!(l[6], Value::Float(f) if f == f64::NEG_INFINITY));
        assert!(matches!(loads("[[1], [2, 3]]").as_list().unwrap()[1], Value::List(_)));
    }

    #[test]
    fn load_errors_read_like_python() {
        let msg = |s: &str| from_json(s).unwrap_err().message;
        assert_eq!(msg(""), "Expecting value: line 1 column 1 (char 0)");
        assert_eq!(msg("[1,]"), "Expecting value: line 1 column 4 (char 3)");
        assert_eq!(msg("{'a': 1}"), "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)");
        assert_eq!(msg("[1 2]"), "Expecting ',' delimiter: line 1 column 4 (char 3)");
        assert_eq!(msg("{\"a\" 1}"), "Expecting ':' delimiter: line 1 column 6 (char 5)");
        assert_eq!(msg("\"abc"), "Unterminated string starting at: line 1 column 1 (char 0)");
        assert_eq!(msg("\"\\x\""), "Invalid \\escape: line 1 column 2 (char 1)");
        assert_eq!(msg("1 2"), "Extra data: line 1 column 3 (char 2)");
        assert_eq!(msg("[\n1,\n]"), "Expecting value: line 3 column 1 (char 5)");
        assert_eq!(from_json("99999999999999999999").unwrap_err().kind, "ValueError");
        assert_eq!(from_json(&"[".repeat(5000)).unwrap_err().kind, "RecursionError");
    }

    #[test]
    fn serde_conversion() {
        let v = loads(r#"{"a": [1, 2.5, "x", null]}"#);
        assert_eq!(to_serde_json(&v).unwrap(), serde_json::json!({"a": [1, 2.5, "x", null]}));
        assert!(to_serde_json(&Value::Float(f64::INFINITY)).is_err());
    }
}
