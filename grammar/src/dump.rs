//! A compact, indented rendering of the syntax tree, with spans, for snapshot tests and
//! `modelc parse --dump-ast`. One node per line; stable across runs.

use std::fmt::Write;

use crate::ast::*;

/// Renders the whole file.
pub fn dump(file: &File) -> String {
    let mut p = Printer::default();
    if let Some(doc) = &file.docstring {
        p.line(0, format!("Docstring {}", str_lit(doc)));
    }
    for item in &file.items {
        p.item(item, 0);
    }
    p.out
}

/// The deepest level shown by indentation alone.
const MAX_INDENTED_LEVEL: usize = 64;

#[derive(Default)]
struct Printer {
    out: String,
}

impl Printer {
    fn line(&mut self, depth: usize, text: impl AsRef<str>) {
        // Indentation stops growing at a point, so a chain of any length prints in linear space;
        // deeper lines say their level instead.
        if depth <= MAX_INDENTED_LEVEL {
            let _ = writeln!(self.out, "{:indent$}{}", "", text.as_ref(), indent = depth * 2);
        } else {
            let indent = MAX_INDENTED_LEVEL * 2;
            let _ = writeln!(self.out, "{:indent$}(level {depth}) {}", "", text.as_ref());
        }
    }

    fn item(&mut self, item: &Item, d: usize) {
        match item {
            Item::Import(i) => {
                let alias = i.alias.as_ref().map(|a| format!(" as {}", a.name)).unwrap_or_default();
                self.line(d, format!("Import {}{alias} {:?}", i.module.text(), i.span));
            }
            Item::Entity(e) => {
                let parents: Vec<String> = e.parents.iter().map(TypeRef::text).collect();
                let extends =
                    if parents.is_empty() { String::new() } else { format!(" extends {}", parents.join(", ")) };
                self.line(d, format!("Entity {}{extends} {:?}", e.name.name, e.span));
                self.doc(e.docstring.as_ref(), d + 1);
                for a in &e.attributes {
                    let base = match &a.ty.base {
                        AttrBase::Named(p) => p.text(),
                        AttrBase::Dict => "dict".to_owned(),
                    };
                    let ty =
                        format!("{base}{}{}", if a.ty.list { "[]" } else { "" }, if a.ty.nullable { "?" } else { "" });
                    self.line(d + 1, format!("Attribute {ty} {} {:?}", a.name.name, a.span));
                    match &a.default {
                        Some(AttrDefault::Value(e)) => self.expr(e, d + 2),
                        Some(AttrDefault::Undef(span)) => self.line(d + 2, format!("Undef {span:?}")),
                        None => {}
                    }
                }
            }
            Item::Implementation(i) => {
                self.line(d, format!("Implementation {} for {} {:?}", i.name.name, i.entity.text(), i.span));
                self.doc(i.docstring.as_ref(), d + 1);
                self.stmts(&i.body, d + 1);
            }
            Item::Implement(i) => {
                let using: Vec<String> = i
                    .implementations
                    .iter()
                    .map(|r| match r {
                        ImplRef::Named(p) => p.text(),
                        ImplRef::Parents(_) => "parents".to_owned(),
                    })
                    .collect();
                self.line(d, format!("Implement {} using {} {:?}", i.entity.text(), using.join(", "), i.span));
                if let Some(c) = &i.condition {
                    self.line(d + 1, "When");
                    self.expr(c, d + 2);
                }
                self.doc(i.docstring.as_ref(), d + 1);
            }
            Item::Relation(r) => {
                let right =
                    r.right.as_ref().map(|(n, m)| format!(".{} {}", n.name, multiplicity(m))).unwrap_or_default();
                let arrow = r.arrow.as_ref().map_or("<annotated>", |a| a.name.as_str());
                self.line(
                    d,
                    format!(
                        "Relation {}.{} {} {arrow} {}{right} {:?}",
                        r.left.entity.text(),
                        r.left.attribute.name,
                        multiplicity(&r.left.multiplicity),
                        r.right_entity.text(),
                        r.span
                    ),
                );
                for a in &r.annotations {
                    self.line(d + 1, "Annotation");
                    self.expr(a, d + 2);
                }
                self.doc(r.docstring.as_ref(), d + 1);
            }
            Item::Typedef(t) => {
                self.line(d, format!("Typedef {} as {} {:?}", t.name.name, t.base.text(), t.span));
                match &t.constraint {
                    Constraint::Expr(e) => self.expr(e, d + 1),
                    Constraint::Regex(r) => self.line(d + 1, format!("Regex /{}/ {:?}", r.pattern, r.span)),
                }
                self.doc(t.docstring.as_ref(), d + 1);
            }
            Item::Index(i) => {
                let attributes: Vec<&str> = i.attributes.iter().map(|a| a.name.as_str()).collect();
                self.line(d, format!("Index {}({}) {:?}", i.entity.text(), attributes.join(", "), i.span));
            }
            Item::Resource(r) => {
                let options: Vec<String> = r
                    .options
                    .iter()
                    .map(|o| {
                        let value = match &o.value {
                            ResourceOptionValue::Path(path) => {
                                path.iter().map(|i| i.name.as_str()).collect::<Vec<_>>().join(".")
                            }
                            ResourceOptionValue::Str(text) => format!("{:?}", text.as_constant().unwrap_or_default()),
                            ResourceOptionValue::List(items) => {
                                let items: Vec<String> = items.iter().map(field_spec).collect();
                                format!("[{}]", items.join(", "))
                            }
                        };
                        format!("{}={value}", o.name.name)
                    })
                    .collect();
                self.line(d, format!("Resource {}({}) {:?}", r.entity.text(), options.join(", "), r.span));
            }
            Item::Stmt(s) => self.stmt(s, d),
        }
    }

    fn doc(&mut self, doc: Option<&StrLit>, d: usize) {
        if let Some(doc) = doc {
            self.line(d, format!("Docstring {}", str_lit(doc)));
        }
    }

    fn stmts(&mut self, stmts: &[Stmt], d: usize) {
        for s in stmts {
            self.stmt(s, d);
        }
    }

    fn stmt(&mut self, stmt: &Stmt, d: usize) {
        match stmt {
            Stmt::Assign(a) => {
                let op = if a.op == AssignOp::Set { "=" } else { "+=" };
                self.line(d, format!("Assign {op} {:?}", a.span));
                self.expr(&a.target, d + 1);
                self.expr(&a.value, d + 1);
            }
            Stmt::For(f) => {
                self.line(d, format!("For {} {:?}", f.var.name, f.span));
                self.expr(&f.iterable, d + 1);
                self.line(d + 1, "Do");
                self.stmts(&f.body, d + 2);
            }
            Stmt::If(i) => {
                self.line(d, format!("If {:?}", i.span));
                for (condition, body) in &i.branches {
                    self.line(d + 1, "Branch");
                    self.expr(condition, d + 2);
                    self.stmts(body, d + 2);
                }
                if let Some(body) = &i.else_body {
                    self.line(d + 1, "Else");
                    self.stmts(body, d + 2);
                }
            }
            Stmt::Expr(e) => self.expr(e, d),
            Stmt::Error(span) => self.line(d, format!("ErrorStmt {span:?}")),
        }
    }

    fn args(&mut self, args: &[Arg], d: usize) {
        for a in args {
            match a {
                Arg::Positional(e) => self.expr(e, d),
                Arg::Keyword(name, e) => {
                    self.line(d, format!("Keyword {}", name.name));
                    self.expr(e, d + 1);
                }
                Arg::Splat(e) => {
                    self.line(d, "Splat");
                    self.expr(e, d + 1);
                }
            }
        }
    }

    fn expr(&mut self, e: &Expr, d: usize) {
        crate::stack::deep(|| self.expr_level(e, d));
    }

    fn expr_level(&mut self, e: &Expr, d: usize) {
        let span = e.span;
        match &e.kind {
            ExprKind::Int(n) => self.line(d, format!("Int {n} {span:?}")),
            ExprKind::Float(f) => self.line(d, format!("Float {f:?} {span:?}")),
            ExprKind::Bool(b) => self.line(d, format!("Bool {b} {span:?}")),
            ExprKind::Null => self.line(d, format!("Null {span:?}")),
            ExprKind::Str(s) => self.line(d, format!("Str {} {span:?}", str_lit(s))),
            ExprKind::FStr(f) => self.line(d, format!("FStr {} {span:?}", fstr_parts(&f.parts))),
            ExprKind::Regex(r) => self.line(d, format!("Regex /{}/ {span:?}", r.pattern)),
            ExprKind::Var(p) => self.line(d, format!("Var {} {span:?}", p.text())),
            ExprKind::Attr { object, attr } => {
                self.line(d, format!("Attr .{} {span:?}", attr.name));
                self.expr(object, d + 1);
            }
            ExprKind::Call { function, args } => {
                self.line(d, format!("Call {} {span:?}", function.text()));
                self.args(args, d + 1);
            }
            ExprKind::Construct { entity, args } => {
                self.line(d, format!("Construct {} {span:?}", entity.text()));
                self.args(args, d + 1);
            }
            ExprKind::IndexLookup { entity, args } => {
                self.line(d, format!("IndexLookup {} {span:?}", entity.text()));
                self.args(args, d + 1);
            }
            ExprKind::RelationLookup { object, relation, args } => {
                self.line(d, format!("RelationLookup .{} {span:?}", relation.name));
                self.expr(object, d + 1);
                self.args(args, d + 1);
            }
            ExprKind::MapLookup { object, key } => {
                self.line(d, format!("MapLookup {span:?}"));
                self.expr(object, d + 1);
                self.expr(key, d + 1);
            }
            ExprKind::List(items) => {
                self.line(d, format!("List {span:?}"));
                for i in items {
                    self.expr(i, d + 1);
                }
            }
            ExprKind::ListComp { element, fors, guards } => {
                self.line(d, format!("ListComp {span:?}"));
                self.expr(element, d + 1);
                for f in fors {
                    self.line(d + 1, format!("For {}", f.var.name));
                    self.expr(&f.iterable, d + 2);
                }
                for g in guards {
                    self.line(d + 1, "If");
                    self.expr(g, d + 2);
                }
            }
            ExprKind::Dict(entries) => {
                self.line(d, format!("Dict {span:?}"));
                for entry in entries {
                    self.line(d + 1, format!("Key {}", str_lit(&entry.key)));
                    self.expr(&entry.value, d + 2);
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                self.line(d, format!("Binary {} {span:?}", op.symbol()));
                self.expr(lhs, d + 1);
                self.expr(rhs, d + 1);
            }
            ExprKind::Not(inner) => {
                self.line(d, format!("Not {span:?}"));
                self.expr(inner, d + 1);
            }
            ExprKind::Conditional { condition, then, otherwise } => {
                self.line(d, format!("Conditional {span:?}"));
                self.expr(condition, d + 1);
                self.expr(then, d + 1);
                self.expr(otherwise, d + 1);
            }
            ExprKind::IsDefined(target) => {
                self.line(d, format!("IsDefined {span:?}"));
                self.expr(target, d + 1);
            }
            ExprKind::Error => self.line(d, format!("Error {span:?}")),
        }
    }
}

fn multiplicity(m: &Multiplicity) -> String {
    let lower = m.lower.as_deref().unwrap_or("");
    let upper = m.upper.as_deref().unwrap_or("");
    if m.range { format!("[{lower}:{upper}]") } else { format!("[{lower}]") }
}

fn str_lit(s: &StrLit) -> String {
    let style = match s.style {
        StrStyle::Plain => "",
        StrStyle::Triple => "triple ",
        StrStyle::Raw => "raw ",
    };
    let parts: Vec<String> = s
        .parts
        .iter()
        .map(|p| match p {
            StrPart::Text(t) => format!("{t:?}"),
            StrPart::Interpolation(path) => {
                let names: Vec<String> = path.iter().map(|i| format!("{}@{:?}", i.name, i.span)).collect();
                format!("{{{{{}}}}}", names.join("."))
            }
        })
        .collect();
    format!("{style}{}", parts.join(" + "))
}

fn fstr_parts(parts: &[FStrPart]) -> String {
    let rendered: Vec<String> = parts
        .iter()
        .map(|p| match p {
            FStrPart::Text(t) => format!("{t:?}"),
            FStrPart::Field(f) => {
                let names: Vec<String> = f.path.iter().map(|i| format!("{}@{:?}", i.name, i.span)).collect();
                let conversion = f.conversion.map(|c| format!("!{c}")).unwrap_or_default();
                let spec = if f.spec.is_empty() { String::new() } else { format!(":{}", fstr_parts(&f.spec)) };
                format!("{{{}{conversion}{spec}}}", names.join("."))
            }
        })
        .collect();
    rendered.join(" + ")
}

/// `name`, `name=a.b` or `name=function(a, b.c)`.
fn field_spec(spec: &crate::ast::FieldSpec) -> String {
    use crate::ast::FieldSource;
    let path = |p: &[crate::ast::Ident]| p.iter().map(|i| i.name.as_str()).collect::<Vec<_>>().join(".");
    match &spec.source {
        None => spec.name.name.clone(),
        Some(FieldSource::Path(p)) => format!("{}={}", spec.name.name, path(p)),
        Some(FieldSource::Call { function, args }) => {
            let args: Vec<String> = args.iter().map(|a| path(a)).collect();
            format!("{}={}({})", spec.name.name, function.name, args.join(", "))
        }
    }
}
