//! A full export into a store that does not exist yet builds it whole beside its path and puts it
//! in place only when it is complete: the result is an ordinary store (write-ahead log, the
//! current layout, sound), nothing is left beside it, a refused export creates nothing, and the
//! files of builds whose process died are cleaned up.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

mod support;

use modelc_store::{ExportOutcome, Locator, SqliteStore, Store, prefetch};
use support::{ir, meta, resource, tempdir};

fn names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

fn model() -> modelc_ir::Ir {
    ir(
        vec![
            resource("a", Some("set-a"), 1, &[]),
            resource("b", Some("set-a"), 2, &["a"]),
            resource("s", None, 0, &[]),
        ],
        &[],
    )
}

#[test]
fn a_new_store_is_an_ordinary_store_with_nothing_left_beside_it() {
    let dir = tempdir::Dir::new();
    let path = dir.path.join("project/.modelc/store.sqlite");
    let exported = SqliteStore::export_full_at(&path, &model(), &meta("first"), false, None).unwrap();
    assert!(
        matches!(&exported, ExportOutcome::Stored(info) if info.version == 1 && info.resources == 3),
        "{exported:?}"
    );
    assert_eq!(names(path.parent().unwrap()), ["store.sqlite"]);
    let store = SqliteStore::open_existing(&path).unwrap();
    assert_eq!(store.integrity_check().unwrap(), "ok");
    assert_eq!(store.snapshot(None).unwrap().resources, model().resources);
    let db = rusqlite::Connection::open(&path).unwrap();
    let mode: String = db.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    let layout: i64 = db.query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0)).unwrap();
    assert_eq!(layout, modelc_store::sqlite::SCHEMA_VERSION);
    // The second export goes into the store as usual.
    let again = SqliteStore::export_full_at(&path, &model(), &meta("again"), false, None).unwrap();
    assert!(matches!(&again, ExportOutcome::Unchanged(info) if info.version == 1), "{again:?}");
    let mut changed = model();
    changed.resources[0].attributes.insert("value".to_owned(), serde_json::json!(5));
    let second = SqliteStore::export_full_at(&path, &changed, &meta("changed"), false, None).unwrap();
    assert!(matches!(&second, ExportOutcome::Stored(info) if info.version == 2), "{second:?}");
}

#[test]
fn a_refused_first_export_creates_nothing() {
    let dir = tempdir::Dir::new();
    let path = dir.path.join("store.sqlite");
    let mut bad = model();
    bad.resources.push(bad.resources[2].clone());
    let error = SqliteStore::export_full_at(&path, &bad, &meta("bad"), false, None).unwrap_err();
    assert!(error.to_string().contains("more than once"), "{error}");
    assert!(names(&dir.path).is_empty(), "{:?}", names(&dir.path));
}

#[test]
fn the_files_of_builds_whose_process_died_are_removed() {
    let dir = tempdir::Dir::new();
    let path = dir.path.join("store.sqlite");
    // No process has this number (above Linux's largest); process 1 always runs.
    std::fs::write(dir.path.join("store.sqlite.new-4294967295-0"), "half a store").unwrap();
    std::fs::write(dir.path.join("store.sqlite.new-1-3"), "another build's").unwrap();
    std::fs::write(dir.path.join("other.new-4294967295"), "not ours").unwrap();
    SqliteStore::export_full_at(&path, &model(), &meta("first"), false, None).unwrap();
    let left = names(&dir.path);
    if std::path::Path::new("/proc/self").exists() {
        assert_eq!(left, ["other.new-4294967295", "store.sqlite", "store.sqlite.new-1-3"]);
    } else {
        assert!(left.contains(&"store.sqlite".to_owned()), "{left:?}");
    }
}

/// The current rows' digests may be read before the export (while the model compiles); if the
/// store got a new version meanwhile, they are not used.
#[test]
fn digests_read_beforehand_are_used_only_if_the_store_did_not_change() {
    let dir = tempdir::Dir::new();
    let path = dir.path.join("store.sqlite");
    assert!(prefetch(&Locator::Embedded(path.clone())).is_none(), "no store, nothing to read");
    let a = model();
    let mut b = model();
    b.resources[0].attributes.insert("value".to_owned(), serde_json::json!(9));
    SqliteStore::export_full_at(&path, &a, &meta("a"), false, None).unwrap();
    let stale = prefetch(&Locator::Embedded(path.clone())).unwrap();
    SqliteStore::export_full_at(&path, &b, &meta("b"), false, None).unwrap();
    // Read at version 1, whose rows are `a`'s: used, they would call `a` unchanged.
    let exported = SqliteStore::export_full_at(&path, &a, &meta("a again"), false, Some(stale)).unwrap();
    assert!(matches!(&exported, ExportOutcome::Stored(info) if info.version == 3), "{exported:?}");
    let store = SqliteStore::open_existing(&path).unwrap();
    assert_eq!(store.snapshot(Some(3)).unwrap().resources.len(), 3);
    assert_eq!(store.changes(2, 3).unwrap().after.len(), 1, "only the changed resource is written again");
    let fresh = prefetch(&Locator::Embedded(path.clone())).unwrap();
    let again = SqliteStore::export_full_at(&path, &a, &meta("a once more"), false, Some(fresh)).unwrap();
    assert!(matches!(&again, ExportOutcome::Unchanged(info) if info.version == 3), "{again:?}");
}

/// The checks run while the resources are compared, but end before anything is written: a
/// refused full export into a store leaves its files byte for byte as they were, even one large
/// enough to spill to the write-ahead log if its rows were written.
#[test]
fn a_refused_full_export_writes_nothing_to_the_store() {
    let dir = tempdir::Dir::new();
    let path = dir.path.join("store.sqlite");
    let many = |value: i64| {
        (0..20_000).map(|i| resource(&format!("r{i}"), Some(&format!("set-{}", i % 100)), value, &[])).collect()
    };
    SqliteStore::export_full_at(&path, &ir(many(1), &[]), &meta("first"), false, None).unwrap();
    let files =
        || ["store.sqlite", "store.sqlite-wal"].map(|name| std::fs::read(dir.path.join(name)).unwrap_or_default());
    let before = files();
    let mut refused = ir(many(2), &[]);
    refused.resources.push(refused.resources[0].clone());
    let error = SqliteStore::export_full_at(&path, &refused, &meta("refused"), true, None).unwrap_err();
    assert!(error.to_string().contains("more than once"), "{error}");
    assert!(files() == before, "a refused export changed the store's files");
}

/// Several exporters creating the same store at once: one store results, whole, and each
/// export is either a version of it or found it unchanged; the versions have no gap.
#[test]
fn first_exports_racing_to_create_a_store_give_one_whole_store() {
    let dir = tempdir::Dir::new();
    let path = dir.path.join("store.sqlite");
    let models: Vec<modelc_ir::Ir> = (0..4)
        .map(|t| {
            let resources = (0..2_000).map(|i| resource(&format!("r{i}"), Some("set-a"), t % 2, &[])).collect();
            ir(resources, &[])
        })
        .collect();
    let barrier = std::sync::Barrier::new(models.len());
    let outcomes: Vec<ExportOutcome> = std::thread::scope(|scope| {
        let handles: Vec<_> = models
            .iter()
            .map(|model| {
                let (path, barrier) = (&path, &barrier);
                scope.spawn(move || {
                    barrier.wait();
                    SqliteStore::export_full_at(path, model, &meta("racing"), false, None).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let store = SqliteStore::open_existing(&path).unwrap();
    assert_eq!(store.integrity_check().unwrap(), "ok");
    let versions: Vec<u64> = store.versions().unwrap().iter().map(|v| v.version).collect();
    let stored: Vec<u64> = outcomes
        .iter()
        .filter_map(|o| match o {
            ExportOutcome::Stored(info) => Some(info.version),
            ExportOutcome::Unchanged(_) => None,
        })
        .collect();
    assert_eq!(versions, (1..=stored.len() as u64).collect::<Vec<_>>(), "{outcomes:?}");
    for version in versions {
        assert_eq!(store.snapshot(Some(version)).unwrap().resources.len(), 2_000);
    }
    assert_eq!(names(&dir.path).iter().filter(|n| n.contains(".new-")).count(), 0);
}

/// Issue 30: the store, which holds every file's content, was created 0644. It and its
/// write-ahead log are readable by their owner only, whichever way the store was created.
#[test]
fn the_store_and_its_log_are_private_to_their_owner() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = tempdir::Dir::new();
    // Built whole by a first full export.
    let built = dir.path.join("built/store.sqlite");
    SqliteStore::export_full_at(&built, &model(), &meta("first"), false, None).unwrap();
    assert_eq!(mode(&built), 0o600);
    // Opened where nothing was: the file and, once written, its -wal and -shm.
    let opened = dir.path.join("opened/store.sqlite");
    let mut store = SqliteStore::open(&opened).unwrap();
    store.export_full(&model(), &meta("first")).unwrap();
    for name in ["store.sqlite", "store.sqlite-wal", "store.sqlite-shm"] {
        let path = dir.path.join("opened").join(name);
        if path.exists() {
            assert_eq!(mode(&path), 0o600, "{name}");
        }
    }
    assert!(dir.path.join("opened/store.sqlite-wal").exists(), "{:?}", names(&dir.path.join("opened")));
}
