//! Continuous mode (`modelc deploy --watch`): keeps the machine converged after the first run.
//!
//! Every resource of the current version has a [`Vertex`]: its state across runs (when it
//! last ran and how, retries used, a refresh owed, its token bucket, its poll timer). Something
//! asks a vertex for a check — a file-system event on what it manages (rate-limited by its
//! bucket: a storm of events is coalesced into few runs), its poll interval, a retry timer, a
//! resource it requires that changed, a new version — and [`Continuous::step`] runs every
//! vertex asked, as one engine run over those resources (what they require outside the run is
//! taken as done). A changed resource asks what requires it for a check, and refreshes its
//! event and notification receivers in the next step.
//!
//! A new version is swapped in by [`Continuous::swap`]: a resource whose desired state (its
//! attributes, edges and meta parameters) did not change keeps its vertex, with its identity
//! (`serial`), retry count and bucket; the others get new vertices and a check, and removed
//! `purge_on_delete` resources are purged. [`run`] is the loop that waits for events (through
//! [`watcher`]) and timers, swaps versions in and stops on Ctrl-C, a converged timeout or a
//! maximum run time.

pub mod bucket;
pub mod watcher;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use modelc_ir::{Resource, Timing};

use crate::engine::{Observer, Options};
use crate::handler::{ContentSource, Handlers};
use crate::plan::{AgentSelection, Disposition, Plan};
use crate::report::{Outcome, RunReport};
use bucket::TokenBucket;

/// One resource's state in continuous mode.
#[derive(Debug)]
pub struct Vertex {
    /// Its identity: a new vertex gets a new serial; one kept across a swap keeps it.
    pub serial: u64,
    /// Failed runs that used its retries (reset by a success when `retry_reset`).
    pub failures: u32,
    /// How many times it ran.
    pub runs: u64,
    /// Its last result.
    pub last: Option<Outcome>,
    bucket: Option<TokenBucket>,
    /// A watch event asks for a check (it takes a token).
    event: bool,
    /// Something else asks for a check (no token).
    poke: bool,
    /// A refresh is owed.
    refresh: bool,
    retry_at: Option<Duration>,
    poll_at: Option<Duration>,
    /// Its bucket is empty until then.
    bucket_at: Option<Duration>,
}

/// What continuous mode leaves for the next process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Carryover {
    /// `(id, agent, failed runs)` of the resources that used retries.
    pub retry_counts: Vec<(String, String, u32)>,
    /// `(id, agent)` of the resources owed a refresh.
    pub pending_refreshes: Vec<(String, String)>,
}

/// A version of desired state, as the loop receives it.
pub struct Version {
    pub number: u64,
    pub resources: Vec<Resource>,
    pub content: Arc<dyn ContentSource + Send>,
}

/// What a swap did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Swap {
    /// Resources whose vertex was kept.
    pub kept: usize,
    /// Resources new or changed (new vertices).
    pub replaced: usize,
    /// Resources of the old version that are gone.
    pub removed: usize,
}

/// Continuous mode's state: the current version's plan and a vertex per resource.
pub struct Continuous<'h> {
    handlers: &'h Handlers,
    options: Options,
    selection: AgentSelection,
    autoedges: bool,
    autogroup: bool,
    plan: Plan,
    vertices: Vec<Vertex>,
    /// The watched resources by the path they manage (set at each swap: events look here).
    watched: HashMap<PathBuf, Vec<usize>>,
    content: Arc<dyn ContentSource + Send>,
    next_serial: u64,
}

impl<'h> Continuous<'h> {
    /// An empty graph; [`Continuous::swap`] brings in the first version. `options.retries` is
    /// turned off: continuous mode retries on its own timers, keeping the counts across runs.
    pub fn new(
        handlers: &'h Handlers,
        options: Options,
        selection: AgentSelection,
        autoedges: bool,
        autogroup: bool,
    ) -> Continuous<'h> {
        let plan = Plan::new(Vec::new(), &[], &selection, handlers, &[]);
        Continuous {
            handlers,
            options: Options { retries: false, ..options },
            selection,
            autoedges,
            autogroup,
            plan,
            vertices: Vec::new(),
            watched: HashMap::new(),
            content: Arc::new(crate::handler::MemoryContent::default()),
            next_serial: 1,
        }
    }

    /// Brings in a version: unchanged resources keep their vertex, the others get a new one and
    /// a check; removed `purge_on_delete` resources are added, purged. `pending_refresh` and
    /// `retry_counts` are what an earlier process left (the store keeps them).
    pub fn swap(
        &mut self,
        resources: Vec<Resource>,
        content: Arc<dyn ContentSource + Send>,
        pending_refresh: &[String],
        retry_counts: &[(String, u32)],
    ) -> Swap {
        let previous: Vec<Resource> = self.plan.resources.clone();
        let mut plan = Plan::new(resources, &previous, &self.selection, self.handlers, pending_refresh);
        if self.autoedges {
            plan.add_autoedges();
        }
        let mut old: HashMap<String, (Resource, Vertex)> = std::mem::take(&mut self.plan.resources)
            .into_iter()
            .zip(std::mem::take(&mut self.vertices))
            .map(|(r, v)| (r.id.clone(), (r, v)))
            .collect();
        let now = self.options.clock.now();
        let mut swap = Swap::default();
        let mut vertices = Vec::with_capacity(plan.len());
        for resource in &plan.resources {
            let vertex = match old.remove(&resource.id) {
                Some((before, vertex)) if before == *resource => {
                    swap.kept += 1;
                    vertex
                }
                _ => {
                    swap.replaced += 1;
                    let serial = self.next_serial;
                    self.next_serial += 1;
                    Vertex {
                        serial,
                        failures: 0,
                        runs: 0,
                        last: None,
                        bucket: TokenBucket::new(resource.meta.limit, resource.meta.burst, now),
                        event: false,
                        poke: true,
                        refresh: false,
                        retry_at: None,
                        poll_at: None,
                        bucket_at: None,
                    }
                }
            };
            vertices.push(vertex);
        }
        swap.removed = old.len();
        for &i in &plan.pending_refresh {
            vertices[i].refresh = true;
            vertices[i].poke = true;
        }
        let counts: HashMap<&str, u32> = retry_counts.iter().map(|(id, n)| (id.as_str(), *n)).collect();
        for (vertex, resource) in vertices.iter_mut().zip(&plan.resources) {
            if let Some(&n) = counts.get(resource.id.as_str()) {
                vertex.failures = vertex.failures.max(n);
            }
        }
        self.plan = plan;
        self.watched = HashMap::new();
        for i in 0..self.plan.len() {
            if self.is_watched(i)
                && let Some(path) = watcher::watched_path(&self.plan.resources[i])
            {
                self.watched.entry(path).or_default().push(i);
            }
        }
        self.vertices = vertices;
        self.content = content;
        swap
    }

    /// Something happened at `path`: the resources that manage it are asked for a check.
    /// Returns how many.
    pub fn notice(&mut self, path: &Path) -> usize {
        let Some(asked) = self.watched.get(path) else { return 0 };
        for &i in asked {
            self.vertices[i].event = true;
        }
        asked.len()
    }

    /// Whether resource `i` is watched for changes (rather than polled or checked once).
    fn is_watched(&self, i: usize) -> bool {
        self.plan.dispositions[i] == Disposition::Deploy && self.plan.resources[i].meta.poll.is_none()
    }

    /// The directories to watch: where the watched resources are.
    pub fn watch_directories(&self) -> BTreeSet<PathBuf> {
        self.watched.keys().filter_map(|path| path.parent().map(Path::to_owned)).collect()
    }

    /// Runs every vertex that was asked for a check and may run now, as one engine run; `None`
    /// when none is due.
    pub fn step(&mut self, observer: &dyn Observer) -> Option<RunReport> {
        let now = self.options.clock.now();
        let due = self.due(now);
        if due.is_empty() {
            return None;
        }
        let in_run: HashMap<usize, usize> = due.iter().enumerate().map(|(k, &i)| (i, k)).collect();
        let resources: Vec<Resource> = due
            .iter()
            .map(|&i| {
                let mut r = self.plan.resources[i].clone();
                // What it requires outside this run has deployed (or it would not be due).
                r.requires = self.plan.requires[i]
                    .iter()
                    .filter(|j| in_run.contains_key(j))
                    .map(|&j| self.plan.resources[j].id.clone())
                    .collect();
                r
            })
            .collect();
        let refresh: Vec<String> =
            due.iter().filter(|&&i| self.vertices[i].refresh).map(|&i| self.plan.resources[i].id.clone()).collect();
        let mut plan = Plan::new(resources, &[], &self.selection, self.handlers, &refresh);
        if self.autogroup {
            plan.add_autogroups(self.handlers);
        }
        let report = crate::engine::run(&plan, self.handlers, &*self.content, &self.options, observer);
        self.settle(&due, &report, now);
        Some(report)
    }

    /// The vertices to run now, in plan order; clears what asked them.
    fn due(&mut self, now: Duration) -> Vec<usize> {
        let mut due = Vec::new();
        for (i, v) in self.vertices.iter_mut().enumerate() {
            if v.poll_at.is_some_and(|at| at <= now) {
                v.poke = true;
                v.poll_at = None;
            }
            if v.retry_at.is_some_and(|at| at <= now) {
                v.poke = true;
                v.retry_at = None;
            }
            if !v.poke
                && v.event
                && let Some(bucket) = &mut v.bucket
            {
                match bucket.take(now).map_err(|wait| wait.and_then(|wait| now.checked_add(wait))) {
                    Ok(()) => {}
                    Err(Some(at)) => {
                        // The event waits for a token; more events join it.
                        v.bucket_at = Some(at);
                        continue;
                    }
                    // A limit of 0: no token ever comes, so events beyond the burst are dropped.
                    Err(None) => {
                        v.event = false;
                        v.bucket_at = None;
                        continue;
                    }
                }
            }
            if v.poke || v.event {
                v.poke = false;
                v.event = false;
                // Whatever made it run, a wait for a token is over: the run covers the event.
                v.bucket_at = None;
                due.push(i);
            }
        }
        // A resource whose requirement did not deploy (outside this run, or left out of it in
        // turn) waits for it: the requirement's success asks it again. Repeated until nothing
        // more is left out, so a chain never runs past a requirement that is not there.
        loop {
            let chosen: HashSet<usize> = due.iter().copied().collect();
            let before = due.len();
            due.retain(|&i| {
                self.plan.requires[i]
                    .iter()
                    .all(|j| chosen.contains(j) || self.vertices[*j].last.is_some_and(Outcome::lets_dependents_run))
            });
            if due.len() == before {
                return due;
            }
        }
    }

    /// Takes a run's results into the vertices: retries, what to ask next.
    fn settle(&mut self, due: &[usize], report: &RunReport, now: Duration) {
        let pending: HashSet<&str> = report.pending_refreshes.iter().map(String::as_str).collect();
        let mut ask = Vec::new();
        let mut refresh = Vec::new();
        for r in &report.resources {
            let i = due[r.index];
            let resource = &self.plan.resources[i];
            let meta = &resource.meta;
            let v = &mut self.vertices[i];
            let recovered = v.last.is_some_and(Outcome::is_problem) && r.result.lets_dependents_run();
            v.last = Some(r.result);
            v.refresh = pending.contains(r.id.as_str());
            if r.attempts > 0 {
                v.runs += 1;
            }
            match r.result {
                Outcome::Failed => {
                    v.failures += 1;
                    if meta.retries_left(v.failures) {
                        let wait = crate::meta::retry_wait(meta, v.failures, &*self.options.clock);
                        v.retry_at = now.checked_add(wait);
                    }
                }
                Outcome::Changed | Outcome::Unchanged if meta.retry_reset => v.failures = 0,
                _ => {}
            }
            if let Some(poll) = meta.poll.filter(|p| *p > 0.0) {
                v.poll_at = now.checked_add(Duration::from_secs_f64(poll));
            }
            if r.result == Outcome::Changed || recovered {
                ask.extend(self.plan.dependents[i].iter().copied());
            }
            if r.result == Outcome::Changed {
                for &d in &self.plan.dependents[i] {
                    if resource.send_event && self.plan.resources[d].receive_events {
                        refresh.push(d);
                    }
                }
                for timing in [Timing::Immediately, Timing::Delayed, Timing::Before] {
                    refresh.extend(self.plan.receivers(i, timing));
                }
            }
        }
        // Those that ran in this run after the change already saw it (the engine ordered and
        // refreshed them).
        let ran: HashSet<usize> = due.iter().copied().collect();
        for d in ask.into_iter().filter(|d| !ran.contains(d)) {
            self.vertices[d].poke = true;
        }
        for d in refresh.into_iter().filter(|d| !ran.contains(d)) {
            self.vertices[d].refresh = true;
            self.vertices[d].poke = true;
        }
    }

    /// When the next timer (a poll, a retry, a bucket refill) is due.
    pub fn next_deadline(&self) -> Option<Duration> {
        self.vertices.iter().flat_map(|v| [v.poll_at, v.retry_at, v.bucket_at]).flatten().min()
    }

    /// Whether a check is asked for that can run now.
    pub fn has_work(&self) -> bool {
        let now = self.options.clock.now();
        self.vertices.iter().any(|v| v.poke || (v.event && v.bucket_at.is_none_or(|at| at <= now)))
            || self.next_deadline().is_some_and(|at| at <= now)
    }

    /// The vertex of resource `id`.
    pub fn vertex(&self, id: &str) -> Option<&Vertex> {
        self.plan.resources.iter().position(|r| r.id == id).map(|i| &self.vertices[i])
    }

    /// Whether every resource handled here is converged (or would be, for noop ones).
    pub fn converged(&self) -> bool {
        self.vertices.iter().all(|v| !v.last.is_some_and(Outcome::is_problem))
    }

    /// What this process leaves for the next (the store keeps it).
    pub fn carryover(&self) -> Carryover {
        let mut carryover = Carryover::default();
        for (r, v) in self.plan.resources.iter().zip(&self.vertices) {
            if v.failures > 0 {
                carryover.retry_counts.push((r.id.clone(), r.agent.clone(), v.failures));
            }
            if v.refresh {
                carryover.pending_refreshes.push((r.id.clone(), r.agent.clone()));
            }
        }
        carryover
    }

    /// The flag that stops the loop and the run in progress (Ctrl-C sets it).
    pub fn interrupt_flag(&self) -> &Arc<std::sync::atomic::AtomicBool> {
        &self.options.interrupt
    }

    /// The current version's resources.
    pub fn resources(&self) -> &[Resource] {
        &self.plan.resources
    }
}

/// Where new versions come from (the store), for the loop.
pub trait Versions {
    /// The newest version, when it is not `current`.
    fn newer(&mut self, current: Option<u64>) -> Result<Option<Version>, String>;
    /// Starts telling the loop when a new version may have come, once, before the loop waits:
    /// returns the files whose change means so (an embedded store and its journal), and may
    /// keep `wake` to call itself (a server store's notifications).
    fn watch(&mut self, wake: Wake) -> Result<Vec<PathBuf>, String>;
}

/// Tells the loop that a new version may have come; handed to [`Versions::watch`].
#[derive(Clone)]
pub struct Wake(crossbeam_channel::Sender<()>);

impl Wake {
    /// Wakes the loop; false once the loop has ended (whoever holds this may stop then).
    pub fn wake(&self) -> bool {
        self.0.send(()).is_ok()
    }
}

/// When the loop stops by itself.
#[derive(Debug, Clone, Default)]
pub struct Limits {
    /// Stop once nothing has changed for this long (no resource changed, no version came).
    pub converged_timeout: Option<Duration>,
    /// Stop after this long in any case.
    pub max_runtime: Option<Duration>,
}

/// Why the loop stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Nothing changed for the converged timeout; whether everything converged.
    Idle { converged: bool },
    /// Ctrl-C.
    Interrupted,
    /// The maximum run time passed.
    MaxRuntime,
}

/// What the loop tells its caller as it goes.
pub enum Progress<'a> {
    /// A version was swapped in; `watches`: how many directories are watched now.
    Swapped { version: u64, swap: &'a Swap, watches: usize },
    /// A step ran.
    Ran(&'a RunReport),
}

/// Keeps the machine converged: waits for file-system events on watched resources and on the
/// store, and for timers; swaps in each new version; runs what is asked. `current` is the
/// version already swapped in. Returns why it stopped.
pub fn run(
    continuous: &mut Continuous<'_>,
    versions: &mut dyn Versions,
    mut current: Option<u64>,
    limits: &Limits,
    observer: &dyn Observer,
    progress: &mut dyn FnMut(&Continuous<'_>, Progress<'_>),
) -> Result<Stop, String> {
    use std::time::Instant;
    let started = Instant::now();
    let (tx, rx) = crossbeam_channel::unbounded::<PathBuf>();
    let mut watcher = watcher::Watcher::new(tx)?;
    let (wake, woken) = crossbeam_channel::unbounded::<()>();
    // Held here so the channel stays open whether or not `versions` keeps its end.
    let _wake = wake.clone();
    let store_files: HashSet<PathBuf> = versions.watch(Wake(wake))?.into_iter().collect();
    let mut woken_up = false;
    let directories = |c: &Continuous<'_>| {
        let mut dirs = c.watch_directories();
        dirs.extend(store_files.iter().filter_map(|f| f.parent().map(Path::to_owned)));
        dirs
    };
    watcher.watch_exactly(&directories(continuous));
    let mut idle_since = Instant::now();
    let interrupt = Arc::clone(&continuous.options.interrupt);
    let mut events: Vec<PathBuf> = Vec::new();
    loop {
        if interrupt.load(std::sync::atomic::Ordering::SeqCst) {
            return Ok(Stop::Interrupted);
        }
        if limits.max_runtime.is_some_and(|max| started.elapsed() >= max) {
            return Ok(Stop::MaxRuntime);
        }
        events.extend(rx.try_iter());
        let mut store_changed = std::mem::take(&mut woken_up) | (woken.try_iter().count() > 0);
        for path in events.drain(..) {
            if store_files.contains(&path) {
                store_changed = true;
            } else {
                continuous.notice(&path);
            }
        }
        if store_changed && let Some(Version { number: version, resources, content }) = versions.newer(current)? {
            let swap = continuous.swap(resources, content, &[], &[]);
            current = Some(version);
            watcher.watch_exactly(&directories(continuous));
            progress(continuous, Progress::Swapped { version, swap: &swap, watches: watcher.count() });
            idle_since = Instant::now();
        }
        if let Some(report) = continuous.step(observer) {
            if report.resources.iter().any(|r| r.result == Outcome::Changed) {
                idle_since = Instant::now();
            }
            // A step may have made (or removed) directories that hold watched resources.
            watcher.watch_exactly(&directories(continuous));
            progress(continuous, Progress::Ran(&report));
            continue;
        }
        if continuous.has_work() {
            continue;
        }
        let idle_for = idle_since.elapsed();
        if let Some(timeout) = limits.converged_timeout
            && idle_for >= timeout
        {
            return Ok(Stop::Idle { converged: continuous.converged() });
        }
        // Wait for an event or the next timer; at most 100 ms, so Ctrl-C is seen at once.
        let mut wait = Duration::from_millis(100);
        if let Some(deadline) = continuous.next_deadline() {
            wait = wait.min(deadline.saturating_sub(continuous.options.clock.now()));
        }
        if let Some(timeout) = limits.converged_timeout {
            wait = wait.min(timeout.saturating_sub(idle_for));
        }
        crossbeam_channel::select! {
            recv(rx) -> path => events.extend(path),
            recv(woken) -> wake => woken_up = wake.is_ok(),
            default(wait) => {}
        }
    }
}
