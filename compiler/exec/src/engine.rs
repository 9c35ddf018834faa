//! The scheduler (spec execution §1.3): tasks run from a FIFO queue; a task that needs a value
//! that is not there parks on its cell and runs again when the cell completes. When nothing can
//! run, one relation is frozen (declared complete) and the loop goes on.

use std::collections::{HashMap, VecDeque};

use indexmap::IndexMap;
use modelc_diagnostics::{Diagnostic, FileId, Span, codes};
use modelc_syntax::ast::{AssignOp, Expr, ExprKind, Ident, Stmt};
use modelc_value::{InstanceId, Value};

use crate::program::Program;
use crate::store::{Cell, CellId, CellKind, Instance, Owner, Scope, ScopeId, TaskId};

/// What a task does.
pub(crate) enum TaskKind<'a> {
    Stmt(&'a Stmt),
    /// An `implement … when` condition for one instance.
    Condition {
        instance: InstanceId,
        implementations: Vec<String>,
        condition: &'a Expr,
    },
    /// The body of a `for` over a relation, run for each value as it arrives.
    ForEach {
        cell: CellId,
        var: &'a Ident,
        body: &'a [Stmt],
        seen: usize,
    },
    /// A relation annotation: a value that must be known.
    Annotation(&'a Expr),
    /// Typedef constraint evaluations (never scheduled).
    Constraint,
}

pub(crate) struct Task<'a> {
    pub kind: TaskKind<'a>,
    pub scope: ScopeId,
    /// Results of sub-expressions with effects (constructors, plugin calls), so that running the
    /// task again after a wait does not repeat them.
    /// Keyed by expression and scope: one expression runs once per comprehension element.
    pub memo: HashMap<(*const Expr, ScopeId), Value>,
    /// The scopes of comprehension elements, kept so that a re-run binds the same scopes (and
    /// finds its memoised effects): `(comprehension clause, parent scope, element)` → scope.
    pub bindings: HashMap<(*const modelc_syntax::ast::CompFor, ScopeId, usize), ScopeId>,
    pub done: bool,
    /// Cells this task promised to add to (released when it finishes).
    pub promises: Vec<CellId>,
}

impl<'a> Task<'a> {
    pub(crate) fn new(kind: TaskKind<'a>, scope: ScopeId) -> Task<'a> {
        Task { kind, scope, memo: HashMap::new(), bindings: HashMap::new(), done: false, promises: Vec::new() }
    }
}

/// Why evaluation stopped.
pub(crate) enum Stop {
    /// A value is missing: run again when this cell completes.
    Wait(CellId),
    /// The compile fails.
    Fail(Box<Diagnostic>),
    /// A `for` loop over a relation listens for more values (it is not waiting: it does not
    /// keep the relation from being frozen).
    Listen,
}

pub(crate) type Eval<T> = Result<T, Stop>;

/// Cap on scheduler work: a safety net for loops that feed themselves (a `for` over a relation
/// that adds to the same relation). Runaway recursion is caught earlier, by the construction
/// depth cap.
pub const MAX_STEPS: usize = 200_000_000;

/// What a compile may read from outside the model: environment variables and the clock,
/// passed in so that execution itself stays deterministic and testable.
#[derive(Debug, Clone, Default)]
pub struct World {
    pub env: HashMap<String, String>,
    pub now: i64,
}

pub struct Engine<'a> {
    pub(crate) program: &'a Program<'a>,
    pub(crate) world: World,
    pub(crate) cells: Vec<Cell>,
    pub(crate) instances: Vec<Instance>,
    pub(crate) scopes: Vec<Scope>,
    pub(crate) tasks: Vec<Task<'a>>,
    pub(crate) run_queue: VecDeque<TaskId>,
    /// Relation cells, in creation order: the order in which they are considered for freezing.
    pub(crate) delayed: Vec<CellId>,
    /// `(entity, key)` → instance, for every index of every entity.
    pub(crate) index: HashMap<(String, String), InstanceId>,
    /// Lookups waiting for an instance: `(entity, key)` → the lookup's cell.
    pub(crate) parked: IndexMap<(String, String), CellId>,
    /// The top-level scope of each unit.
    pub(crate) unit_scopes: Vec<ScopeId>,
    pub(crate) printed: Vec<String>,
    pub(crate) steps: usize,
    pub(crate) constraint_cache: crate::validate::ConstraintCache,
    pub(crate) constraint_task: Option<TaskId>,
    /// Relation annotations whose value is unknown: an error at the end (spec §1.9).
    pub(crate) unknown_annotations: Vec<(ScopeId, &'a Expr)>,
}

impl<'a> Engine<'a> {
    pub fn new(program: &'a Program<'a>, world: World) -> Engine<'a> {
        Engine {
            program,
            world,
            cells: Vec::new(),
            instances: Vec::new(),
            scopes: Vec::new(),
            tasks: Vec::new(),
            run_queue: VecDeque::new(),
            delayed: Vec::new(),
            index: HashMap::new(),
            parked: IndexMap::new(),
            unit_scopes: Vec::new(),
            printed: Vec::new(),
            steps: 0,
            constraint_cache: HashMap::new(),
            constraint_task: None,
            unknown_annotations: Vec::new(),
        }
    }

    pub(crate) fn new_cell(&mut self, kind: CellKind, owner: Owner) -> CellId {
        let id = CellId(self.cells.len() as u32);
        let delayed = matches!(kind, CellKind::List { .. } | CellKind::Optional { .. });
        self.cells.push(Cell::new(kind, owner));
        if delayed {
            self.delayed.push(id);
        }
        id
    }

    pub(crate) fn cell(&self, id: CellId) -> &Cell {
        &self.cells[id.0 as usize]
    }

    pub(crate) fn cell_mut(&mut self, id: CellId) -> &mut Cell {
        &mut self.cells[id.0 as usize]
    }

    pub(crate) fn scope(&self, id: ScopeId) -> &Scope {
        &self.scopes[id.0 as usize]
    }

    pub(crate) fn unit_of(&self, scope: ScopeId) -> usize {
        self.scope(scope).unit
    }

    pub(crate) fn file_of(&self, scope: ScopeId) -> FileId {
        self.program.units[self.unit_of(scope)].file_id
    }

    /// Runs every loaded file's top level, then the scheduler, to the end.
    pub fn run(&mut self) -> Result<(), Diagnostic> {
        for unit in 0..self.program.units.len() {
            let stmts: Vec<&'a Stmt> = self.program.units[unit]
                .file
                .items
                .iter()
                .filter_map(|item| match item {
                    modelc_syntax::ast::Item::Stmt(s) => Some(s),
                    _ => None,
                })
                .collect();
            let scope = self.new_scope(&stmts, None, None, unit);
            self.unit_scopes.push(scope);
        }
        for unit in 0..self.program.units.len() {
            let scope = self.unit_scopes[unit];
            for item in &self.program.units[unit].file.items {
                match item {
                    modelc_syntax::ast::Item::Stmt(stmt) => {
                        self.spawn(TaskKind::Stmt(stmt), scope);
                    }
                    modelc_syntax::ast::Item::Relation(relation) => {
                        for annotation in &relation.annotations {
                            self.spawn(TaskKind::Annotation(annotation), scope);
                        }
                    }
                    _ => {}
                }
            }
        }
        loop {
            while let Some(task) = self.run_queue.pop_front() {
                self.steps += 1;
                if self.steps > MAX_STEPS {
                    return Err(Diagnostic::new(
                        &codes::INCOMPLETE_EXECUTION,
                        format!("the model did not finish within {MAX_STEPS} steps"),
                    )
                    .note("this usually means a loop that feeds itself, such as a `for` over a relation that adds to the same relation"));
                }
                self.run_task(task).map_err(|d| *d)?;
            }
            if !self.freeze_one() {
                break;
            }
        }
        Ok(())
    }

    /// Declares a block's variables in a new scope.
    pub(crate) fn new_scope(
        &mut self,
        stmts: &[&'a Stmt],
        parent: Option<ScopeId>,
        instance: Option<InstanceId>,
        unit: usize,
    ) -> ScopeId {
        let mut vars = IndexMap::new();
        for stmt in stmts {
            if let Stmt::Assign(assign) = stmt
                && assign.op == AssignOp::Set
                && let ExprKind::Var(path) = &assign.target.kind
                && let [name] = path.segments.as_slice()
                && !vars.contains_key(&name.name)
            {
                let cell = self.new_cell(CellKind::Variable, Owner::Variable(name.name.clone()));
                vars.insert(name.name.clone(), cell);
            }
        }
        let id = ScopeId(self.scopes.len() as u32);
        self.scopes.push(Scope { vars, parent, instance, unit });
        id
    }

    /// Emits a block: a scope for it and a task per statement.
    pub(crate) fn emit_block(
        &mut self,
        stmts: &'a [Stmt],
        parent: Option<ScopeId>,
        instance: Option<InstanceId>,
        unit: usize,
        bind: Option<(&'a Ident, Value)>,
    ) {
        let refs: Vec<&'a Stmt> = stmts.iter().collect();
        let scope = self.new_scope(&refs, parent, instance, unit);
        if let Some((var, value)) = bind {
            let cell = self.new_cell(CellKind::Variable, Owner::Variable(var.name.clone()));
            let c = self.cell_mut(cell);
            c.value = Some(value);
            self.scopes[scope.0 as usize].vars.insert(var.name.clone(), cell);
        }
        for stmt in stmts {
            self.spawn(TaskKind::Stmt(stmt), scope);
        }
    }

    pub(crate) fn spawn(&mut self, kind: TaskKind<'a>, scope: ScopeId) -> TaskId {
        let id = TaskId(self.tasks.len() as u32);
        self.tasks.push(Task::new(kind, scope));
        self.run_queue.push_back(id);
        id
    }

    fn run_task(&mut self, id: TaskId) -> Result<(), Box<Diagnostic>> {
        if self.tasks[id.0 as usize].done {
            return Ok(());
        }
        match self.execute(id) {
            Ok(()) => {
                self.finish_task(id);
                Ok(())
            }
            Err(Stop::Wait(cell)) => {
                if self.cell(cell).is_ready() {
                    self.run_queue.push_back(id);
                } else {
                    self.cell_mut(cell).waiters.push(id);
                }
                Ok(())
            }
            Err(Stop::Fail(diagnostic)) => Err(diagnostic),
            Err(Stop::Listen) => Ok(()),
        }
    }

    pub(crate) fn finish_task(&mut self, id: TaskId) {
        let task = &mut self.tasks[id.0 as usize];
        task.done = true;
        task.memo = HashMap::new();
        task.bindings = HashMap::new();
        let promises = std::mem::take(&mut task.promises);
        for cell in promises {
            let c = self.cell_mut(cell);
            c.providers = c.providers.saturating_sub(1);
        }
    }

    /// Takes a promise on `cell` for task `id` (once).
    pub(crate) fn promise(&mut self, id: TaskId, cell: CellId) {
        let task = &mut self.tasks[id.0 as usize];
        if !task.promises.contains(&cell) {
            task.promises.push(cell);
            self.cell_mut(cell).providers += 1;
        }
    }

    /// Wakes the tasks waiting for a cell that just completed.
    pub(crate) fn wake(&mut self, cell: CellId) {
        let waiters = std::mem::take(&mut self.cell_mut(cell).waiters);
        self.run_queue.extend(waiters);
    }

    /// Freezes one relation (spec §1.3 steps 2–5). Returns whether anything was frozen.
    fn freeze_one(&mut self) -> bool {
        let open: Vec<CellId> = self.delayed.iter().copied().filter(|c| !self.cell(*c).frozen).collect();
        self.delayed = open.clone();
        if open.is_empty() {
            return false;
        }
        let waited_on = |e: &Self, c: CellId| e.cell(c).waiters.iter().any(|t| !e.tasks[t.0 as usize].done);
        // Something waits for it, and nothing promised to add to it.
        if let Some(cell) = open.iter().copied().find(|c| {
            let cell = self.cell(*c);
            cell.providers == 0 && cell.lower_met() && waited_on(self, *c)
        }) {
            self.freeze(cell);
            return true;
        }
        // A wait cycle: something waits for it, though a promise is open.
        if let Some(cell) = open.iter().copied().find(|c| self.cell(*c).lower_met() && waited_on(self, *c)) {
            self.freeze(cell);
            return true;
        }
        // Nothing waits: freeze all that can be.
        let mut any = false;
        for cell in open.into_iter().rev() {
            if self.cell(cell).lower_met() {
                self.freeze(cell);
                any = true;
            }
        }
        any
    }

    pub(crate) fn freeze(&mut self, cell: CellId) {
        let c = self.cell_mut(cell);
        if c.frozen {
            return;
        }
        c.frozen = true;
        let listeners = std::mem::take(&mut c.listeners);
        // A loop over the relation has seen every value now: it is done.
        for listener in listeners {
            self.finish_task(listener);
        }
        self.wake(cell);
    }

    /// A diagnostic pointing at `span` in the file of `scope`.
    pub(crate) fn fail(&self, scope: ScopeId, span: Span, diagnostic: Diagnostic, label: &str) -> Stop {
        Stop::Fail(Box::new(diagnostic.primary(self.file_of(scope), span, label)))
    }

    /// How messages name an instance: `__config__::A (instantiated at main.cf:5)`.
    pub(crate) fn describe(&self, instance: InstanceId) -> String {
        let i = &self.instances[instance.0 as usize];
        format!("{} (instantiated at {}:{})", i.entity, i.file_name, i.line)
    }
}
