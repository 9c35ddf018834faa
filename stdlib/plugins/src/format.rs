//! `std::format`: Python's `str.format`. Supported: literal `{{`/`}}`, automatic (`{}`) and
//! numbered (`{0}`) positional fields, keyword fields (`{name}`), attribute (`{0.name}`, read
//! from instances) and index (`{0[1]}`, `{d[key]}`) accessors, the conversions `!s`, `!r`,
//! `!a`, and format specs ([`modelc_value::format_spec`]) with nested fields (`{:{width}}`).
//! Errors are Python's (`IndexError: Replacement index 1 out of range for positional args
//! tuple`). Values appear as a plugin sees them: `None`, `True`, `@[1, 2]` for lists.

use indexmap::IndexMap;
use modelc_value::format_spec::format_value;
use modelc_value::{Value, print_string, py_str_repr};

use super::args::py_index;
use super::bind::BoundArgs;
use super::collections::python_getattr;
use super::context::PluginContext;
use super::error::PluginError;

type Result<T> = std::result::Result<T, PluginError>;

fn value_error(message: impl Into<String>) -> PluginError {
    PluginError::external("ValueError", message)
}

pub(crate) fn format(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    let template = args.str_arg("__string")?;
    let mut f = Formatter { args: &args.var_args, kwargs: &args.var_kwargs, next_auto: 0, numbering: None, ctx };
    f.render(template, 0).map(Value::from)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Numbering {
    Auto,
    Manual,
}

struct Formatter<'a> {
    args: &'a [Value],
    kwargs: &'a IndexMap<String, Value>,
    next_auto: usize,
    numbering: Option<Numbering>,
    ctx: &'a mut dyn PluginContext,
}

impl Formatter<'_> {
    fn render(&mut self, template: &str, depth: usize) -> Result<String> {
        let chars: Vec<char> = template.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '{' if chars.get(i + 1) == Some(&'{') => {
                    out.push('{');
                    i += 2;
                }
                '{' => {
                    let end = field_end(&chars, i + 1).ok_or_else(|| {
                        let single = i + 1 == chars.len();
                        value_error(if single {
                            "Single '{' encountered in format string"
                        } else {
                            "expected '}' before end of string"
                        })
                    })?;
                    let field: String = chars[i + 1..end].iter().collect();
                    out.push_str(&self.field(&field, depth)?);
                    i = end + 1;
                }
                '}' if chars.get(i + 1) == Some(&'}') => {
                    out.push('}');
                    i += 2;
                }
                '}' => return Err(value_error("Single '}' encountered in format string")),
                c => {
                    out.push(c);
                    i += 1;
                }
            }
        }
        Ok(out)
    }

    /// One replacement field (the text between the braces).
    fn field(&mut self, field: &str, depth: usize) -> Result<String> {
        let chars: Vec<char> = field.chars().collect();
        let name_end = name_end(&chars);
        let name: String = chars[..name_end].iter().collect();
        let (conversion, spec) = match chars.get(name_end) {
            Some('!') => {
                let Some(&c) = chars.get(name_end + 1) else {
                    return Err(value_error("unmatched '{' in format spec"));
                };
                match chars.get(name_end + 2) {
                    None => (Some(c), String::new()),
                    Some(':') => (Some(c), chars[name_end + 3..].iter().collect()),
                    Some(_) => return Err(value_error("expected ':' after conversion specifier")),
                }
            }
            Some(':') => (None, chars[name_end + 1..].iter().collect()),
            _ => (None, String::new()),
        };
        let value = self.lookup(&name)?;
        let show = |ctx: &dyn PluginContext, v: &Value| print_string(v, &|id| ctx.display_instance(id));
        let value = match conversion {
            None => value,
            Some('s') => Value::from(show(&*self.ctx, &value)),
            Some('r') => Value::from(repr(&*self.ctx, &value)),
            Some('a') => Value::from(ascii(&repr(&*self.ctx, &value))),
            Some(c) => return Err(value_error(format!("Unknown conversion specifier {c}"))),
        };
        let spec = if spec.contains('{') {
            if depth >= 2 {
                return Err(value_error("Max string recursion exceeded"));
            }
            self.render(&spec, depth + 1)?
        } else {
            spec
        };
        let ctx = &*self.ctx;
        format_value(&value, &spec, &|id| ctx.display_instance(id))
            .map_err(|e| PluginError::External { kind: e.kind, message: e.message })
    }

    /// The value a field name designates: an argument, then its attributes and items.
    fn lookup(&mut self, name: &str) -> Result<Value> {
        let split = name.find(['.', '[']).unwrap_or(name.len());
        let (first, mut rest) = name.split_at(split);
        let mut value = if first.is_empty() {
            self.switch(Numbering::Auto)?;
            let i = self.next_auto;
            self.next_auto += 1;
            self.positional(i)?
        } else if first.bytes().all(|b| b.is_ascii_digit()) {
            self.switch(Numbering::Manual)?;
            self.positional(first.parse().unwrap_or(usize::MAX))?
        } else {
            self.kwargs.get(first).cloned().ok_or_else(|| PluginError::external("KeyError", py_str_repr(first)))?
        };
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('.') {
                let end = after.find(['.', '[']).unwrap_or(after.len());
                let attr = &after[..end];
                if attr.is_empty() {
                    return Err(value_error("Empty attribute in format string"));
                }
                value = python_getattr(&value, attr, self.ctx)?;
                rest = &after[end..];
            } else if let Some(after) = rest.strip_prefix('[') {
                let end = after.find(']').ok_or_else(|| value_error("Missing ']' in format string"))?;
                value = subscript(&value, &after[..end])?;
                rest = &after[end + 1..];
                if !rest.is_empty() && !rest.starts_with(['.', '[']) {
                    return Err(value_error("Only '.' or '[' may follow ']' in format field specifier"));
                }
            } else {
                return Err(value_error("Only '.' or '[' may follow ']' in format field specifier"));
            }
        }
        Ok(value)
    }

    fn switch(&mut self, to: Numbering) -> Result<()> {
        match (self.numbering, to) {
            (Some(Numbering::Manual), Numbering::Auto) => {
                Err(value_error("cannot switch from manual field specification to automatic field numbering"))
            }
            (Some(Numbering::Auto), Numbering::Manual) => {
                Err(value_error("cannot switch from automatic field numbering to manual field specification"))
            }
            _ => {
                self.numbering = Some(to);
                Ok(())
            }
        }
    }

    fn positional(&self, i: usize) -> Result<Value> {
        self.args.get(i).cloned().ok_or_else(|| {
            PluginError::external("IndexError", format!("Replacement index {i} out of range for positional args tuple"))
        })
    }
}

/// The index of the `}` closing a field that starts at `start`, skipping nested fields in the
/// spec and `[...]` in the name.
fn field_end(chars: &[char], start: usize) -> Option<usize> {
    let mut level = 1;
    let mut in_name = true;
    let mut in_bracket = false;
    let mut i = start;
    while i < chars.len() {
        let c = chars[i];
        if in_bracket {
            in_bracket = c != ']';
        } else if in_name && c == '[' {
            in_bracket = true;
        } else {
            if matches!(c, '!' | ':') {
                in_name = false;
            }
            if c == '{' {
                level += 1;
            } else if c == '}' {
                level -= 1;
                if level == 0 {
                    return Some(i);
                }
            }
        }
        i += 1;
    }
    None
}

/// Where the field name ends: the first `!` or `:` outside `[...]`.
fn name_end(chars: &[char]) -> usize {
    let mut in_bracket = false;
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '[' if !in_bracket => in_bracket = true,
            ']' if in_bracket => in_bracket = false,
            '!' | ':' if !in_bracket => return i,
            _ => {}
        }
    }
    chars.len()
}

/// `value[key]` in a field name: an all-digit key is an integer.
fn subscript(value: &Value, key: &str) -> Result<Value> {
    let int_key = (!key.is_empty() && key.bytes().all(|b| b.is_ascii_digit())).then(|| key.parse::<i64>().ok());
    match (value, int_key) {
        (Value::List(items), Some(i)) => i
            .and_then(|i| py_index(i, items.len()))
            .map(|i| items[i].clone())
            .ok_or_else(|| PluginError::external("IndexError", "list index out of range")),
        (Value::List(_), None) => {
            Err(PluginError::external("TypeError", "list indices must be integers or slices, not str"))
        }
        (Value::Str(s), Some(i)) => {
            let chars: Vec<char> = s.chars().collect();
            i.and_then(|i| py_index(i, chars.len()))
                .map(|i| Value::from(chars[i].to_string()))
                .ok_or_else(|| PluginError::external("IndexError", "string index out of range"))
        }
        (Value::Str(_), None) => Err(PluginError::external("TypeError", "string indices must be integers, not 'str'")),
        (Value::Dict(d), None) => {
            d.get(key).cloned().ok_or_else(|| PluginError::external("KeyError", py_str_repr(key)))
        }
        (Value::Dict(_), Some(_)) => Err(PluginError::external("KeyError", key.to_string())),
        (other, _) => {
            Err(PluginError::external("TypeError", format!("'{}' object is not subscriptable", other.type_name())))
        }
    }
}

/// Python's `repr` of a value as a plugin sees it.
fn repr(ctx: &dyn PluginContext, v: &Value) -> String {
    match v {
        Value::Str(s) => py_str_repr(s),
        other => print_string(other, &|id| ctx.display_instance(id)),
    }
}

/// Python's `ascii`: the repr with non-ASCII characters escaped.
fn ascii(repr: &str) -> String {
    let mut out = String::new();
    for c in repr.chars() {
        let code = u32::from(c);
        match code {
            0..=0x7f => out.push(c),
            0x80..=0xff => out.push_str(&format!("\\x{code:02x}")),
            0x100..=0xffff => out.push_str(&format!("\\u{code:04x}")),
            _ => out.push_str(&format!("\\U{code:08x}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_context::TestContext;

    fn fmt_with(ctx: &mut TestContext, template: &str, args: Vec<Value>, kwargs: &[(&str, Value)]) -> String {
        let mut bound = BoundArgs::new().with("__string", template);
        bound.var_args = args;
        bound.var_kwargs = kwargs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        match format(&bound, ctx) {
            Ok(v) => v.as_str().unwrap_or_default().to_string(),
            Err(e) => format!("error: {e}"),
        }
    }

    fn fmt(template: &str, args: Vec<Value>, kwargs: &[(&str, Value)]) -> String {
        fmt_with(&mut TestContext::new(), template, args, kwargs)
    }

    #[test]
    fn fields_like_python() {
        assert_eq!(fmt("{}-{x}", vec![Value::Int(1)], &[("x", Value::str("y"))]), "1-y");
        assert_eq!(fmt("{1}{0}{1}", vec![Value::str("a"), Value::str("b")], &[]), "bab");
        assert_eq!(fmt("a{{b}}c", vec![], &[]), "a{b}c");
        assert_eq!(fmt("{!r}|{!s}|{!a}", vec![Value::str("é"), Value::Null, Value::str("é")], &[]), "'é'|None|'\\xe9'");
        assert_eq!(fmt("{:>5}|{:<4}|", vec![Value::Int(5), Value::str("ab")], &[]), "    5|ab  |");
        assert_eq!(fmt("{:{w}.2f}", vec![Value::Float(1.23456)], &[("w", Value::Int(8))]), "    1.23");
        assert_eq!(
            fmt("{} {} {}", vec![Value::Bool(true), Value::Float(1.0), Value::list(vec![Value::Int(1)])], &[]),
            "True 1.0 @[1]"
        );
        let l = Value::list(vec![Value::Int(7), Value::Int(8)]);
        assert_eq!(
            fmt("{0[1]} {[0]}", vec![l.clone()], &[]),
            "error: ValueError: cannot switch from manual field specification to automatic field numbering"
        );
        assert_eq!(fmt("{0[1]} {0[0]}", vec![l], &[]), "8 7");
        let d: IndexMap<String, Value> = [("k".to_string(), Value::str("v"))].into();
        assert_eq!(fmt("{d[k]}", vec![], &[("d", Value::dict(d))]), "v");
    }

    #[test]
    fn attributes_come_from_instances() {
        let mut ctx = TestContext::new();
        let os = ctx.instance("std::OS", &[("name", Value::str("linux"))]);
        assert_eq!(fmt_with(&mut ctx, "{0.name}!", vec![os.clone()], &[]), "linux!");
        assert_eq!(fmt_with(&mut ctx, "{}", vec![os], &[]), "std::OS 7f00");
    }

    #[test]
    fn errors_like_python() {
        for (template, message) in [
            ("{", "ValueError: Single '{' encountered in format string"),
            ("}", "ValueError: Single '}' encountered in format string"),
            ("{0", "ValueError: expected '}' before end of string"),
            ("{!x}", "ValueError: Unknown conversion specifier x"),
            ("{!rx}", "ValueError: expected ':' after conversion specifier"),
            ("{0}{}", "ValueError: cannot switch from manual field specification to automatic field numbering"),
            ("{}{0}", "ValueError: cannot switch from automatic field numbering to manual field specification"),
            ("{1}", "IndexError: Replacement index 1 out of range for positional args tuple"),
            ("{y}", "KeyError: 'y'"),
            ("{0.}", "ValueError: Empty attribute in format string"),
            ("{0[}", "ValueError: expected '}' before end of string"),
            ("{0[a]}", "TypeError: list indices must be integers or slices, not str"),
            ("{0.real}", "AttributeError: 'list' object has no attribute 'real'"),
            ("{0:d}", "TypeError: unsupported format string passed to list.__format__"),
        ] {
            assert_eq!(
                fmt(template, vec![Value::list(vec![Value::Int(1)])], &[]),
                format!("error: {message}"),
                "{template}"
            );
        }
        assert_eq!(
            fmt("{:{:{:{}}}}", vec![Value::Int(1), Value::Int(2), Value::Int(3), Value::Int(4)], &[]),
            "error: ValueError: Max string recursion exceeded"
        );
    }
}
