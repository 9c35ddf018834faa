//! The engine's rules, with a probe handler that records when each resource ran: ordering,
//! parallelism, failure isolation, events, dry runs, and the resources that never run.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::sync::Mutex;
use std::time::{Duration, Instant};

use modelc_ir::{Resource, ResourceState, Source};
use modelc_runtime::handler::{Context, Done, Handler};
use modelc_runtime::{AgentSelection, Change, Handlers, MemoryContent, Options, Outcome, Plan, RunReport, Silent};
use serde_json::json;

/// Records each run: id, start, end, whether it was refreshed.
#[derive(Default)]
struct Probe {
    runs: Mutex<Vec<(String, Instant, Instant, bool)>>,
}

impl Handler for &'static Probe {
    fn deploy(&self, resource: &Resource, context: &Context<'_>) -> Result<Done, String> {
        let start = Instant::now();
        if let Some(ms) = resource.attributes.get("sleep_ms").and_then(|v| v.as_u64()) {
            std::thread::sleep(Duration::from_millis(ms));
        }
        let result = if resource.attributes.get("fail") == Some(&json!(true)) {
            Err("told to fail".to_owned())
        } else if resource.attributes.get("change") == Some(&json!(true)) {
            Ok(Done::changed(vec![Change::new("value", "old", "new")]))
        } else {
            Ok(Done { refreshed: context.refresh, ..Done::unchanged() })
        };
        self.runs.lock().unwrap().push((resource.id.clone(), start, Instant::now(), context.refresh));
        result
    }
}

fn probe() -> &'static Probe {
    Box::leak(Box::default())
}

fn handlers(probe: &'static Probe) -> Handlers {
    let mut handlers = Handlers::empty();
    handlers.register("test::Probe", probe);
    handlers
}

fn id(name: &str) -> String {
    format!("test::Probe[local,name={name}]")
}

fn probe_resource(name: &str, requires: &[&str], attributes: serde_json::Value) -> Resource {
    let mut all = serde_json::Map::new();
    all.insert("name".into(), json!(name));
    all.extend(attributes.as_object().cloned().unwrap_or_default());
    Resource {
        id: id(name),
        entity_type: "test::Probe".into(),
        agent: "local".into(),
        attributes: all.into_iter().collect(),
        requires: requires.iter().map(|r| id(r)).collect(),
        send_event: false,
        receive_events: true,
        resource_set: None,
        state: ResourceState::Available,
        source: Source { entity: "test::Probe".into(), file: "main.cf".into(), line: 7 }.into(),
        meta: Default::default(),
        notify: Vec::new(),
    }
}

fn local() -> AgentSelection {
    AgentSelection::Named(vec!["local".into()])
}

fn deploy(resources: Vec<Resource>, handlers: &Handlers, options: &Options) -> RunReport {
    let plan = Plan::new(resources, &[], &local(), handlers, &[]);
    modelc_runtime::run(&plan, handlers, &MemoryContent::default(), options, &Silent)
}

fn result(report: &RunReport, name: &str) -> Outcome {
    report.get(&id(name)).unwrap_or_else(|| panic!("no report for {name}")).result
}

fn jobs(n: usize) -> Options {
    Options { jobs: n, dry_run: false, ..Options::default() }
}

#[test]
fn a_failure_blocks_exactly_what_depends_on_it() {
    let p = probe();
    let resources = vec![
        probe_resource("root", &[], json!({})),
        probe_resource("bad", &["root"], json!({"fail": true})),
        probe_resource("after-bad", &["bad"], json!({})),
        probe_resource("far-after-bad", &["after-bad", "root"], json!({})),
        probe_resource("sibling", &["root"], json!({})),
        probe_resource("after-sibling", &["sibling"], json!({})),
    ];
    let report = deploy(resources, &handlers(p), &jobs(3));
    assert_eq!(result(&report, "root"), Outcome::Unchanged);
    assert_eq!(result(&report, "bad"), Outcome::Failed);
    assert_eq!(report.get(&id("bad")).unwrap().error.as_deref(), Some("told to fail"));
    assert_eq!(result(&report, "after-bad"), Outcome::Blocked);
    assert_eq!(report.get(&id("after-bad")).unwrap().blocked_by, vec![id("bad")]);
    assert_eq!(result(&report, "far-after-bad"), Outcome::Blocked);
    assert_eq!(report.get(&id("far-after-bad")).unwrap().blocked_by, vec![id("after-bad")]);
    assert_eq!(result(&report, "sibling"), Outcome::Unchanged);
    assert_eq!(result(&report, "after-sibling"), Outcome::Unchanged);
    let ran: Vec<String> = p.runs.lock().unwrap().iter().map(|r| r.0.clone()).collect();
    assert!(!ran.contains(&id("after-bad")) && !ran.contains(&id("far-after-bad")), "blocked resources never run");
    assert!(!report.converged());
    assert_eq!(report.resources.len(), 6, "every resource has a result");
}

#[test]
fn nothing_starts_before_everything_it_requires_has_finished_and_independent_work_overlaps() {
    let p = probe();
    // A layered graph: every resource of a layer requires two of the layer before.
    let mut resources = Vec::new();
    for layer in 0..5 {
        for k in 0..6 {
            let requires: Vec<String> = if layer == 0 {
                vec![]
            } else {
                vec![format!("{}-{}", layer - 1, k), format!("{}-{}", layer - 1, (k + 1) % 6)]
            };
            let refs: Vec<&str> = requires.iter().map(String::as_str).collect();
            resources.push(probe_resource(&format!("{layer}-{k}"), &refs, json!({"sleep_ms": 20})));
        }
    }
    let requires: Vec<(String, Vec<String>)> = resources.iter().map(|r| (r.id.clone(), r.requires.clone())).collect();
    let report = deploy(resources, &handlers(p), &jobs(4));
    assert!(report.converged());
    let runs = p.runs.lock().unwrap();
    let find = |id: &str| runs.iter().find(|r| r.0 == id).unwrap();
    for (resource, needs) in &requires {
        let (_, start, _, _) = find(resource);
        for need in needs {
            let (_, _, end, _) = find(need);
            assert!(end <= start, "{resource} started before {need} finished");
        }
    }
    // Six resources of 20 ms per layer on four workers: parallel, so well under the serial 600 ms.
    let overlapping = runs.iter().any(|a| runs.iter().any(|b| a.0 != b.0 && a.1 < b.2 && b.1 < a.2));
    assert!(overlapping, "independent resources ran one at a time");
}

#[test]
fn a_changed_sender_refreshes_its_receivers_and_a_missed_refresh_is_kept_for_the_next_run() {
    let p = probe();
    let mut sender = probe_resource("sender", &[], json!({"change": true}));
    sender.send_event = true;
    let receiver = probe_resource("receiver", &["sender"], json!({}));
    let mut deaf = probe_resource("deaf", &["sender"], json!({}));
    deaf.receive_events = false;
    let failing = probe_resource("failing-receiver", &["sender"], json!({"fail": true}));
    let handlers = handlers(p);
    let report = deploy(vec![sender.clone(), receiver, deaf, failing], &handlers, &jobs(2));
    assert_eq!(result(&report, "sender"), Outcome::Changed);
    assert_eq!(result(&report, "receiver"), Outcome::Changed, "a refresh counts as a change");
    assert!(report.get(&id("receiver")).unwrap().refreshed);
    assert_eq!(result(&report, "deaf"), Outcome::Unchanged);
    assert_eq!(report.pending_refreshes, vec![id("failing-receiver")]);

    // The next run: nothing changes, but the failed receiver still gets its refresh.
    let mut quiet = sender;
    quiet.attributes.insert("change", json!(false));
    let fixed = probe_resource("failing-receiver", &["sender"], json!({}));
    let plan = Plan::new(vec![quiet, fixed], &[], &local(), &handlers, &report.pending_refreshes);
    let next = modelc_runtime::run(&plan, &handlers, &MemoryContent::default(), &jobs(2), &Silent);
    assert_eq!(result(&next, "failing-receiver"), Outcome::Changed);
    assert!(next.get(&id("failing-receiver")).unwrap().refreshed);
    assert!(next.pending_refreshes.is_empty());
}

#[test]
fn a_dry_run_does_not_evaluate_what_depends_on_a_would_be_change() {
    let p = probe();
    let resources = vec![
        probe_resource("changes", &[], json!({"change": true})),
        probe_resource("after", &["changes"], json!({})),
        probe_resource("after-after", &["after"], json!({})),
        probe_resource("alone", &[], json!({})),
    ];
    let report = deploy(resources, &handlers(p), &Options { jobs: 2, dry_run: true, ..Options::default() });
    assert_eq!(result(&report, "changes"), Outcome::WouldChange);
    assert_eq!(report.get(&id("changes")).unwrap().changes[0].field, "value");
    assert_eq!(result(&report, "after"), Outcome::NotEvaluated);
    assert_eq!(result(&report, "after-after"), Outcome::NotEvaluated);
    assert_eq!(result(&report, "alone"), Outcome::Unchanged);
    assert!(report.converged());
}

#[test]
fn unknown_values_missing_handlers_and_other_agents_are_reported_and_never_run() {
    let p = probe();
    let mut unknown = probe_resource("unknown", &[], json!({"value": "<<undefined>>"}));
    unknown.state = ResourceState::Undefined;
    let after_unknown = probe_resource("after-unknown", &["unknown"], json!({}));
    let mut no_handler = probe_resource("no-handler", &[], json!({}));
    no_handler.entity_type = "test::Nothing".into();
    let after_no_handler = probe_resource("after-no-handler", &["no-handler"], json!({}));
    let mut elsewhere = probe_resource("elsewhere", &[], json!({}));
    elsewhere.agent = "other-host".into();
    let after_elsewhere = probe_resource("after-elsewhere", &["elsewhere"], json!({}));
    let report = deploy(
        vec![unknown, after_unknown, no_handler, after_no_handler, elsewhere, after_elsewhere],
        &handlers(p),
        &jobs(2),
    );
    let unknown = report.get(&id("unknown")).unwrap();
    assert_eq!(unknown.result, Outcome::Undeployable);
    assert!(unknown.error.as_deref().unwrap().contains("not known at compile time (value)"));
    assert_eq!(result(&report, "after-unknown"), Outcome::Blocked);
    assert_eq!(result(&report, "no-handler"), Outcome::NoHandler);
    assert_eq!(result(&report, "after-no-handler"), Outcome::Blocked);
    assert_eq!(result(&report, "elsewhere"), Outcome::NotHandled);
    assert_eq!(result(&report, "after-elsewhere"), Outcome::Blocked);
    assert!(p.runs.lock().unwrap().is_empty(), "nothing ran");
    assert!(!report.converged());
}

#[test]
fn a_panicking_handler_fails_its_resource_only() {
    struct Panics;
    impl Handler for Panics {
        fn deploy(&self, _: &Resource, _: &Context<'_>) -> Result<Done, String> {
            panic!("boom")
        }
    }
    let p = probe();
    let mut handlers = handlers(p);
    handlers.register("test::Panics", Panics);
    let mut panics = probe_resource("panics", &[], json!({}));
    panics.entity_type = "test::Panics".into();
    let report = deploy(vec![panics, probe_resource("fine", &[], json!({}))], &handlers, &jobs(1));
    assert_eq!(result(&report, "panics"), Outcome::Failed);
    assert!(report.get(&id("panics")).unwrap().error.as_deref().unwrap().contains("boom"));
    assert_eq!(result(&report, "fine"), Outcome::Unchanged);
}

#[test]
fn a_long_chain_of_blocked_resources_is_settled_without_recursion() {
    let p = probe();
    let mut resources = vec![probe_resource("0", &[], json!({"fail": true}))];
    for i in 1..50_000 {
        let previous = (i - 1).to_string();
        resources.push(probe_resource(&i.to_string(), &[&previous], json!({})));
    }
    let report = deploy(resources, &handlers(p), &jobs(2));
    assert_eq!(report.count(Outcome::Blocked), 49_999);
}

#[test]
fn a_dependency_cycle_in_a_hand_written_ir_is_reported_not_waited_on() {
    let p = probe();
    let resources = vec![
        probe_resource("a", &["b"], json!({})),
        probe_resource("b", &["a"], json!({})),
        probe_resource("after", &["a"], json!({})),
        probe_resource("free", &[], json!({})),
    ];
    let report = deploy(resources, &handlers(p), &jobs(2));
    assert_eq!(result(&report, "a"), Outcome::Undeployable);
    assert!(report.get(&id("a")).unwrap().error.as_deref().unwrap().contains("dependency cycle"));
    assert_eq!(result(&report, "b"), Outcome::Undeployable);
    assert_eq!(result(&report, "after"), Outcome::Undeployable);
    assert_eq!(result(&report, "free"), Outcome::Unchanged);
}

#[test]
fn two_resources_with_one_id_are_both_refused() {
    let p = probe();
    let resources =
        vec![probe_resource("twice", &[], json!({"value": 1})), probe_resource("twice", &[], json!({"value": 2}))];
    let report = deploy(resources, &handlers(p), &jobs(1));
    assert!(report.resources.iter().all(|r| r.result == Outcome::Undeployable), "{report:?}");
    assert!(p.runs.lock().unwrap().is_empty());
}
