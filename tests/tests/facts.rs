//! `std::getfact` reads the facts deploys learnt, as the store the compile reads keeps them:
//! found by the id the resource will be exported with, built during execution (a value set
//! later makes the call wait for it). Facts learnt by modules' handlers in a real deploy:
//! `module_handlers.rs`.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::fs;
use std::path::Path;

use modelc_store::{Access, Carryover, DeployRecord, Fact, Locator};
use modelc_tests::{modelc, scratch_dir};

const MODEL: &str = "\
entity Vm extends std::Resource:
    string name
end
resource Vm(id=name, agent=host.name)
Vm.host [1] -- std::Host
implement Vm using std::none

host = std::Host(name=\"node1\", os=std::linux)
web = Vm(name=\"web\", host=host)
std::print(std::getfact(web, \"ip_address\", \"none yet\"))
# Its name is set after the call: the call waits for it.
db = Vm(host=host, name=later)
std::print(std::getfact(db, \"ip_address\", \"none yet\"))
later = \"db\"
";

/// Keeps `facts` in the store at `store`, as a deploy's record does.
fn keep(store: &Path, facts: &[(&str, &str, &str)]) {
    let facts = facts
        .iter()
        .map(|(id, name, value)| Fact { id: (*id).to_owned(), name: (*name).to_owned(), value: (*value).to_owned() })
        .collect();
    let record = DeployRecord {
        run: 0,
        version: None,
        source: "test".to_owned(),
        started: modelc_store::utc_now(),
        ended: modelc_store::utc_now(),
        agents: vec!["node1".to_owned()],
        converged: true,
        results: Vec::new(),
    };
    let mut store = modelc_store::open(&Locator::Embedded(store.to_owned()), Access::Create).unwrap();
    store.record_deploy(&record, &Carryover { facts, ..Carryover::default() }).unwrap();
}

fn printed(dir: &Path) -> Vec<String> {
    let out = modelc(&["compile", "main.cf"], dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.stdout.lines().filter(|l| !l.starts_with("compiled")).map(str::to_owned).collect()
}

#[test]
fn getfact_reads_what_the_projects_store_keeps_by_the_resources_id() {
    let dir = scratch_dir("facts");
    fs::write(dir.join("main.cf"), MODEL).unwrap();
    // No store yet: the defaults.
    assert_eq!(printed(&dir)[..2], ["none yet", "none yet"]);
    let store = dir.join(".modelc/store.sqlite");
    keep(
        &store,
        &[("__config__::Vm[node1,name=web]", "ip_address", "10.0.0.5"), ("__config__::Vm[node1,name=db]", "size", "3")],
    );
    assert_eq!(printed(&dir)[..2], ["10.0.0.5", "none yet"]);
    // A later deploy's value replaces the kept one; the others stay.
    keep(&store, &[("__config__::Vm[node1,name=db]", "ip_address", "10.0.0.6")]);
    assert_eq!(printed(&dir)[..2], ["10.0.0.5", "10.0.0.6"]);
    // An export reads the facts of the store it exports to.
    let other = dir.join("other.sqlite");
    keep(&other, &[("__config__::Vm[node1,name=web]", "ip_address", "192.0.2.1")]);
    let out = modelc(&["export", "main.cf", "--store", "other.sqlite"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.lines().take(2).collect::<Vec<_>>(), ["192.0.2.1", "none yet"], "{}", out.stderr);
}

#[test]
fn an_unreadable_store_gives_no_facts_and_says_so() {
    let dir = scratch_dir("facts-unreadable");
    fs::write(dir.join("main.cf"), MODEL).unwrap();
    fs::create_dir_all(dir.join(".modelc")).unwrap();
    fs::write(dir.join(".modelc/store.sqlite"), "not a database").unwrap();
    let out = modelc(&["compile", "main.cf"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("none yet\nnone yet\n"), "{}", out.stdout);
    assert!(
        out.stderr.contains("warning: the facts of") && out.stderr.contains("`std::getfact` finds none"),
        "{}",
        out.stderr
    );
}
