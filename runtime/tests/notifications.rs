//! Notifications with a timing, observed through the order in which handlers run (one worker,
//! so the order is the engine's choice and not the scheduler's): `immediately` refreshes the
//! receiver right after the sender, before what else requires the sender; `delayed` refreshes it
//! once at the end, even when something else failed; `before` refreshes it before the sender
//! changes, and not at all when the sender would not change.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

mod support;

use std::sync::{Arc, Mutex};

use modelc_ir::{Meta, Notify, Resource, Timing};
use modelc_runtime::handler::{Context, Done, Handler};
use modelc_runtime::{Change, Handlers, Options, Outcome, RunReport};
use serde_json::json;

/// Records every run as `name`, `name+refresh` or `name?` (a dry run), in order. A resource
/// with `changes` true finds a difference; one with `fail` true fails.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl Handler for Recorder {
    fn deploy(&self, resource: &Resource, context: &Context<'_>) -> Result<Done, String> {
        let name = resource.attributes["name"].as_str().unwrap();
        let suffix = match (context.dry_run, context.refresh) {
            (true, _) => "?",
            (false, true) => "+refresh",
            (false, false) => "",
        };
        self.0.lock().unwrap().push(format!("{name}{suffix}"));
        if resource.attributes.get("fail") == Some(&json!(true)) {
            return Err("it fails".into());
        }
        let changes = resource.attributes.get("changes") == Some(&json!(true));
        Ok(Done {
            changes: if changes { vec![Change::new("value", "old", "new")] } else { Vec::new() },
            refreshed: context.refresh && !context.dry_run,
            ..Done::default()
        })
    }
}

fn node(name: &str, changes: bool) -> Resource {
    support::named("test::Node", name, json!({ "changes": changes }), Meta::default())
}

fn failing(name: &str) -> Resource {
    support::named("test::Node", name, json!({ "fail": true }), Meta::default())
}

fn notify(sender: &mut Resource, receiver: &Resource, timing: Timing) {
    sender.notify.push(Notify { target: receiver.id.clone(), timing });
}

fn requires(dependent: &mut Resource, required: &Resource) {
    dependent.requires.push(required.id.clone());
}

fn run_with(resources: Vec<Resource>, dry_run: bool) -> (RunReport, Vec<String>) {
    let recorder = Recorder::default();
    let mut handlers = Handlers::empty();
    handlers.register("test::Node", recorder.clone());
    let options = Options { jobs: 1, dry_run, ..Options::default() };
    let report = support::run(resources, &handlers, &options);
    let order = recorder.0.lock().unwrap().clone();
    (report, order)
}

fn run(resources: Vec<Resource>) -> (RunReport, Vec<String>) {
    run_with(resources, false)
}

fn result(report: &RunReport, name: &str) -> Outcome {
    report.resources.iter().find(|r| r.id.ends_with(&format!("name={name}]"))).unwrap().result
}

#[test]
fn immediately_refreshes_the_receiver_before_anything_else_that_requires_the_sender() {
    let sender = node("sender", true);
    let mut other = node("other", false);
    requires(&mut other, &sender);
    let receiver = node("receiver", false);
    // Without the notification, `other` (listed first) runs right after the sender.
    let (_, order) = run(vec![sender.clone(), other.clone(), receiver.clone()]);
    assert_eq!(order, ["sender", "other", "receiver"]);

    let mut notifying = sender.clone();
    notify(&mut notifying, &receiver, Timing::Immediately);
    let (report, order) = run(vec![notifying, other, receiver]);
    assert_eq!(order, ["sender", "receiver+refresh", "other"]);
    assert!(report.get(&node("receiver", false).id).unwrap().refreshed);
    assert!(report.notifications.is_empty(), "an immediate refresh is the receiver's own deploy");
}

#[test]
fn immediately_needs_no_events_and_refreshes_only_after_a_change() {
    let mut receiver = node("receiver", false);
    receiver.receive_events = false;
    let mut sender = node("sender", true);
    assert!(!sender.send_event);
    notify(&mut sender, &receiver, Timing::Immediately);
    let (_, order) = run(vec![receiver.clone(), sender]);
    assert_eq!(order, ["sender", "receiver+refresh"], "the receiver runs after the sender although listed first");

    let mut quiet = node("sender", false);
    notify(&mut quiet, &receiver, Timing::Immediately);
    let (_, order) = run(vec![receiver, quiet]);
    assert_eq!(order, ["sender", "receiver"], "no change, no refresh; the order stays");
}

#[test]
fn a_failed_immediate_receiver_does_not_block_what_requires_only_the_sender() {
    let mut sender = node("sender", true);
    let receiver = failing("receiver");
    notify(&mut sender, &receiver, Timing::Immediately);
    let mut other = node("other", false);
    requires(&mut other, &sender);
    let (report, order) = run(vec![sender, other, receiver]);
    assert_eq!(order, ["sender", "receiver+refresh", "other"]);
    assert_eq!(result(&report, "receiver"), Outcome::Failed);
    assert_eq!(result(&report, "other"), Outcome::Unchanged, "it waited for the receiver, but only for the order");
    assert_eq!(report.pending_refreshes, [node("receiver", false).id], "the refresh is owed to the next run");
}

#[test]
fn delayed_refreshes_once_at_the_end_even_after_a_failure_elsewhere() {
    let receiver = node("receiver", false);
    let mut first = node("first", true);
    let mut second = node("second", true);
    let mut quiet = node("quiet", false);
    for sender in [&mut first, &mut second, &mut quiet] {
        notify(sender, &receiver, Timing::Delayed);
    }
    let broken = failing("broken");
    let mut after = node("after", false);
    requires(&mut after, &first);
    let (report, order) = run(vec![first, receiver.clone(), broken, second, quiet, after]);
    // A worker goes on with what its resource released (`after`), then with the queue.
    assert_eq!(order, ["first", "after", "receiver", "broken", "second", "quiet", "receiver+refresh"]);
    assert_eq!(report.notifications.len(), 1, "two senders changed; one refresh");
    let n = &report.notifications[0];
    assert_eq!((n.timing, n.result), (Timing::Delayed, Outcome::Changed));
    assert_eq!(n.senders, [node("first", true).id, node("second", true).id], "the senders that changed");
    assert!(!report.converged(), "`broken` still fails the run");
    assert!(report.pending_refreshes.is_empty());
}

#[test]
fn a_delayed_refresh_of_a_receiver_that_did_not_deploy_is_kept_for_the_next_run() {
    let receiver = failing("receiver");
    let mut sender = node("sender", true);
    notify(&mut sender, &receiver, Timing::Delayed);
    let (report, order) = run(vec![sender, receiver.clone()]);
    assert_eq!(order, ["sender", "receiver"], "a receiver that failed is not refreshed");
    assert!(report.notifications.is_empty());
    assert_eq!(report.pending_refreshes, [receiver.id]);
}

#[test]
fn before_refreshes_the_receiver_before_the_sender_changes_and_only_then() {
    let receiver = node("receiver", false);
    let mut sender = node("sender", true);
    notify(&mut sender, &receiver, Timing::Before);
    let (report, order) = run(vec![sender.clone(), receiver.clone()]);
    assert_eq!(order, ["receiver", "sender?", "receiver+refresh", "sender"]);
    assert_eq!(report.notifications.len(), 1);
    assert_eq!((report.notifications[0].timing, report.notifications[0].result), (Timing::Before, Outcome::Changed));
    assert_eq!(result(&report, "sender"), Outcome::Changed);

    let mut quiet = node("sender", false);
    notify(&mut quiet, &receiver, Timing::Before);
    let (report, order) = run(vec![quiet, receiver]);
    assert_eq!(order, ["receiver", "sender?", "sender"], "it would not change: no refresh");
    assert!(report.notifications.is_empty());
}

#[test]
fn a_failed_before_refresh_keeps_the_sender_from_changing() {
    // The receiver deploys (unchanged) and then fails its refresh.
    struct FailsOnRefresh;
    impl Handler for FailsOnRefresh {
        fn deploy(&self, _: &Resource, context: &Context<'_>) -> Result<Done, String> {
            if context.refresh { Err("cannot stop the service".into()) } else { Ok(Done::unchanged()) }
        }
    }
    let receiver = support::named("test::Service", "svc", json!({}), Meta::default());
    let mut sender = node("sender", true);
    notify(&mut sender, &receiver, Timing::Before);
    let recorder = Recorder::default();
    let mut handlers = Handlers::empty();
    handlers.register("test::Node", recorder.clone());
    handlers.register("test::Service", FailsOnRefresh);
    let report = support::run(vec![sender, receiver.clone()], &handlers, &Options { jobs: 1, ..Options::default() });
    assert_eq!(*recorder.0.lock().unwrap(), ["sender?"], "the sender was checked, never applied");
    assert_eq!(result(&report, "sender"), Outcome::Failed);
    assert_eq!(report.notifications[0].result, Outcome::Failed);
    assert_eq!(report.pending_refreshes, [receiver.id]);
}

#[test]
fn a_dry_run_reports_the_refreshes_it_would_make_and_runs_nothing_for_real() {
    let receiver = node("receiver", false);
    let mut sender = node("sender", true);
    notify(&mut sender, &receiver, Timing::Delayed);
    let before_receiver = node("guard", false);
    notify(&mut sender, &before_receiver, Timing::Before);
    let (report, order) = run_with(vec![sender, receiver, before_receiver], true);
    assert!(order.iter().all(|run| run.ends_with('?')), "every run was a dry run: {order:?}");
    let results: Vec<(Timing, Outcome)> = report.notifications.iter().map(|n| (n.timing, n.result)).collect();
    assert_eq!(results, [(Timing::Before, Outcome::WouldChange), (Timing::Delayed, Outcome::WouldChange)]);
    assert_eq!(result(&report, "sender"), Outcome::WouldChange);
}

#[test]
fn an_order_a_notification_cannot_keep_is_reported_on_the_sender() {
    let receiver = node("receiver", false);
    let mut sender = node("sender", true);
    requires(&mut sender, &receiver);
    notify(&mut sender, &receiver, Timing::Immediately);
    let (report, order) = run(vec![sender, receiver]);
    assert_eq!(order, ["receiver"]);
    let sender = report.resources.iter().find(|r| r.id.contains("sender")).unwrap();
    assert_eq!(sender.result, Outcome::Undeployable);
    assert!(sender.error.as_deref().unwrap().contains("notifies `test::Node[local,name=receiver]` immediately"));
}
