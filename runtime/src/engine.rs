//! The engine: runs a [`Plan`] along its dependency graph, in parallel where the graph allows.
//!
//! `jobs` workers run handlers and share every resource's state (one lock): a worker that
//! finishes a resource records it, settles what that decides, and goes on with a resource that
//! became ready, queueing the others. A resource is dispatched when everything it requires has
//! finished: if one of them did not deploy, it is `blocked` (and so, transitively, is everything
//! after it) without running; in a dry run, if one of them would change, it is `not-evaluated`.
//! Independent branches go on. A resource that changed and sends events refreshes the resources
//! that require it and receive events. Notifications with a timing (`notifications.rs`) refresh
//! their receivers right after the sender (through the order the plan adds), before it (the
//! sender is checked first), or once after everything else (`delayed`).
//!
//! The engine reports through an [`Observer`], called on the calling thread, and returns a
//! [`RunReport`]; it knows nothing of
//! the command line or the store, so a remote agent can run the same engine.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender, unbounded};
use modelc_ir::{Resource, Timing};

use crate::handler::{ContentSource, Context, Done, Handlers};
use crate::meta::{Clock, Semaphores, SystemClock};
use crate::plan::{Disposition, Plan};
use crate::report::{NotificationReport, Outcome, ResourceReport, RunReport};

/// How to run.
#[derive(Clone)]
pub struct Options {
    /// How many handlers run at once (at least 1).
    pub jobs: usize,
    /// Report differences, change nothing (`--dry-run`, `--noop`): every resource is noop, and
    /// nothing turns that back off.
    pub dry_run: bool,
    /// At most this many resources deploy at once, across the graph (`--sema N`).
    pub sema: Option<usize>,
    /// Where retries wait.
    pub clock: Arc<dyn Clock>,
    /// Retry a failed resource within the run, as its meta parameters say. Continuous mode
    /// turns this off: it retries on its own timers and keeps the counts across runs.
    pub retries: bool,
    /// Once set (Ctrl-C), resources that have not started are not started: they are
    /// `interrupted`; those running finish.
    pub interrupt: Arc<std::sync::atomic::AtomicBool>,
    /// Where the results of [`Disposition::Awaited`] resources come from (an agent's server);
    /// without it they are `not-handled`, and what requires them is blocked.
    pub awaited: Option<Arc<dyn Awaited>>,
}

/// The results of resources other agents deploy, as a run waits for them.
pub trait Awaited: Send + Sync {
    /// Blocks until at least one of `ids` has a result, or for a while (the caller asks again
    /// for those still without one); returns `(id, result, error)` of those that have one. A
    /// result is an [`Outcome`]'s word: `changed`, `failed`, ….
    fn wait(&self, ids: &[String]) -> Vec<(String, String, Option<String>)>;
}

impl Default for Options {
    fn default() -> Options {
        Options {
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            dry_run: false,
            sema: None,
            clock: Arc::new(SystemClock),
            retries: true,
            interrupt: Arc::default(),
            awaited: None,
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("jobs", &self.jobs)
            .field("dry_run", &self.dry_run)
            .field("sema", &self.sema)
            .finish()
    }
}

/// Sees a run as it happens (a progress display, a log, a server connection). It is called
/// from the thread that called [`run`], one event at a time.
pub trait Observer {
    /// A resource's handler starts.
    fn started(&self, _resource: &Resource) {}
    /// A resource reached its result.
    fn finished(&self, _resource: &Resource, _report: &ResourceReport) {}
    /// A `before` or `delayed` notification refreshed its receiver (or would have).
    fn notified(&self, _report: &NotificationReport) {}
}

/// An observer that ignores everything.
pub struct Silent;

impl Observer for Silent {}

/// Where a resource is in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Waiting for what it requires.
    Waiting,
    /// Its handler is running.
    Running,
    /// Finished, with this result.
    Done(Outcome),
}

/// Runs `plan`, returning a report with one entry per resource, in plan order.
pub fn run(
    plan: &Plan,
    handlers: &Handlers,
    content: &dyn ContentSource,
    options: &Options,
    observer: &dyn Observer,
) -> RunReport {
    let started = Instant::now();
    let jobs = options.jobs.max(1);
    let mut run = Run::new(plan, options.dry_run, Arc::clone(&options.interrupt));
    run.awaits = options.awaited.is_some();
    let first = run.start();
    for event in std::mem::take(&mut run.events) {
        deliver(observer, plan, event);
    }
    let applier = Applier { plan, handlers, content, options };
    if run.remaining == 0 {
        return run.into_report(started);
    }
    let shared = Mutex::new(run);
    let semaphores = Semaphores::default();
    let (work_tx, work_rx) = unbounded::<Option<Work>>();
    let (event_tx, event_rx) = unbounded::<Event>();
    for work in first {
        let _ = work_tx.send(Some(work));
    }
    std::thread::scope(|scope| {
        if let Some(awaited) = &options.awaited
            && plan.dispositions.contains(&Disposition::Awaited)
        {
            let (shared, work_tx, events) = (&shared, work_tx.clone(), event_tx.clone());
            let interrupt = &options.interrupt;
            scope.spawn(move || await_results(plan, awaited.as_ref(), interrupt, shared, &work_tx, &events, jobs));
        }
        for _ in 0..jobs {
            let worker = Worker {
                plan,
                applier: &applier,
                options,
                semaphores: &semaphores,
                dry_run: options.dry_run,
                jobs,
                shared: &shared,
                work_rx: work_rx.clone(),
                work_tx: work_tx.clone(),
                events: event_tx.clone(),
            };
            scope.spawn(move || worker.run());
        }
        drop(event_tx);
        // The observer sees every event here, on the calling thread, in the order they happened.
        for event in event_rx.iter() {
            deliver(observer, plan, event);
        }
    });
    let mut run = shared.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    run.refresh_delayed(&applier);
    for event in std::mem::take(&mut run.events) {
        deliver(observer, plan, event);
    }
    run.into_report(started)
}

/// Settles the awaited resources as their results arrive, and lets what requires them go on;
/// once the run has nothing left, tells the workers to stop, as the last worker would.
fn await_results(
    plan: &Plan,
    awaited: &dyn Awaited,
    interrupt: &std::sync::atomic::AtomicBool,
    shared: &Mutex<Run<'_>>,
    work_tx: &Sender<Option<Work>>,
    events: &Sender<Event>,
    jobs: usize,
) {
    let position: std::collections::HashMap<&str, usize> =
        plan.resources.iter().enumerate().map(|(i, r)| (r.id.as_str(), i)).collect();
    loop {
        let pending: Vec<String> = {
            let run = shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if run.remaining == 0 {
                return;
            }
            (0..plan.len())
                .filter(|&i| plan.dispositions[i] == Disposition::Awaited && run.state[i] == State::Waiting)
                .map(|i| plan.resources[i].id.clone())
                .collect()
        };
        if pending.is_empty() {
            return;
        }
        let interrupted = interrupt.load(std::sync::atomic::Ordering::SeqCst);
        let results = if interrupted {
            let error = "not awaited: the deploy was interrupted".to_owned();
            pending
                .iter()
                .map(|id| (id.clone(), Outcome::Interrupted.as_str().to_owned(), Some(error.clone())))
                .collect()
        } else {
            awaited.wait(&pending)
        };
        let (settled_events, ready, all_done) = {
            let mut run = shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let mut ready = Vec::new();
            for (id, result, error) in results {
                let Some(&i) = position.get(id.as_str()) else { continue };
                if run.state[i] != State::Waiting {
                    continue;
                }
                let outcome = Outcome::parse(&result).unwrap_or(Outcome::Failed);
                let error = (!outcome.lets_dependents_run()).then(|| {
                    let agent = &plan.resources[i].agent;
                    match error {
                        Some(error) => format!("{result} on agent `{agent}`: {error}"),
                        None => format!("{result} on agent `{agent}`"),
                    }
                });
                let report = run.settled(i, outcome, error);
                run.state[i] = State::Done(outcome);
                ready.extend(run.finish(report));
            }
            (std::mem::take(&mut run.events), ready, run.remaining == 0)
        };
        for event in settled_events {
            let _ = events.send(event);
        }
        for work in ready {
            let _ = work_tx.send(Some(work));
        }
        if all_done {
            for _ in 0..jobs {
                let _ = work_tx.send(None);
            }
            return;
        }
    }
}

/// What the observer is told.
enum Event {
    Started(usize),
    Finished(ResourceReport),
    Notified(NotificationReport),
}

fn deliver(observer: &dyn Observer, plan: &Plan, event: Event) {
    match event {
        Event::Started(i) => observer.started(&plan.resources[i]),
        Event::Finished(report) => observer.finished(&plan.resources[report.index], &report),
        Event::Notified(report) => observer.notified(&report),
    }
}

/// What a worker applies: one resource, or the members of a group that are to run (those not
/// settled without running), by position, each with whether it is to be refreshed.
struct Work {
    members: Vec<(usize, bool)>,
}

/// What becomes of a resource whose requirements have all finished.
enum Ready {
    /// Its handler runs.
    Run(Work),
    /// It is settled without running.
    Settled(ResourceReport),
    /// It runs with its group, which waits for other members.
    Held,
}

/// A handler's answer.
struct Finished {
    index: usize,
    result: Result<Done, String>,
    duration_ms: f64,
    /// How many times the handler ran.
    attempts: u32,
    /// Its guards kept it from running, for this reason.
    guarded: Option<String>,
    /// The receivers its `before` notifications refreshed.
    notifications: Vec<NotificationReport>,
    /// The first member of the group it was applied with.
    group: Option<String>,
}

/// One of the `jobs` workers. After running a resource it records the result itself and goes
/// on with one of the resources that became ready (a chain runs on one worker without a hand-off);
/// the others go to the shared queue.
struct Worker<'a, 'p> {
    plan: &'p Plan,
    applier: &'a Applier<'p>,
    options: &'a Options,
    semaphores: &'a Semaphores,
    dry_run: bool,
    jobs: usize,
    shared: &'a Mutex<Run<'p>>,
    work_rx: Receiver<Option<Work>>,
    work_tx: Sender<Option<Work>>,
    events: Sender<Event>,
}

impl Worker<'_, '_> {
    fn run(self) {
        let mut next: Option<Work> = None;
        loop {
            let work = match next.take() {
                Some(work) => work,
                None => match self.work_rx.recv() {
                    Ok(Some(work)) => work,
                    _ => return,
                },
            };
            let finished = match work.members.as_slice() {
                &[(index, refresh)] => vec![self.execute(index, refresh)],
                members => self.execute_group(members),
            };
            let (events, mut ready, all_done) = {
                let mut run = self.shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let mut ready = Vec::new();
                for finished in finished {
                    let report = run.report_of(finished);
                    ready.extend(run.finish(report));
                }
                (std::mem::take(&mut run.events), ready, run.remaining == 0)
            };
            for event in events {
                let _ = self.events.send(event);
            }
            if all_done {
                for _ in 0..self.jobs {
                    let _ = self.work_tx.send(None);
                }
                return;
            }
            if !ready.is_empty() {
                next = Some(ready.remove(0));
                for work in ready {
                    let _ = self.work_tx.send(Some(work));
                }
            }
        }
    }

    fn execute(&self, index: usize, refresh: bool) -> Finished {
        let resource = &self.plan.resources[index];
        let meta = &resource.meta;
        let noop = self.dry_run || meta.noop;
        let start = Instant::now();
        let elapsed = || start.elapsed().as_secs_f64() * 1000.0;
        let finished = |result, attempts, guarded, notifications| Finished {
            index,
            result,
            duration_ms: elapsed(),
            attempts,
            guarded,
            notifications,
            group: None,
        };
        let before: Vec<usize> = self.plan.receivers(index, Timing::Before).collect();
        let Some(semaphores) = self.semaphores_of(index, &before) else {
            let error = format!("its semaphores {:?} are not all `name` or `name:N` with N ≥ 1", meta.sema);
            return finished(Err(error), 0, None, Vec::new());
        };
        if let Some(reason) = self.applier.guarded_out(resource) {
            return finished(Ok(Done::unchanged()), 0, Some(reason), Vec::new());
        }
        let _held = self.semaphores.acquire(&semaphores);
        let mut notifications = Vec::new();
        if !before.is_empty() {
            // Chef's `:before`: only a sender that would change refreshes its receivers first.
            let probe = self.applier.context(resource, true, refresh);
            let would_change =
                self.applier.attempt(resource, &probe).is_ok_and(|done| !done.changes.is_empty() || done.refreshed);
            if would_change {
                for receiver in before {
                    // A receiver its guards keep out is not refreshed either.
                    if self.applier.guarded_out(&self.plan.resources[receiver]).is_some() {
                        continue;
                    }
                    let report = self.applier.refresh(receiver, Timing::Before, vec![resource.id.clone()], noop);
                    let failed = report.result == Outcome::Failed;
                    notifications.push(report);
                    if failed {
                        let error =
                            format!("not applied: refreshing `{}` before it failed", self.plan.resources[receiver].id);
                        return finished(Err(error), 0, None, notifications);
                    }
                }
            }
        }
        let context = self.applier.context(resource, noop, refresh);
        let (result, attempts) = self.applier.apply(resource, &context);
        finished(result, attempts, None, notifications)
    }

    /// Applies a group's members in one handler call (`autogroup.rs`). Their meta parameters
    /// are equal, semaphores apart: the guards run once, the group holds the union of the
    /// semaphores, and members that fail are retried together.
    fn execute_group(&self, members: &[(usize, bool)]) -> Vec<Finished> {
        let start = Instant::now();
        let resources: Vec<&Resource> = members.iter().map(|&(i, _)| &self.plan.resources[i]).collect();
        let leader = Some(resources[0].id.clone());
        let meta = &resources[0].meta;
        let finish_all = |results: Vec<(Result<Done, String>, u32)>, guarded: Option<String>| -> Vec<Finished> {
            let duration_ms = start.elapsed().as_secs_f64() * 1000.0;
            members
                .iter()
                .zip(results)
                .map(|(&(index, _), (result, attempts))| Finished {
                    index,
                    result,
                    duration_ms,
                    attempts,
                    guarded: guarded.clone(),
                    notifications: Vec::new(),
                    group: leader.clone(),
                })
                .collect()
        };
        let mut semaphores = Vec::new();
        for resource in &resources {
            match resource.meta.semaphores() {
                Some(own) => semaphores.extend(own),
                None => {
                    let error = format!("the semaphores {:?} of its group are not all valid", resource.meta.sema);
                    return finish_all(members.iter().map(|_| (Err(error.clone()), 0)).collect(), None);
                }
            }
        }
        let semaphores = self.in_acquisition_order(semaphores);
        if let Some(reason) = self.applier.guarded_out(resources[0]) {
            return finish_all(members.iter().map(|_| (Ok(Done::unchanged()), 0)).collect(), Some(reason));
        }
        let _held = self.semaphores.acquire(&semaphores);
        let refresh: Vec<bool> = members.iter().map(|&(_, refresh)| refresh).collect();
        finish_all(self.applier.apply_group(&resources, &refresh, self.dry_run || meta.noop), None)
    }

    /// The semaphores a resource holds while it deploys, sorted: its own, `--sema`'s, and for
    /// each receiver it refreshes before itself, the receiver's own and one that keeps two
    /// senders from refreshing it at once. `None` when one of its own is malformed.
    fn semaphores_of(&self, index: usize, before: &[usize]) -> Option<Vec<(String, usize)>> {
        let mut semaphores = self.plan.resources[index].meta.semaphores()?;
        for &receiver in before {
            let resource = &self.plan.resources[receiver];
            semaphores.extend(resource.meta.semaphores().unwrap_or_default());
            semaphores.push((format!("~refresh {}", resource.id), 1));
        }
        Some(self.in_acquisition_order(semaphores))
    }

    /// `semaphores` with `--sema`'s global one, each once, sorted by name: the order they are
    /// taken in, so that two holders never wait for each other in a circle.
    fn in_acquisition_order(&self, mut semaphores: Vec<(String, usize)>) -> Vec<(String, usize)> {
        if let Some(size) = self.options.sema {
            semaphores.push((crate::meta::GLOBAL.to_owned(), size.max(1)));
        }
        semaphores.sort();
        semaphores.dedup_by(|a, b| a.0 == b.0);
        semaphores
    }
}

/// Runs handlers: one attempt, an apply with its retries, a notification's refresh.
struct Applier<'a> {
    plan: &'a Plan,
    handlers: &'a Handlers,
    content: &'a dyn ContentSource,
    options: &'a Options,
}

impl Applier<'_> {
    fn context(&self, resource: &Resource, dry_run: bool, refresh: bool) -> Context<'_> {
        let timeout = resource.meta.timeout.filter(|t| *t > 0.0).map(std::time::Duration::from_secs_f64);
        Context { dry_run, refresh, content: self.content, timeout, directories: self.plan.directories_for(resource) }
    }

    /// Why the resource's guards keep it from deploying, evaluated where it is deployed.
    fn guarded_out(&self, resource: &Resource) -> Option<String> {
        match self.handlers.for_resource(resource) {
            Some(handler) => handler.guarded_out(resource),
            None => crate::meta::guarded_out(&resource.meta),
        }
    }

    /// One run of the resource's handler.
    fn attempt(&self, resource: &Resource, context: &Context<'_>) -> Result<Done, String> {
        match self.handlers.for_resource(resource) {
            // A panicking handler fails its resource, not the run.
            Some(handler) => catch_unwind(AssertUnwindSafe(|| handler.deploy(resource, context)))
                .unwrap_or_else(|panic| Err(format!("its handler panicked: {}", panic_message(&panic)))),
            None => Err("no handler".to_owned()),
        }
    }

    /// Runs the handler until it succeeds or the resource's retries are spent; the result and
    /// how many times it ran.
    fn apply(&self, resource: &Resource, context: &Context<'_>) -> (Result<Done, String>, u32) {
        let meta = &resource.meta;
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let result = self.attempt(resource, context);
            // A handler that skipped its resource (a module's `SkipResource`) is tried again too.
            let again = result.as_ref().map_or(true, |done| done.skipped.is_some());
            if !again || !meta.retries_left(attempts) || !self.options.retries {
                return (result, attempts);
            }
            self.options.clock.sleep(crate::meta::retry_wait(meta, attempts, &*self.options.clock));
        }
    }

    /// Applies a group with one handler call, then the members that failed again (together)
    /// while their retries last; each member's result and how many times it ran.
    fn apply_group(&self, members: &[&Resource], refresh: &[bool], noop: bool) -> Vec<(Result<Done, String>, u32)> {
        let meta = &members[0].meta;
        let mut results: Vec<(Result<Done, String>, u32)> = members.iter().map(|_| (Err(String::new()), 0)).collect();
        let mut pending: Vec<usize> = (0..members.len()).collect();
        loop {
            let subset: Vec<&Resource> = pending.iter().map(|&i| members[i]).collect();
            let contexts: Vec<Context<'_>> =
                pending.iter().map(|&i| self.context(members[i], noop, refresh[i])).collect();
            let outcome = match self.handlers.for_resource(members[0]) {
                Some(handler) => catch_unwind(AssertUnwindSafe(|| handler.deploy_group(&subset, &contexts)))
                    .unwrap_or_else(|panic| {
                        vec![Err(format!("its handler panicked: {}", panic_message(&panic))); subset.len()]
                    }),
                None => vec![Err("no handler".to_owned()); subset.len()],
            };
            let outcome = if outcome.len() == subset.len() {
                outcome
            } else {
                let error = format!("its handler gave {} results for a group of {}", outcome.len(), subset.len());
                vec![Err(error); subset.len()]
            };
            let mut failed = Vec::new();
            let mut most = 0;
            for (&i, result) in pending.iter().zip(outcome) {
                let attempts = results[i].1 + 1;
                most = most.max(attempts);
                if result.is_err() && meta.retries_left(attempts) && self.options.retries {
                    failed.push(i);
                }
                results[i] = (result, attempts);
            }
            if failed.is_empty() {
                return results;
            }
            self.options.clock.sleep(crate::meta::retry_wait(meta, most, &*self.options.clock));
            pending = failed;
        }
    }

    /// Refreshes `receiver` for a notification from `senders` (changing nothing when `noop` or
    /// the receiver's own noop says so).
    fn refresh(&self, receiver: usize, timing: Timing, senders: Vec<String>, noop: bool) -> NotificationReport {
        let resource = &self.plan.resources[receiver];
        let start = Instant::now();
        let context = self.context(resource, noop || resource.meta.noop, true);
        let (result, _) = self.apply(resource, &context);
        let (result, error) = match result {
            Ok(_) if context.dry_run => (Outcome::WouldChange, None),
            Ok(_) => (Outcome::Changed, None),
            Err(error) => (Outcome::Failed, Some(error)),
        };
        NotificationReport {
            receiver: resource.id.clone(),
            timing,
            senders,
            result,
            error,
            duration_ms: start.elapsed().as_secs_f64() * 1000.0,
        }
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// The coordinator's state of one run.
struct Run<'p> {
    plan: &'p Plan,
    dry_run: bool,
    /// Set when the run is interrupted: nothing more starts.
    interrupt: Arc<std::sync::atomic::AtomicBool>,
    state: Vec<State>,
    /// Requirements not finished yet.
    waiting_on: Vec<usize>,
    /// Requirements that finished without deploying.
    blockers: Vec<Vec<usize>>,
    /// A requirement would change (dry run).
    unevaluated: Vec<bool>,
    /// A refresh is due.
    refresh: Vec<bool>,
    reports: Vec<Option<ResourceReport>>,
    /// Resources not finished yet.
    remaining: usize,
    /// What the observer has not been told yet.
    events: Vec<Event>,
    /// Receivers of `delayed` notifications that are due, with the senders, in plan order.
    delayed: std::collections::BTreeMap<usize, Vec<usize>>,
    /// The refreshes `before` and `delayed` notifications caused.
    notifications: Vec<NotificationReport>,
    /// Receivers whose notification's refresh failed: the next run owes them one.
    refresh_failed: Vec<usize>,
    /// Per group, the members that have neither become ready nor been settled.
    group_waiting: Vec<usize>,
    /// Per group, the members ready to run with it, with their refresh.
    group_ready: Vec<Vec<(usize, bool)>>,
    /// The resource waits to run with its group (or ran with it).
    joined_group: Vec<bool>,
    /// Awaited resources get their results from outside the run ([`Options::awaited`]).
    awaits: bool,
}

impl<'p> Run<'p> {
    fn new(plan: &'p Plan, dry_run: bool, interrupt: Arc<std::sync::atomic::AtomicBool>) -> Run<'p> {
        let n = plan.len();
        let mut refresh = vec![false; n];
        for &i in &plan.pending_refresh {
            refresh[i] = true;
        }
        Run {
            plan,
            dry_run,
            interrupt,
            state: vec![State::Waiting; n],
            waiting_on: plan.requires.iter().map(Vec::len).collect(),
            blockers: vec![Vec::new(); n],
            unevaluated: vec![false; n],
            refresh,
            reports: vec![None; n],
            remaining: n,
            events: Vec::new(),
            delayed: std::collections::BTreeMap::new(),
            notifications: Vec::new(),
            refresh_failed: Vec::new(),
            group_waiting: plan.groups.iter().map(Vec::len).collect(),
            group_ready: vec![Vec::new(); plan.groups.len()],
            joined_group: vec![false; n],
            awaits: false,
        }
    }

    /// Settles every resource that never runs, and returns what can start.
    fn start(&mut self) -> Vec<Work> {
        let mut settled = Vec::new();
        for i in 0..self.plan.len() {
            let report = match &self.plan.dispositions[i] {
                Disposition::Deploy if self.plan.missing[i].is_empty() => continue,
                Disposition::Deploy => {
                    let missing = self.plan.missing[i].clone();
                    let error = format!("it requires {}, which this version does not have", quoted(&missing));
                    ResourceReport { blocked_by: missing, ..self.settled(i, Outcome::Blocked, Some(error)) }
                }
                Disposition::NotHandled => self.settled(i, Outcome::NotHandled, None),
                // Settled when its result arrives (`await_results`), or now when none can.
                Disposition::Awaited if self.awaits => continue,
                Disposition::Awaited => self.settled(i, Outcome::NotHandled, None),
                Disposition::NoHandler => {
                    let error = format!("no handler deploys `{}`", self.plan.resources[i].entity_type);
                    self.settled(i, Outcome::NoHandler, Some(error))
                }
                Disposition::Undeployable(reason) => self.settled(i, Outcome::Undeployable, Some(reason.clone())),
            };
            // Marked first, so settling one never settles another of them a second time.
            self.state[i] = State::Done(report.result);
            settled.push(report);
        }
        let mut work = Vec::new();
        for report in settled {
            work.extend(self.finish(report));
        }
        for i in 0..self.plan.len() {
            if self.state[i] == State::Waiting
                && self.waiting_on[i] == 0
                && self.plan.dispositions[i] != Disposition::Awaited
            {
                match self.ready(i) {
                    Ready::Run(dispatched) => work.push(dispatched),
                    Ready::Settled(report) => work.extend(self.finish(report)),
                    Ready::Held => {}
                }
            }
        }
        work
    }

    /// A resource whose requirements have all finished: dispatched (marked running), or
    /// settled without running (blocked, or not evaluated in a dry run) with its report.
    fn ready(&mut self, i: usize) -> Ready {
        if !self.blockers[i].is_empty() {
            let blocked_by: Vec<String> = self.blockers[i].iter().map(|&b| self.plan.resources[b].id.clone()).collect();
            let error = format!("not deployed: it requires {}, which did not deploy", quoted(&blocked_by));
            Ready::Settled(ResourceReport { blocked_by, ..self.settled(i, Outcome::Blocked, Some(error)) })
        } else if self.dry_run && self.unevaluated[i] && !self.plan.predictable[i] {
            Ready::Settled(self.settled(i, Outcome::NotEvaluated, None))
        } else if self.interrupt.load(std::sync::atomic::Ordering::SeqCst) {
            let error = "not started: the deploy was interrupted".to_owned();
            Ready::Settled(self.settled(i, Outcome::Interrupted, Some(error)))
        } else {
            self.state[i] = State::Running;
            let refresh = self.refresh[i];
            match self.plan.group_of.get(i).copied().flatten() {
                None => {
                    self.events.push(Event::Started(i));
                    Ready::Run(Work { members: vec![(i, refresh)] })
                }
                Some(g) => {
                    self.joined_group[i] = true;
                    self.group_ready[g].push((i, refresh));
                    self.member_placed(g).map_or(Ready::Held, Ready::Run)
                }
            }
        }
    }

    /// One more member of group `g` is ready or settled; when none is left waiting, the group's
    /// work (if any member is to run).
    fn member_placed(&mut self, g: usize) -> Option<Work> {
        self.group_waiting[g] -= 1;
        if self.group_waiting[g] > 0 || self.group_ready[g].is_empty() {
            return None;
        }
        let mut members = std::mem::take(&mut self.group_ready[g]);
        members.sort_unstable();
        for &(i, _) in &members {
            self.events.push(Event::Started(i));
        }
        Some(Work { members })
    }

    /// Records a result and lets the resources that require it go on; returns those that can
    /// start now. Iterative, so a chain of blocked resources of any length is settled without
    /// deep recursion.
    fn finish(&mut self, report: ResourceReport) -> Vec<Work> {
        let mut work = Vec::new();
        let mut pending = vec![report];
        while let Some(report) = pending.pop() {
            let index = report.index;
            let outcome = report.result;
            self.state[index] = State::Done(outcome);
            self.remaining -= 1;
            self.reports[index] = Some(report.clone());
            self.events.push(Event::Finished(report));
            if let Some(g) = self.plan.group_of.get(index).copied().flatten()
                && !self.joined_group[index]
            {
                work.extend(self.member_placed(g));
            }
            let sender = &self.plan.resources[index];
            // A sender that changed, or in a dry run would: a noop sender in a real run
            // changed nothing, so it refreshes nothing.
            if outcome == Outcome::Changed || (self.dry_run && outcome == Outcome::WouldChange) {
                for receiver in self.plan.receivers(index, Timing::Delayed) {
                    self.delayed.entry(receiver).or_default().push(index);
                }
            }
            for &d in &self.plan.dependents[index] {
                if self.state[d] != State::Waiting {
                    continue;
                }
                // An ordering-only edge (an immediate notification's) blocks nothing.
                let soft = self.plan.is_soft(d, index);
                if !outcome.lets_dependents_run() && !soft {
                    self.blockers[d].push(index);
                }
                if matches!(outcome, Outcome::WouldChange | Outcome::NotEvaluated) && !soft {
                    self.unevaluated[d] = true;
                }
                let notified = self.plan.receivers(index, Timing::Immediately).any(|r| r == d);
                let event = sender.send_event && self.plan.resources[d].receive_events;
                if outcome == Outcome::Changed && (event || notified) {
                    self.refresh[d] = true;
                }
                self.waiting_on[d] -= 1;
                if self.waiting_on[d] == 0 {
                    match self.ready(d) {
                        Ready::Run(dispatched) => work.push(dispatched),
                        Ready::Settled(settled) => {
                            self.state[d] = State::Done(settled.result);
                            pending.push(settled);
                        }
                        Ready::Held => {}
                    }
                }
            }
        }
        work
    }

    /// A report for a resource that did not run.
    fn settled(&self, i: usize, outcome: Outcome, error: Option<String>) -> ResourceReport {
        let r = &self.plan.resources[i];
        ResourceReport {
            index: i,
            id: r.id.clone(),
            result: outcome,
            changes: Vec::new(),
            error,
            blocked_by: Vec::new(),
            refreshed: false,
            duration_ms: 0.0,
            attempts: 0,
            group: None,
            source: format!("{}:{}", r.source.file, r.source.line),
            logs: Vec::new(),
            facts: crate::handler::Facts::new(),
        }
    }

    /// The report of a resource whose handler ran.
    fn report_of(&mut self, finished: Finished) -> ResourceReport {
        let Finished { index, result, duration_ms, attempts, guarded, notifications, group } = finished;
        self.record_notifications(notifications);
        let mut report = self.settled(index, Outcome::Unchanged, None);
        report.group = group;
        report.duration_ms = duration_ms;
        report.attempts = attempts;
        if let Some(reason) = guarded {
            report.result = Outcome::Guarded;
            report.error = Some(reason);
            return report;
        }
        let noop = self.dry_run || self.plan.resources[index].meta.noop;
        match result {
            // Checked, not applied: what it says is what applying it would do.
            Err(error) => {
                report.result = if noop { Outcome::WouldFail } else { Outcome::Failed };
                report.error = Some(error);
            }
            Ok(Done { changes, refreshed, skipped, logs, facts }) => {
                report.refreshed = refreshed;
                report.logs = logs;
                // A dry run learns nothing to keep: its handler changed nothing.
                if !noop {
                    report.facts = facts;
                }
                report.result = if let Some(reason) = skipped {
                    report.error = Some(reason);
                    Outcome::Skipped
                } else if noop && (!changes.is_empty() || refreshed) {
                    Outcome::WouldChange
                } else if !changes.is_empty() || refreshed {
                    Outcome::Changed
                } else {
                    Outcome::Unchanged
                };
                report.changes = changes;
            }
        }
        report
    }

    fn record_notifications(&mut self, notifications: Vec<NotificationReport>) {
        for report in notifications {
            if report.result == Outcome::Failed
                && let Some(i) = self.plan.resources.iter().position(|r| r.id == report.receiver)
            {
                self.refresh_failed.push(i);
            }
            self.events.push(Event::Notified(report.clone()));
            self.notifications.push(report);
        }
    }

    /// The `delayed` notifications, once everything else has finished: each receiver that is
    /// due is refreshed once, however many senders changed, even when other resources failed.
    /// A receiver that did not deploy itself in this run keeps its refresh for the next run.
    fn refresh_delayed(&mut self, applier: &Applier<'_>) {
        for (receiver, senders) in std::mem::take(&mut self.delayed) {
            let senders: Vec<String> = senders.iter().map(|&s| self.plan.resources[s].id.clone()).collect();
            let own = self.reports[receiver].as_ref().map(|r| r.result);
            let report = match own {
                Some(Outcome::Changed | Outcome::Unchanged | Outcome::WouldChange) => {
                    applier.refresh(receiver, Timing::Delayed, senders, self.dry_run)
                }
                // A dry run does not know what a receiver that was not evaluated would do.
                Some(Outcome::NotEvaluated) => NotificationReport {
                    receiver: self.plan.resources[receiver].id.clone(),
                    timing: Timing::Delayed,
                    senders,
                    result: Outcome::WouldChange,
                    error: None,
                    duration_ms: 0.0,
                },
                // Its guards keep it from running, refreshes included.
                Some(Outcome::Guarded) => continue,
                _ => {
                    self.refresh[receiver] = true;
                    continue;
                }
            };
            self.record_notifications(vec![report]);
        }
    }

    fn into_report(self, started: Instant) -> RunReport {
        let pending_refreshes = (0..self.plan.len())
            .filter(|&i| {
                let done = self.reports[i]
                    .as_ref()
                    .is_some_and(|r| !self.dry_run && matches!(r.result, Outcome::Changed | Outcome::Unchanged));
                (self.refresh[i] && !done) || self.refresh_failed.contains(&i)
            })
            .map(|i| self.plan.resources[i].id.clone())
            .collect();
        let resources = self.reports.into_iter().flatten().collect();
        RunReport {
            resources,
            notifications: self.notifications,
            pending_refreshes,
            duration_ms: started.elapsed().as_secs_f64() * 1000.0,
        }
    }
}

fn quoted(ids: &[String]) -> String {
    ids.iter().map(|id| format!("`{id}`")).collect::<Vec<_>>().join(", ")
}
