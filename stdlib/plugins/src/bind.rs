//! Binding the arguments of a call to a plugin's parameters, by Python's rules (spec §4.12):
//! positional arguments fill the ordinary parameters in order and the rest go to `*args`;
//! keywords fill parameters by name and the rest go to `**kwargs`; defaults fill what is left.
//! Errors carry the reference's (Python's) wording ("takes 1 positional argument but 2 were given").

use std::fmt;

use indexmap::IndexMap;
use modelc_value::Value;

use modelc_stdlib::signatures::{ParamKind, PluginSignature};

/// The arguments of a call, bound to the plugin's parameters.
#[derive(Clone, Debug, Default)]
pub struct BoundArgs {
    /// The ordinary and keyword-only parameters by name, in signature order, defaults filled in.
    pub params: Vec<(&'static str, Value)>,
    /// `*args`: the positional arguments beyond the ordinary parameters.
    pub var_args: Vec<Value>,
    /// `**kwargs`: the keywords no parameter took, in call order.
    pub var_kwargs: IndexMap<String, Value>,
}

impl BoundArgs {
    pub fn new() -> BoundArgs {
        BoundArgs::default()
    }

    /// Adds (or replaces) parameter `name`; for building arguments by hand.
    pub fn with(mut self, name: &'static str, value: impl Into<Value>) -> BoundArgs {
        let value = value.into();
        match self.params.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.params.push((name, value)),
        }
        self
    }

    /// The value bound to parameter `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.params.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// Every argument value: parameters, `*args`, `**kwargs`.
    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.params.iter().map(|(_, v)| v).chain(self.var_args.iter()).chain(self.var_kwargs.values())
    }

    /// Whether any argument is itself unknown (elements of lists do not count).
    pub fn has_unknown(&self) -> bool {
        self.values().any(Value::is_unknown)
    }
}

/// Why a call's arguments do not fit the signature. [`BindError::message`] prefixes the
/// plugin's name as the reference does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BindError {
    TooManyPositional {
        max: usize,
        given: usize,
    },
    /// Required parameters without a value; `keyword_only` for those after `*args`.
    Missing {
        names: Vec<String>,
        keyword_only: bool,
    },
    UnexpectedKeyword {
        name: String,
    },
    MultipleValues {
        name: String,
    },
    /// A default in the signature table that is not a literal we know (a bug in the table).
    BadDefault {
        param: String,
        literal: String,
    },
}

impl BindError {
    /// The full message, e.g. `std::replace() missing 1 required positional argument: 'new'`.
    pub fn message(&self, plugin: &str) -> String {
        format!("{plugin}() {self}")
    }
}

impl fmt::Display for BindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BindError::TooManyPositional { max, given } => {
                // Python's own agreement: "takes 1 positional argument but 2 were given".
                let s = if *max == 1 { "" } else { "s" };
                let were = if *given == 1 { "was" } else { "were" };
                write!(f, "takes {max} positional argument{s} but {given} {were} given")
            }
            BindError::Missing { names, keyword_only } => {
                let kind = if *keyword_only { "keyword-only" } else { "positional" };
                let plural = if names.len() == 1 { "" } else { "s" };
                write!(f, "missing {} required {kind} argument{plural}: {}", names.len(), python_name_list(names))
            }
            BindError::UnexpectedKeyword { name } => write!(f, "got an unexpected keyword argument: '{name}'"),
            BindError::MultipleValues { name } => write!(f, "got multiple values for argument '{name}'"),
            BindError::BadDefault { param, literal } => {
                write!(f, "has a default for '{param}' that is not a literal: {literal}")
            }
        }
    }
}

impl std::error::Error for BindError {}

/// `'a'`, `'a' and 'b'`, `'a', 'b', and 'c'`, as Python lists missing arguments.
fn python_name_list(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [a, b] => format!("{a} and {b}"),
        [init @ .., last] => format!("{}, and {last}", init.join(", ")),
    }
}

/// Binds a call's arguments to `sig`. Checks run in the reference's order: too many positional
/// arguments, unexpected keywords, missing arguments, then arguments given twice.
pub fn bind(
    sig: &PluginSignature,
    positional: Vec<Value>,
    keywords: Vec<(String, Value)>,
) -> Result<BoundArgs, BindError> {
    let named: Vec<&modelc_stdlib::signatures::Param> =
        sig.params.iter().filter(|p| matches!(p.kind, ParamKind::Normal | ParamKind::KeywordOnly)).collect();
    let ordinary = named.iter().filter(|p| p.kind == ParamKind::Normal).count();
    let has_var_args = sig.params.iter().any(|p| p.kind == ParamKind::VarArgs);
    let has_var_kwargs = sig.params.iter().any(|p| p.kind == ParamKind::VarKeywords);

    let mut slots: Vec<Option<Value>> = vec![None; named.len()];
    let mut bound = BoundArgs::new();
    let given = positional.len();
    for (i, value) in positional.into_iter().enumerate() {
        if i < ordinary {
            // Ordinary parameters come first in `named`: signatures list them before `*args`.
            slots[i] = Some(value);
        } else if has_var_args {
            bound.var_args.push(value);
        } else {
            return Err(BindError::TooManyPositional { max: ordinary, given });
        }
    }

    let mut unexpected = None;
    let mut repeated = None;
    for (name, value) in keywords {
        match named.iter().position(|p| p.name == name) {
            Some(i) if slots[i].is_some() => {
                repeated.get_or_insert(name);
            }
            Some(i) => slots[i] = Some(value),
            None if has_var_kwargs => {
                if bound.var_kwargs.contains_key(&name) {
                    repeated.get_or_insert(name);
                } else {
                    bound.var_kwargs.insert(name, value);
                }
            }
            None => {
                unexpected.get_or_insert(name);
            }
        }
    }
    if let Some(name) = unexpected {
        return Err(BindError::UnexpectedKeyword { name });
    }

    let missing = |kind: ParamKind| -> Vec<String> {
        named
            .iter()
            .zip(&slots)
            .filter(|(p, slot)| p.kind == kind && slot.is_none() && p.default.is_none())
            .map(|(p, _)| p.name.to_string())
            .collect()
    };
    for (kind, keyword_only) in [(ParamKind::Normal, false), (ParamKind::KeywordOnly, true)] {
        let names = missing(kind);
        if !names.is_empty() {
            return Err(BindError::Missing { names, keyword_only });
        }
    }
    if let Some(name) = repeated {
        return Err(BindError::MultipleValues { name });
    }

    for (param, slot) in named.iter().zip(slots) {
        let value = match (slot, param.default) {
            (Some(value), _) => value,
            (None, Some(literal)) => parse_default(literal)
                .ok_or_else(|| BindError::BadDefault { param: param.name.into(), literal: literal.into() })?,
            // Reported as missing above.
            (None, None) => Value::Null,
        };
        bound.params.push((param.name, value));
    }
    Ok(bound)
}

/// The value of a default literal of the signature table: `20`, `-1`, `1.5`, `null`, `true`,
/// `false`, `"text"` (with `\"` and `\\` escapes) or a list of these (`["agent"]`).
pub fn parse_default(literal: &str) -> Option<Value> {
    let literal = literal.trim();
    match literal {
        "null" => return Some(Value::Null),
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        _ => {}
    }
    if let Some(inner) = literal.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
        let inner = inner.trim();
        if inner.is_empty() {
            return Some(Value::list(Vec::new()));
        }
        return split_list(inner)?.into_iter().map(parse_default).collect::<Option<Vec<_>>>().map(Value::list);
    }
    if let Some(inner) = literal.strip_prefix('"').and_then(|l| l.strip_suffix('"')) {
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => out.push(chars.next()?),
                '"' => return None,
                c => out.push(c),
            }
        }
        return Some(Value::from(out));
    }
    if let Ok(i) = literal.parse::<i64>() {
        return Some(Value::Int(i));
    }
    if literal.contains('.') {
        return literal.parse::<f64>().ok().map(Value::Float);
    }
    None
}

/// Splits list items at top-level commas (commas inside strings do not count).
fn split_list(inner: &str) -> Option<Vec<&str>> {
    let mut items = Vec::new();
    let mut start = 0;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in inner.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            ',' if !in_string => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if in_string {
        return None;
    }
    items.push(&inner[start..]);
    Some(items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use modelc_stdlib::signatures::{SIGNATURES, lookup};

    fn sig(name: &str) -> &'static PluginSignature {
        lookup(name).unwrap_or_else(|| panic!("no plugin {name}"))
    }

    fn s(v: &str) -> Value {
        Value::str(v)
    }

    fn kw(name: &str, v: Value) -> (String, Value) {
        (name.to_string(), v)
    }

    #[test]
    fn positional_and_keywords_bind_by_name_with_defaults() {
        let b = bind(sig("sequence"), vec![Value::Int(3)], vec![]).unwrap();
        assert_eq!(b.params.iter().map(|(n, _)| *n).collect::<Vec<_>>(), ["i", "start"]);
        assert!(b.get("start").unwrap().py_eq(&Value::Int(0)));
        let b = bind(sig("sequence"), vec![], vec![kw("start", Value::Int(2)), kw("i", Value::Int(3))]).unwrap();
        assert!(b.get("i").unwrap().py_eq(&Value::Int(3)));
        assert!(b.get("start").unwrap().py_eq(&Value::Int(2)));
        let b = bind(sig("server_token"), vec![], vec![]).unwrap();
        assert_eq!(b.get("client_types").and_then(|v| v.as_list()).map(|l| l.len()), Some(1));
    }

    #[test]
    fn var_args_and_var_kwargs_collect_the_rest() {
        let b = bind(sig("format"), vec![s("{}-{x}"), Value::Int(1), Value::Int(2)], vec![kw("x", s("y"))]).unwrap();
        assert_eq!(b.get("__string").and_then(Value::as_str), Some("{}-{x}"));
        assert_eq!(b.var_args.len(), 2);
        assert_eq!(b.var_kwargs.keys().collect::<Vec<_>>(), ["x"]);
        let b = bind(sig("template"), vec![s("std/host_uri.j2")], vec![kw("host", Value::Null)]).unwrap();
        assert!(b.var_kwargs.contains_key("host"));
    }

    #[test]
    fn errors_read_like_the_reference() {
        let err = bind(sig("upper"), vec![s("a"), s("b")], vec![]).unwrap_err();
        assert_eq!(err.message("std::upper"), "std::upper() takes 1 positional argument but 2 were given");
        let err = bind(sig("replace"), vec![s("b"), s("c")], vec![kw("old", s("a"))]).unwrap_err();
        assert_eq!(err.message("std::replace"), "std::replace() missing 1 required positional argument: 'new'");
        let err = bind(sig("replace"), vec![], vec![]).unwrap_err();
        assert_eq!(err.to_string(), "missing 3 required positional arguments: 'string', 'old', and 'new'");
        let err = bind(sig("upper"), vec![s("a")], vec![kw("y", s("b"))]).unwrap_err();
        assert_eq!(err.to_string(), "got an unexpected keyword argument: 'y'");
        let err = bind(sig("limit"), vec![s("a"), Value::Int(1)], vec![kw("length", Value::Int(2))]).unwrap_err();
        assert_eq!(err.to_string(), "got multiple values for argument 'length'");
        let err = bind(sig("at"), vec![], vec![kw("objects", Value::list(vec![]))]).unwrap_err();
        assert_eq!(err.to_string(), "missing 1 required positional argument: 'index'");
    }

    #[test]
    fn every_default_of_the_table_parses() {
        for sig in SIGNATURES {
            for p in sig.params {
                if let Some(d) = p.default {
                    assert!(parse_default(d).is_some(), "{}: {} = {d}", sig.name, p.name);
                }
            }
        }
        assert!(matches!(parse_default("\"\""), Some(Value::Str(s)) if s.is_empty()));
        assert!(matches!(parse_default("-1"), Some(Value::Int(-1))));
        assert!(matches!(parse_default("[\"a,b\", 1]"), Some(Value::List(l)) if l.len() == 2));
        assert!(parse_default("bogus").is_none());
    }
}
