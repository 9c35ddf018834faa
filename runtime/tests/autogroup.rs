//! Autogroup: files in one directory are applied as one group that flushes to disk twice (their
//! contents, then the directory) instead of twice per file (counted), on real files; the report lists every member;
//! a group holds the union of its members' semaphores; members that require one another, or
//! whose meta parameters differ, are not grouped; a member blocked by a failure does not hold
//! back the rest; failing members are retried.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use modelc_ir::{Meta, Resource};
use modelc_runtime::handler::{Context, Done, Handler};
use modelc_runtime::{Change, Handlers, MemoryContent, Options, Outcome, Plan, Silent};
use serde_json::json;

fn file(path: &str, content: &str) -> (Resource, (String, Vec<u8>)) {
    use sha1::Digest as _;
    let hash = format!("{:x}", sha1::Sha1::digest(content.as_bytes()));
    let attributes = json!({ "hash": hash, "owner": null, "group": null, "permissions": null });
    (support::keyed("fs::File", "path", path, attributes), (hash, content.as_bytes().to_vec()))
}

fn grouped_plan(resources: Vec<Resource>, handlers: &Handlers) -> Plan {
    let mut plan = support::plan(resources, handlers);
    plan.add_autogroups(handlers);
    plan
}

/// The only test here that writes files with the real handler: the disk-sync counter is
/// process-wide, so nothing else may write while it counts.
#[test]
fn files_in_one_directory_are_written_as_a_group_that_flushes_the_directory_once() {
    let dir = tempfile::tempdir().unwrap();
    let handlers = Handlers::builtin();
    let deploy = |sub: &str, group: bool| {
        std::fs::create_dir(dir.path().join(sub)).unwrap();
        let mut content = MemoryContent::default();
        let mut resources = Vec::new();
        for n in 0..20 {
            let path = dir.path().join(format!("{sub}/f{n}.conf"));
            let (r, (hash, bytes)) = file(path.to_str().unwrap(), &format!("value {n}\n"));
            content.0.insert(hash, bytes);
            resources.push(r);
        }
        let mut plan = support::plan(resources, &handlers);
        if group {
            assert_eq!(plan.add_autogroups(&handlers), 1, "one directory, one group");
        }
        let before = modelc_runtime::handlers::disk_syncs();
        let report = modelc_runtime::run(&plan, &handlers, &content, &Options::default(), &Silent);
        (report, modelc_runtime::handlers::disk_syncs() - before)
    };
    let (alone, alone_syncs) = deploy("alone", false);
    let (grouped, grouped_syncs) = deploy("grouped", true);
    assert_eq!(alone_syncs, 40, "each file: the file and its directory");
    assert_eq!(grouped_syncs, 2, "the file system once (all twenty contents), then the directory");
    for (report, sub) in [(&alone, "alone"), (&grouped, "grouped")] {
        assert_eq!(report.count(Outcome::Changed), 20, "{sub}");
        for n in 0..20 {
            let text = std::fs::read_to_string(dir.path().join(format!("{sub}/f{n}.conf"))).unwrap();
            assert_eq!(text, format!("value {n}\n"));
        }
    }
    let leader = &grouped.resources[0].id;
    assert!(grouped.resources.iter().all(|r| r.group.as_ref() == Some(leader)), "every member is listed");
    assert!(alone.resources.iter().all(|r| r.group.is_none()));

    // A second run: nothing to write, nothing flushed.
    let again = modelc_runtime::handlers::disk_syncs();
    let (unchanged, _) = {
        let mut content = MemoryContent::default();
        let resources: Vec<Resource> = (0..20)
            .map(|n| {
                let path = dir.path().join(format!("grouped/f{n}.conf"));
                let (r, (hash, bytes)) = file(path.to_str().unwrap(), &format!("value {n}\n"));
                content.0.insert(hash, bytes);
                r
            })
            .collect();
        let plan = grouped_plan(resources, &handlers);
        (modelc_runtime::run(&plan, &handlers, &content, &Options::default(), &Silent), ())
    };
    assert_eq!(unchanged.count(Outcome::Unchanged), 20);
    assert_eq!(modelc_runtime::handlers::disk_syncs(), again);
}

/// One handler call: the members' names, when it started and when it ended.
type Call = (Vec<String>, Instant, Instant);

/// Groups by `group` attribute; records each call.
#[derive(Clone, Default)]
struct Batch {
    calls: Arc<Mutex<Vec<Call>>>,
}

impl Handler for Batch {
    fn deploy(&self, resource: &Resource, context: &Context<'_>) -> Result<Done, String> {
        self.deploy_group(&[resource], std::slice::from_ref(context)).pop().unwrap()
    }

    fn group_key(&self, resource: &Resource) -> Option<String> {
        resource.attributes.get("group").and_then(|g| g.as_str()).map(str::to_owned)
    }

    fn deploy_group(&self, members: &[&Resource], _contexts: &[Context<'_>]) -> Vec<Result<Done, String>> {
        let start = Instant::now();
        std::thread::sleep(Duration::from_millis(30));
        let names: Vec<String> = members.iter().map(|r| r.attributes["name"].as_str().unwrap().to_owned()).collect();
        self.calls.lock().unwrap().push((names, start, Instant::now()));
        let attempt = self.calls.lock().unwrap().len();
        members
            .iter()
            .map(|r| match r.attributes.get("fail_first") {
                Some(v) if v == true && attempt == 1 => Err("not yet".to_owned()),
                _ => Ok(Done::changed(vec![Change::new("value", "old", "new")])),
            })
            .collect()
    }
}

fn batch(name: &str, group: Option<&str>, meta: Meta) -> Resource {
    support::named("test::Batch", name, json!({ "group": group }), meta)
}

fn run_batch(resources: Vec<Resource>, options: &Options) -> (modelc_runtime::RunReport, Vec<Vec<String>>) {
    let handler = Batch::default();
    let mut handlers = Handlers::empty();
    handlers.register("test::Batch", handler.clone());
    handlers.register("std::testing::NullResource", modelc_runtime::handlers::null::NullHandler);
    let plan = grouped_plan(resources, &handlers);
    let report = modelc_runtime::run(&plan, &handlers, &MemoryContent::default(), options, &Silent);
    let calls = handler.calls.lock().unwrap().iter().map(|(names, _, _)| names.clone()).collect();
    (report, calls)
}

#[test]
fn a_group_holds_the_union_of_its_members_semaphores() {
    let with = |sema: &str| Meta { sema: vec![sema.to_owned()], ..Meta::default() };
    let resources = vec![
        batch("a", Some("g"), with("x")),
        batch("b", Some("g"), with("y")),
        // Alone (no group), holding `y`: it must not overlap the group, which holds `x` and `y`.
        batch("solo", None, with("y")),
    ];
    let handler = Batch::default();
    let mut handlers = Handlers::empty();
    handlers.register("test::Batch", handler.clone());
    let plan = grouped_plan(resources, &handlers);
    assert_eq!(plan.groups, [vec![0, 1]]);
    let options = Options { jobs: 4, ..Options::default() };
    let report = modelc_runtime::run(&plan, &handlers, &MemoryContent::default(), &options, &Silent);
    assert!(report.converged());
    let calls = handler.calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 2);
    let (group, solo) = if calls[0].0.len() == 2 { (&calls[0], &calls[1]) } else { (&calls[1], &calls[0]) };
    assert!(group.2 <= solo.1 || solo.2 <= group.1, "the group and `solo` overlapped although both hold `y`");
}

#[test]
fn members_that_require_one_another_or_differ_in_meta_are_not_grouped() {
    let handlers = {
        let mut h = Handlers::empty();
        h.register("test::Batch", Batch::default());
        h.register("std::testing::NullResource", modelc_runtime::handlers::null::NullHandler);
        h
    };
    // a → x → b: grouping a and b would put one apply both before and after x.
    let a = batch("a", Some("g"), Meta::default());
    let mut x = support::named("std::testing::NullResource", "x", json!({}), Meta::default());
    x.requires.push(a.id.clone());
    let mut b = batch("b", Some("g"), Meta::default());
    b.requires.push(x.id.clone());
    let c = batch("c", Some("g"), Meta::default());
    let noop = batch("quiet", Some("g"), Meta { noop: true, ..Meta::default() });
    let off = batch("off", Some("g"), Meta { autogroup: false, ..Meta::default() });
    let plan = grouped_plan(vec![a, x, b, c, noop, off], &handlers);
    assert_eq!(plan.groups, [vec![0, 3]], "a with c; b requires a through x; quiet has other meta; off is off");
}

#[test]
fn a_blocked_member_does_not_hold_back_the_others_and_failing_members_are_retried() {
    let failing = support::named("std::testing::NullResource", "broken", json!({ "fail": true }), Meta::default());
    let mut blocked = batch("blocked", Some("g"), Meta { retry: 1, ..Meta::default() });
    blocked.requires.push(failing.id.clone());
    let mut flaky = batch("flaky", Some("g"), Meta { retry: 1, ..Meta::default() });
    flaky.attributes.insert("fail_first", json!(true));
    let steady = batch("steady", Some("g"), Meta { retry: 1, ..Meta::default() });
    let (report, calls) = run_batch(vec![failing, blocked, flaky, steady], &Options { jobs: 2, ..Options::default() });
    assert_eq!(calls, [vec!["flaky".to_owned(), "steady".to_owned()], vec!["flaky".to_owned()]]);
    let result = |name: &str| report.resources.iter().find(|r| r.id.ends_with(&format!("={name}]"))).unwrap();
    assert_eq!(result("blocked").result, Outcome::Blocked);
    assert_eq!((result("flaky").result, result("flaky").attempts), (Outcome::Changed, 2));
    assert_eq!((result("steady").result, result("steady").attempts), (Outcome::Changed, 1));
}
