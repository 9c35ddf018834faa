//! Continuous mode on real files: a storm of events on a rate-limited resource costs its burst
//! and one more run (a fake clock); retries continue across runs on their timers and keep their
//! count; polled resources run on their interval; a swap keeps the vertices (identity, retry
//! count) of unchanged resources; the loop repairs drift from file-system events, follows new
//! versions, holds no more watches or open files after 100 swaps than after the first, and stops
//! on its converged timeout.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

mod support;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use modelc_ir::{Meta, Resource};
use modelc_runtime::handler::{Context, Done, Handler};
use modelc_runtime::watch::{Continuous, Limits, Progress, Stop, Version, Versions};
use modelc_runtime::{AgentSelection, Change, Clock, Handlers, MemoryContent, Options, Silent};
use serde_json::json;

/// Time that moves only when told to.
#[derive(Default)]
struct FakeClock(Mutex<Duration>);

impl FakeClock {
    fn advance(&self, seconds: f64) {
        *self.0.lock().unwrap() += Duration::from_secs_f64(seconds);
    }
}

impl Clock for FakeClock {
    fn sleep(&self, duration: Duration) {
        *self.0.lock().unwrap() += duration;
    }
    fn random(&self) -> f64 {
        0.0
    }
    fn now(&self) -> Duration {
        *self.0.lock().unwrap()
    }
}

fn file(path: &Path, text: &str, meta: Meta) -> (Resource, MemoryContent) {
    use sha1::Digest as _;
    let hash = format!("{:x}", sha1::Sha1::digest(text.as_bytes()));
    let attributes = json!({ "hash": hash, "owner": null, "group": null, "permissions": null });
    let resource =
        Resource { meta: meta.into(), ..support::keyed("fs::File", "path", path.to_str().unwrap(), attributes) };
    let mut content = MemoryContent::default();
    content.0.insert(hash, text.as_bytes().to_vec());
    (resource, content)
}

fn local() -> AgentSelection {
    AgentSelection::Named(vec!["local".into()])
}

fn continuous<'h>(handlers: &'h Handlers, clock: &Arc<FakeClock>) -> Continuous<'h> {
    let options = Options { jobs: 1, clock: Arc::clone(clock) as Arc<dyn Clock>, ..Options::default() };
    Continuous::new(handlers, options, local(), true, true)
}

fn runs_of(c: &Continuous<'_>, id: &str) -> u64 {
    c.vertex(id).unwrap().runs
}

#[test]
fn a_storm_of_events_on_a_limited_resource_costs_its_burst_and_one_more_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.conf");
    let (resource, content) = file(&path, "v1\n", Meta { limit: Some(1.0), burst: 2, ..Meta::default() });
    let id = resource.id.clone();
    let handlers = Handlers::builtin();
    let clock = Arc::new(FakeClock::default());
    let mut c = continuous(&handlers, &clock);
    c.swap(vec![resource], Arc::new(content), &[], &[]);
    assert!(c.step(&Silent).is_some(), "the first check");
    assert_eq!(runs_of(&c, &id), 1);
    for _ in 0..10_000 {
        assert_eq!(c.notice(&path), 1);
        c.step(&Silent);
    }
    assert_eq!(runs_of(&c, &id), 3, "two tokens in the bucket; the other 9,998 events wait for one");
    assert_eq!(c.next_deadline(), Some(Duration::from_secs(1)), "the next token");
    assert!(!c.has_work());
    clock.advance(1.0);
    assert!(c.step(&Silent).is_some());
    assert!(c.step(&Silent).is_none());
    assert_eq!(runs_of(&c, &id), 4, "the waiting events were coalesced into one run");
    // Events spread over time: one run per token, never more than the rate allows.
    for _ in 0..10 {
        clock.advance(0.25);
        c.notice(&path);
        c.step(&Silent);
    }
    assert_eq!(runs_of(&c, &id), 4 + 2, "2.5 s at one run per second");
}

/// Fails its first `fail_times` runs.
#[derive(Clone, Default)]
struct Flaky(Arc<Mutex<u32>>);

impl Handler for Flaky {
    fn deploy(&self, resource: &Resource, _: &Context<'_>) -> Result<Done, String> {
        let mut runs = self.0.lock().unwrap();
        *runs += 1;
        let fail_times = resource.attributes["fail_times"].as_u64().unwrap() as u32;
        if *runs <= fail_times { Err(format!("run {runs} fails")) } else { Ok(Done::unchanged()) }
    }
}

#[test]
fn retries_run_on_their_timers_across_runs_and_keep_their_count() {
    let flaky = Flaky::default();
    let mut handlers = Handlers::empty();
    handlers.register("test::Flaky", flaky.clone());
    let clock = Arc::new(FakeClock::default());
    let mut c = continuous(&handlers, &clock);
    let meta = Meta { retry: 2, delay: 5.0, ..Meta::default() };
    let resource = support::named("test::Flaky", "f", json!({ "fail_times": 10 }), meta);
    let id = resource.id.clone();
    c.swap(vec![resource], Arc::new(MemoryContent::default()), &[], &[]);
    c.step(&Silent);
    assert_eq!(c.vertex(&id).unwrap().failures, 1);
    assert!(c.step(&Silent).is_none(), "the retry waits for its delay");
    assert_eq!(c.next_deadline(), Some(Duration::from_secs(5)));
    clock.advance(5.0);
    c.step(&Silent);
    clock.advance(5.0);
    c.step(&Silent);
    assert_eq!(*flaky.0.lock().unwrap(), 3, "one run and two retries, one per timer");
    assert_eq!(c.vertex(&id).unwrap().failures, 3);
    assert_eq!(c.next_deadline(), None, "its retries are spent");
    assert!(!c.converged());
    let carryover = c.carryover();
    assert_eq!(
        carryover.retry_counts,
        [(id.clone(), "local".to_owned(), 3)],
        "what the store keeps for the next process"
    );

    // The next process starts with the count it left.
    let mut next = continuous(&handlers, &clock);
    let resource =
        support::named("test::Flaky", "f", json!({ "fail_times": 10 }), Meta { retry: 2, ..Meta::default() });
    next.swap(vec![resource], Arc::new(MemoryContent::default()), &[], &[(id.clone(), 3)]);
    next.step(&Silent);
    assert_eq!(next.vertex(&id).unwrap().failures, 4);
    assert_eq!(next.next_deadline(), None, "no retries left after a restart either");
}

#[test]
fn a_success_gives_the_retries_back_with_retry_reset() {
    let flaky = Flaky::default();
    let mut handlers = Handlers::empty();
    handlers.register("test::Flaky", flaky.clone());
    let clock = Arc::new(FakeClock::default());
    let mut c = continuous(&handlers, &clock);
    let meta = Meta { retry: 1, retry_reset: true, delay: 1.0, ..Meta::default() };
    let resource = support::named("test::Flaky", "f", json!({ "fail_times": 1 }), meta);
    let id = resource.id.clone();
    c.swap(vec![resource], Arc::new(MemoryContent::default()), &[], &[]);
    c.step(&Silent);
    assert_eq!(c.vertex(&id).unwrap().failures, 1);
    clock.advance(1.0);
    c.step(&Silent);
    assert_eq!(c.vertex(&id).unwrap().failures, 0);
    assert!(c.converged());
}

#[test]
fn a_polled_resource_runs_on_its_interval_and_once_means_once() {
    let flaky = Flaky::default();
    let mut handlers = Handlers::empty();
    handlers.register("test::Flaky", flaky.clone());
    let clock = Arc::new(FakeClock::default());
    let mut c = continuous(&handlers, &clock);
    let polled =
        support::named("test::Flaky", "p", json!({ "fail_times": 0 }), Meta { poll: Some(10.0), ..Meta::default() });
    let once =
        support::named("test::Flaky", "o", json!({ "fail_times": 0 }), Meta { poll: Some(0.0), ..Meta::default() });
    let (p, o) = (polled.id.clone(), once.id.clone());
    c.swap(vec![polled, once], Arc::new(MemoryContent::default()), &[], &[]);
    c.step(&Silent);
    for _ in 0..3 {
        clock.advance(10.0);
        assert!(c.step(&Silent).is_some());
    }
    assert_eq!((runs_of(&c, &p), runs_of(&c, &o)), (4, 1));
}

/// Records every call, with `changes` true finding a difference.
#[derive(Clone, Default)]
struct Counting(Arc<Mutex<Vec<String>>>);

impl Handler for Counting {
    fn deploy(&self, resource: &Resource, context: &Context<'_>) -> Result<Done, String> {
        let name = resource.attributes["name"].as_str().unwrap().to_owned();
        self.0.lock().unwrap().push(format!("{name}{}", if context.refresh { "+refresh" } else { "" }));
        let changes = resource.attributes.get("changes") == Some(&json!(true));
        Ok(Done { changes: if changes { vec![Change::new("v", 1, 2)] } else { vec![] }, ..Done::default() })
    }
}

#[test]
fn a_swap_keeps_the_vertices_of_unchanged_resources() {
    let counting = Counting::default();
    let mut handlers = Handlers::empty();
    handlers.register("test::Node", counting.clone());
    handlers.register("test::Flaky", Flaky::default());
    let clock = Arc::new(FakeClock::default());
    let mut c = continuous(&handlers, &clock);
    let node = |name: &str, value: i64| support::named("test::Node", name, json!({ "value": value }), Meta::default());
    let failing = support::named(
        "test::Flaky",
        "f",
        json!({ "fail_times": 99 }),
        Meta { retry: 5, delay: 60.0, ..Meta::default() },
    );
    let v1 = vec![node("a", 1), node("b", 1), node("c", 1), failing.clone()];
    let swap = c.swap(v1.clone(), Arc::new(MemoryContent::default()), &[], &[]);
    assert_eq!((swap.kept, swap.replaced, swap.removed), (0, 4, 0));
    c.step(&Silent);
    let serial = |c: &Continuous<'_>, name: &str| c.vertex(&node(name, 0).id).map(|v| v.serial);
    let before: Vec<Option<u64>> = ["a", "b", "c"].iter().map(|n| serial(&c, n)).collect();
    assert_eq!(c.vertex(&failing.id).unwrap().failures, 1);
    counting.0.lock().unwrap().clear();

    // b changes, c goes, d comes; a and the failing resource are untouched.
    let v2 = vec![node("a", 1), node("b", 2), node("d", 1), failing.clone()];
    let swap = c.swap(v2, Arc::new(MemoryContent::default()), &[], &[]);
    assert_eq!((swap.kept, swap.replaced, swap.removed), (2, 2, 1));
    assert_eq!(serial(&c, "a"), before[0], "a keeps its vertex");
    assert_ne!(serial(&c, "b"), before[1], "b changed: a new vertex");
    assert_eq!(serial(&c, "c"), None);
    assert_eq!(c.vertex(&failing.id).unwrap().failures, 1, "the failing resource keeps its retry count");
    c.step(&Silent);
    assert_eq!(*counting.0.lock().unwrap(), ["b", "d"], "only what is new runs");
}

#[test]
fn a_change_refreshes_event_receivers_and_asks_dependents_in_the_next_step() {
    let counting = Counting::default();
    let mut handlers = Handlers::empty();
    handlers.register("test::Node", counting.clone());
    let clock = Arc::new(FakeClock::default());
    let mut c = continuous(&handlers, &clock);
    let polled = Meta { poll: Some(10.0), ..Meta::default() };
    let mut sender = support::named("test::Node", "s", json!({ "changes": true }), polled);
    sender.send_event = true;
    let mut receiver = support::named("test::Node", "r", json!({}), Meta::default());
    receiver.requires.push(sender.id.clone());
    let other = support::named("test::Node", "o", json!({}), Meta::default());
    c.swap(vec![sender, receiver, other], Arc::new(MemoryContent::default()), &[], &[]);
    c.step(&Silent);
    assert_eq!(*counting.0.lock().unwrap(), ["s", "r+refresh", "o"], "the first run: everything");
    counting.0.lock().unwrap().clear();
    clock.advance(10.0);
    c.step(&Silent);
    assert_eq!(*counting.0.lock().unwrap(), ["s"], "the poll checks the sender alone");
    c.step(&Silent);
    assert_eq!(*counting.0.lock().unwrap(), ["s", "r+refresh"], "it changed: its receiver is refreshed next");
    assert!(c.step(&Silent).is_none());
}

/// Versions from a directory: each `vN.json` (a list of resources) is version N; the
/// directory's `latest` file says which is newest.
struct Directory {
    dir: PathBuf,
    content: MemoryContent,
}

impl Versions for Directory {
    fn newer(&mut self, current: Option<u64>) -> Result<Option<Version>, String> {
        let Ok(latest) = std::fs::read_to_string(self.dir.join("latest")) else { return Ok(None) };
        let Ok(version) = latest.trim().parse::<u64>() else { return Ok(None) };
        if Some(version) == current {
            return Ok(None);
        }
        let text = std::fs::read_to_string(self.dir.join(format!("v{version}.json"))).map_err(|e| e.to_string())?;
        let resources: Vec<Resource> = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        Ok(Some(Version { number: version, resources, content: Arc::new(self.content.clone()) }))
    }

    fn watch(&mut self, _wake: modelc_runtime::watch::Wake) -> Result<Vec<PathBuf>, String> {
        Ok(vec![self.dir.join("latest")])
    }
}

fn open_files() -> usize {
    std::fs::read_dir("/proc/self/fd").map(|d| d.count()).unwrap_or(0)
}

/// Held by the tests that run the loop: the kernel's watch count is per process.
static LOOP: Mutex<()> = Mutex::new(());

/// The inotify watches this process holds, as the kernel counts them.
fn kernel_watches() -> usize {
    let Ok(entries) = std::fs::read_dir("/proc/self/fdinfo") else { return 0 };
    entries
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .map(|info| info.lines().filter(|l| l.starts_with("inotify wd:")).count())
        .sum()
}

#[test]
fn the_loop_repairs_drift_follows_versions_and_leaks_nothing_over_a_hundred_swaps() {
    let _alone = LOOP.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let root = tempfile::tempdir().unwrap();
    let (store, target) = (root.path().join("store"), root.path().join("target"));
    std::fs::create_dir_all(&store).unwrap();
    for d in 0..3 {
        std::fs::create_dir_all(target.join(format!("d{d}"))).unwrap();
    }
    let (conf, content) = file(&target.join("app.conf"), "wanted\n", Meta::default());
    let write_version = |n: u64| {
        // Each version has the configuration file and a marker file in a directory that
        // changes from one version to the next: watches come and go.
        let (marker, _) = file(&target.join(format!("d{}/marker", n % 3)), "wanted\n", Meta::default());
        let resources = vec![conf.clone(), marker];
        std::fs::write(store.join(format!("v{n}.json")), serde_json::to_string(&resources).unwrap()).unwrap();
        std::fs::write(store.join("latest"), n.to_string()).unwrap();
        resources
    };
    let handlers = Handlers::builtin();
    let options = Options { jobs: 1, ..Options::default() };
    let mut c = Continuous::new(&handlers, options, local(), true, true);
    let first = write_version(1);
    c.swap(first, Arc::new(content.clone()), &[], &[]);
    let mut versions = Directory { dir: store.clone(), content };
    let limits = Limits { converged_timeout: None, max_runtime: Some(Duration::from_secs(60)) };
    let mut swaps: Vec<(u64, usize, usize, usize)> = Vec::new();
    let mut step = 0;
    let stop = modelc_runtime::watch::run(&mut c, &mut versions, Some(1), &limits, &Silent, &mut |c, progress| {
        match progress {
            Progress::Swapped { version, watches, .. } => {
                swaps.push((version, watches, kernel_watches(), open_files()));
            }
            Progress::Ran(_) => {
                step += 1;
                // Drift: once the first run wrote the file, someone edits it; the watch sees it.
                if step == 1 {
                    std::fs::write(target.join("app.conf"), "drifted\n").unwrap();
                } else if std::fs::read_to_string(target.join("app.conf")).unwrap() == "wanted\n" {
                    let next = swaps.last().map_or(2, |s| s.0 + 1);
                    if next <= 101 {
                        write_version(next);
                    } else {
                        // Done: stop the loop through its own interrupt flag.
                        c.interrupt_flag().store(true, std::sync::atomic::Ordering::SeqCst);
                    }
                }
            }
        }
    })
    .unwrap();
    assert_eq!(stop, Stop::Interrupted, "{swaps:?}");
    assert_eq!(swaps.len(), 100, "every new version was seen");
    assert_eq!(std::fs::read_to_string(target.join("app.conf")).unwrap(), "wanted\n", "the drift was repaired");
    let (first, last) = (swaps[0], swaps[99]);
    assert_eq!((first.1, first.2), (3, 3), "the target, its marker's directory and the store's");
    assert_eq!((last.1, last.2), (first.1, first.2), "watches after the first swap and after the hundredth");
    assert!(last.3 <= first.3, "open files grew from {} to {}", first.3, last.3);
}

#[test]
fn the_loop_stops_once_idle_for_its_converged_timeout() {
    let _alone = LOOP.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir().unwrap();
    let (conf, content) = file(&dir.path().join("a.conf"), "a\n", Meta::default());
    let handlers = Handlers::builtin();
    let mut c = Continuous::new(&handlers, Options::default(), local(), true, true);
    c.swap(vec![conf], Arc::new(content.clone()), &[], &[]);
    let mut versions = Directory { dir: dir.path().join("none"), content };
    let limits =
        Limits { converged_timeout: Some(Duration::from_millis(300)), max_runtime: Some(Duration::from_secs(30)) };
    let started = std::time::Instant::now();
    let mut steps = 0;
    let stop = modelc_runtime::watch::run(&mut c, &mut versions, None, &limits, &Silent, &mut |_, p| {
        if let Progress::Ran(_) = p {
            steps += 1;
        }
    })
    .unwrap();
    assert_eq!(stop, Stop::Idle { converged: true });
    // The first run writes the file; its own write may ask for one check. Reading the file to
    // check it is no drift: it must not ask for another check (that loop once ran 1,800 times).
    assert!(steps <= 2, "{steps} steps for one file that nobody touched");
    assert!(started.elapsed() >= Duration::from_millis(300), "it waited the whole idle time");
}

/// mgmt#930: a resource that keeps failing must not keep continuous mode waiting forever under
/// a converged timeout; failures are not changes, and the stop says it did not converge.
#[test]
fn a_failing_resource_still_lets_the_loop_stop_and_says_so() {
    let _alone = LOOP.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir().unwrap();
    let mut handlers = Handlers::empty();
    handlers.register("test::Flaky", Flaky::default());
    let meta = Meta { retry: -1, delay: 0.05, ..Meta::default() };
    let failing = support::named("test::Flaky", "f", json!({ "fail_times": 1_000_000 }), meta);
    let mut c = Continuous::new(&handlers, Options::default(), local(), true, true);
    c.swap(vec![failing], Arc::new(MemoryContent::default()), &[], &[]);
    let mut versions = Directory { dir: dir.path().join("none"), content: MemoryContent::default() };
    let limits =
        Limits { converged_timeout: Some(Duration::from_millis(300)), max_runtime: Some(Duration::from_secs(30)) };
    let stop = modelc_runtime::watch::run(&mut c, &mut versions, None, &limits, &Silent, &mut |_, _| {}).unwrap();
    assert_eq!(stop, Stop::Idle { converged: false });
    let id = "test::Flaky[local,name=f]";
    assert!(c.vertex(id).unwrap().failures > 1, "it was retried while the loop waited");
}

#[test]
fn a_limit_of_zero_drops_events_beyond_the_burst_and_never_spins() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.conf");
    let (resource, content) = file(&path, "a\n", Meta { limit: Some(0.0), burst: 1, ..Meta::default() });
    let id = resource.id.clone();
    let handlers = Handlers::builtin();
    let clock = Arc::new(FakeClock::default());
    let mut c = continuous(&handlers, &clock);
    c.swap(vec![resource], Arc::new(content), &[], &[]);
    c.step(&Silent);
    c.notice(&path);
    assert!(c.step(&Silent).is_some(), "the burst's one token");
    c.notice(&path);
    assert!(c.step(&Silent).is_none(), "no token will ever come");
    assert!(!c.has_work(), "nothing is left waiting (the loop would spin)");
    assert_eq!(c.next_deadline(), None);
    assert_eq!(runs_of(&c, &id), 2);
}

#[test]
fn a_chain_never_runs_past_a_requirement_that_did_not_deploy() {
    let counting = Counting::default();
    let mut handlers = Handlers::empty();
    handlers.register("test::Node", counting.clone());
    handlers.register("test::Flaky", Flaky::default());
    let clock = Arc::new(FakeClock::default());
    let mut c = continuous(&handlers, &clock);
    let z = support::named("test::Flaky", "z", json!({ "fail_times": 99 }), Meta::default());
    let node = |name: &str, value: i64, after: &Resource| {
        let mut r = support::named("test::Node", name, json!({ "value": value }), Meta::default());
        r.requires.push(after.id.clone());
        r
    };
    let y = node("y", 1, &z);
    let x = node("x", 1, &y);
    c.swap(vec![z.clone(), y.clone(), x.clone()], Arc::new(MemoryContent::default()), &[], &[]);
    c.step(&Silent);
    assert!(counting.0.lock().unwrap().is_empty(), "z failed: y and x are blocked");
    // A new version changes y and x, not z (which keeps its failure).
    let (y2, x2) = (node("y", 2, &z), node("x", 2, &y));
    c.swap(vec![z, y2, x2], Arc::new(MemoryContent::default()), &[], &[]);
    assert!(c.step(&Silent).is_none(), "y waits for z, and x for y");
    assert!(counting.0.lock().unwrap().is_empty(), "{:?}", counting.0.lock().unwrap());
}
