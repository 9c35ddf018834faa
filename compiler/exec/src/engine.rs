//! The scheduler (spec execution §1.3): tasks run from a FIFO queue; a task that needs a value
//! that is not there parks on its cell and runs again when the cell completes. When nothing can
//! run, one relation is frozen (declared complete) and the loop goes on.

use std::collections::{HashMap, VecDeque};

use rustc_hash::FxHashMap;

use indexmap::IndexMap;
use modelc_diagnostics::{Diagnostic, FileId, Span, codes};
use modelc_sema::hir::{Block, CompFor, EagerTarget, Expr, Stmt};
use modelc_value::{InstanceId, Value};

use crate::cells::{Cell, CellId, CellKind, Instance, Owner, Scope, ScopeId, TaskId};
use crate::chunked::Chunked;
use crate::program::Program;

/// What a task does.
pub(crate) enum TaskKind<'a> {
    Stmt(&'a Stmt),
    /// An `implement … when` condition for one instance.
    Condition {
        instance: InstanceId,
        /// An `implement` statement with a condition.
        statement: &'a crate::program::ImplementDef<'a>,
    },
    /// The body of a `for` over a relation, run for each value as it arrives.
    ForEach {
        cell: CellId,
        /// The loop variable's slot in the body's block.
        var: u32,
        body: &'a Block,
        seen: u32,
    },
    /// A relation copied into another (`a.xs = b.ys`), value by value as they arrive; it keeps
    /// a promise on the target until the source is complete (spec §1.6).
    Forward {
        from: CellId,
        to: CellId,
        seen: u32,
        span: Span,
    },
    /// Takes an eager promise for `owner` on the relation `target` names, once its object is
    /// known (spec §1.6: the promise is taken "as soon as that variable exists").
    EagerPromise {
        owner: TaskId,
        target: &'a EagerTarget,
    },
    /// A relation annotation: a value that must be known.
    Annotation(&'a Expr),
    /// A constructor argument whose value was not known when the instance was made (it may
    /// read the constructor's own target, `a = T(id=1, v="{{a.id}}")`): it is assigned when it
    /// is. The task holds a promise on the attribute until then.
    SetLater(Box<SetLater<'a>>),
    /// Typedef constraint evaluations (never scheduled).
    Constraint,
}

/// A constructor argument assigned once its value is known (see `TaskKind::SetLater`).
pub(crate) struct SetLater<'a> {
    pub instance: InstanceId,
    pub position: u32,
    pub value: &'a Expr,
    pub span: Span,
}

/// A task: 32 bytes, as there are millions. What only some tasks need lives in
/// `Engine::task_states`.
pub(crate) struct Task<'a> {
    pub kind: TaskKind<'a>,
    pub scope: ScopeId,
    pub done: bool,
    /// It took its eager promises (an `if` or `for` does so once, on its first run).
    pub eager_taken: bool,
    /// Its id may be held somewhere (it stopped before the end, listens, or handed something
    /// over): its slot is never given to another task. A task that runs to the end at once,
    /// most of them, gives its slot back when it finishes.
    pub pinned: bool,
}

#[derive(Default)]
pub(crate) struct TaskState {
    /// Cells this task promised to add to (released when it finishes).
    pub promises: Vec<CellId>,
    /// What it did before it stopped; most tasks with a state (loops that listen) have none.
    pub effects: Option<Box<Effects>>,
}

#[derive(Default)]
pub(crate) struct Effects {
    /// Results of sub-expressions with effects (constructors, plugin calls), so that running the
    /// task again after a wait does not repeat them. Keyed by expression and scope: one
    /// expression runs once per comprehension element.
    pub memo: FxHashMap<(*const Expr, ScopeId), Value>,
    /// The scopes of comprehension elements, kept so that a re-run binds the same scopes (and
    /// finds its memoised effects): `(comprehension clause, parent scope, element)` → scope.
    pub bindings: FxHashMap<(*const CompFor, ScopeId, usize), ScopeId>,
}

impl TaskState {
    pub(crate) fn effects(&mut self) -> &mut Effects {
        self.effects.get_or_insert_with(Box::default)
    }
}

impl<'a> Task<'a> {
    pub(crate) fn new(kind: TaskKind<'a>, scope: ScopeId) -> Task<'a> {
        Task { kind, scope, done: false, eager_taken: false, pinned: false }
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

/// Default cap on scheduler work (task runs): a safety net for loops that feed themselves (a
/// `for` over a relation that adds to the same relation), which would otherwise run until memory
/// runs out. A catalogue of 100,000 networks takes 2 million steps; `MODELC_MAX_STEPS` in the
/// model's environment raises the cap, as `INMANTA_MAX_ITERATIONS` does for the reference.
/// Runaway recursion is caught earlier, by the construction depth cap.
pub(crate) const MAX_STEPS: usize = 20_000_000;

/// What a compile may read from outside the model: environment variables, the clock, the
/// modules' files and the project's stored passwords, passed in so that execution itself stays
/// deterministic and testable.
#[derive(Debug, Clone, Default)]
pub struct World {
    pub env: HashMap<String, String>,
    pub now: i64,
    pub module_files: crate::module_files::ModuleFiles,
    pub passwords: Passwords,
    /// The facts earlier deploys learnt, for `std::getfact` (shared: the language server and
    /// watch mode compile again and again with the same ones).
    pub facts: std::sync::Arc<crate::facts::KnownFacts>,
    /// When given, execution reports its counts and the time and memory of each of its phases
    /// in `Outcome::profile`.
    pub profile: Option<Probe>,
    /// Keep the constructor calls that returned an existing instance (`InstanceGraph::merges`):
    /// partial compiles check them; others need not hold one per call.
    pub record_merges: bool,
    /// Set by someone else to stop the run (the language server, when the model changed
    /// under it): execution polls it every few hundred steps and stops with `Outcome::cancelled`.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Runs the plugins modules write in Python; without it, calling one is an error.
    pub foreign: Option<std::sync::Arc<dyn crate::ForeignPlugins>>,
}

impl World {
    /// The Inmanta environment the model is compiled for, as the reference reads it
    /// (`INMANTA_CONFIG_ENVIRONMENT`): what `std::environment()` and Python plugins see.
    pub fn environment_id(&self) -> Option<String> {
        self.env.get("INMANTA_CONFIG_ENVIRONMENT").cloned()
    }

    /// Whether someone set [`World::cancel`].
    pub fn is_cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|flag| flag.load(std::sync::atomic::Ordering::Relaxed))
    }
}

/// What profiling reads: a monotonic clock, and the process's resident memory in bytes, now and
/// at its most (`None` where the platform does not say).
#[derive(Debug, Clone, Copy)]
pub struct Probe {
    pub clock: fn() -> std::time::Instant,
    pub resident: fn() -> Option<u64>,
    /// The most it has held resident so far.
    pub peak: fn() -> Option<u64>,
}

/// Why a run stopped before the end.
pub(crate) enum Halt {
    Error(Box<Diagnostic>),
    /// `World::cancel` was set.
    Cancelled,
}

/// How often (in scheduler steps) execution looks at `World::cancel`: a step takes about a
/// microsecond, so a cancelled run stops well within a millisecond.
const CANCEL_POLL: usize = 256;

/// The passwords `std::generate_password` keeps, by id.
#[derive(Debug, Clone, Default)]
pub struct Passwords {
    /// Passwords earlier compiles generated (the project's `.modelc/passwords.json`).
    pub stored: indexmap::IndexMap<String, String>,
    /// Where new passwords come from: random alphanumerics of the given length. `None` when
    /// nothing generated will be kept (`check`, the language server): a placeholder is used.
    pub random: Option<fn(usize) -> String>,
}

pub(crate) struct Engine<'a> {
    pub(crate) program: &'a Program<'a>,
    pub(crate) world: World,
    pub(crate) cells: Chunked<Cell<'a>>,
    pub(crate) instances: Chunked<Instance>,
    pub(crate) scopes: Chunked<Scope>,
    pub(crate) plans: &'a crate::plans::Plans<'a>,
    /// `(entity, ancestor)` → whether it is a subtype (a cache: relation values are checked
    /// against their target type on every assignment).
    pub(crate) subtypes: std::cell::RefCell<FxHashMap<(&'a str, &'a str), bool>>,
    /// A statement that handed its promises to another task (a `for` to its loop): the heir.
    pub(crate) heirs: FxHashMap<TaskId, TaskId>,
    /// Warnings of plugins (W0105), reported with the outcome whatever it is.
    pub(crate) warnings: Vec<Diagnostic>,
    /// How many unknown values index keys have been given (each gets its own key).
    pub(crate) unknown_keys: std::cell::Cell<u64>,
    /// Constructor calls that returned an existing instance (an index match): the instance,
    /// the constructor's scope and span. Partial compiles check who else makes a set's members.
    pub(crate) merges: Vec<(InstanceId, ScopeId, Span)>,
    /// Every `requires` edge added, with the statement that added it (`InstanceGraph::requires_sites`).
    pub(crate) requires_sites: Vec<crate::graph::RequiresSite>,
    /// Membership sets of long list cells (see `Engine::list_contains`).
    pub(crate) members: FxHashMap<CellId, rustc_hash::FxHashSet<InstanceId>>,
    /// Applied implementations numbered 64 and up, per instance (see `Instance::applied`).
    pub(crate) applied_beyond_64: rustc_hash::FxHashSet<(InstanceId, u32)>,
    /// Passwords generated in this compile (see `World::passwords`).
    pub(crate) new_passwords: indexmap::IndexMap<String, String>,
    pub(crate) tasks: Chunked<Task<'a>>,
    pub(crate) run_queue: VecDeque<TaskId>,
    /// Relation cells that may be complete (no open promises, lower bound met), in the order
    /// they became so: the order in which they are considered for freezing (spec §1.3). A new
    /// instance's relations enter at construction, in attribute order.
    pub(crate) wait_queue: VecDeque<CellId>,
    /// Cells taken from the wait queue while nothing waited for them: frozen all at once when
    /// nothing else can be (step 5), or put back when something starts waiting (step 3).
    pub(crate) zero_waiters: Vec<CellId>,
    /// Open relation cells some task has waited for, in creation order: where the wait-cycle
    /// breaker (step 4) looks.
    pub(crate) waited: std::collections::BTreeSet<CellId>,
    /// `(entity, key)` → instance, for every index of every entity.
    pub(crate) index: crate::index::InstanceIndex<'a>,
    /// Lookups waiting for an instance: `(entity, key)` → the lookup's cell.
    pub(crate) parked: IndexMap<(&'a str, String), CellId>,
    /// What each parked index lookup looks for (`Owner::Lookup` indexes it).
    pub(crate) lookups: Vec<crate::cells::LookupOwner<'a>>,
    /// Promises and memoised results of the running task, kept only if it stops early.
    pending_promises: Vec<CellId>,
    pending_memo: Vec<((*const Expr, ScopeId), Value)>,
    /// The top-level scope of each unit.
    pub(crate) unit_scopes: Vec<ScopeId>,
    pub(crate) printed: Vec<String>,
    pub(crate) steps: usize,
    /// The state of the tasks that have some (memoised effects, bindings, promises).
    pub(crate) task_states: FxHashMap<TaskId, TaskState>,
    /// How often the scheduler looked past the wait queue, and how many set-aside relations it
    /// checked doing so (for profiles).
    freeze_rounds: usize,
    set_aside_scanned: usize,
    /// Slots of finished tasks no one refers to, given to the next tasks made.
    free_tasks: Vec<TaskId>,
    /// Per slot, when its task was made (`created_tasks` then): the creation order, which
    /// slots no longer give once they are reused.
    task_order: Chunked<u32>,
    created_tasks: usize,
    /// Tasks finished so far, and the most that were unfinished at once (for profiles).
    finished_tasks: usize,
    live_tasks_peak: usize,
    pub(crate) constraint_cache: crate::validate::ConstraintCache<'a>,
    pub(crate) constraint_task: Option<TaskId>,
    /// Relation annotations whose value is unknown: an error at the end (spec §1.9).
    pub(crate) unknown_annotations: Vec<(ScopeId, &'a Expr)>,
    /// The tasks waiting for or listening to a cell: few cells have any, so they live here
    /// rather than in every cell.
    waits: FxHashMap<CellId, crate::cells::Waits>,
    /// Per relation cell with open promises, how many statements promised to add to it and
    /// have not finished (absent: none).
    pub(crate) providers: FxHashMap<CellId, u32>,
    /// The names variable cells are owned by (`Cell::owner`), each once; `None` is the `self`
    /// of a typedef constraint.
    variable_names: Vec<Option<&'a modelc_sema::hir::Name>>,
    variable_numbers: FxHashMap<*const modelc_sema::hir::Name, u32>,
    /// Where values were set (`Cell::site`), each place once.
    sites: Vec<(FileId, Span)>,
    site_numbers: FxHashMap<(FileId, Span), u32>,
}

impl<'a> Engine<'a> {
    pub(crate) fn new(program: &'a Program<'a>, plans: &'a crate::plans::Plans<'a>, world: World) -> Engine<'a> {
        Engine {
            program,
            world,
            cells: Chunked::default(),
            instances: Chunked::default(),
            scopes: Chunked::default(),
            plans,
            applied_beyond_64: rustc_hash::FxHashSet::default(),
            new_passwords: indexmap::IndexMap::new(),
            members: FxHashMap::default(),
            unknown_keys: std::cell::Cell::new(0),
            merges: Vec::new(),
            requires_sites: Vec::new(),
            warnings: Vec::new(),
            heirs: FxHashMap::default(),
            subtypes: std::cell::RefCell::default(),
            tasks: Chunked::default(),
            run_queue: VecDeque::new(),
            wait_queue: VecDeque::new(),
            zero_waiters: Vec::new(),
            waited: std::collections::BTreeSet::new(),
            index: crate::index::InstanceIndex::default(),
            parked: IndexMap::new(),
            lookups: Vec::new(),
            pending_promises: Vec::new(),
            pending_memo: Vec::new(),
            unit_scopes: Vec::new(),
            printed: Vec::new(),
            steps: 0,
            task_states: FxHashMap::default(),
            freeze_rounds: 0,
            set_aside_scanned: 0,
            free_tasks: Vec::new(),
            task_order: Chunked::default(),
            created_tasks: 0,
            finished_tasks: 0,
            live_tasks_peak: 0,
            constraint_cache: FxHashMap::default(),
            constraint_task: None,
            unknown_annotations: Vec::new(),
            waits: FxHashMap::default(),
            providers: FxHashMap::default(),
            variable_names: vec![None],
            variable_numbers: FxHashMap::default(),
            sites: Vec::new(),
            site_numbers: FxHashMap::default(),
        }
    }

    pub(crate) fn new_cell(&mut self, kind: &'a CellKind<'a>, owner: Owner<'a>) -> CellId {
        let id = CellId(self.cells.len() as u32);
        let owner = match owner {
            Owner::Variable(None) => 0,
            Owner::Variable(Some(name)) => {
                let names = &mut self.variable_names;
                *self.variable_numbers.entry(std::ptr::from_ref(name)).or_insert_with(|| {
                    names.push(Some(name));
                    names.len() as u32 - 1
                })
            }
            Owner::Attribute { instance, .. } => instance.0,
            Owner::Lookup(n) => n,
        };
        self.cells.push(Cell::new(kind, owner));
        self.maybe_queue(id);
        id
    }

    /// The state of task `id`, made on first use.
    pub(crate) fn task_state(&mut self, id: TaskId) -> &mut TaskState {
        self.task_states.entry(id).or_default()
    }

    /// The result task `id` memoised for an expression in a scope.
    pub(crate) fn memo(&self, id: TaskId, key: (*const Expr, ScopeId)) -> Option<&Value> {
        self.task_states.get(&id)?.effects.as_ref()?.memo.get(&key)
    }

    /// The scope task `id` bound for a comprehension element.
    pub(crate) fn binding(&self, id: TaskId, key: &(*const CompFor, ScopeId, usize)) -> Option<ScopeId> {
        self.task_states.get(&id)?.effects.as_ref()?.bindings.get(key).copied()
    }

    /// The sizes of the run, for profiles.
    pub(crate) fn counts(&self) -> String {
        format!(
            "execution: {} instances, {} cells, {} scopes, {} tasks (at most {} unfinished), {} steps, {} freeze rounds (scanning {} set-aside relations)",
            self.instances.len(),
            self.cells.len(),
            self.scopes.len(),
            self.created_tasks,
            self.live_tasks_peak,
            self.steps,
            self.freeze_rounds,
            self.set_aside_scanned
        )
    }

    /// Frees what only running needs (tasks, scopes, queues, indexes, waiters), once the run
    /// and its checks are over: cells and instances stay.
    pub(crate) fn release_run_state(&mut self) {
        self.tasks = Chunked::default();
        self.task_order = Chunked::default();
        self.free_tasks = Vec::new();
        self.task_states = FxHashMap::default();
        self.scopes = Chunked::default();
        self.run_queue = VecDeque::new();
        self.wait_queue = VecDeque::new();
        self.zero_waiters = Vec::new();
        self.waited = std::collections::BTreeSet::new();
        self.index = crate::index::InstanceIndex::default();
        self.members = FxHashMap::default();
        self.heirs = FxHashMap::default();
        self.waits = FxHashMap::default();
        self.providers = FxHashMap::default();
        self.applied_beyond_64 = rustc_hash::FxHashSet::default();
        self.site_numbers = FxHashMap::default();
        self.sites = Vec::new();
        self.constraint_cache = FxHashMap::default();
    }

    /// Where a cell belongs (see `Cell::owner`).
    pub(crate) fn owner_of(&self, cell: CellId) -> Owner<'a> {
        let c = self.cell(cell);
        match c.kind {
            CellKind::Variable => Owner::Variable(self.variable_names[c.owner as usize]),
            CellKind::Lookup => Owner::Lookup(c.owner),
            _ => {
                let instance = InstanceId(c.owner);
                Owner::Attribute { instance, position: cell.0 - self.instances[c.owner as usize].first.0 }
            }
        }
    }

    /// Records where a cell's value was set.
    pub(crate) fn set_site(&mut self, cell: CellId, file: FileId, span: Span) {
        let sites = &mut self.sites;
        let number = *self.site_numbers.entry((file, span)).or_insert_with(|| {
            sites.push((file, span));
            sites.len() as u32 - 1
        });
        self.cell_mut(cell).set_site(number + 1);
    }

    /// Where a cell's value was set, if it was.
    pub(crate) fn site_of(&self, cell: CellId) -> Option<(FileId, Span)> {
        let site = self.cell(cell).site();
        (site > 0).then(|| self.sites[site as usize - 1])
    }

    pub(crate) fn waiters(&self, cell: CellId) -> &[TaskId] {
        self.waits.get(&cell).map_or(&[], |w| &w.waiters)
    }

    pub(crate) fn listeners(&self, cell: CellId) -> &[TaskId] {
        self.waits.get(&cell).map_or(&[], |w| &w.listeners)
    }

    pub(crate) fn waits_mut(&mut self, cell: CellId) -> &mut crate::cells::Waits {
        self.waits.entry(cell).or_default()
    }

    /// Puts a relation cell in the wait queue when it may be complete: not frozen, no open
    /// promises, its lower bound met. It enters once; the queue drops it again when a promise
    /// turns out to be open, and it comes back when that promise is kept.
    pub(crate) fn maybe_queue(&mut self, cell: CellId) {
        let c = &self.cells[cell.0 as usize];
        if c.is_delayed() && !c.frozen() && !c.queued() && c.lower_met() && !self.providers.contains_key(&cell) {
            self.cells[cell.0 as usize].set_queued(true);
            self.wait_queue.push_back(cell);
        }
    }

    pub(crate) fn cell(&self, id: CellId) -> &Cell<'a> {
        &self.cells[id.0 as usize]
    }

    pub(crate) fn cell_mut(&mut self, id: CellId) -> &mut Cell<'a> {
        &mut self.cells[id.0 as usize]
    }

    pub(crate) fn scope(&self, id: ScopeId) -> &Scope {
        &self.scopes[id.0 as usize]
    }

    pub(crate) fn unit_of(&self, scope: ScopeId) -> usize {
        self.scope(scope).unit as usize
    }

    /// The file an instance was constructed in.
    pub(crate) fn instance_file(&self, instance: &Instance) -> FileId {
        self.program.units[instance.unit as usize].file_id
    }

    pub(crate) fn file_of(&self, scope: ScopeId) -> FileId {
        self.program.units[self.unit_of(scope)].file_id
    }

    /// Runs every loaded file's top level, then the scheduler, to the end.
    pub(crate) fn run(&mut self) -> Result<(), Halt> {
        for unit in 0..self.program.units.len() {
            let scope = self.new_scope(&self.program.units[unit].hir.top_level, None, None, unit);
            self.unit_scopes.push(scope);
        }
        self.check_declared_defaults()?;
        for unit in 0..self.program.units.len() {
            let scope = self.unit_scopes[unit];
            let hir = self.program.units[unit].hir;
            // Annotations run where they are written among the statements.
            let mut annotations = hir.annotations.iter().peekable();
            for (n, stmt) in hir.top_level.stmts.iter().enumerate() {
                while let Some((_, annotation)) = annotations.next_if(|(before, _)| *before as usize <= n) {
                    self.spawn(TaskKind::Annotation(annotation), scope);
                }
                self.spawn(TaskKind::Stmt(stmt), scope);
            }
            for (_, annotation) in annotations {
                self.spawn(TaskKind::Annotation(annotation), scope);
            }
        }
        let max_steps = self.world.env.get("MODELC_MAX_STEPS").and_then(|v| v.parse().ok()).unwrap_or(MAX_STEPS);
        loop {
            while let Some(task) = self.run_queue.pop_front() {
                self.steps += 1;
                if self.steps.is_multiple_of(CANCEL_POLL) && self.is_cancelled() {
                    return Err(Halt::Cancelled);
                }
                if self.steps > max_steps {
                    return Err(Halt::Error(Box::new(Diagnostic::new(
                        &codes::INCOMPLETE_EXECUTION,
                        format!("the model did not finish within {max_steps} steps"),
                    )
                    .note("this usually means a loop that feeds itself, such as a `for` over a relation that adds to the same relation")
                    .help("if the model is simply very large, raise the cap with the environment variable MODELC_MAX_STEPS"))));
                }
                self.run_task(task).map_err(Halt::Error)?;
            }
            if !self.freeze_one() {
                break;
            }
        }
        Ok(())
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.world.is_cancelled()
    }

    /// Declares a block's variables in a new scope: a cell per slot.
    pub(crate) fn new_scope(
        &mut self,
        block: &'a Block,
        parent: Option<ScopeId>,
        instance: Option<InstanceId>,
        unit: usize,
    ) -> ScopeId {
        let id = ScopeId(self.scopes.len() as u32);
        let first_var = CellId(self.cells.len() as u32);
        for name in &block.locals {
            self.new_cell(&CellKind::Variable, Owner::Variable(Some(name)));
        }
        let depth = match (instance, parent) {
            (Some(instance), _) => self.instances[instance.0 as usize].depth,
            (None, Some(parent)) => self.scope(parent).depth,
            (None, None) => 0,
        };
        let count = block.locals.len() as u32;
        self.scopes.push(match (parent, instance) {
            // An implementation body, in its instance's scope (one scope for the two levels).
            (Some(parent), Some(instance)) => {
                Scope::implementation(first_var, count, parent, instance, unit as u32, depth)
            }
            _ => Scope::new(first_var, count, parent, instance, unit as u32, depth),
        });
        id
    }

    /// The variable `name` of a scope (not its parents), for what looks variables up by name
    /// at run time (templates).
    pub(crate) fn scope_var(&self, scope: ScopeId, name: &str) -> Option<CellId> {
        let s = self.scope(scope);
        (s.first_var.0..s.first_var.0 + s.var_count()).map(CellId).find(|cell| match self.owner_of(*cell) {
            Owner::Variable(Some(local)) => local.text == name,
            Owner::Variable(None) => name == "self",
            _ => false,
        })
    }

    /// Emits a block: a scope for it and a task per statement. `bind` sets a slot (a loop's
    /// variable) to a value.
    pub(crate) fn emit_block(
        &mut self,
        block: &'a Block,
        parent: Option<ScopeId>,
        instance: Option<InstanceId>,
        unit: usize,
        bind: Option<(u32, Value)>,
    ) {
        let scope = self.new_scope(block, parent, instance, unit);
        if let Some((slot, value)) = bind {
            if let Value::Instance(item) = &value {
                // Code that runs for an instance is one level deeper than it.
                let item_depth = self.instances[item.0 as usize].depth + 1;
                let s = &mut self.scopes[scope.0 as usize];
                s.depth = s.depth.max(item_depth);
            }
            let cell = CellId(self.scope(scope).first_var.0 + slot);
            // The loop variable is the block's: `i = 2` in the body sets it again.
            self.cell_mut(cell).value = Some(value);
        }
        for stmt in &block.stmts {
            self.spawn(TaskKind::Stmt(stmt), scope);
        }
    }

    pub(crate) fn spawn(&mut self, kind: TaskKind<'a>, scope: ScopeId) -> TaskId {
        let id = self.create_task(kind, scope);
        self.run_queue.push_back(id);
        id
    }

    /// A task that is not queued yet (a listener registers itself).
    pub(crate) fn create_task(&mut self, kind: TaskKind<'a>, scope: ScopeId) -> TaskId {
        let order = self.created_tasks as u32;
        self.created_tasks += 1;
        self.live_tasks_peak = self.live_tasks_peak.max(self.created_tasks - self.finished_tasks);
        if let Some(id) = self.free_tasks.pop() {
            self.tasks[id.0 as usize] = Task::new(kind, scope);
            self.task_order[id.0 as usize] = order;
            return id;
        }
        let id = TaskId(self.tasks.len() as u32);
        self.tasks.push(Task::new(kind, scope));
        self.task_order.push(order);
        id
    }

    /// Task `id`'s id is (or may be) kept somewhere: its slot stays its own.
    pub(crate) fn pin(&mut self, id: TaskId) {
        self.tasks[id.0 as usize].pinned = true;
    }

    /// When a task was made, relative to the others.
    pub(crate) fn task_order(&self, id: TaskId) -> u32 {
        self.task_order[id.0 as usize]
    }

    fn run_task(&mut self, id: TaskId) -> Result<(), Box<Diagnostic>> {
        if self.tasks[id.0 as usize].done {
            return Ok(());
        }
        self.pending_memo.clear();
        self.pending_promises.clear();
        match self.execute(id) {
            Ok(()) => {
                self.finish_task(id);
                Ok(())
            }
            Err(Stop::Wait(cell)) => {
                self.pin(id);
                self.commit_pending(id);
                if self.cell(cell).is_ready() {
                    self.run_queue.push_back(id);
                } else {
                    self.waits_mut(cell).waiters.push(id);
                    if self.cell(cell).is_delayed() {
                        self.waited.insert(cell);
                    }
                }
                Ok(())
            }
            Err(Stop::Fail(diagnostic)) => Err(diagnostic),
            Err(Stop::Listen) => {
                self.pin(id);
                self.commit_pending(id);
                Ok(())
            }
        }
    }

    /// A task that stopped before the end keeps what this run did: its promises now count
    /// against freezing, and its memoised effects are not repeated when it runs again. (A
    /// task that runs to the end needs neither, which spares most tasks any allocation.)
    fn commit_pending(&mut self, id: TaskId) {
        let promises = std::mem::take(&mut self.pending_promises);
        let memo = std::mem::take(&mut self.pending_memo);
        if promises.is_empty() && memo.is_empty() {
            return;
        }
        for cell in promises {
            self.hold_promise(id, cell);
        }
        if !memo.is_empty() {
            self.task_state(id).effects().memo.extend(memo);
        }
    }

    /// Records a promise of task `id` on `cell`, counted once.
    pub(crate) fn hold_promise(&mut self, id: TaskId, cell: CellId) {
        let state = self.task_state(id);
        if !state.promises.contains(&cell) {
            state.promises.push(cell);
            *self.providers.entry(cell).or_default() += 1;
        }
    }

    /// A promise on `cell` is kept (or handed over): one provider fewer.
    pub(crate) fn release_provider(&mut self, cell: CellId) {
        if let Some(count) = self.providers.get_mut(&cell) {
            *count -= 1;
            if *count == 0 {
                self.providers.remove(&cell);
            }
        }
    }

    /// Moves the promises of task `from` (held and pending) to task `to`.
    pub(crate) fn transfer_promises(&mut self, from: TaskId, to: TaskId) {
        self.pin(from);
        self.pin(to);
        self.heirs.insert(from, to);
        let held = self.task_states.get_mut(&from).map(|s| std::mem::take(&mut s.promises)).unwrap_or_default();
        for cell in held {
            // Already counted: the holder changes, the count does not.
            self.task_state(to).promises.push(cell);
        }
        for cell in std::mem::take(&mut self.pending_promises) {
            self.hold_promise(to, cell);
        }
    }

    /// Remembers the result of an effectful sub-expression for the running task.
    /// Gives task `to` the effects task `from` has had so far (memoised constructors and
    /// plugin calls, comprehension scopes): `to` evaluates again what `from` started, and must
    /// not build a second instance of what `from` built.
    pub(crate) fn hand_over_effects(&mut self, from: TaskId, to: TaskId) {
        self.pin(from);
        self.pin(to);
        let mut memo: Vec<((*const Expr, ScopeId), Value)> = self.pending_memo.clone();
        let mut bindings = Vec::new();
        if let Some(effects) = self.task_states.get(&from).and_then(|state| state.effects.as_ref()) {
            memo.extend(effects.memo.iter().map(|(k, v)| (*k, v.clone())));
            bindings.extend(effects.bindings.iter().map(|(k, v)| (*k, *v)));
        }
        if memo.is_empty() && bindings.is_empty() {
            return;
        }
        let state = self.task_state(to);
        let effects = state.effects();
        effects.memo.extend(memo);
        effects.bindings.extend(bindings);
    }

    pub(crate) fn memoise(&mut self, key: (*const Expr, ScopeId), value: Value) {
        self.pending_memo.push((key, value));
    }

    pub(crate) fn finish_task(&mut self, id: TaskId) {
        let task = &mut self.tasks[id.0 as usize];
        task.done = true;
        if !task.pinned {
            self.free_tasks.push(id);
        }
        self.finished_tasks += 1;
        let Some(state) = self.task_states.remove(&id) else { return };
        for cell in state.promises {
            self.release_provider(cell);
            self.maybe_queue(cell);
        }
    }

    /// Takes a promise on `cell` for task `id` (once).
    pub(crate) fn promise(&mut self, id: TaskId, cell: CellId) {
        let held = self.task_states.get(&id).is_some_and(|s| s.promises.contains(&cell));
        if !held && !self.pending_promises.contains(&cell) {
            self.pending_promises.push(cell);
        }
    }

    /// Wakes the tasks waiting for a cell that just completed.
    pub(crate) fn wake(&mut self, cell: CellId) {
        if let Some(waits) = self.waits.get_mut(&cell) {
            let waiters = std::mem::take(&mut waits.waiters);
            if waits.listeners.is_empty() {
                self.waits.remove(&cell);
            }
            self.run_queue.extend(waiters);
        }
    }

    /// Freezes one relation (spec §1.3 steps 2–5), or, when nothing waits for any, every
    /// relation that can be. Returns whether anything was frozen.
    fn freeze_one(&mut self) -> bool {
        // Step 2: the first queued relation that something waits for.
        if self.freeze_from_queue() {
            return true;
        }
        // Step 3: relations set aside with no waiters that have gained some since.
        self.freeze_rounds += 1;
        self.set_aside_scanned += self.zero_waiters.len();
        // In place: the set-aside relations can be millions (every untouched relation).
        let mut idle = std::mem::take(&mut self.zero_waiters);
        let mut gained = Vec::new();
        idle.retain(|c| {
            let waited = self.waited_on(*c);
            if waited {
                gained.push(*c);
            }
            !waited
        });
        self.zero_waiters = idle;
        for cell in gained {
            self.cells[cell.0 as usize].set_queued(true);
            self.wait_queue.push_back(cell);
        }
        if self.freeze_from_queue() {
            return true;
        }
        // Step 4: a wait cycle. Something waits for the relation, but a promise to add to it
        // is open (an `if` or `for` that has not decided yet): freeze the first such one.
        self.waited.retain(|c| !self.cells[c.0 as usize].frozen());
        // The reference scans the waiting statements in creation order and takes the first
        // relation they need: order candidates by their earliest live waiter.
        let cycle = self
            .waited
            .iter()
            .copied()
            .filter(|c| self.providers.contains_key(c))
            .filter_map(|c| {
                let first = self
                    .waiters(c)
                    .iter()
                    .filter(|t| !self.tasks[t.0 as usize].done)
                    .map(|t| self.task_order(*t))
                    .min()?;
                Some((first, c))
            })
            .min()
            .map(|(_, c)| c);
        if let Some(cell) = cycle {
            self.freeze(cell);
            return true;
        }
        // Step 5: nothing waits: freeze every relation set aside, the last first.
        let idle = std::mem::take(&mut self.zero_waiters);
        let mut any = false;
        for cell in idle.into_iter().rev() {
            if !self.cells[cell.0 as usize].frozen() {
                self.freeze(cell);
                any = true;
            }
        }
        any
    }

    /// Pops the wait queue until a relation can be frozen, and freezes it (spec §1.3 step 2).
    fn freeze_from_queue(&mut self) -> bool {
        while let Some(cell) = self.wait_queue.pop_front() {
            // Every relation passes through the queue (millions on large models), most of
            // them on to `zero_waiters`: give back what the queue no longer holds as it drains.
            let (len, capacity) = (self.wait_queue.len(), self.wait_queue.capacity());
            if capacity >= 1 << 16 && len < capacity / 4 {
                self.wait_queue.shrink_to(len * 2);
            }
            let c = &mut self.cells[cell.0 as usize];
            c.set_queued(false);
            if c.frozen() {
                continue;
            }
            if self.providers.contains_key(&cell) {
                // It comes back when the promise is kept (`maybe_queue`).
                continue;
            }
            if !self.waited_on(cell) {
                self.zero_waiters.push(cell);
                continue;
            }
            self.freeze(cell);
            return true;
        }
        false
    }

    /// Whether an unfinished task waits for the cell (gradual listeners do not count).
    fn waited_on(&self, cell: CellId) -> bool {
        self.waiters(cell).iter().any(|t| !self.tasks[t.0 as usize].done)
    }

    pub(crate) fn freeze(&mut self, cell: CellId) {
        let c = self.cell_mut(cell);
        if c.frozen() {
            return;
        }
        c.set_frozen();
        let listeners = self.waits.get_mut(&cell).map(|w| std::mem::take(&mut w.listeners)).unwrap_or_default();
        self.waited.remove(&cell);
        // A loop over the relation runs once more: it catches up on values it has not seen
        // yet, and finishes (releasing its promises) because the relation is complete.
        self.run_queue.extend(listeners);
        self.wake(cell);
    }

    /// A diagnostic pointing at `span` in the file of `scope`.
    /// Every attribute default must fit its type, typedef constraint included, when the entity
    /// is declared, not when an instance is made: the reference rejects a model whose default
    /// breaks its type even if the entity is never constructed. (The checker decides the
    /// constraints it can evaluate statically; this decides the rest, plugin calls included.)
    fn check_declared_defaults(&mut self) -> Result<(), Halt> {
        let index = self.program.index;
        for (id, (fqn, _)) in index.entities.iter().enumerate() {
            for (name, default) in self.program.own_defaults(id) {
                let Some(default) = default else { continue };
                let Some(def) = index.attribute(fqn, name) else { continue };
                let modelc_sema::index::AttrKind::Value { ty, .. } = &def.kind else { continue };
                let problem = match self.check_type(ty, &default.0) {
                    Ok(()) => continue,
                    Err(
                        modelc_sema::validate::Misfit::Invalid(message)
                        | modelc_sema::validate::Misfit::Violated { message, .. },
                    ) => Diagnostic::new(
                        &codes::INVALID_DEFAULT,
                        format!("the default of `{fqn}.{name}` does not fit its type `{ty}`: {message}"),
                    ),
                    Err(modelc_sema::validate::Misfit::Failed(cause)) => {
                        let mut d = Diagnostic::new(
                            cause.code,
                            format!(
                                "the default of `{fqn}.{name}` cannot be checked: the constraint of `{ty}` fails: {}",
                                cause.message
                            ),
                        )
                        .note("a typedef constraint sees only `self`, the value being checked");
                        if let Some(label) = cause.primary_label() {
                            d = d.secondary(label.file, label.span, "in this constraint");
                        }
                        d
                    }
                };
                let declared = self.program.declarations.get(&(fqn.clone(), name.clone())).copied();
                let problem = match declared {
                    Some((file, span)) => problem.primary(file, span, "this default"),
                    None => problem,
                };
                return Err(Halt::Error(Box::new(problem)));
            }
        }
        Ok(())
    }

    pub(crate) fn fail(&self, scope: ScopeId, span: Span, diagnostic: Diagnostic, label: &str) -> Stop {
        Stop::Fail(Box::new(diagnostic.primary(self.file_of(scope), span, label)))
    }

    /// How messages name an instance: `__config__::A (instantiated at main.cf:5)`.
    pub(crate) fn describe(&self, instance: InstanceId) -> String {
        format!("{} (instantiated at {})", self.entity_of(instance), self.constructed_at(instance))
    }

    /// `main.cf:12`: where an instance was constructed.
    pub(crate) fn constructed_at(&self, instance: InstanceId) -> String {
        let i = &self.instances[instance.0 as usize];
        let unit = &self.program.units[i.unit as usize];
        format!("{}:{}", unit.display_name, self.program.line_of(i.unit as usize, i.span.start))
    }
}
