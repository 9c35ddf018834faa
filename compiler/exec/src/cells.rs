//! The run-time state: single-assignment cells, instances and scopes (spec execution §1.2).
//!
//! Sized for models with millions of cells (a cell is 32 bytes): names are borrowed from the
//! program (`'a`), an instance's cells are contiguous (attribute `k` of an instance is cell
//! `first + k`), what is only read for messages (owner names, where a value was set) is a
//! number into a table of the engine, and what only some cells have (waiters, listeners) lives
//! in a map beside them.

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
#[derive(Debug, Clone, Copy)]
pub(crate) enum CellKind<'a> {
    /// A block variable: set once.
    Variable,
    /// A plain attribute, set once and checked against its type.
    Attribute(&'a ValueType),
    /// A `[1]` relation end.
    Single { target: &'a String },
    /// A `[0:1]` relation end: set (or nulled) once; frozen empty otherwise.
    Optional { target: &'a String },
    /// Any other relation end: gathers values until frozen (`upper` is `u32::MAX` for none).
    List { target: &'a String, lower: u32, upper: u32 },
    /// The result of an index lookup that waits for its instance.
    Lookup,
}

impl CellKind<'_> {
    /// A relation cell the scheduler may have to freeze.
    pub(crate) fn is_delayed(self) -> bool {
        matches!(self, CellKind::List { .. } | CellKind::Optional { .. })
    }
}

/// Where a cell belongs, for messages (`Engine::owner_of` derives it from `Cell::owner`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Owner<'a> {
    /// A variable; `None` is the `self` of a typedef constraint.
    Variable(Option<&'a modelc_sema::hir::Name>),
    /// The attribute at `position` in its instance's plan.
    Attribute { instance: InstanceId, position: u32 },
    /// An index lookup: its index in the engine's `lookups`.
    Lookup(u32),
}

/// What an index lookup looks for, for the message when nothing matches.
#[derive(Debug, Clone)]
pub(crate) struct LookupOwner<'a> {
    pub entity: &'a str,
    pub key: String,
    pub file: FileId,
    pub span: Span,
}

/// The tasks interested in a cell.
#[derive(Debug, Default)]
pub(crate) struct Waits {
    /// Tasks waiting for the cell to be complete.
    pub waiters: Vec<TaskId>,
    /// Gradual listeners (`for` loops over the relation): they see each value as it arrives.
    pub listeners: Vec<TaskId>,
}

#[derive(Debug)]
pub(crate) struct Cell<'a> {
    /// Shared: attribute cells point at their entity plan's kind.
    pub kind: &'a CellKind<'a>,
    /// The value of a single cell. A list cell holds its values, in arrival order and without
    /// duplicates, as a `Value::List` once it has any, or `Value::Null` when it was nulled.
    pub value: Option<Value>,
    /// Whose it is, read with the kind: an attribute's instance (its position is the cell's
    /// offset from the instance's first cell), a lookup's number, or a variable's name in
    /// `Engine::variable_names`.
    pub owner: u32,
    /// Two flags and a number in one word: `FROZEN`, `QUEUED`, and below them where the value
    /// was set, for double-set messages (`Engine::sites` entry + 1; 0: unset). The statements
    /// that promised to add to a cell are counted in `Engine::providers`.
    state: u32,
}

/// The relation is complete: nothing more may be added.
const FROZEN: u32 = 1 << 31;
/// In the scheduler's wait queue (see `Engine::wait_queue`).
const QUEUED: u32 = 1 << 30;
const SITE: u32 = QUEUED - 1;

impl<'a> Cell<'a> {
    pub(crate) fn new(kind: &'a CellKind<'a>, owner: u32) -> Cell<'a> {
        Cell { kind, value: None, owner, state: 0 }
    }

    pub(crate) fn frozen(&self) -> bool {
        self.state & FROZEN != 0
    }

    pub(crate) fn set_frozen(&mut self) {
        self.state |= FROZEN;
    }

    pub(crate) fn queued(&self) -> bool {
        self.state & QUEUED != 0
    }

    pub(crate) fn set_queued(&mut self, queued: bool) {
        self.state = if queued { self.state | QUEUED } else { self.state & !QUEUED };
    }

    /// `Engine::sites` entry + 1 of where the value was set; 0: unset.
    pub(crate) fn site(&self) -> u32 {
        self.state & SITE
    }

    pub(crate) fn set_site(&mut self, site: u32) {
        self.state = (self.state & !SITE) | (site & SITE);
    }

    pub(crate) fn is_multi(&self) -> bool {
        matches!(self.kind, CellKind::List { .. })
    }

    /// A relation cell the scheduler may have to freeze.
    pub(crate) fn is_delayed(&self) -> bool {
        self.kind.is_delayed()
    }

    /// Complete: readers may have its value.
    pub(crate) fn is_ready(&self) -> bool {
        match self.kind {
            CellKind::List { .. } => self.frozen() || self.is_nulled(),
            CellKind::Optional { .. } => self.frozen() || self.value.is_some(),
            _ => self.value.is_some(),
        }
    }

    /// A list cell set to `null`.
    pub(crate) fn is_nulled(&self) -> bool {
        matches!(self.value, Some(Value::Null))
    }

    /// The values of a list cell.
    pub(crate) fn items(&self) -> &[Value] {
        match &self.value {
            Some(Value::List(items)) => items,
            _ => &[],
        }
    }

    /// Adds a value to a list cell.
    pub(crate) fn push_item(&mut self, item: Value) {
        match &mut self.value {
            Some(Value::List(items)) => std::sync::Arc::make_mut(items).push(item),
            _ => self.value = Some(Value::list(vec![item])),
        }
    }

    /// The lower bound is met (a list below it can not be frozen by the scheduler).
    pub(crate) fn lower_met(&self) -> bool {
        match self.kind {
            CellKind::List { lower, .. } => self.items().len() >= *lower as usize || self.is_nulled(),
            _ => true,
        }
    }
}

/// An entity instance.
#[derive(Debug)]
pub(crate) struct Instance {
    /// Its entity's plan (attribute layout, defaults, indexes, implementations).
    pub plan: u32,
    /// The cell of its first attribute; the others follow in the plan's order.
    pub first: CellId,
    /// Where it was constructed: a place in the file of unit `unit` (`Engine::instance_file`).
    pub span: Span,
    pub unit: u32,
    /// Implementations already applied (each runs once per instance): bit `n` is the program's
    /// implementation number `n` (numbers from 64 on are kept in the engine).
    pub applied: u64,
    /// Some `implement` statement selected implementations for it.
    pub implemented: bool,
    /// How many implementations deep it was constructed (0 at the top level).
    pub depth: u32,
    /// The scope of the constructor that made it.
    pub origin: ScopeId,
}

/// A lexical scope: a block's variables, and what lookups fall back to. Its variables are the
/// cells `first_var .. first_var + var_count()`, made together (their owners name them).
///
/// An implementation's body and the instance it runs for are two levels of scope (the body's
/// variables inside the instance's attributes), which name resolution counts (`Var::up`): one
/// `Scope` stands for both (`is_double`), as there are hundreds of thousands of them.
#[derive(Debug)]
pub(crate) struct Scope {
    pub first_var: CellId,
    /// The number of variables, and `DOUBLE` when it stands for two levels.
    vars: u32,
    /// `parent()`, `NONE` for none (an `Option` would double the field).
    parent: u32,
    /// `instance()`, `NONE` for none.
    instance: u32,
    /// The file the code is written in.
    pub unit: u32,
    /// How deep in construction the code runs: 0 at the top level; in an implementation, its
    /// instance's depth; in a loop body over an instance, one more than that instance's depth
    /// (so a loop that keeps making what it iterates over grows deeper too).
    pub depth: u32,
}

const NONE: u32 = u32::MAX;
const DOUBLE: u32 = 1 << 31;

impl Scope {
    pub(crate) fn new(
        first_var: CellId,
        var_count: u32,
        parent: Option<ScopeId>,
        instance: Option<InstanceId>,
        unit: u32,
        depth: u32,
    ) -> Scope {
        Scope {
            first_var,
            vars: var_count & !DOUBLE,
            parent: parent.map_or(NONE, |p| p.0),
            instance: instance.map_or(NONE, |i| i.0),
            unit,
            depth,
        }
    }

    /// An implementation body's scope that is also its instance's (see above).
    pub(crate) fn implementation(
        first_var: CellId,
        var_count: u32,
        parent: ScopeId,
        instance: InstanceId,
        unit: u32,
        depth: u32,
    ) -> Scope {
        let mut scope = Scope::new(first_var, var_count, Some(parent), Some(instance), unit, depth);
        scope.vars |= DOUBLE;
        scope
    }

    pub(crate) fn var_count(&self) -> u32 {
        self.vars & !DOUBLE
    }

    /// It stands for two levels: an implementation body inside its instance.
    pub(crate) fn is_double(&self) -> bool {
        self.vars & DOUBLE != 0
    }

    pub(crate) fn parent(&self) -> Option<ScopeId> {
        (self.parent != NONE).then_some(ScopeId(self.parent))
    }

    /// Implementation bodies and `when` conditions: the instance whose attributes are visible.
    pub(crate) fn instance(&self) -> Option<InstanceId> {
        (self.instance != NONE).then_some(InstanceId(self.instance))
    }
}

#[cfg(test)]
mod sizes {
    /// The engine holds millions of these: growth here is memory and time on large models.
    #[test]
    fn run_time_records_stay_small() {
        assert!(size_of::<super::Cell<'_>>() <= 32);
        assert!(size_of::<super::Scope>() <= 24);
        assert!(size_of::<super::Instance>() <= 40);
        assert!(size_of::<crate::engine::Task<'_>>() <= 32);
    }
}
