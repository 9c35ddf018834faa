//! The run-time state: single-assignment cells, instances and scopes (spec execution §1.2).

use indexmap::IndexMap;
use modelc_diagnostics::{FileId, Span};
use modelc_sema::types::ValueType;
use modelc_value::{InstanceId, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct CellId(pub u32);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct ScopeId(pub u32);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct TaskId(pub u32);

/// What a cell holds and when it is complete.
#[derive(Debug, Clone)]
pub(crate) enum CellKind {
    /// A block variable: set once.
    Variable,
    /// A plain attribute, set once and checked against its type.
    Attribute(ValueType),
    /// A `[1]` relation end.
    Single { target: String },
    /// A `[0:1]` relation end: set (or nulled) once; frozen empty otherwise.
    Optional { target: String },
    /// Any other relation end: gathers values until frozen.
    List { target: String, lower: u64, upper: Option<u64> },
    /// The result of an index lookup that waits for its instance.
    Lookup,
}

/// Where a cell belongs, for messages.
#[derive(Debug, Clone)]
pub(crate) enum Owner {
    Variable(String),
    Attribute { instance: InstanceId, name: String },
    Lookup { entity: String, key: String, file: FileId, span: Span },
}

#[derive(Debug)]
pub(crate) struct Cell {
    pub kind: CellKind,
    pub owner: Owner,
    /// The value of a single cell (`Value::Null` for a nulled relation).
    pub value: Option<Value>,
    /// The values of a list cell, in arrival order, without duplicates.
    pub items: Vec<Value>,
    pub frozen: bool,
    /// Tasks waiting for the cell to be complete.
    pub waiters: Vec<TaskId>,
    /// Gradual listeners (`for` loops over the relation): they see each value as it arrives.
    pub listeners: Vec<TaskId>,
    /// Statements that promised to add to the cell and have not finished.
    pub providers: u32,
    /// Where the value was set, for double-set messages.
    pub set_at: Option<(FileId, Span)>,
}

impl Cell {
    pub(crate) fn new(kind: CellKind, owner: Owner) -> Cell {
        Cell {
            kind,
            owner,
            value: None,
            items: Vec::new(),
            frozen: false,
            waiters: Vec::new(),
            listeners: Vec::new(),
            providers: 0,
            set_at: None,
        }
    }

    pub(crate) fn is_multi(&self) -> bool {
        matches!(self.kind, CellKind::List { .. })
    }

    /// A relation cell the scheduler may have to freeze.
    pub(crate) fn is_delayed(&self) -> bool {
        matches!(self.kind, CellKind::List { .. } | CellKind::Optional { .. })
    }

    /// Complete: readers may have its value.
    pub(crate) fn is_ready(&self) -> bool {
        match self.kind {
            CellKind::List { .. } | CellKind::Optional { .. } => self.frozen || self.value.is_some(),
            _ => self.value.is_some(),
        }
    }

    /// The lower bound is met (a list below it can not be frozen by the scheduler).
    pub(crate) fn lower_met(&self) -> bool {
        match self.kind {
            CellKind::List { lower, .. } => self.items.len() as u64 >= lower || self.value.is_some(),
            _ => true,
        }
    }
}

/// An entity instance.
#[derive(Debug)]
pub(crate) struct Instance {
    pub entity: String,
    pub attributes: IndexMap<String, CellId>,
    /// Where it was constructed.
    pub file: FileId,
    pub span: Span,
    pub line: usize,
    pub file_name: String,
    /// Implementations already applied (each runs once per instance).
    pub applied: Vec<String>,
    /// Some `implement` statement selected implementations for it.
    pub implemented: bool,
    /// How many implementations deep it was constructed (0 at the top level).
    pub depth: u32,
    /// The scope of the constructor that made it.
    pub origin: ScopeId,
}

/// A lexical scope: a block's variables, and what lookups fall back to.
#[derive(Debug)]
pub(crate) struct Scope {
    pub vars: IndexMap<String, CellId>,
    pub parent: Option<ScopeId>,
    /// Implementation bodies and `when` conditions: the instance whose attributes are visible.
    pub instance: Option<InstanceId>,
    /// The file the code is written in.
    pub unit: usize,
}
