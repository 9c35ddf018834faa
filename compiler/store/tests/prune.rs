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
