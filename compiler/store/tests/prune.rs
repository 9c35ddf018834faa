//! `prune`: the latest N versions (and the one the last deploy applied) are kept and read as they
//! did, the rows only removed versions saw are gone, the store stays sound and takes exports, and
//! a dry run changes nothing.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

mod support;

use modelc_store::{SqliteStore, Store};
use support::{contents, ir, meta, partial, resource, rows, tempdir};

/// Ten versions: full exports where set `set-k` changes value each time, and partial ones.
fn history(store: &mut SqliteStore) {
    for step in 0..10i64 {
        if step % 3 == 2 {
            partial(store, vec![resource("p", Some("set-p"), step, &[])]).unwrap();
        } else {
            let resources = vec![
                resource("a", Some("set-a"), step, &[]),
                resource("b", Some("set-b"), 1, &[]),
                resource("p", Some("set-p"), 1, &[]),
                resource("shared", None, 1, &[]),
            ];
            store.export_full(&ir(resources, &[]), &meta("full")).unwrap();
        }
    }
}

#[test]
fn prune_keeps_the_latest_versions_as_they_read_and_drops_what_only_the_others_saw() {
    let dir = tempdir::Dir::new();
    let path = dir.path.join("store.sqlite");
    let mut store = SqliteStore::open(&path).unwrap();
    history(&mut store);
    let before: Vec<_> = (8..=10).map(|v| contents(&store, v)).collect();
    let rows_before = rows(&dir);

    let bytes = std::fs::read(&path).unwrap();
    let dry = store.prune(3, true).unwrap();
    assert_eq!((dry.kept.clone(), dry.removed.len()), (vec![8, 9, 10], 7));
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "a dry run changes nothing");
    assert_eq!(store.versions().unwrap().len(), 10);

    let report = store.prune(3, false).unwrap();
    assert_eq!((report.kept, report.removed, report.rows), (vec![8, 9, 10], (1..=7).collect(), dry.rows));
    assert!(report.rows > 0);
    assert_eq!(rows(&dir), rows_before - report.rows as i64);
    assert_eq!(store.versions().unwrap().iter().map(|v| v.version).collect::<Vec<_>>(), [8, 9, 10]);
    let after: Vec<_> = (8..=10).map(|v| contents(&store, v)).collect();
    assert_eq!(after, before, "kept versions read as they did");
    assert_eq!(store.integrity_check().unwrap(), "ok");
    // The store goes on: the next version is 11.
    let next = partial(&mut store, vec![resource("p", Some("set-p"), 42, &[])]).unwrap();
    assert_eq!(next, 11);
}

#[test]
fn the_version_the_last_deploy_applied_is_never_pruned() {
    let dir = tempdir::Dir::new();
    let path = dir.path.join("store.sqlite");
    let mut store = SqliteStore::open(&path).unwrap();
    history(&mut store);
    let deployed = contents(&store, 4);
    let db = rusqlite::Connection::open(&path).unwrap();
    db.execute(
        "INSERT INTO deploy_runs (version, source, started, ended, agents, converged) VALUES (4, 'version 4', '', '', '', 1)",
        [],
    )
    .unwrap();
    let report = store.prune(2, false).unwrap();
    assert_eq!(report.kept, [4, 9, 10]);
    assert_eq!(contents(&store, 4), deployed);
}

/// A resource naming file content `text` by its hash, as `fs::File` does.
fn file(name: &str, set: &str, text: &str) -> (modelc_ir::Resource, String) {
    let hash = format!("{:040x}", text.len() * 7919 + text.bytes().map(usize::from).sum::<usize>());
    let mut resource = resource(name, Some(set), 0, &[]);
    resource.attributes.insert("hash".to_owned(), serde_json::json!(hash));
    (resource, hash)
}

fn content_rows(dir: &tempdir::Dir) -> Vec<String> {
    let db = rusqlite::Connection::open(dir.path.join("store.sqlite")).unwrap();
    let mut query = db.prepare("SELECT hash FROM contents ORDER BY hash").unwrap();
    query.query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
}

#[test]
fn file_contents_are_stored_once_and_pruned_when_no_kept_version_names_them() {
    let dir = tempdir::Dir::new();
    let mut store = SqliteStore::open(&dir.path.join("store.sqlite")).unwrap();
    let big = "x".repeat(100_000);
    // Version 1: two resources name the same large text, a third another one.
    let (a, big_hash) = file("a", "set-a", &big);
    let (b, _) = file("b", "set-b", &big);
    let (c, old_hash) = file("c", "set-c", "old");
    let mut model = ir(vec![a.clone(), b.clone(), c], &[]);
    model.files.insert(big_hash.clone(), big.clone());
    model.files.insert(old_hash.clone(), "old".to_owned());
    store.export_full(&model, &meta("1")).unwrap();
    // Versions 2 and 3 keep the large text and replace the small one.
    for step in 2..=3 {
        let (c, new_hash) = file("c", "set-c", &format!("new {step}"));
        let mut model = ir(vec![a.clone(), b.clone(), c], &[]);
        model.files.insert(big_hash.clone(), big.clone());
        model.files.insert(new_hash, format!("new {step}"));
        store.export_full(&model, &meta("next")).unwrap();
    }
    let stored = content_rows(&dir);
    assert_eq!(stored.len(), 4, "the large text once, and each small one: {stored:?}");
    let size: i64 = rusqlite::Connection::open(dir.path.join("store.sqlite"))
        .unwrap()
        .query_row("SELECT SUM(length(data)) FROM contents", [], |r| r.get(0))
        .unwrap();
    assert!(size < 100_100, "the large text is stored once: {size} bytes");

    let dry = store.prune(1, true).unwrap();
    assert_eq!(dry.contents, 2, "a dry run counts what it would remove");
    assert_eq!(content_rows(&dir).len(), 4);
    let report = store.prune(1, false).unwrap();
    assert_eq!(report.contents, 2, "the old text and version 2's are named by no kept version");
    let left = content_rows(&dir);
    assert!(left.contains(&big_hash) && !left.contains(&old_hash), "{left:?}");
    assert_eq!(left.len(), 2);
    // What the kept version names is all there for a deploy of it.
    let latest = store.snapshot(None).unwrap();
    let named: Vec<String> =
        latest.resources.iter().filter_map(|r| r.attributes.get("hash")?.as_str().map(str::to_owned)).collect();
    assert_eq!(store.contents(&named).unwrap().len(), 2);
}
