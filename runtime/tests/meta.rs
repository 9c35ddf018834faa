//! Meta parameters in the engine: noop (a resource's own and `--noop`) changes nothing on real
//! files; semaphores never have more holders than their size (observed), and overlapping ones
//! taken in sorted order never deadlock; retries run as often as asked, waiting as the back-off
//! says (a fake clock records the waits).
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use modelc_ir::{Backoff, Meta, Resource};
use modelc_runtime::handler::{Context, Done, Handler};
use modelc_runtime::{Change, Clock, Handlers, Options, Outcome, RunReport};
use serde_json::json;

mod support;

use support::{named as resource, run};

/// Counts the resources inside it at once, per semaphore name, and the most ever seen.
#[derive(Default)]
struct Gauge {
    now: Mutex<HashMap<String, usize>>,
    most: Mutex<HashMap<String, usize>>,
    total_now: AtomicUsize,
    total_most: AtomicUsize,
}

impl Handler for &'static Gauge {
    fn deploy(&self, resource: &Resource, _context: &Context<'_>) -> Result<Done, String> {
        let names: Vec<String> = resource.meta.semaphores().unwrap().into_iter().map(|(n, _)| n).collect();
        {
            let mut now = self.now.lock().unwrap();
            let mut most = self.most.lock().unwrap();
            for name in &names {
                let n = now.entry(name.clone()).or_default();
                *n += 1;
                let m = most.entry(name.clone()).or_default();
                *m = (*m).max(*n);
            }
        }
        let total = self.total_now.fetch_add(1, Ordering::SeqCst) + 1;
        self.total_most.fetch_max(total, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(2));
        self.total_now.fetch_sub(1, Ordering::SeqCst);
        let mut now = self.now.lock().unwrap();
        for name in &names {
            *now.get_mut(name).unwrap() -= 1;
        }
        Ok(Done::unchanged())
    }
}

fn gauge_handlers() -> (&'static Gauge, Handlers) {
    let gauge: &'static Gauge = Box::leak(Box::default());
    let mut handlers = Handlers::empty();
    handlers.register("test::Gauge", gauge);
    (gauge, handlers)
}

fn with_sema(sema: &[&str]) -> Meta {
    Meta { sema: sema.iter().map(|s| (*s).to_owned()).collect(), ..Meta::default() }
}

#[test]
fn a_semaphore_never_has_more_holders_than_its_size() {
    let (gauge, handlers) = gauge_handlers();
    let resources: Vec<Resource> =
        (0..24).map(|i| resource("test::Gauge", &format!("r{i}"), json!({}), with_sema(&["db:2"]))).collect();
    let report = run(resources, &handlers, &Options { jobs: 8, ..Options::default() });
    assert!(report.converged());
    assert_eq!(gauge.most.lock().unwrap()["db"], 2, "two at once, never three");
}

#[test]
fn the_global_sema_limits_everything() {
    let (gauge, handlers) = gauge_handlers();
    let resources: Vec<Resource> =
        (0..24).map(|i| resource("test::Gauge", &format!("r{i}"), json!({}), Meta::default())).collect();
    let report = run(resources, &handlers, &Options { jobs: 8, sema: Some(3), ..Options::default() });
    assert!(report.converged());
    assert_eq!(gauge.total_most.load(Ordering::SeqCst), 3);
}

#[test]
fn overlapping_semaphores_taken_in_sorted_order_never_deadlock() {
    let (gauge, handlers) = gauge_handlers();
    // Each resource holds two or three of four semaphores, listed in varying orders.
    let sets: [&[&str]; 6] =
        [&["d", "a:2", "c"], &["c", "b"], &["b", "a:2"], &["a:2", "d"], &["c", "d", "b"], &["b", "d"]];
    let resources: Vec<Resource> = (0..300)
        .map(|i| resource("test::Gauge", &format!("r{i}"), json!({}), with_sema(sets[i % sets.len()])))
        .collect();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let report = run(resources, &handlers, &Options { jobs: 8, ..Options::default() });
        let _ = done_tx.send(report.converged());
    });
    let converged = done_rx.recv_timeout(Duration::from_secs(120)).expect("the run finishes: no deadlock");
    assert!(converged);
    let most = gauge.most.lock().unwrap();
    assert_eq!((most["a"], most["b"], most["c"], most["d"]), (2, 1, 1, 1));
}

/// Fails its resource until it has run `fail_times` times.
#[derive(Default)]
struct Flaky {
    runs: Mutex<HashMap<String, u32>>,
}

impl Handler for &'static Flaky {
    fn deploy(&self, resource: &Resource, _context: &Context<'_>) -> Result<Done, String> {
        let fail_times = resource.attributes["fail_times"].as_u64().unwrap() as u32;
        let mut runs = self.runs.lock().unwrap();
        let n = runs.entry(resource.id.clone()).or_default();
        *n += 1;
        if *n <= fail_times { Err(format!("failure {n}")) } else { Ok(Done::changed(vec![Change::new("x", 0, 1)])) }
    }
}

/// Records the waits instead of waiting.
#[derive(Default)]
struct FakeClock {
    waits: Mutex<Vec<f64>>,
}

impl Clock for FakeClock {
    fn sleep(&self, duration: Duration) {
        self.waits.lock().unwrap().push(duration.as_secs_f64());
    }

    fn random(&self) -> f64 {
        0.0
    }
}

fn flaky(fail_times: u32, meta: Meta) -> (RunReport, Vec<f64>) {
    let flaky: &'static Flaky = Box::leak(Box::default());
    let mut handlers = Handlers::empty();
    handlers.register("test::Flaky", flaky);
    let clock = Arc::new(FakeClock::default());
    let options = Options { jobs: 1, clock: Arc::clone(&clock) as Arc<dyn Clock>, ..Options::default() };
    let report =
        run(vec![resource("test::Flaky", "f", json!({ "fail_times": fail_times }), meta)], &handlers, &options);
    let waits = clock.waits.lock().unwrap().clone();
    (report, waits)
}

#[test]
fn retries_run_as_often_as_asked_and_wait_as_the_backoff_says() {
    let exponential =
        Meta { retry: 5, delay: 1.0, backoff: Backoff::Exponential { cap: 3.0, jitter: false }, ..Meta::default() };
    // Three failures, then success: four runs, waits 1, 2, then 4 capped at 3.
    let (report, waits) = flaky(3, exponential.clone());
    let r = &report.resources[0];
    assert_eq!((r.result, r.attempts), (Outcome::Changed, 4));
    assert_eq!(waits, [1.0, 2.0, 3.0]);
    // Not enough retries: it fails after 1 + 2 runs.
    let (report, waits) = flaky(3, Meta { retry: 2, ..exponential });
    let r = &report.resources[0];
    assert_eq!((r.result, r.attempts), (Outcome::Failed, 3));
    assert_eq!(r.error.as_deref(), Some("failure 3"));
    assert_eq!(waits, [1.0, 2.0]);
    // A constant delay; and no retries at all by default.
    let (_, waits) = flaky(2, Meta { retry: -1, delay: 0.5, ..Meta::default() });
    assert_eq!(waits, [0.5, 0.5]);
    let (report, waits) = flaky(1, Meta::default());
    assert_eq!((report.resources[0].attempts, waits.len()), (1, 0));
}

#[test]
fn jitter_spreads_waits_between_half_and_all_of_the_delay() {
    struct Half;
    impl Clock for Half {
        fn sleep(&self, _: Duration) {}
        fn random(&self) -> f64 {
            0.5
        }
    }
    let meta = Meta { delay: 4.0, backoff: Backoff::Exponential { cap: 100.0, jitter: true }, ..Meta::default() };
    assert_eq!(modelc_runtime::meta::retry_wait(&meta, 1, &Half), Duration::from_secs(3));
}

#[test]
fn a_noop_resource_and_noop_runs_change_no_file() {
    let dir = std::env::temp_dir().join(format!("modelc-meta-noop-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, noop: bool| {
        let path = dir.join(name);
        let mut r = resource(
            "fs::Directory",
            name,
            json!({ "path": path.display().to_string(), "owner": null, "group": null, "permissions": null }),
            Meta { noop, ..Meta::default() },
        );
        r.id = format!("fs::Directory[local,path={}]", path.display());
        r
    };
    let handlers = Handlers::builtin();
    // A resource's own noop: it would change and does not; the other one changes.
    let report = run(vec![file("quiet", true), file("loud", false)], &handlers, &Options::default());
    let outcomes: Vec<Outcome> = report.resources.iter().map(|r| r.result).collect();
    assert_eq!(outcomes, [Outcome::WouldChange, Outcome::Changed], "{report:?}");
    assert!(!dir.join("quiet").exists() && dir.join("loud").exists());
    // `--noop`: nothing turns it back off, not even a resource that is not noop itself.
    let report = run(vec![file("again", false)], &handlers, &Options { dry_run: true, ..Options::default() });
    assert_eq!(report.resources[0].result, Outcome::WouldChange);
    assert!(!dir.join("again").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn guards_keep_a_resource_from_running_and_let_its_dependents_run() {
    let dir = std::env::temp_dir().join(format!("modelc-meta-guards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let marker = dir.join("marker");
    std::fs::write(&marker, "").unwrap();
    let flaky: &'static Flaky = Box::leak(Box::default());
    let mut handlers = Handlers::empty();
    handlers.register("test::Flaky", flaky);
    let guarded = |name: &str, meta: Meta| resource("test::Flaky", name, json!({ "fail_times": 0 }), meta);
    let mut after = guarded("after-created", Meta::default());
    after.requires = vec!["test::Flaky[local,name=created]".to_owned()];
    let resources = vec![
        guarded("created", Meta { creates: Some(marker.display().to_string()), ..Meta::default() }),
        after,
        guarded("only-if-false", Meta { only_if: Some("false".into()), ..Meta::default() }),
        guarded("only-if-true", Meta { only_if: Some("true".into()), ..Meta::default() }),
        guarded("not-if-true", Meta { not_if: Some("true".into()), ..Meta::default() }),
        guarded("not-if-missing", Meta { not_if: Some("/nonexistent/modelc-guard".into()), ..Meta::default() }),
    ];
    let report = run(resources, &handlers, &Options { jobs: 2, ..Options::default() });
    let outcomes: Vec<(&str, Outcome)> = report
        .resources
        .iter()
        .map(|r| (r.id.split("name=").nth(1).unwrap().trim_end_matches(']'), r.result))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("created", Outcome::Guarded),
            ("after-created", Outcome::Changed),
            ("only-if-false", Outcome::Guarded),
            ("only-if-true", Outcome::Changed),
            ("not-if-true", Outcome::Guarded),
            ("not-if-missing", Outcome::Changed),
        ]
    );
    assert!(report.converged(), "guarded is no problem");
    assert!(report.resources[0].error.as_deref().unwrap().contains("exists"));
    // The guarded ones never reached their handler.
    let runs = flaky.runs.lock().unwrap();
    assert!(!runs.contains_key("test::Flaky[local,name=created]") && runs.len() == 3, "{runs:?}");
    drop(runs);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_meta_timeout_bounds_a_command() {
    let mut run_resource = resource(
        "exec::Run",
        "sleeper",
        json!({ "command": "/bin/sleep 30", "creates": "", "cwd": "", "environment": {}, "onlyif": "", "path": "",
                "reload": "", "reload_only": false, "returns": [0], "timeout": 300, "unless": "",
                "skip_on_fail": false }),
        Meta { timeout: Some(0.2), ..Meta::default() },
    );
    run_resource.id = "exec::Run[local,command=/bin/sleep 30]".into();
    let started = std::time::Instant::now();
    let report = run(vec![run_resource], &Handlers::builtin(), &Options::default());
    let r = &report.resources[0];
    assert_eq!(r.result, Outcome::Failed, "{r:?}");
    assert!(r.error.as_deref().unwrap().contains("timeout of 0.2 s"), "{:?}", r.error);
    assert!(started.elapsed() < Duration::from_secs(20), "the command was stopped, not waited for");
}
