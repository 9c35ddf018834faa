//! The engine alone: N `std::testing::NullResource`s (a handler that does nothing) in a wide
//! graph (no edges) and in a deep chain (each requires the one before), planned and run; the
//! time per resource is the engine's overhead (target: at most 50 µs). Then 1,000 `fs::File`s
//! deployed into an empty temporary directory and re-checked (all unchanged), one by one and
//! as a group (autogroup). The wide graph again with every meta parameter in use. Last, a storm of
//! 10,000 change events on one rate-limited resource in continuous mode.
//!
//! Run with `cargo bench -p modelc-runtime --bench engine` (optionally followed by `--` and
//! the sizes, e.g. `-- 10000`).
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stdout, reason = "benchmark code")]

use std::time::{Duration, Instant};

use modelc_ir::{Resource, ResourceState, Source};
use modelc_runtime::{AgentSelection, Handlers, MemoryContent, Options, Outcome, Plan, Silent};
use serde_json::json;
use sha1::{Digest, Sha1};

const DEFAULT_SIZES: [usize; 2] = [10_000, 100_000];
const RUNS: usize = 5;

fn resource(
    entity_type: &str,
    key: &str,
    value: &str,
    attributes: serde_json::Value,
    requires: Vec<String>,
) -> Resource {
    let mut all = serde_json::Map::new();
    all.insert(key.into(), json!(value));
    all.extend(attributes.as_object().cloned().unwrap_or_default());
    Resource {
        id: format!("{entity_type}[bench,{key}={value}]"),
        entity_type: entity_type.into(),
        agent: "bench".into(),
        attributes: all.into_iter().collect(),
        requires,
        send_event: false,
        receive_events: true,
        resource_set: None,
        state: ResourceState::Available,
        source: Source { entity: entity_type.into(), file: "main.cf".into(), line: 1 }.into(),
        meta: Default::default(),
        notify: Vec::new(),
    }
}

/// Every meta parameter that is the engine's work, on every resource: retries with an
/// exponential back-off and jitter, a timeout, two counting semaphores, a `creates` guard (a
/// path that does not exist), notifications to the next resource, and `--sema`. (`only_if` and
/// `not_if` run the user's commands: their cost is the command's, not the engine's.)
fn with_all_meta(mut resources: Vec<Resource>) -> Vec<Resource> {
    let ids: Vec<String> = resources.iter().map(|r| r.id.clone()).collect();
    for (i, r) in resources.iter_mut().enumerate() {
        r.meta = modelc_ir::Meta {
            retry: 3,
            delay: 0.1,
            backoff: modelc_ir::Backoff::Exponential { cap: 5.0, jitter: true },
            timeout: Some(30.0),
            sema: vec!["pool:64".into(), format!("shard{}:8", i % 4)],
            creates: Some("/nonexistent/modelc-bench-guard".into()),
            limit: Some(10.0),
            burst: 2,
            ..Default::default()
        }
        .into();
        if let Some(next) = ids.get(i + 1) {
            r.notify.push(modelc_ir::Notify { target: next.clone(), timing: modelc_ir::Timing::Delayed });
        }
    }
    resources
}

fn nulls(n: usize, chain: bool) -> Vec<Resource> {
    (0..n)
        .map(|i| {
            let requires =
                if chain && i > 0 { vec![format!("std::testing::NullResource[bench,name={}]", i - 1)] } else { vec![] };
            resource(
                "std::testing::NullResource",
                "name",
                &i.to_string(),
                json!({"agentname": "bench", "fail": false}),
                requires,
            )
        })
        .collect()
}

/// The best of `RUNS`: planning, and planning plus running.
fn time(resources: &[Resource], jobs: usize) -> (Duration, Duration) {
    let handlers = Handlers::builtin();
    let selection = AgentSelection::Named(vec!["bench".into()]);
    let sema = resources.first().is_some_and(|r| !r.meta.sema.is_empty()).then_some(jobs);
    let options = Options { jobs, dry_run: false, sema, ..Options::default() };
    let (mut plan_best, mut total_best) = (Duration::MAX, Duration::MAX);
    for _ in 0..RUNS {
        let started = Instant::now();
        let plan = Plan::new(resources.to_vec(), &[], &selection, &handlers, &[]);
        let planned = started.elapsed();
        let report = modelc_runtime::run(&plan, &handlers, &MemoryContent::default(), &options, &Silent);
        let total = started.elapsed();
        assert_eq!(report.count(Outcome::Unchanged), resources.len());
        plan_best = plan_best.min(planned);
        total_best = total_best.min(total);
    }
    (plan_best, total_best)
}

fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { DEFAULT_SIZES.to_vec() } else { sizes };
    println!("{:>8} {:>6} {:>5} {:>10} {:>10} {:>14}", "shape", "n", "jobs", "plan (ms)", "run (ms)", "per resource");
    for &n in &sizes {
        for (shape, chain, meta) in [("wide", false, false), ("chain", true, false), ("wide+meta", false, true)] {
            let resources = if meta { with_all_meta(nulls(n, chain)) } else { nulls(n, chain) };
            for jobs in [1, 2] {
                let (plan, total) = time(&resources, jobs);
                println!(
                    "{shape:>8} {n:>6} {jobs:>5} {:>10.1} {:>10.1} {:>11.1} µs",
                    plan.as_secs_f64() * 1e3,
                    total.as_secs_f64() * 1e3,
                    total.as_secs_f64() * 1e6 / n as f64
                );
            }
        }
    }
    files(1_000);
    storm(10_000);
}

/// Continuous mode: a storm of `n` change events on one watched file with `limit` 1 run per
/// second and `burst` 3, as fast as they come: the bucket lets 3 runs through and coalesces
/// the rest into the one run that waits for the next token.
fn storm(n: usize) {
    let dir = std::env::temp_dir().join(format!("modelc-bench-storm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("app.conf");
    let text = "storm\n";
    let hash: String = Sha1::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    let mut content = MemoryContent::default();
    content.0.insert(hash.clone(), text.as_bytes().to_vec());
    let mut file = resource(
        "fs::File",
        "path",
        path.to_str().unwrap(),
        json!({"hash": hash, "owner": null, "group": null, "permissions": null}),
        vec![],
    );
    file.meta = modelc_ir::Meta { limit: Some(1.0), burst: 3, ..Default::default() }.into();
    let id = file.id.clone();
    let handlers = Handlers::builtin();
    let selection = AgentSelection::Named(vec!["bench".into()]);
    let mut c = modelc_runtime::watch::Continuous::new(&handlers, Options::default(), selection, true, true);
    c.swap(vec![file], std::sync::Arc::new(content), &[], &[]);
    c.step(&Silent);
    let started = Instant::now();
    for _ in 0..n {
        c.notice(&path);
        c.step(&Silent);
    }
    let elapsed = started.elapsed();
    let runs = c.vertex(&id).unwrap().runs - 1;
    // The storm takes well under a second, so the bucket adds no token while it lasts.
    let expected = if elapsed < Duration::from_secs(1) { 3 } else { 3 + elapsed.as_secs() };
    println!(
        "{n} events on one resource (limit 1/s, burst 3): {runs} runs during the storm (expected {expected}), \
         {:.2} µs per event; the rest wait for the next token",
        elapsed.as_secs_f64() * 1e6 / n as f64
    );
    assert_eq!(runs, expected);
    std::thread::sleep(Duration::from_millis(1100));
    c.step(&Silent);
    println!("  after the next token: {} runs in all, the coalesced one included", c.vertex(&id).unwrap().runs - 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// 1,000 files of 4 KiB in one directory, applied one by one and then as a group (autogroup):
/// the first deploy writes them, the second re-checks; with the disk flushes each made.
fn files(n: usize) {
    for grouped in [false, true] {
        let dir = std::env::temp_dir().join(format!("modelc-bench-engine-{}-{grouped}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut content = MemoryContent::default();
        let resources: Vec<Resource> = (0..n)
            .map(|i| {
                let text = format!("line {i}\n").repeat(4096 / 8);
                let hash: String = Sha1::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
                content.0.insert(hash.clone(), text.into_bytes());
                let path = dir.join(format!("f{i}.conf"));
                let attributes = json!({"hash": hash, "owner": null, "group": null, "permissions": 644,
                    "purged": false, "via": {"method_name": "local", "name": ""}});
                resource("fs::File", "path", path.to_str().unwrap(), attributes, vec![])
            })
            .collect();
        let handlers = Handlers::builtin();
        let selection = AgentSelection::Named(vec!["bench".into()]);
        let options = Options { jobs: 2, dry_run: false, ..Options::default() };
        let how = if grouped { "as a group" } else { "one by one" };
        for (what, expect) in [("deploy", Outcome::Changed), ("re-check", Outcome::Unchanged)] {
            let started = Instant::now();
            let syncs = modelc_runtime::handlers::disk_syncs();
            let mut plan = Plan::new(resources.clone(), &[], &selection, &handlers, &[]);
            if grouped {
                plan.add_autogroups(&handlers);
            }
            let report = modelc_runtime::run(&plan, &handlers, &content, &options, &Silent);
            let elapsed = started.elapsed();
            assert_eq!(report.count(expect), n, "{what}");
            println!(
                "{n} fs::File {what} {how}: {:.1} ms ({:.1} µs per file), {} disk flushes",
                elapsed.as_secs_f64() * 1e3,
                elapsed.as_secs_f64() * 1e6 / n as f64,
                modelc_runtime::handlers::disk_syncs() - syncs
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
