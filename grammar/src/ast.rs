//! The untyped syntax tree of one `.cf` file. Every node carries the byte span it was parsed
//! from. Names are plain strings; resolving them is the semantic layer's job.
//!
//! Trees can be deep: a generated model may chain thousands of operators. [`Expr`] and
//! [`Stmt`] therefore free their children iteratively (see [`Drop`] below), and the parser
//! caps nesting depth (`depth.rs`) so that later recursive passes stay within the stack.

pub use modelc_diagnostics::Span;

/// An identifier as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A possibly namespaced lower-case name: `x`, `std::print`, `a::b::c`.
#[derive(Debug, Clone, PartialEq)]
pub struct Path {
    pub segments: Vec<Ident>,
    pub span: Span,
}

impl Path {
    /// The name as written, segments joined by `::`.
    pub fn text(&self) -> String {
        let names: Vec<&str> = self.segments.iter().map(|s| s.name.as_str()).collect();
        names.join("::")
    }
}

/// A reference to an entity type: `A`, `std::Entity`, `a::b::C`.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeRef {
    /// The namespace segments before the entity name (empty for an unqualified name).
    pub namespace: Vec<Ident>,
    pub name: Ident,
    pub span: Span,
}

impl TypeRef {
    pub fn text(&self) -> String {
        let mut parts: Vec<&str> = self.namespace.iter().map(|s| s.name.as_str()).collect();
        parts.push(&self.name.name);
        parts.join("::")
    }
}

/// A parsed file: an optional module docstring and its top-level items in source order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct File {
    pub docstring: Option<StrLit>,
    pub items: Vec<Item>,
}

/// A top-level construct. Definitions may only appear at the top level; statements may
/// appear anywhere. Large definitions are boxed: the parser moves items around by value, and
/// a small `Item` keeps that cheap.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Import(Box<Import>),
    Entity(Box<Entity>),
    Implementation(Box<Implementation>),
    Implement(Box<Implement>),
    Relation(Box<Relation>),
    Typedef(Box<Typedef>),
    Index(Box<Index>),
    Resource(Box<ResourceDecl>),
    Stmt(Stmt),
}

/// `import a::b` or `import a::b as c`.
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    pub module: Path,
    pub alias: Option<Ident>,
    pub span: Span,
}

/// `entity Name extends P1, P2: """doc""" attributes end`.
#[derive(Debug, Clone, PartialEq)]
pub struct Entity {
    pub name: Ident,
    pub parents: Vec<TypeRef>,
    pub docstring: Option<StrLit>,
    pub attributes: Vec<Attribute>,
    pub span: Span,
}

/// One attribute declaration inside an entity: `string[]? name = default`.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    pub ty: AttrType,
    pub name: Ident,
    pub default: Option<AttrDefault>,
    pub span: Span,
}

/// The declared type of an attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct AttrType {
    pub base: AttrBase,
    /// `T[]`.
    pub list: bool,
    /// `T?`.
    pub nullable: bool,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AttrBase {
    /// A primitive type or typedef: `string`, `std::port`.
    Named(Path),
    /// The `dict` keyword.
    Dict,
}

/// The default of an attribute.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrDefault {
    /// A constant, a flat list of constants, `null`, or a dict literal.
    Value(Expr),
    /// `= undef`: removes an inherited default.
    Undef(Span),
}

/// `implementation name for Entity: """doc""" statements end`.
#[derive(Debug, Clone, PartialEq)]
pub struct Implementation {
    pub name: Ident,
    pub entity: TypeRef,
    pub docstring: Option<StrLit>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

/// `implement Entity using a, b when condition`.
#[derive(Debug, Clone, PartialEq)]
pub struct Implement {
    pub entity: TypeRef,
    pub implementations: Vec<ImplRef>,
    pub condition: Option<Expr>,
    pub docstring: Option<StrLit>,
    pub span: Span,
}

/// One entry of an `implement ... using` list.
#[derive(Debug, Clone, PartialEq)]
pub enum ImplRef {
    Named(Path),
    /// `parents`: the implementations of the direct parent entities.
    Parents(Span),
}

/// A relation: `A.b [1] -- B.a [0:]`, or `A.b [0:] -- B` (unidirectional), or the legacy
/// annotated form with expressions instead of the arrow.
#[derive(Debug, Clone, PartialEq)]
pub struct Relation {
    /// The end declared first: its entity, and the attribute it gets (`A.b [1]`).
    pub left: RelationEnd,
    /// The other end: the target entity and, for bidirectional relations, its attribute.
    pub right_entity: TypeRef,
    pub right: Option<(Ident, Multiplicity)>,
    /// The arrow as written (`--`, `->`, `<-`), absent in the annotated form.
    pub arrow: Option<Ident>,
    pub annotations: Vec<Expr>,
    pub docstring: Option<StrLit>,
    pub span: Span,
}

/// `Entity.attribute [multiplicity]`.
#[derive(Debug, Clone, PartialEq)]
pub struct RelationEnd {
    pub entity: TypeRef,
    pub attribute: Ident,
    pub multiplicity: Multiplicity,
}

/// `[n]`, `[n:]`, `[n:m]` or `[:m]`. Bounds are kept as written; the reference accepts any
/// integers here, so validating them is the semantic layer's decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Multiplicity {
    pub lower: Option<String>,
    pub upper: Option<String>,
    /// Whether a `:` was written (`[1]` means exactly one, `[1:]` one or more).
    pub range: bool,
    pub span: Span,
}

/// `typedef name as base matching constraint`.
#[derive(Debug, Clone, PartialEq)]
pub struct Typedef {
    pub name: Ident,
    pub base: Path,
    pub constraint: Constraint,
    pub docstring: Option<StrLit>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Constraint {
    /// `matching <expression>` over `self`.
    Expr(Expr),
    /// `matching /regex/`.
    Regex(RegexLit),
}

/// `index Entity(a, b)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Index {
    pub entity: TypeRef,
    pub attributes: Vec<Ident>,
    pub span: Span,
}

/// `resource Entity(id=name, agent=host.name, fields=[a, b], export_if=managed)`: how the
/// instances of an entity become resources (their id, agent and exported fields).
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceDecl {
    pub entity: TypeRef,
    pub options: Vec<ResourceOption>,
    pub span: Span,
}

/// One `name=value` of a resource declaration.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceOption {
    pub name: Ident,
    pub value: ResourceOptionValue,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ResourceOptionValue {
    /// `name` or `host.name`: attributes followed from the resource.
    Path(Vec<Ident>),
    /// `"internal"`.
    Str(StrLit),
    /// `[a, b, permissions=mode, hash=file_content(content, prefix_content)]`.
    List(Vec<FieldSpec>),
}

/// One item of a list option: an attribute of the resource, or a field with a source of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldSpec {
    pub name: Ident,
    pub source: Option<FieldSource>,
    pub span: Span,
}

/// Where a field's value comes from when it is not the attribute of the same name.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldSource {
    /// `permissions=mode`, `owner=host.admin`: attributes followed from the resource.
    Path(Vec<Ident>),
    /// `hash=file_content(content, prefix_content)`: one of the export functions modelc knows,
    /// applied to attributes of the resource.
    Call { function: Ident, args: Vec<Vec<Ident>> },
}

impl ResourceOptionValue {
    pub fn span(&self) -> Option<Span> {
        match self {
            ResourceOptionValue::Path(path) => Some(path.first()?.span.to(path.last()?.span)),
            ResourceOptionValue::Str(s) => Some(s.span),
            ResourceOptionValue::List(items) => Some(items.first()?.span.to(items.last()?.span)),
        }
    }
}

/// A statement: what may appear inside blocks as well as at the top level.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    Assign(Box<Assign>),
    For(Box<For>),
    If(If),
    Expr(Expr),
    /// Input the parser skipped while recovering from a syntax error.
    Error(Span),
}

impl Stmt {
    /// The variable this statement declares in its block, with the assignment: `x = …` to a
    /// plain name. (`x += …` is an error, E0012, and declares nothing.) The checker and the
    /// lowering both scope variables by this rule.
    pub fn declared_variable(&self) -> Option<(&Ident, &Assign)> {
        let Stmt::Assign(assign) = self else { return None };
        let ExprKind::Var(path) = &assign.target.kind else { return None };
        match path.segments.as_slice() {
            [name] if assign.op == AssignOp::Set => Some((name, assign)),
            _ => None,
        }
    }

    pub fn span(&self) -> Span {
        match self {
            Stmt::Assign(a) => a.span,
            Stmt::For(f) => f.span,
            Stmt::If(i) => i.span,
            Stmt::Expr(e) => e.span,
            Stmt::Error(span) => *span,
        }
    }
}

/// `target = value` or `target += value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Assign {
    /// A variable (`x`, `ns::x`) or an attribute chain (`x.a.b`).
    pub target: Expr,
    pub op: AssignOp,
    pub value: Expr,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssignOp {
    /// `=`
    Set,
    /// `+=`: adds to a relation.
    Extend,
}

/// `for var in iterable: body end`.
#[derive(Debug, Clone, PartialEq)]
pub struct For {
    pub var: Ident,
    pub iterable: Expr,
    pub body: Vec<Stmt>,
    pub span: Span,
}

/// `if c: ... elif c2: ... else: ... end`. The `elif` chain is kept flat.
#[derive(Debug, Clone, PartialEq)]
pub struct If {
    /// The `if` branch followed by every `elif` branch, in order.
    pub branches: Vec<(Expr, Vec<Stmt>)>,
    pub else_body: Option<Vec<Stmt>>,
    pub span: Span,
}

/// An expression with its span.
///
/// `Clone`, `PartialEq` and `Debug` recurse through [`crate::stack::deep`]: a chain has no
/// length limit, so no derived recursive walk may assume a shallow tree.
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

crate::deep_expression_traits!(Expr);

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// An integer literal as written (arbitrary precision, sign included).
    Int(String),
    Float(f64),
    Bool(bool),
    Null,
    /// A plain, raw or triple-quoted string.
    Str(StrLit),
    /// An f-string.
    FStr(FStrLit),
    /// A regex literal (`matching /.../` used as a value).
    Regex(RegexLit),
    /// A variable: `x`, `std::x`.
    Var(Path),
    /// Attribute access `object.attr`.
    Attr {
        object: Box<Expr>,
        attr: Ident,
    },
    /// A plugin call or type cast: `std::print(x)`.
    Call {
        function: Path,
        args: Vec<Arg>,
    },
    /// `Entity(k=v, **d)`. The type is boxed to keep every expression small.
    Construct {
        entity: Box<TypeRef>,
        args: Vec<Arg>,
    },
    /// `Entity[k=v]`.
    IndexLookup {
        entity: Box<TypeRef>,
        args: Vec<Arg>,
    },
    /// `x.relation[k=v]`.
    RelationLookup {
        object: Box<Expr>,
        relation: Ident,
        args: Vec<Arg>,
    },
    /// `d[key]`.
    MapLookup {
        object: Box<Expr>,
        key: Box<Expr>,
    },
    /// `[a, b]`.
    List(Vec<Expr>),
    /// `[element for x in xs for y in ys if c]`.
    ListComp {
        element: Box<Expr>,
        fors: Vec<CompFor>,
        guards: Vec<Expr>,
    },
    /// `{"k": v}`.
    Dict(Vec<DictEntry>),
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Not(Box<Expr>),
    /// `condition ? then : otherwise`.
    Conditional {
        condition: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    /// `x is defined`, `x.a is defined`, `d["k"] is defined`.
    IsDefined(Box<Expr>),
    /// A placeholder where the parser recovered from an error.
    Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
    In,
    NotIn,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Or => "or",
            BinOp::And => "and",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Pow => "**",
            BinOp::In => "in",
            BinOp::NotIn => "not in",
        }
    }

    /// The comparison operator written as `text`.
    pub fn comparison(text: &str) -> BinOp {
        match text {
            "==" => BinOp::Eq,
            "!=" => BinOp::Ne,
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            ">" => BinOp::Gt,
            _ => BinOp::Ge,
        }
    }
}

/// An argument of a call, constructor or index lookup.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Positional(Expr),
    Keyword(Ident, Expr),
    /// `**dict`.
    Splat(Expr),
}

/// `for var in iterable` inside a list comprehension.
#[derive(Debug, Clone, PartialEq)]
pub struct CompFor {
    pub var: Ident,
    pub iterable: Expr,
}

/// `"key": value` in a dict literal. Keys are string literals.
#[derive(Debug, Clone, PartialEq)]
pub struct DictEntry {
    pub key: StrLit,
    pub value: Expr,
}

/// How a string literal was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrStyle {
    /// `"..."` or `'...'`.
    Plain,
    /// `"""..."""`.
    Triple,
    /// `r"..."`: no escapes, no interpolation.
    Raw,
}

/// A string literal, escapes decoded, split into text and `{{ name }}` interpolations.
#[derive(Debug, Clone, PartialEq)]
pub struct StrLit {
    pub style: StrStyle,
    pub parts: Vec<StrPart>,
    pub span: Span,
}

impl StrLit {
    /// The literal's text when it has no interpolation.
    pub fn as_constant(&self) -> Option<String> {
        let mut text = String::new();
        for part in &self.parts {
            match part {
                StrPart::Text(t) => text.push_str(t),
                StrPart::Interpolation(_) => return None,
            }
        }
        Some(text)
    }

    pub fn has_interpolation(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, StrPart::Interpolation(_)))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum StrPart {
    Text(String),
    /// `{{ a.b.c }}`: a variable followed by attribute accesses, each with its own span.
    Interpolation(Vec<Ident>),
}

/// An f-string, split into text and replacement fields.
#[derive(Debug, Clone, PartialEq)]
pub struct FStrLit {
    pub parts: Vec<FStrPart>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FStrPart {
    Text(String),
    Field(FStrField),
}

/// `{name.attr!conversion:spec}`.
#[derive(Debug, Clone, PartialEq)]
pub struct FStrField {
    /// The field name split on `.`; empty for a positional `{}` (an error at run time).
    pub path: Vec<Ident>,
    pub conversion: Option<char>,
    /// The format spec, which may itself contain fields (`{x:{width}}`).
    pub spec: Vec<FStrPart>,
    pub span: Span,
}

/// A regex literal: the pattern between the slashes, verbatim.
#[derive(Debug, Clone, PartialEq)]
pub struct RegexLit {
    pub pattern: String,
    pub span: Span,
}

/// One link `object.attr` of an attribute chain; `span` covers the chain up to this link.
#[derive(Debug, Clone, Copy)]
pub struct AttrLink<'a> {
    pub object: &'a Expr,
    pub attr: &'a Ident,
    pub span: Span,
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }

    /// The placeholder for input that did not parse.
    pub fn error(span: Span) -> Expr {
        Expr { kind: ExprKind::Error, span }
    }

    /// An attribute chain `root.a.b…` as its root (this expression when it is no attribute
    /// access) and its links, root outwards. Found without recursion: a chain is long, not deep.
    pub fn attribute_links(&self) -> (&Expr, Vec<AttrLink<'_>>) {
        let mut links = Vec::new();
        let mut root = self;
        while let ExprKind::Attr { object, attr } = &root.kind {
            links.push(AttrLink { object, attr, span: root.span });
            root = object;
        }
        links.reverse();
        (root, links)
    }

    /// Calls `f` on each direct sub-expression, in source order.
    pub fn for_each_child<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        match &self.kind {
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Null
            | ExprKind::Str(_)
            | ExprKind::FStr(_)
            | ExprKind::Regex(_)
            | ExprKind::Var(_)
            | ExprKind::Error => {}
            ExprKind::Attr { object, .. } => f(object),
            ExprKind::Call { args, .. } | ExprKind::Construct { args, .. } | ExprKind::IndexLookup { args, .. } => {
                args.iter().for_each(|a| f(a.value()))
            }
            ExprKind::RelationLookup { object, args, .. } => {
                f(object);
                args.iter().for_each(|a| f(a.value()));
            }
            ExprKind::MapLookup { object, key } => {
                f(object);
                f(key);
            }
            ExprKind::List(items) => items.iter().for_each(f),
            ExprKind::ListComp { element, fors, guards } => {
                f(element);
                fors.iter().for_each(|c| f(&c.iterable));
                guards.iter().for_each(f);
            }
            ExprKind::Dict(entries) => entries.iter().for_each(|e| f(&e.value)),
            ExprKind::Binary { lhs, rhs, .. } => {
                f(lhs);
                f(rhs);
            }
            ExprKind::Not(inner) | ExprKind::IsDefined(inner) => f(inner),
            ExprKind::Conditional { condition, then, otherwise } => {
                f(condition);
                f(then);
                f(otherwise);
            }
        }
    }

    /// Whether any sub-expression has sub-expressions of its own.
    fn has_grandchildren(&self) -> bool {
        let mut deep = false;
        self.for_each_child(&mut |c| {
            if !deep {
                c.for_each_child(&mut |_| deep = true);
            }
        });
        deep
    }

    /// Calls `f` on each direct sub-expression, mutably, in source order.
    pub fn for_each_child_mut<'a>(&'a mut self, f: &mut dyn FnMut(&'a mut Expr)) {
        match &mut self.kind {
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Null
            | ExprKind::Str(_)
            | ExprKind::FStr(_)
            | ExprKind::Regex(_)
            | ExprKind::Var(_)
            | ExprKind::Error => {}
            ExprKind::Attr { object, .. } => f(object),
            ExprKind::Call { args, .. } | ExprKind::Construct { args, .. } | ExprKind::IndexLookup { args, .. } => {
                args.iter_mut().for_each(|a| f(a.value_mut()));
            }
            ExprKind::RelationLookup { object, args, .. } => {
                f(object);
                args.iter_mut().for_each(|a| f(a.value_mut()));
            }
            ExprKind::MapLookup { object, key } => {
                f(object);
                f(key);
            }
            ExprKind::List(items) => items.iter_mut().for_each(f),
            ExprKind::ListComp { element, fors, guards } => {
                f(element);
                fors.iter_mut().for_each(|c| f(&mut c.iterable));
                guards.iter_mut().for_each(f);
            }
            ExprKind::Dict(entries) => entries.iter_mut().for_each(|e| f(&mut e.value)),
            ExprKind::Binary { lhs, rhs, .. } => {
                f(lhs);
                f(rhs);
            }
            ExprKind::Not(inner) | ExprKind::IsDefined(inner) => f(inner),
            ExprKind::Conditional { condition, then, otherwise } => {
                f(condition);
                f(then);
                f(otherwise);
            }
        }
    }
}

impl Arg {
    pub fn value(&self) -> &Expr {
        match self {
            Arg::Positional(e) | Arg::Keyword(_, e) | Arg::Splat(e) => e,
        }
    }

    pub fn value_mut(&mut self) -> &mut Expr {
        match self {
            Arg::Positional(e) | Arg::Keyword(_, e) | Arg::Splat(e) => e,
        }
    }
}

/// A node being torn down without recursion.
enum Doomed {
    Expr(Expr),
    Stmt(Stmt),
}

/// Moves the children of a node onto `stack`, leaving the node childless.
fn take_children(node: &mut Doomed, stack: &mut Vec<Doomed>) {
    match node {
        Doomed::Expr(expr) => {
            expr.for_each_child_mut(&mut |child| {
                if child.has_children() {
                    stack.push(Doomed::Expr(std::mem::replace(child, Expr::error(Span::default()))));
                }
            });
        }
        Doomed::Stmt(stmt) => {
            let bodies: Vec<&mut Vec<Stmt>> = match stmt {
                Stmt::For(f) => vec![&mut f.body],
                Stmt::If(i) => {
                    let mut out: Vec<&mut Vec<Stmt>> = i.branches.iter_mut().map(|(_, b)| b).collect();
                    out.extend(i.else_body.as_mut());
                    out
                }
                Stmt::Assign(_) | Stmt::Expr(_) | Stmt::Error(_) => Vec::new(),
            };
            for body in bodies {
                stack.extend(body.drain(..).map(Doomed::Stmt));
            }
            let exprs: Vec<&mut Expr> = match stmt {
                Stmt::Assign(a) => vec![&mut a.target, &mut a.value],
                Stmt::For(f) => vec![&mut f.iterable],
                Stmt::If(i) => i.branches.iter_mut().map(|(c, _)| c).collect(),
                Stmt::Expr(e) => vec![e],
                Stmt::Error(_) => Vec::new(),
            };
            for expr in exprs {
                stack.push(Doomed::Expr(std::mem::replace(expr, Expr::error(Span::default()))));
            }
        }
    }
}

/// Frees a tree of any depth in constant stack space.
fn drop_iteratively(first: Doomed) {
    let mut stack = vec![first];
    while let Some(mut node) = stack.pop() {
        take_children(&mut node, &mut stack);
        // `node` now has no children left and drops shallowly.
    }
}

impl Expr {
    fn has_children(&self) -> bool {
        let mut any = false;
        self.for_each_child(&mut |_| any = true);
        any
    }
}

impl Drop for Expr {
    fn drop(&mut self) {
        if self.has_grandchildren() {
            let kind = std::mem::replace(&mut self.kind, ExprKind::Error);
            drop_iteratively(Doomed::Expr(Expr { kind, span: self.span }));
        }
    }
}

impl Drop for Stmt {
    fn drop(&mut self) {
        let nested = match self {
            Stmt::For(f) => !f.body.is_empty(),
            Stmt::If(i) => {
                i.branches.iter().any(|(_, b)| !b.is_empty()) || i.else_body.as_ref().is_some_and(|b| !b.is_empty())
            }
            Stmt::Assign(_) | Stmt::Expr(_) | Stmt::Error(_) => false,
        };
        if nested {
            let stmt = std::mem::replace(self, Stmt::Error(Span::default()));
            drop_iteratively(Doomed::Stmt(stmt));
        }
    }
}
