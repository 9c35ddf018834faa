//! What the server keeps beside the versions (`postgres/fleet.rs`), against a real PostgreSQL:
//! releases only move forward and name the agents they changed; a requirement is met only by a
//! result at least as new as the last release that changed its agent; an action is recorded
//! once however often it is sent; a lease keeps a second holder out until it expires; tokens
//! are found by hash and revoked.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

mod support;

use modelc_ir::Resource;
use modelc_store::postgres::fleet::{Action, Role};
use modelc_store::{PgStore, Store, StoreError};
use modelc_test_postgres::{PASSWORD, Postgres, USER};
use support::{ir, meta, resource};

fn store(server: &Postgres, database: &str) -> PgStore {
    server.create_database(database).unwrap();
    let url = format!("postgresql://{USER}:{PASSWORD}@127.0.0.1:{}/{database}", server.port());
    modelc_store::migrate(&url).unwrap();
    PgStore::open(&url).unwrap()
}

/// `name` on `agent`, in set `set`.
fn on(agent: &str, name: &str, set: &str, value: i64, requires: &[&str]) -> Resource {
    let mut r = resource(name, Some(set), value, &[]);
    r.agent = agent.to_owned();
    r.id = format!("test::R[{agent},name={name}]");
    r.requires = requires.iter().map(|s| (*s).to_owned()).collect();
    r
}

fn action(id: &str, agent: &str, version: u64, action_id: &str, result: Option<&str>, started: &str) -> Action {
    Action {
        action_id: action_id.to_owned(),
        id: id.to_owned(),
        agent: agent.to_owned(),
        version,
        result: result.map(str::to_owned),
        started: started.to_owned(),
        finished: result.map(|_| started.replace(":00.", ":01.")),
        error: None,
        changes: serde_json::Value::Null,
        facts: Default::default(),
    }
}

/// What agents' actions and local deploys learnt is kept per resource and name, the latest
/// value winning (within one batch too), and read back in order by `facts`.
#[test]
fn facts_from_actions_and_deploys_are_kept_the_latest_winning() {
    let Some(server) = Postgres::start("the fleet test") else { return };
    let mut store = store(&server, "facts");
    assert_eq!(store.facts().unwrap(), Vec::new());
    let vm = "test::R[a,name=vm]";
    let mut ended = action(vm, "a", 1, "x1", Some("changed"), "2026-01-01T00:00:00.000Z");
    ended.facts = [("ip".to_owned(), "10.0.0.5".to_owned()), ("size".to_owned(), "3".to_owned())].into();
    // The same action sent twice, and a later one in the same batch that learns a new size.
    let mut later = action(vm, "a", 1, "x2", Some("unchanged"), "2026-01-01T00:10:00.000Z");
    later.facts = [("size".to_owned(), "4".to_owned())].into();
    store.record_actions(&[ended.clone(), ended, later]).unwrap();
    let fact = |id: &str, name: &str, value: &str| modelc_store::Fact {
        id: id.to_owned(),
        name: name.to_owned(),
        value: value.to_owned(),
    };
    assert_eq!(store.facts().unwrap(), vec![fact(vm, "ip", "10.0.0.5"), fact(vm, "size", "4")]);
    // A local deploy's record keeps its facts too.
    let record = modelc_store::DeployRecord {
        run: 0,
        version: None,
        source: "test".to_owned(),
        started: "2026-01-01T01:00:00.000Z".to_owned(),
        ended: "2026-01-01T01:00:01.000Z".to_owned(),
        agents: vec!["b".to_owned()],
        converged: true,
        results: Vec::new(),
    };
    let carryover = modelc_store::Carryover {
        facts: vec![fact(vm, "ip", "10.0.0.9"), fact("test::R[b,name=db]", "ip", "10.0.0.7")],
        ..Default::default()
    };
    store.record_deploy(&record, &carryover).unwrap();
    assert_eq!(
        store.facts().unwrap(),
        vec![fact(vm, "ip", "10.0.0.9"), fact(vm, "size", "4"), fact("test::R[b,name=db]", "ip", "10.0.0.7")]
    );
}

#[test]
fn releases_move_forward_and_name_the_agents_they_change() {
    let Some(server) = Postgres::start("the fleet test") else { return };
    let mut store = store(&server, "releases");
    assert_eq!(store.release(None), Err(StoreError::Empty));
    let a = on("a", "x", "sa", 1, &[]);
    let b = on("b", "y", "sb", 1, &[]);
    store.export_full(&ir(vec![a.clone(), b.clone()], &[]), &meta("1")).unwrap();
    let first = store.release(None).unwrap();
    assert_eq!((first.version, first.agents.clone(), first.already), (1, vec!["a".to_owned(), "b".to_owned()], false));
    // Only b's set changes: only b is named.
    store.export_partial(&ir(vec![on("b", "y", "sb", 2, &[])], &[]), &Default::default(), &meta("2")).unwrap();
    store.export_partial(&ir(vec![on("a", "x", "sa", 3, &[])], &[]), &Default::default(), &meta("3")).unwrap();
    let second = store.release(Some(2)).unwrap();
    assert_eq!(second.agents, vec!["b".to_owned()]);
    // Releasing it again changes nothing; an older one is refused.
    assert!(store.release(Some(2)).unwrap().already);
    assert!(matches!(store.release(Some(1)), Err(StoreError::Conflict(_))));
    assert_eq!(store.release(Some(9)), Err(StoreError::NoSuchVersion(9)));
    // The latest: 3 changed a only since 2.
    assert_eq!(store.release(None).unwrap().agents, vec!["a".to_owned()]);
    assert_eq!(store.latest_release().unwrap().map(|(v, _)| v), Some(3));
    assert_eq!(store.due_version("b", 3).unwrap(), Some(2));
    assert_eq!(store.due_version("a", 2).unwrap(), Some(1));
    assert_eq!(store.due_version("c", 3).unwrap(), None);
    let mine = store.agent_resources(&["a".to_owned()], 2).unwrap();
    assert_eq!(mine, vec![a]);
    // A removed resource changes its agent too.
    store.export_full(&ir(vec![on("a", "x", "sa", 3, &[])], &[]), &meta("4")).unwrap();
    assert_eq!(store.release(None).unwrap().agents, vec!["b".to_owned()]);
}

#[test]
fn a_requirement_is_met_only_by_a_result_new_enough() {
    let Some(server) = Postgres::start("the fleet test") else { return };
    let mut store = store(&server, "requirements");
    // One set: a set may not require another's resources.
    let x = on("a", "x", "s", 1, &[]);
    let y = on("b", "y", "s", 1, &[&x.id]);
    store.export_full(&ir(vec![x.clone(), y], &[]), &meta("1")).unwrap();
    store.release(None).unwrap();
    let unmet = store.requirements(std::slice::from_ref(&x.id), 1).unwrap();
    assert_eq!(unmet[0].result, None, "no result yet");
    // Started, not finished: still nothing.
    store.record_actions(&[action(&x.id, "a", 1, "act-1", None, "2026-11-27T10:00:00.000Z")]).unwrap();
    assert_eq!(store.requirements(std::slice::from_ref(&x.id), 1).unwrap()[0].result, None);
    store.record_actions(&[action(&x.id, "a", 1, "act-1", Some("changed"), "2026-11-27T10:00:00.000Z")]).unwrap();
    assert_eq!(store.requirements(std::slice::from_ref(&x.id), 1).unwrap()[0].result.as_deref(), Some("changed"));
    // x changes in version 2: its result of version 1 no longer meets a requirement in 2, but
    // still does in 1.
    let y1 = on("b", "y", "s", 1, &[&x.id]);
    store.export_partial(&ir(vec![on("a", "x", "s", 2, &[]), y1], &[]), &Default::default(), &meta("2")).unwrap();
    assert_eq!(store.release(None).unwrap().agents, ["a"]);
    assert_eq!(store.requirements(std::slice::from_ref(&x.id), 2).unwrap()[0].result, None);
    assert_eq!(store.requirements(std::slice::from_ref(&x.id), 1).unwrap()[0].result.as_deref(), Some("changed"));
    store.record_actions(&[action(&x.id, "a", 2, "act-2", Some("failed"), "2026-11-27T10:01:00.000Z")]).unwrap();
    assert_eq!(store.requirements(std::slice::from_ref(&x.id), 2).unwrap()[0].result.as_deref(), Some("failed"));
    // A version that changes only b: a's result of version 2 still counts in version 3.
    let (x2, y2) = (on("a", "x", "s", 2, &[]), on("b", "y", "s", 2, &[&x.id]));
    store.export_partial(&ir(vec![x2, y2], &[]), &Default::default(), &meta("3")).unwrap();
    store.release(None).unwrap();
    assert_eq!(store.requirements(std::slice::from_ref(&x.id), 3).unwrap()[0].result.as_deref(), Some("failed"));
}

#[test]
fn an_action_is_recorded_once_however_often_it_is_sent() {
    let Some(server) = Postgres::start("the fleet test") else { return };
    let mut store = store(&server, "actions");
    let started = action("test::R[a,name=x]", "a", 1, "act-1", None, "2026-11-27T10:00:00.000Z");
    let finished = action("test::R[a,name=x]", "a", 1, "act-1", Some("changed"), "2026-11-27T10:00:00.000Z");
    assert_eq!(store.record_actions(std::slice::from_ref(&started)).unwrap(), 1);
    assert_eq!(store.record_actions(&[started.clone(), finished.clone()]).unwrap(), 1, "the end is added");
    assert_eq!(store.record_actions(&[started, finished.clone()]).unwrap(), 0, "nothing new");
    // A finished action is never changed again.
    let mut other = finished.clone();
    other.result = Some("failed".into());
    assert_eq!(store.record_actions(&[other]).unwrap(), 0);
    assert_eq!(store.actions(None, None).unwrap(), vec![finished]);
    assert!(store.actions(Some("b"), None).unwrap().is_empty());
    assert!(store.actions(None, Some("2026-11-28")).unwrap().is_empty());
    // The resource's latest state is the later action.
    store
        .record_actions(&[action("test::R[a,name=x]", "a", 1, "act-2", Some("unchanged"), "2026-11-27T11:00:00.000Z")])
        .unwrap();
    let status = store.status(None).unwrap();
    assert_eq!(status.resources.len(), 1);
    assert_eq!(status.resources[0].result, "unchanged");
}

#[test]
fn a_lease_keeps_a_second_holder_out_until_it_expires() {
    let Some(server) = Postgres::start("the fleet test") else { return };
    let mut store = store(&server, "leases");
    assert_eq!(store.take_lease("a", "one", 30.0).unwrap(), Ok(()));
    assert_eq!(store.take_lease("a", "one", 30.0).unwrap(), Ok(()), "renewed by its holder");
    assert!(store.take_lease("a", "two", 30.0).unwrap().is_err());
    assert!(store.holds_lease("a", "one").unwrap());
    // A lease that ran out is taken; a started action of the lost agent shows so.
    store.take_lease("b", "three", 0.2).unwrap().unwrap();
    store.record_actions(&[action("test::R[b,name=y]", "b", 1, "act-9", None, "2026-11-27T10:00:00.000Z")]).unwrap();
    assert_eq!(store.status(None).unwrap().resources[0].result, "deploying");
    std::thread::sleep(std::time::Duration::from_millis(400));
    assert_eq!(store.status(None).unwrap().resources[0].result, "agent-lost");
    assert_eq!(store.take_lease("b", "four", 30.0).unwrap(), Ok(()));
    store.drop_lease("a", "one").unwrap();
    assert_eq!(store.take_lease("a", "two", 30.0).unwrap(), Ok(()));
    let agents = store.status(None).unwrap().agents;
    assert_eq!(agents.iter().map(|a| (a.name.as_str(), a.connected)).collect::<Vec<_>>(), [("a", true), ("b", true)]);
}

#[test]
fn tokens_are_found_by_hash_and_revoked() {
    let Some(server) = Postgres::start("the fleet test") else { return };
    let mut store = store(&server, "tokens");
    let token = store.create_token(b"hash-1", Role::Agent, &["a".to_owned()]).unwrap();
    assert_eq!(store.token_by_hash(b"hash-1").unwrap(), Some(token.clone()));
    assert_eq!(store.token_by_hash(b"hash-2").unwrap(), None);
    assert!(store.revoke_token(&token.id).unwrap());
    assert!(!store.revoke_token("t-none").unwrap());
    assert!(store.token_by_hash(b"hash-1").unwrap().unwrap().revoked.is_some());
    assert_eq!(store.tokens().unwrap().len(), 1);
}

#[test]
fn an_export_released_after_a_newer_one_leaves_the_newer_released() {
    let Some(server) = Postgres::start("the fleet test") else { return };
    let mut store = store(&server, "racing");
    for value in 1..=2 {
        store.export_full(&ir(vec![on("a", "x", "sa", value, &[])], &[]), &meta("v")).unwrap();
    }
    assert_eq!(store.release(Some(2)).unwrap().version, 2);
    // Exports racing: the older one's release finds the newer released, which holds it.
    let release = store.release_at_least(1).unwrap();
    assert_eq!((release.version, release.already), (2, true));
    assert!(matches!(store.release(Some(1)), Err(StoreError::Conflict(_))), "an explicit stale release is refused");
    store.export_full(&ir(vec![on("a", "x", "sa", 3, &[])], &[]), &meta("v")).unwrap();
    assert_eq!(store.release_at_least(3).unwrap().version, 3);
}

#[test]
fn prune_keeps_the_latest_release_and_what_a_live_agent_deploys() {
    let Some(server) = Postgres::start("the fleet test") else { return };
    let mut store = store(&server, "keep");
    for value in 1..=5 {
        store.export_full(&ir(vec![on("a", "x", "sa", value, &[])], &[]), &meta("v")).unwrap();
    }
    store.release(Some(2)).unwrap();
    store.take_lease("a", "live", 30.0).unwrap().unwrap();
    store.agent_progress("a", 3, false).unwrap();
    store.take_lease("b", "dead", 0.1).unwrap().unwrap();
    store.agent_progress("b", 1, false).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    // Version 1 is held only by an agent whose lease ran out.
    assert_eq!(store.prune(1, false).unwrap().kept, [2, 3, 5]);
}
