//! The lowered, resolved program: what the checks of statement blocks read, what execution
//! runs and what editor features navigate. Names are resolved here and nowhere else.
//!
//! Lowering (`lower.rs`) turns one file's syntax tree into statements and expressions whose
//! names are resolved: a variable is a slot in a known enclosing scope (`Var::Local`), the
//! instance an implementation runs for, a top-level variable of another namespace, or
//! undefined; a constructor names its entity by [`EntityRef`] and its keyword arguments by
//! attribute position; a call names its plugin's signature or cast; literals are parsed once.
//! Nothing in it refers to the syntax tree, and consumers never resolve a name by string.
//! Attribute reads (`x.attr`) keep the attribute's name: the language is dynamically typed
//! there, and the instance's entity (a subtype, perhaps) decides where the attribute is.
//!
//! Every node carries the span it was lowered from: the source map is inline, so messages,
//! go-to-definition and references need nothing else. Lowering is a salsa query per file
//! ([`file_hir`]); it depends on the file's parse and on the signatures of the items it reads
//! ([`crate::signatures`]), one query per item, so an edit inside one file's statement block
//! lowers that file again and no other, and a declaration edit lowers again only the files that
//! read a declaration that changed. That is why entities and implementations are named by
//! file-local references ([`EntityRef`], [`ImplementationRef`]) rather than by their position
//! in the type table, which moves whenever an entity is added before them: execution maps
//! them to positions once, when it gathers the program.

mod lower;

use modelc_db::{Db, FileInput, FreedElsewhere, ProjectInput, imports, parse};
use modelc_diagnostics::Span;
use modelc_stdlib::PluginSignature;
use modelc_value::Value;
use modelc_value::ops::Op;

use crate::index::ModelIndex;
use crate::loading::loaded_modules;
use crate::signatures::Signatures;

/// An entity: its position in [`ModelIndex::entities`] (execution's numbering of a program's
/// entities; lowered files name entities by [`EntityRef`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntityId(pub u32);

/// An implementation: its position in [`ModelIndex::implementations`] (execution's numbering).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ImplementationId(pub u32);

/// An entity a lowered file names: its position in [`FileHir::entity_names`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntityRef(pub u32);

/// An implementation a lowered file names: its position in [`FileHir::implementation_names`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ImplementationRef(pub u32);

/// A top-level variable of another namespace a file reads (`ns::x`): its position in
/// [`FileHir::globals`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GlobalId(pub u32);

impl ModelIndex {
    /// The id of an entity by its fully qualified name.
    pub fn entity_id(&self, fqn: &str) -> Option<EntityId> {
        self.entities.get_index_of(fqn).map(|i| EntityId(i as u32))
    }

    /// The fully qualified name of an entity.
    pub fn entity_name(&self, id: EntityId) -> &str {
        self.entities.get_index(id.0 as usize).map_or("", |(name, _)| name.as_str())
    }

    /// The id of an implementation by its fully qualified name.
    pub fn implementation_id(&self, fqn: &str) -> Option<ImplementationId> {
        self.implementations.get_index_of(fqn).map(|i| ImplementationId(i as u32))
    }
}

/// A name as written, with its span (for messages and navigation).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Name {
    pub text: String,
    pub span: Span,
}

/// One file, lowered.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FileHir {
    /// The top-level statements: the file's own scope, whose locals are its top-level variables.
    pub top_level: Block,
    /// Relation annotations (the legacy relation form), evaluated in the top-level scope:
    /// each with the number of top-level statements written before it, so that they run in
    /// source order.
    pub annotations: Vec<(u32, Expr)>,
    pub implementations: Vec<ImplementationHir>,
    pub implements: Vec<ImplementHir>,
    pub typedefs: Vec<TypedefHir>,
    /// The attribute defaults each entity of this file declares.
    pub entities: Vec<EntityHir>,
    /// Where each attribute and relation end of this file is declared (messages point there).
    pub declarations: Vec<Declaration>,
    /// The qualified variables the file reads: `(namespace, name)`, indexed by [`GlobalId`].
    pub globals: Vec<(String, String)>,
    /// The entities the file names, fully qualified, indexed by [`EntityRef`].
    pub entity_names: Vec<String>,
    /// The implementations the file names or declares, fully qualified, indexed by
    /// [`ImplementationRef`].
    pub implementation_names: Vec<String>,
    /// What the file declares, in source order: for go to definition, symbols and hover.
    pub definitions: Vec<Definition>,
    /// Every name the file writes that resolves, with what it resolves to (declarations
    /// included): for references, highlights and rename.
    pub references: Vec<Reference>,
    /// Variables that certainly hold an instance of an entity (assigned once, a constructor):
    /// what completion after `x.` offers.
    pub variable_entities: Vec<(Symbol, String)>,
}

impl FileHir {
    /// The fully qualified name of an entity the file names.
    pub fn entity_name(&self, entity: EntityRef) -> &str {
        self.entity_names.get(entity.0 as usize).map_or("", String::as_str)
    }

    /// The fully qualified name of an implementation the file names.
    pub fn implementation_name(&self, implementation: ImplementationRef) -> &str {
        self.implementation_names.get(implementation.0 as usize).map_or("", String::as_str)
    }
}

/// What a name refers to, the same wherever it is written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Symbol {
    Entity(String),
    /// An attribute or relation end, by the entity that declares it.
    Attribute {
        entity: String,
        name: String,
    },
    Implementation(String),
    Typedef(String),
    Plugin(String),
    /// A top-level variable of a namespace.
    Global {
        namespace: String,
        name: String,
    },
    /// A variable of a block: where its name is first assigned, in the same file.
    Local(Span),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DefinitionKind {
    Entity,
    Attribute,
    Relation,
    Implementation,
    Typedef,
    Variable,
}

/// A declaration: its name's span, the whole declaration's span, its first line as written,
/// and its docstring.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    pub symbol: Symbol,
    pub kind: DefinitionKind,
    pub name: Span,
    pub full: Span,
    pub header: String,
    pub docstring: Option<String>,
}

/// A name written in the file and what it refers to.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    pub span: Span,
    pub symbol: Symbol,
}

/// A block: the variables it declares (its scope's slots) and its statements.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Block {
    /// Slot `n` is variable `locals[n]`: names assigned in the block, in order of first
    /// assignment, then a loop's own variable when the body does not assign it.
    pub locals: Vec<Name>,
    pub stmts: Vec<Stmt>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ImplementationHir {
    pub id: ImplementationRef,
    pub name: Name,
    pub entity: Option<EntityRef>,
    /// Runs in a block over the instance's scope over the file's top level.
    pub body: Block,
}

/// `implement Entity using a, b when condition`.
#[derive(Debug, Clone, PartialEq)]
pub struct ImplementHir {
    /// `None` when the entity did not resolve (the statement then selects nothing).
    pub entity: Option<EntityRef>,
    pub implementations: Vec<ImplementationRef>,
    /// `using parents`: the parents' own implement statements apply too.
    pub parents: bool,
    /// Evaluated in the instance's scope over the file's top level.
    pub condition: Option<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TypedefHir {
    pub fqn: String,
    pub constraint: ConstraintHir,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ConstraintHir {
    /// Evaluated in a scope of its own whose only variable (slot 0) is `self`.
    Expr(Expr),
    Regex(String),
}

/// An entity's own attribute defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityHir {
    pub entity: EntityRef,
    /// `(attribute, default)`: `None` for `= undef`, which removes an inherited default.
    pub defaults: Vec<(String, Option<Constant>)>,
}

/// A constant value (an attribute default), compared as written (see [`Value::identical`]).
#[derive(Debug, Clone)]
pub struct Constant(pub Value);

impl PartialEq for Constant {
    fn eq(&self, other: &Constant) -> bool {
        self.0.identical(&other.0)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Declaration {
    pub entity: EntityRef,
    pub attribute: String,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    Assign(Box<Assign>),
    For(Box<For>),
    If(Box<If>),
    Expr(Expr),
}

impl Stmt {
    pub fn span(&self) -> Span {
        match self {
            Stmt::Assign(a) => a.span,
            Stmt::For(f) => f.span,
            Stmt::If(i) => i.span,
            Stmt::Expr(e) => e.span,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Assign {
    pub target: Target,
    /// `+=`: adds to a relation.
    pub extend: bool,
    pub value: Expr,
    pub span: Span,
}

/// What an assignment sets.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// A variable of the block the assignment is in.
    Local { slot: u32, span: Span },
    /// `object.attr = …`.
    Attribute { object: Expr, attr: Name, span: Span },
    /// `ns::x = …`: an error when it runs.
    Qualified { written: String, span: Span },
    /// `x += …` where the block never assigns `x`: an error when it runs.
    Undefined { name: String, span: Span },
    /// Anything else the parser accepted: does nothing.
    Other,
}

/// The relation assignments (`v.attr = …`) in an `if`'s or `for`'s blocks whose object is
/// known outside them: the statement promises them before its blocks exist (spec §1.6).
/// The object is lowered in the statement's own scope.
#[derive(Debug, Clone, PartialEq)]
pub struct EagerTarget {
    pub object: Expr,
    pub attr: Name,
}

#[derive(Debug, Clone, PartialEq)]
pub struct For {
    /// The slot of the loop variable in the body's block.
    pub var: u32,
    /// Where the loop variable is written.
    pub var_span: Span,
    pub iterable: Expr,
    pub body: Block,
    pub eager: Vec<EagerTarget>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct If {
    pub branches: Vec<(Expr, Block)>,
    pub else_body: Option<Block>,
    pub eager: Vec<EagerTarget>,
    pub span: Span,
}

/// Runs one level of a recursive walk over lowered expressions with room to grow the stack:
/// execution's evaluator and every other walk of a chain of any length call it per level.
#[inline]
pub fn deep<R>(level: impl FnOnce() -> R) -> R {
    modelc_syntax::stack::deep(level)
}

/// A lowered expression. Its `Clone`, `PartialEq`, `Debug` and `Drop` recurse through
/// [`modelc_syntax::stack::deep`]: a chain (`a + b + …`) may be as long as its file.
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

modelc_syntax::deep_expression_traits!(Expr);

impl Drop for Expr {
    fn drop(&mut self) {
        let kind = std::mem::replace(&mut self.kind, ExprKind::Null);
        deep(|| drop(kind));
    }
}

/// Where a variable read finds its value, counted in scopes out from where it is read.
#[derive(Debug, Clone, PartialEq)]
pub enum Var {
    /// Slot `slot` of the block `up` scopes out.
    Local { up: u32, slot: u32 },
    /// `self`: the instance of the instance scope `up` scopes out.
    SelfInstance { up: u32 },
    /// An attribute of that instance. `otherwise` is where the name resolves when the
    /// instance's entity lacks it (the attribute belongs to only some subtypes).
    Attribute { up: u32, name: String, otherwise: Option<Box<Var>> },
    /// `ns::x`: a top-level variable of another file.
    Global(GlobalId),
    /// No variable of that name is visible: an error when it runs.
    Undefined(String),
}

/// `{{ a.b.c }}` in a string, or `{a.b!r:spec}` in an f-string: a variable and attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    pub root: Var,
    pub root_span: Span,
    pub attrs: Vec<Name>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StrPart {
    Text(String),
    Interpolation(Chain),
}

/// The text of a string literal that interpolates nothing; `None` when it does.
pub fn constant_text(parts: &[StrPart]) -> Option<String> {
    let mut text = String::new();
    for part in parts {
        match part {
            StrPart::Text(t) => text.push_str(t),
            StrPart::Interpolation(_) => return None,
        }
    }
    Some(text)
}

/// Whether a string literal interpolates a variable (`{{ x }}`).
pub fn has_interpolation(parts: &[StrPart]) -> bool {
    parts.iter().any(|part| matches!(part, StrPart::Interpolation(_)))
}

#[derive(Debug, Clone, PartialEq)]
pub enum FStrPart {
    Text(String),
    Field(FStrField),
}

#[derive(Debug, Clone, PartialEq)]
pub struct FStrField {
    /// `None` for a positional `{}` (an error when it runs).
    pub chain: Option<Chain>,
    pub conversion: Option<char>,
    pub spec: Vec<FStrPart>,
    pub span: Span,
}

/// An argument of a call or index lookup.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Positional(Expr),
    Keyword(Name, Expr),
    Splat(Expr),
}

impl Arg {
    /// The argument's value.
    pub fn value(&self) -> &Expr {
        match self {
            Arg::Positional(e) | Arg::Keyword(_, e) | Arg::Splat(e) => e,
        }
    }
}

/// An argument of a constructor: keywords know their attribute's position in the entity.
#[derive(Debug, Clone, PartialEq)]
pub enum ConstructArg {
    Positional(Expr),
    /// `position` is `None` when the entity has no such attribute (an error when it runs).
    Keyword {
        name: Name,
        position: Option<u32>,
        value: Expr,
    },
    Splat(Expr),
}

/// What a call calls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Callee {
    /// `int(x)`, `string(x)`, …
    Cast(&'static str),
    Plugin(&'static PluginSignature),
    /// A name that is no plugin modelc can run (an error when it runs).
    Unavailable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    And,
    Or,
    /// Every other operator: the shared Python-semantics core.
    Value(Op),
}

impl BinOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::Value(op) => op.symbol(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct CompFor {
    pub var: Name,
    pub iterable: Expr,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Int(i64),
    /// An integer literal beyond 64 bits: an error when it runs.
    IntOutOfRange,
    Float(f64),
    Bool(bool),
    Null,
    Str(Vec<StrPart>),
    FStr(Vec<FStrPart>),
    /// A regex literal as a value: matches `self`.
    Regex {
        pattern: String,
        subject: Var,
    },
    Var(Var),
    Attr {
        object: Box<Expr>,
        attr: Name,
    },
    Call {
        callee: Callee,
        written: String,
        /// Where the function's name is written.
        function_span: Span,
        args: Vec<Arg>,
    },
    Construct {
        entity: EntityRef,
        entity_span: Span,
        args: Vec<ConstructArg>,
    },
    IndexLookup {
        entity: EntityRef,
        entity_span: Span,
        args: Vec<Arg>,
    },
    /// A constructor or index lookup of a name that is no entity (an error when it runs).
    UnknownEntity {
        written: String,
        entity_span: Span,
        /// A constructor (not an index lookup).
        constructor: bool,
        /// An unqualified constructor in a relation argument whose name several subtypes of
        /// the relation's type have: each of them (the name is ambiguous).
        candidates: Vec<String>,
        /// Lowered for their checks; never evaluated.
        args: Vec<Arg>,
    },
    RelationLookup {
        object: Box<Expr>,
        relation: Name,
        args: Vec<Arg>,
    },
    MapLookup {
        object: Box<Expr>,
        key: Box<Expr>,
    },
    List(Vec<Expr>),
    /// Each `for` clause binds its variable in a scope of its own, inside the previous one.
    ListComp {
        element: Box<Expr>,
        fors: Vec<CompFor>,
        guards: Vec<Expr>,
    },
    Dict(Vec<(String, Expr)>),
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Not(Box<Expr>),
    Conditional {
        condition: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    IsDefined(Box<Expr>),
    /// Where the parser recovered from an error.
    Error,
}

/// One loaded file, lowered against the signatures of the items it reads. Freed on a thread of
/// its own ([`FreedElsewhere`]): a declaration edit may lower many files again, and the previous
/// lowering of them all is freed when the next edit is set.
#[salsa::tracked(returns(ref))]
pub fn file_hir(db: &dyn Db, project: ProjectInput, file: FileInput) -> FreedElsewhere<FileHir> {
    let loaded = loaded_modules(db, project);
    let Some(namespace) = loaded.files.iter().find_map(|(ns, f)| (*f == file).then_some(ns.as_str())) else {
        return FreedElsewhere::new(FileHir::default());
    };
    let signatures = Signatures::new(db, project);
    let scope = crate::resolve::FileScope { namespace, imports: imports(db, file) };
    FreedElsewhere::new(lower::lower_file(signatures, scope, &parse(db, file).file, file.text(db)))
}
