//! Reading `@plugin` functions and their signatures out of Python source.

use modelc_stdlib::ParamKind;
use rustpython_parser::{Parse, ast};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyParam {
    pub name: String,
    /// A type of the language (`"string"`, `"int[]"`, `"std::Entity"`), or `"any"`.
    pub ty: String,
    pub kind: ParamKind,
    /// The default as a literal of the language (`null`, `true`, `3`, `"a"`); `Some("…")` for
    /// a default that is not a plain literal (it is still a default).
    pub default: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyPlugin {
    /// The name the model calls it by (the decorator's name, else the function's).
    pub name: String,
    /// The Python function's name.
    pub function: String,
    pub params: Vec<PyParam>,
    /// The return type; `"any"` without an annotation, `"null"` for `None`.
    pub returns: String,
    /// It takes the compiler's `Context` (not a parameter the model passes).
    pub context: bool,
    /// `@plugin(allow_unknown=True)`: called with unknown arguments too.
    pub allows_unknown: bool,
    /// `@deprecated` as well.
    pub deprecated: bool,
    /// The function's docstring, cleaned.
    pub doc: Option<String>,
}

/// The plugins a Python file defines, in source order, or the parser's message when the file is
/// not valid Python.
pub fn read_plugins(source: &str, file_name: &str) -> Result<Vec<PyPlugin>, String> {
    let suite = ast::Suite::parse(source, file_name).map_err(|e| {
        let offset = usize::from(e.offset).min(source.len());
        let before = source.get(..offset).unwrap_or(source);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        format!("{file_name}:{line}:{column}: {}", e.error)
    })?;
    Ok(suite.iter().filter_map(plugin_of).collect())
}

fn plugin_of(stmt: &ast::Stmt) -> Option<PyPlugin> {
    let ast::Stmt::FunctionDef(def) = stmt else { return None };
    let mut name = None;
    let mut allows_unknown = false;
    let mut is_plugin = false;
    let mut deprecated = false;
    for decorator in &def.decorator_list {
        match decorator {
            ast::Expr::Call(call) if last_name(&call.func) == Some("plugin") => {
                is_plugin = true;
                if let Some(ast::Expr::Constant(c)) = call.args.first()
                    && let ast::Constant::Str(s) = &c.value
                {
                    name = Some(s.clone());
                }
                for keyword in &call.keywords {
                    match (keyword.arg.as_ref().map(|a| a.as_str()), &keyword.value) {
                        (Some("name"), ast::Expr::Constant(c)) => {
                            if let ast::Constant::Str(s) = &c.value {
                                name = Some(s.clone());
                            }
                        }
                        (Some("allow_unknown"), ast::Expr::Constant(c)) => {
                            allows_unknown = matches!(c.value, ast::Constant::Bool(true));
                        }
                        _ => {}
                    }
                }
            }
            other if last_name(other) == Some("plugin") => is_plugin = true,
            other if last_name(other) == Some("deprecated") => deprecated = true,
            ast::Expr::Call(call) if last_name(&call.func) == Some("deprecated") => deprecated = true,
            _ => {}
        }
    }
    if !is_plugin {
        return None;
    }
    let args = &def.args;
    let mut params = Vec::new();
    let mut context = false;
    let mut push = |arg: &ast::Arg, default: Option<&ast::Expr>, kind: ParamKind| {
        let ty = arg.annotation.as_deref().map_or_else(|| "any".to_owned(), type_of);
        if ty == "Context" {
            context = true;
            return;
        }
        params.push(PyParam { name: arg.arg.to_string(), ty, kind, default: default.map(literal_of) });
    };
    for a in args.posonlyargs.iter().chain(&args.args) {
        push(&a.def, a.default.as_deref(), ParamKind::Normal);
    }
    if let Some(a) = &args.vararg {
        push(a, None, ParamKind::VarArgs);
    }
    for a in &args.kwonlyargs {
        push(&a.def, a.default.as_deref(), ParamKind::KeywordOnly);
    }
    if let Some(a) = &args.kwarg {
        push(a, None, ParamKind::VarKeywords);
    }
    let returns = def.returns.as_deref().map_or_else(|| "any".to_owned(), type_of);
    Some(PyPlugin {
        name: name.unwrap_or_else(|| def.name.to_string()),
        function: def.name.to_string(),
        params,
        returns,
        context,
        allows_unknown,
        deprecated,
        doc: docstring(&def.body),
    })
}

/// The docstring of a function body: its first statement, when it is a string.
fn docstring(body: &[ast::Stmt]) -> Option<String> {
    let ast::Stmt::Expr(first) = body.first()? else { return None };
    let ast::Expr::Constant(c) = first.value.as_ref() else { return None };
    let ast::Constant::Str(text) = &c.value else { return None };
    Some(modelc_stdlib::docstring::clean(text)).filter(|d| !d.is_empty())
}

/// `plugin`, `plugins.plugin`, `inmanta.plugins.plugin`: the last name of a dotted reference.
fn last_name(expr: &ast::Expr) -> Option<&str> {
    match expr {
        ast::Expr::Name(n) => Some(n.id.as_str()),
        ast::Expr::Attribute(a) => Some(a.attr.as_str()),
        _ => None,
    }
}

/// An annotation as a type of the language: a string is one already (`"string[]"`); Python's
/// own types map to theirs (`str | None` is `string?`, `list[str]` is `string[]`); `Context` is
/// kept to be recognised; anything else is `any`.
fn type_of(annotation: &ast::Expr) -> String {
    match annotation {
        ast::Expr::Constant(c) => match &c.value {
            // `"plugins.Context"`: no type of the language has a dot, so it is the Context.
            ast::Constant::Str(s) if s.rsplit('.').next() == Some("Context") => "Context".to_owned(),
            ast::Constant::Str(s) => s.clone(),
            ast::Constant::None => "null".to_owned(),
            _ => "any".to_owned(),
        },
        // `X | None`, `None | X`.
        ast::Expr::BinOp(b) if matches!(b.op, ast::Operator::BitOr) => {
            let (left, right) = (type_of(&b.left), type_of(&b.right));
            match (left.as_str(), right.as_str()) {
                (t, "null") | ("null", t) => nullable(t),
                _ => "any".to_owned(),
            }
        }
        ast::Expr::Subscript(s) => {
            let items: Vec<String> = match s.slice.as_ref() {
                ast::Expr::Tuple(t) => t.elts.iter().map(type_of).collect(),
                one => vec![type_of(one)],
            };
            match (last_name(&s.value), items.as_slice()) {
                (Some("Optional"), [t]) => nullable(t),
                (Some("Union"), [t, n] | [n, t]) if n == "null" => nullable(t),
                (Some("list" | "List" | "Sequence"), [t]) if is_primitive(t) => format!("{t}[]"),
                (Some("list" | "List" | "Sequence"), _) => "list".to_owned(),
                (Some("dict" | "Dict" | "Mapping"), _) => "dict".to_owned(),
                _ => "any".to_owned(),
            }
        }
        other => match last_name(other) {
            Some("str") => "string".to_owned(),
            Some(t @ ("int" | "float" | "bool" | "list" | "dict")) => t.to_owned(),
            Some("Context") => "Context".to_owned(),
            _ => "any".to_owned(),
        },
    }
}

fn is_primitive(ty: &str) -> bool {
    matches!(ty, "string" | "int" | "float" | "bool")
}

/// `t?` where the language can write it (a primitive, a list of one, a named type), else `any`.
fn nullable(ty: &str) -> String {
    match ty {
        "any" | "null" => ty.to_owned(),
        t if t.ends_with('?') => t.to_owned(),
        t => format!("{t}?"),
    }
}

/// A default as a literal of the language.
fn literal_of(expr: &ast::Expr) -> String {
    match expr {
        ast::Expr::Constant(c) => match &c.value {
            ast::Constant::None => "null".to_owned(),
            ast::Constant::Bool(b) => b.to_string(),
            ast::Constant::Str(s) => format!("{s:?}"),
            ast::Constant::Int(i) => i.to_string(),
            ast::Constant::Float(f) => f.to_string(),
            _ => "…".to_owned(),
        },
        ast::Expr::UnaryOp(u) if matches!(u.op, ast::UnaryOp::USub) => format!("-{}", literal_of(&u.operand)),
        ast::Expr::List(l) if l.elts.is_empty() => "[]".to_owned(),
        ast::Expr::Dict(d) if d.keys.is_empty() => "{}".to_owned(),
        _ => "…".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXEC: &str = r#"
from inmanta.plugins import plugin, Context
import inmanta

@plugin
def in_shell(command: "string"):
    """ Wrap the command so it runs in a shell. """
    return "sh -c '%s'" % command

@plugin("path_join")
def join(base: "string", *args: "string") -> "string":
    return base

@inmanta.plugins.plugin(name="get", allow_unknown=True)
def lookup(ctx: Context, key: str, default: "any" = None, *, strict: bool = False, **extra) -> "list":
    return []

def helper(x):
    return x
"#;

    #[test]
    fn decorated_functions_are_plugins_with_their_signatures() {
        let plugins = read_plugins(EXEC, "exec.py").unwrap();
        let names: Vec<&str> = plugins.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["in_shell", "path_join", "get"]);
        let in_shell = &plugins[0];
        assert_eq!(
            in_shell.params,
            [PyParam { name: "command".into(), ty: "string".into(), kind: ParamKind::Normal, default: None }]
        );
        assert_eq!(in_shell.returns, "any");
        assert_eq!(plugins[1].function, "join");
        assert_eq!(plugins[1].params[1].kind, ParamKind::VarArgs);
        assert_eq!(plugins[1].returns, "string");
        let get = &plugins[2];
        assert!(get.context && get.allows_unknown && !get.deprecated);
        let shown: Vec<(&str, &str, ParamKind, Option<&str>)> =
            get.params.iter().map(|p| (p.name.as_str(), p.ty.as_str(), p.kind, p.default.as_deref())).collect();
        assert_eq!(
            shown,
            [
                ("key", "string", ParamKind::Normal, None),
                ("default", "any", ParamKind::Normal, Some("null")),
                ("strict", "bool", ParamKind::KeywordOnly, Some("false")),
                ("extra", "any", ParamKind::VarKeywords, None),
            ]
        );
        assert_eq!(get.returns, "list");
    }

    #[test]
    fn a_context_is_hidden_however_its_annotation_is_written() {
        for annotation in ["Context", "plugins.Context", "\"Context\"", "\"plugins.Context\""] {
            let source = format!("@plugin\ndef f(x: \"int\", ctx: {annotation}) -> \"int\":\n    return x\n");
            let plugins = read_plugins(&source, "m.py").unwrap();
            assert!(plugins[0].context, "{annotation}");
            assert_eq!(plugins[0].params.len(), 1, "{annotation}");
        }
    }

    #[test]
    fn a_file_that_is_not_python_says_why() {
        let error = read_plugins("import x\n\ndef broken(:\n", "bad.py").unwrap_err();
        assert!(error.starts_with("bad.py:3:12: "), "{error}");
        assert_eq!(read_plugins("", "empty.py").unwrap(), []);
    }
}
