//! What the store's tests share: small resources and IRs, a store in a temporary directory,
//! and a version's contents in a form easy to compare.
#![allow(dead_code, reason = "each test file uses some of these")]

use modelc_ir::{Ir, Resource, ResourceSet, ResourceState, Source};
use modelc_store::{Metadata, PartialRequest, SqliteStore, Store, StoreError};
use serde_json::json;

/// `R[internal,name=NAME]` in `set` (None: shared) with a `value` attribute.
pub(crate) fn resource(name: &str, set: Option<&str>, value: i64, requires: &[&str]) -> Resource {
    Resource {
        id: id(name),
        entity_type: "test::R".into(),
        agent: "internal".into(),
        attributes: [("name".to_owned(), json!(name)), ("value".to_owned(), json!(value))].into_iter().collect(),
        requires: requires.iter().map(|r| id(r)).collect(),
        send_event: false,
        receive_events: true,
        resource_set: set.map(str::to_owned),
        state: ResourceState::Available,
        source: Source { entity: "test::R".into(), file: "main.cf".into(), line: 1 }.into(),
        meta: Default::default(),
        notify: Vec::new(),
    }
}

pub(crate) fn id(name: &str) -> String {
    format!("test::R[internal,name={name}]")
}

/// An IR of `resources`, with their sets plus the `empty` ones.
pub(crate) fn ir(resources: Vec<Resource>, empty: &[&str]) -> Ir {
    let mut sets: Vec<ResourceSet> = Vec::new();
    for r in &resources {
        let Some(name) = &r.resource_set else { continue };
        match sets.iter_mut().find(|s| &s.name == name) {
            Some(set) => set.resources.push(r.id.clone()),
            None => sets.push(ResourceSet { name: name.clone(), resources: vec![r.id.clone()], source: source() }),
        }
    }
    sets.extend(empty.iter().map(|name| ResourceSet {
        name: (*name).to_owned(),
        resources: Vec::new(),
        source: source(),
    }));
    Ir::new(resources, sets)
}

pub(crate) fn source() -> Source {
    Source { entity: "std::ResourceSet".into(), file: "main.cf".into(), line: 2 }
}

pub(crate) fn store() -> (SqliteStore, tempdir::Dir) {
    let dir = tempdir::Dir::new();
    (SqliteStore::open(&dir.path.join("store.sqlite")).unwrap(), dir)
}

pub(crate) fn meta(message: &str) -> Metadata {
    Metadata { created: "2026-11-24T00:00:00Z".into(), source_hash: "0".into(), message: message.into() }
}

pub(crate) fn partial(store: &mut SqliteStore, resources: Vec<Resource>) -> Result<u64, StoreError> {
    store.export_partial(&ir(resources, &[]), &PartialRequest::default(), &meta("partial")).map(|v| v.version)
}

/// (id, set, value, requires) of every resource of a version, sorted by id.
pub(crate) fn contents(store: &SqliteStore, version: u64) -> Vec<(String, Option<String>, i64, Vec<String>)> {
    summarise(&store.snapshot(Some(version)).unwrap().resources)
}

/// (id, set, value, requires) of resources, sorted by id.
pub(crate) fn summarise(resources: &[Resource]) -> Vec<(String, Option<String>, i64, Vec<String>)> {
    let short = |id: &str| id.trim_start_matches("test::R[internal,name=").trim_end_matches(']').to_owned();
    let mut rows: Vec<_> = resources
        .iter()
        .map(|r| {
            let value = r.attributes["value"].as_i64().unwrap();
            (short(&r.id), r.resource_set.clone(), value, r.requires.iter().map(|r| short(r)).collect())
        })
        .collect();
    rows.sort();
    rows
}

/// How many resource rows the store in `dir` (`store.sqlite`) holds, open or closed.
pub(crate) fn rows(dir: &tempdir::Dir) -> i64 {
    let db = rusqlite::Connection::open(dir.path.join("store.sqlite")).unwrap();
    db.query_row("SELECT COUNT(*) FROM resources", [], |r| r.get(0)).unwrap()
}

pub(crate) fn row(
    name: &str,
    set: Option<&str>,
    value: i64,
    requires: &[&str],
) -> (String, Option<String>, i64, Vec<String>) {
    (name.to_owned(), set.map(str::to_owned), value, requires.iter().map(|r| (*r).to_owned()).collect())
}

/// A directory removed when dropped.
pub(crate) mod tempdir {
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};

    pub(crate) struct Dir {
        pub(crate) path: PathBuf,
    }

    impl Dir {
        pub(crate) fn new() -> Dir {
            static COUNTER: AtomicUsize = AtomicUsize::new(0);
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = std::env::temp_dir().join(format!("modelc-store-test-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&path);
            std::fs::create_dir_all(&path).unwrap();
            Dir { path }
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}
