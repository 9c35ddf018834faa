//! The engine: runs a [`Plan`] along its dependency graph, in parallel where the graph allows.
//!
//! `jobs` workers run handlers and share every resource's state (one lock): a worker that
//! finishes a resource records it, settles what that decides, and goes on with a resource that
//! became ready, queueing the others. A resource is dispatched when everything it requires has
//! finished: if one of them did not deploy, it is `blocked` (and so, transitively, is everything
//! after it) without running; in a dry run, if one of them would change, it is `not-evaluated`.
//! Independent branches go on. A resource that changed and sends events refreshes the resources
//! that require it and receive events.
//!
//! The engine reports through an [`Observer`], called on the calling thread, and returns a
//! [`RunReport`]; it knows nothing of
//! the command line or the store, so a remote agent can run the same engine.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender, unbounded};
use modelc_ir::Resource;

use crate::handler::{ContentSource, Context, Done, Handlers};
use crate::meta::{Clock, Semaphores, SystemClock};
use crate::plan::{Disposition, Plan};
use crate::report::{Outcome, ResourceReport, RunReport};

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
}

impl Default for Options {
    fn default() -> Options {
        Options {
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            dry_run: false,
            sema: None,
            clock: Arc::new(SystemClock),
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
    let mut run = Run::new(plan, options.dry_run);
    let first = run.start();
    for event in std::mem::take(&mut run.events) {
        deliver(observer, plan, event);
    }
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
        for _ in 0..jobs {
            let worker = Worker {
                plan,
                handlers,
                content,
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
    shared.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner).into_report(started)
}

/// What the observer is told.
enum Event {
    Started(usize),
    Finished(ResourceReport),
}

fn deliver(observer: &dyn Observer, plan: &Plan, event: Event) {
    match event {
        Event::Started(i) => observer.started(&plan.resources[i]),
        Event::Finished(report) => observer.finished(&plan.resources[report.index], &report),
    }
}

/// A resource to deploy, by position, and whether it is to be refreshed.
struct Work {
    index: usize,
    refresh: bool,
}

/// What becomes of a resource whose requirements have all finished.
enum Ready {
    /// Its handler runs.
    Run(Work),
    /// It is settled without running.
    Settled(ResourceReport),
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
}

/// One of the `jobs` workers. After running a resource it records the result itself and goes
/// on with one of the resources that became ready (a chain runs on one worker without a hand-off);
/// the others go to the shared queue.
struct Worker<'a, 'p> {
    plan: &'p Plan,
    handlers: &'a Handlers,
    content: &'a dyn ContentSource,
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
            let finished = self.execute(work);
            let (events, mut ready, all_done) = {
                let mut run = self.shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let report = run.report_of(finished);
                let ready = run.finish(report);
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

    fn execute(&self, Work { index, refresh }: Work) -> Finished {
        let resource = &self.plan.resources[index];
        let meta = &resource.meta;
        // `--dry-run`/`--noop` and a resource's own noop are one path: nothing is changed.
        let timeout = meta.timeout.filter(|t| *t > 0.0).map(std::time::Duration::from_secs_f64);
        let context = Context { dry_run: self.dry_run || meta.noop, refresh, content: self.content, timeout };
        let start = Instant::now();
        let Some(mut semaphores) = meta.semaphores() else {
            let error = format!("its semaphores {:?} are not all `name` or `name:N` with N ≥ 1", meta.sema);
            return Finished { index, result: Err(error), duration_ms: 0.0, attempts: 0, guarded: None };
        };
        if let Some(reason) = crate::meta::guarded_out(meta) {
            let duration_ms = start.elapsed().as_secs_f64() * 1000.0;
            return Finished { index, result: Ok(Done::unchanged()), duration_ms, attempts: 0, guarded: Some(reason) };
        }
        if let Some(size) = self.options.sema {
            semaphores.insert(0, (crate::meta::GLOBAL.to_owned(), size.max(1)));
        }
        let _held = self.semaphores.acquire(&semaphores);
        let mut attempts = 0u32;
        let result = loop {
            attempts += 1;
            let result = match self.handlers.get(&resource.entity_type) {
                // A panicking handler fails its resource, not the run.
                Some(handler) => catch_unwind(AssertUnwindSafe(|| handler.deploy(resource, &context)))
                    .unwrap_or_else(|panic| Err(format!("its handler panicked: {}", panic_message(&panic)))),
                None => Err("no handler".to_owned()),
            };
            let retries_left = meta.retry < 0 || i64::from(attempts) <= meta.retry;
            if result.is_ok() || !retries_left {
                break result;
            }
            self.options.clock.sleep(crate::meta::retry_wait(meta, attempts, &*self.options.clock));
        };
        Finished { index, result, duration_ms: start.elapsed().as_secs_f64() * 1000.0, attempts, guarded: None }
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
}

impl<'p> Run<'p> {
    fn new(plan: &'p Plan, dry_run: bool) -> Run<'p> {
        let n = plan.len();
        let mut refresh = vec![false; n];
        for &i in &plan.pending_refresh {
            refresh[i] = true;
        }
        Run {
            plan,
            dry_run,
            state: vec![State::Waiting; n],
            waiting_on: plan.requires.iter().map(Vec::len).collect(),
            blockers: vec![Vec::new(); n],
            unevaluated: vec![false; n],
            refresh,
            reports: vec![None; n],
            remaining: n,
            events: Vec::new(),
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
            if self.state[i] == State::Waiting && self.waiting_on[i] == 0 {
                match self.ready(i) {
                    Ready::Run(dispatched) => work.push(dispatched),
                    Ready::Settled(report) => work.extend(self.finish(report)),
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
        } else if self.dry_run && self.unevaluated[i] {
            Ready::Settled(self.settled(i, Outcome::NotEvaluated, None))
        } else {
            self.state[i] = State::Running;
            self.events.push(Event::Started(i));
            Ready::Run(Work { index: i, refresh: self.refresh[i] })
        }
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
            let sender = &self.plan.resources[index];
            for &d in &self.plan.dependents[index] {
                if self.state[d] != State::Waiting {
                    continue;
                }
                if !outcome.lets_dependents_run() {
                    self.blockers[d].push(index);
                }
                if matches!(outcome, Outcome::WouldChange | Outcome::NotEvaluated) {
                    self.unevaluated[d] = true;
                }
                if outcome == Outcome::Changed && sender.send_event && self.plan.resources[d].receive_events {
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
            source: format!("{}:{}", r.source.file, r.source.line),
        }
    }

    /// The report of a resource whose handler ran.
    fn report_of(&self, finished: Finished) -> ResourceReport {
        let Finished { index, result, duration_ms, attempts, guarded } = finished;
        let mut report = self.settled(index, Outcome::Unchanged, None);
        report.duration_ms = duration_ms;
        report.attempts = attempts;
        if let Some(reason) = guarded {
            report.result = Outcome::Guarded;
            report.error = Some(reason);
            return report;
        }
        let noop = self.dry_run || self.plan.resources[index].meta.noop;
        match result {
            Err(error) => {
                report.result = Outcome::Failed;
                report.error = Some(error);
            }
            Ok(Done { changes, refreshed, skipped }) => {
                report.refreshed = refreshed;
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

    fn into_report(self, started: Instant) -> RunReport {
        let pending_refreshes = (0..self.plan.len())
            .filter(|&i| {
                let done = self.reports[i]
                    .as_ref()
                    .is_some_and(|r| !self.dry_run && matches!(r.result, Outcome::Changed | Outcome::Unchanged));
                self.refresh[i] && !done
            })
            .map(|i| self.plan.resources[i].id.clone())
            .collect();
        let resources = self.reports.into_iter().flatten().collect();
        RunReport { resources, pending_refreshes, duration_ms: started.elapsed().as_secs_f64() * 1000.0 }
    }
}

fn quoted(ids: &[String]) -> String {
    ids.iter().map(|id| format!("`{id}`")).collect::<Vec<_>>().join(", ")
}
