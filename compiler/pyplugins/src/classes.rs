//! Reading the classes of a Python file that can declare resource shapes: each class's bases as
//! written, its `fields` literal, its `get_<field>` mappers and `map` keys, its `@resource(...)`
//! decorator, and the file's imports (to find bases defined in other files).

use rustpython_parser::ast::Ranged;
use rustpython_parser::{Parse, ast};

/// One class of a module's Python file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PyClass {
    pub name: String,
    pub line: u32,
    /// The bases as written: `PurgeableResource`, `resources.PurgeableResource`.
    pub bases: Vec<String>,
    pub fields: Fields,
    /// The names of the methods it defines that start with `get_`.
    pub getters: Vec<String>,
    /// The keys of its `map = {...}`, when it has one.
    pub map_keys: Option<Vec<String>>,
    /// The attributes its mappers read directly of the entity they are given (`obj.path`), as
    /// far as the source shows: modelc sends them along rather than wait to be asked.
    pub reads: Vec<String>,
    /// Its `@resource(...)` decorator, when it has one.
    pub decorator: Option<Result<ResourceDecorator, String>>,
}

/// A class's own `fields`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Fields {
    /// It declares none: its bases' are its fields.
    Inherited,
    /// A literal tuple or list of strings.
    Listed(Vec<String>),
    /// Something modelc cannot read without running Python: the expression as written.
    Unreadable(String),
}

/// `@resource("mod::Entity", agent="host.name", id_attribute="path")`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResourceDecorator {
    pub entity: String,
    pub agent: String,
    pub id_attribute: String,
}

/// A Python file's classes and what its names refer to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct PyFile {
    /// Local name → what it imports, dotted: `from inmanta.resources import PurgeableResource as
    /// P` gives `P` → `inmanta.resources.PurgeableResource`; `import inmanta.resources as r`
    /// gives `r` → `inmanta.resources`. Relative imports are made absolute by the reader.
    pub imports: Vec<(String, Import)>,
    pub classes: Vec<PyClass>,
    /// Its functions decorated `@dependency_manager` (inmanta's, by that name or imported from
    /// `inmanta.export` under another): (name, line).
    pub dependency_managers: Vec<(String, u32)>,
}

/// What an import binds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Import {
    /// `from M import N`: the name `N` of module `M` (absolute), which may be a class or a module.
    Name { module: String, name: String },
    /// `import M` / `import M as X`: the module `M`.
    Module(String),
}

/// The classes of a Python file, or the parser's message. `module` is the file's dotted
/// module name (`inmanta_plugins.files.base`), `package` whether it is a package's
/// `__init__.py` (relative imports start from it then).
pub fn read_classes(source: &str, file_name: &str, module: &str, package: bool) -> Result<PyFile, String> {
    let suite = ast::Suite::parse(source, file_name).map_err(|e| format!("{file_name}: {}", e.error))?;
    let lines = LineIndex::new(source);
    let mut file = PyFile::default();
    for stmt in &suite {
        match stmt {
            ast::Stmt::Import(import) => {
                for alias in &import.names {
                    let target = alias.name.to_string();
                    match &alias.asname {
                        Some(local) => file.imports.push((local.to_string(), Import::Module(target))),
                        // `import a.b` binds `a`, through which `a.b.C` is written in full.
                        None => {
                            let top = target.split('.').next().unwrap_or_default().to_owned();
                            file.imports.push((top.clone(), Import::Module(top)));
                        }
                    }
                }
            }
            ast::Stmt::ImportFrom(import) => {
                let level = import.level.as_ref().map_or(0, |l| l.to_u32());
                let written = import.module.as_ref().map(|m| m.to_string());
                let Some(from) = absolute(module, package, level, written.as_deref()) else { continue };
                for alias in &import.names {
                    let name = alias.name.to_string();
                    let local = alias.asname.as_ref().map_or_else(|| name.clone(), |a| a.to_string());
                    file.imports.push((local, Import::Name { module: from.clone(), name }));
                }
            }
            ast::Stmt::ClassDef(class) => {
                let class = class_of(class, &lines, &file.imports, source);
                file.classes.push(class);
            }
            ast::Stmt::FunctionDef(function)
                if function
                    .decorator_list
                    .iter()
                    .filter_map(dotted)
                    .any(|d| is_dependency_manager(&d, &file.imports)) =>
            {
                file.dependency_managers
                    .push((function.name.to_string(), lines.line(usize::from(function.range.start()))));
            }
            _ => {}
        }
    }
    Ok(file)
}

/// The absolute module a relative import names (`from .base import X` in
/// `inmanta_plugins.files.__init__` is `inmanta_plugins.files.base`).
fn absolute(module: &str, package: bool, level: u32, written: Option<&str>) -> Option<String> {
    if level == 0 {
        return written.map(str::to_owned);
    }
    let mut parts: Vec<&str> = module.split('.').collect();
    // A module's own package is one level up; a package's `__init__` is its own package.
    let up = if package { level - 1 } else { level };
    for _ in 0..up {
        parts.pop()?;
    }
    let mut base = parts.join(".");
    if let Some(rest) = written {
        base = if base.is_empty() { rest.to_owned() } else { format!("{base}.{rest}") };
    }
    Some(base)
}

/// Whether a decorator, written `name`, is inmanta's `resource`: by that name, or imported from
/// `inmanta.resources` under another.
fn is_resource_decorator(name: &str, imports: &[(String, Import)]) -> bool {
    if name.rsplit('.').next() == Some("resource") {
        return true;
    }
    imports.iter().rev().find(|(local, _)| local == name).is_some_and(|(_, import)| {
        matches!(import, Import::Name { module, name } if module == "inmanta.resources" && name == "resource")
    })
}

/// Whether a decorator, written `name`, is inmanta's `dependency_manager`.
fn is_dependency_manager(name: &str, imports: &[(String, Import)]) -> bool {
    if name.rsplit('.').next() == Some("dependency_manager") {
        return true;
    }
    imports.iter().rev().find(|(local, _)| local == name).is_some_and(|(_, import)| {
        matches!(import, Import::Name { module, name } if module == "inmanta.export" && name == "dependency_manager")
    })
}

fn class_of(class: &ast::StmtClassDef, lines: &LineIndex, imports: &[(String, Import)], source: &str) -> PyClass {
    let mut fields = Fields::Inherited;
    let mut getters = Vec::new();
    let mut map_keys = None;
    let mut reads = Vec::new();
    for stmt in &class.body {
        let (target, value) = match stmt {
            ast::Stmt::Assign(assign) if assign.targets.len() == 1 => (&assign.targets[0], Some(&*assign.value)),
            ast::Stmt::AnnAssign(assign) => (&*assign.target, assign.value.as_deref()),
            ast::Stmt::FunctionDef(def) => {
                if def.name.starts_with("get_") {
                    getters.push(def.name.to_string());
                    // The entity is the last positional parameter: `(exporter, obj)`, or
                    // `(cls, exporter, obj)` for a classmethod.
                    if let Some(entity) = def.args.args.last() {
                        let text = source.get(usize::from(def.range.start())..usize::from(def.range.end()));
                        attribute_reads(text.unwrap_or_default(), entity.def.arg.as_str(), &mut reads);
                    }
                }
                continue;
            }
            _ => continue,
        };
        let (ast::Expr::Name(name), Some(value)) = (target, value) else { continue };
        match name.id.as_str() {
            "fields" => fields = fields_of(value),
            "map" => {
                map_keys = Some(map_keys_of(value));
                let text = source.get(usize::from(value.range().start())..usize::from(value.range().end()));
                if let ast::Expr::Dict(dict) = value {
                    for lambda in
                        dict.values.iter().filter_map(|v| if let ast::Expr::Lambda(l) = v { Some(l) } else { None })
                    {
                        if let Some(entity) = lambda.args.args.last() {
                            attribute_reads(text.unwrap_or_default(), entity.def.arg.as_str(), &mut reads);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let decorator = class.decorator_list.iter().find_map(|d| match d {
        ast::Expr::Call(call) if dotted(&call.func).is_some_and(|n| is_resource_decorator(&n, imports)) => {
            Some(decorator_of(call))
        }
        _ => None,
    });
    PyClass {
        name: class.name.to_string(),
        line: lines.line(usize::from(class.range.start())),
        bases: class.bases.iter().map(|b| dotted(b).unwrap_or_else(|| "<expression>".to_owned())).collect(),
        fields,
        getters,
        map_keys,
        reads,
        decorator,
    }
}

/// Adds the names read as `entity.<name>` in `text` (a mapper's source) to `reads`.
fn attribute_reads(text: &str, entity: &str, reads: &mut Vec<String>) {
    let is_name = |c: char| c.is_alphanumeric() || c == '_';
    let pattern = format!("{entity}.");
    let mut from = 0;
    while let Some(found) = text[from..].find(&pattern) {
        let at = from + found;
        from = at + pattern.len();
        // A whole name: not the end of a longer one (`my_obj.x` for `obj`).
        if text[..at].chars().next_back().is_some_and(is_name) {
            continue;
        }
        let name: String = text[from..].chars().take_while(|c| is_name(*c)).collect();
        if !name.is_empty() && !name.starts_with("__") && !reads.contains(&name) {
            reads.push(name);
        }
    }
}

fn fields_of(value: &ast::Expr) -> Fields {
    let items = match value {
        ast::Expr::Tuple(t) => &t.elts,
        ast::Expr::List(l) => &l.elts,
        _ => return Fields::Unreadable(describe(value)),
    };
    let names: Option<Vec<String>> = items.iter().map(string).collect();
    names.map_or_else(|| Fields::Unreadable(describe(value)), Fields::Listed)
}

fn map_keys_of(value: &ast::Expr) -> Vec<String> {
    match value {
        ast::Expr::Dict(dict) => dict.keys.iter().filter_map(|k| k.as_ref().and_then(string)).collect(),
        _ => Vec::new(),
    }
}

/// `resource(name, id_attribute, agent)`, with any of them by keyword.
fn decorator_of(call: &ast::ExprCall) -> Result<ResourceDecorator, String> {
    let mut slots: [Option<String>; 3] = [None, None, None];
    for (at, arg) in call.args.iter().enumerate().take(3) {
        slots[at] = Some(string(arg).ok_or_else(|| format!("its argument {} is not a string", at + 1))?);
    }
    for keyword in &call.keywords {
        let at = match keyword.arg.as_ref().map(|a| a.as_str()) {
            Some("name") => 0,
            Some("id_attribute") => 1,
            Some("agent") => 2,
            Some(other) => return Err(format!("it has an argument `{other}` that @resource does not take")),
            None => return Err("it passes `**` arguments".to_owned()),
        };
        let text = string(&keyword.value)
            .ok_or_else(|| format!("its `{}` is not a string", keyword.arg.as_ref().map_or("", |a| a.as_str())))?;
        slots[at] = Some(text);
    }
    let [Some(entity), Some(id_attribute), Some(agent)] = slots else {
        return Err("it does not give the entity, `id_attribute` and `agent`".to_owned());
    };
    Ok(ResourceDecorator { entity, agent, id_attribute })
}

fn string(expr: &ast::Expr) -> Option<String> {
    match expr {
        ast::Expr::Constant(c) => match &c.value {
            ast::Constant::Str(s) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// `a.b.C` as written.
fn dotted(expr: &ast::Expr) -> Option<String> {
    match expr {
        ast::Expr::Name(n) => Some(n.id.to_string()),
        ast::Expr::Attribute(a) => Some(format!("{}.{}", dotted(&a.value)?, a.attr)),
        // `Base[T]`: the class is `Base`.
        ast::Expr::Subscript(s) => dotted(&s.value),
        _ => None,
    }
}

/// An expression named for a message: a dotted name or a call of one, else its kind.
fn describe(expr: &ast::Expr) -> String {
    match expr {
        ast::Expr::BinOp(op) => format!("{} + …", describe(&op.left)),
        ast::Expr::Call(call) => format!("{}(…)", dotted(&call.func).unwrap_or_else(|| "…".to_owned())),
        other => dotted(other).unwrap_or_else(|| "an expression".to_owned()),
    }
}

/// Byte offset → line, for the classes' lines.
struct LineIndex(Vec<usize>);

impl LineIndex {
    fn new(source: &str) -> LineIndex {
        LineIndex(source.match_indices('\n').map(|(at, _)| at).collect())
    }

    fn line(&self, offset: usize) -> u32 {
        (self.0.partition_point(|&newline| newline < offset) + 1) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r#"
from inmanta import resources
from inmanta.resources import PurgeableResource, resource as res
from .base import Base as B
import inmanta_plugins.mitogen.abc

@res("files::Directory", agent="host.name", id_attribute="path")
class Directory(B, resources.ManagedResource):
    fields: tuple = ("path", "owner")
    map = {"mode": lambda e, o: o.mode}

    @staticmethod
    def get_owner(exporter, entity):
        return entity.owner

class Computed(PurgeableResource):
    fields = PurgeableResource.fields + ("x",)

@resources.resource("m::Bad", agent=AGENT, id_attribute="x")
class Bad(inmanta_plugins.mitogen.abc.ResourceABC):
    pass
"#;

    #[test]
    fn classes_bases_fields_mappers_and_decorators_are_read() {
        let file = read_classes(SOURCE, "f.py", "inmanta_plugins.files", true).expect("valid");
        assert_eq!(
            file.imports,
            [
                ("resources".into(), Import::Name { module: "inmanta".into(), name: "resources".into() }),
                (
                    "PurgeableResource".into(),
                    Import::Name { module: "inmanta.resources".into(), name: "PurgeableResource".into() }
                ),
                ("res".into(), Import::Name { module: "inmanta.resources".into(), name: "resource".into() }),
                ("B".into(), Import::Name { module: "inmanta_plugins.files.base".into(), name: "Base".into() }),
                ("inmanta_plugins".into(), Import::Module("inmanta_plugins".into())),
            ]
        );
        let [directory, computed, bad] = &file.classes[..] else { panic!("three classes") };
        assert_eq!(directory.line, 8);
        assert_eq!(directory.bases, ["B", "resources.ManagedResource"]);
        assert_eq!(directory.fields, Fields::Listed(vec!["path".into(), "owner".into()]));
        assert_eq!(directory.getters, ["get_owner"]);
        assert_eq!(directory.map_keys, Some(vec!["mode".into()]));
        assert_eq!(directory.reads, ["mode", "owner"], "what its mappers read of the entity");
        assert_eq!(
            directory.decorator,
            Some(Ok(ResourceDecorator {
                entity: "files::Directory".into(),
                agent: "host.name".into(),
                id_attribute: "path".into()
            }))
        );
        assert_eq!(computed.fields, Fields::Unreadable("PurgeableResource.fields + …".into()));
        assert_eq!(computed.decorator, None);
        assert_eq!(bad.bases, ["inmanta_plugins.mitogen.abc.ResourceABC"]);
        assert_eq!(bad.decorator, Some(Err("its `agent` is not a string".into())));
    }

    #[test]
    fn dependency_managers_are_found_by_their_decorator() {
        let source = "from inmanta.export import dependency_manager as dm\nimport inmanta.export\n\n\
                      @dm\ndef first(model, resources):\n    pass\n\n\
                      @inmanta.export.dependency_manager\ndef second(model, resources):\n    pass\n\n\
                      def helper():\n    pass\n\n@other\ndef third(model, resources):\n    pass\n";
        let file = read_classes(source, "f.py", "inmanta_plugins.m", true).expect("valid");
        assert_eq!(file.dependency_managers, [("first".to_owned(), 5), ("second".to_owned(), 9)]);
    }

    #[test]
    fn relative_imports_start_from_the_files_package() {
        assert_eq!(absolute("a.b.c", false, 1, Some("d")), Some("a.b.d".into()));
        assert_eq!(absolute("a.b", true, 1, Some("d")), Some("a.b.d".into()));
        assert_eq!(absolute("a.b", true, 2, None), Some("a".into()));
        assert_eq!(absolute("a", false, 3, None), None);
    }
}
