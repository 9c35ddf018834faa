//! `prune`: the latest N versions (and the one the last deploy applied) are kept and read as they
//! did, the rows only removed versions saw are gone, the store stays sound and takes exports, and
//! a dry run changes nothing. On both backends.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

mod support;

use modelc_store::Store;
use support::{contents, ir, meta, partial, resource, store};

/// Ten versions: full exports where set `set-k` changes value each time, and partial ones.
fn history(store: &mut dyn Store) {
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

/// A resource naming file content `text` by its hash, as `fs::File` does.
fn file(name: &str, set: &str, text: &str) -> (modelc_ir::Resource, String) {
    let hash = format!("{:040x}", text.len() * 7919 + text.bytes().map(usize::from).sum::<usize>());
    let mut resource = resource(name, Some(set), 0, &[]);
    resource.attributes.insert("hash".to_owned(), serde_json::json!(hash));
    (resource, hash)
}

fn content_rows(store: &mut support::backends::TestStore) -> Vec<String> {
    store.query_strings("SELECT hash FROM contents ORDER BY hash")
}

crate::on_both_backends! {
fn prune_keeps_the_latest_versions_as_they_read_and_drops_what_only_the_others_saw() {
    let mut store = store();
    history(&mut *store);
    let before: Vec<_> = (8..=10).map(|v| contents(&*store, v)).collect();
    let rows_before = store.count("resources");

    let file = store.file();
    let bytes = file.as_ref().map(|path| std::fs::read(path).unwrap());
    let dry = store.prune(3, true).unwrap();
    assert_eq!((dry.kept.clone(), dry.removed.len()), (vec![8, 9, 10], 7));
    if let Some(path) = &file {
        assert_eq!(Some(std::fs::read(path).unwrap()), bytes, "a dry run changes nothing");
    }
    assert_eq!(store.count("resources"), rows_before, "a dry run changes nothing");
    assert_eq!(store.versions().unwrap().len(), 10);

    let report = store.prune(3, false).unwrap();
    assert_eq!((report.kept, report.removed, report.rows), (vec![8, 9, 10], (1..=7).collect(), dry.rows));
    assert!(report.rows > 0);
    assert_eq!(store.count("resources"), rows_before - report.rows as i64);
    assert_eq!(store.versions().unwrap().iter().map(|v| v.version).collect::<Vec<_>>(), [8, 9, 10]);
    let after: Vec<_> = (8..=10).map(|v| contents(&*store, v)).collect();
    assert_eq!(after, before, "kept versions read as they did");
    if let Some(sqlite) = store.sqlite() {
        assert_eq!(sqlite.integrity_check().unwrap(), "ok");
    }
    // The store goes on: the next version is 11.
    let next = partial(&mut *store, vec![resource("p", Some("set-p"), 42, &[])]).unwrap();
    assert_eq!(next, 11);
}

fn the_version_the_last_deploy_applied_is_never_pruned() {
    let mut store = store();
    history(&mut *store);
    let deployed = contents(&*store, 4);
    let record = modelc_store::DeployRecord {
        run: 0,
        version: Some(4),
        source: "version 4".to_owned(),
        started: String::new(),
        ended: String::new(),
        agents: Vec::new(),
        converged: true,
        results: Vec::new(),
    };
    store.record_deploy(&record, &modelc_store::Carryover::default()).unwrap();
    let report = store.prune(2, false).unwrap();
    assert_eq!(report.kept, [4, 9, 10]);
    assert_eq!(contents(&*store, 4), deployed);
}

fn file_contents_are_stored_once_and_pruned_when_no_kept_version_names_them() {
    let mut store = store();
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
    let stored = content_rows(&mut store);
    assert_eq!(stored.len(), 4, "the large text once, and each small one: {stored:?}");
    let size = store.query_one("SELECT CAST(SUM(length(data)) AS BIGINT) FROM contents");
    assert!(size < 100_100, "the large text is stored once: {size} bytes");

    let dry = store.prune(1, true).unwrap();
    assert_eq!(dry.contents, 2, "a dry run counts what it would remove");
    assert_eq!(content_rows(&mut store).len(), 4);
    let report = store.prune(1, false).unwrap();
    assert_eq!(report.contents, 2, "the old text and version 2's are named by no kept version");
    let left = content_rows(&mut store);
    assert!(left.contains(&big_hash) && !left.contains(&old_hash), "{left:?}");
    assert_eq!(left.len(), 2);
    // What the kept version names is all there for a deploy of it.
    let latest = store.snapshot(None).unwrap();
    let named: Vec<String> =
        latest.resources.iter().filter_map(|r| r.attributes.get("hash")?.as_str().map(str::to_owned)).collect();
    assert_eq!(store.contents(&named).unwrap().len(), 2);
}
}
