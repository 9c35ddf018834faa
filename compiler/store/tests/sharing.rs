//! Full exports share what did not change: a resource whose row is the same stays open for the
//! new version instead of being written again, an unchanged model stores no version unless
//! forced, and every earlier version reads exactly as it was exported whatever follows. On both
//! backends, but the migration of an old embedded layout.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

mod support;

use modelc_ir::Resource;
use modelc_store::{ExportOutcome, SqliteStore, Store};
use support::{contents, ir, meta, partial, resource, store, summarise, tempdir};

/// A catalogue of `sets` sets of three resources, with `value` in set `changed` (others 1).
fn catalogue(sets: usize, changed: Option<(usize, i64)>) -> Vec<Resource> {
    let mut resources = Vec::new();
    for s in 0..sets {
        let value = match changed {
            Some((set, value)) if set == s => value,
            _ => 1,
        };
        let set = format!("set-{s}");
        for r in 0..3 {
            let requires: Vec<String> = if r > 0 { vec![format!("r{s}-0")] } else { Vec::new() };
            let requires: Vec<&str> = requires.iter().map(String::as_str).collect();
            resources.push(resource(&format!("r{s}-{r}"), Some(&set), value, &requires));
        }
    }
    resources.push(resource("shared", None, 1, &[]));
    resources
}

crate::on_both_backends! {
fn an_unchanged_model_stores_nothing_unless_forced_and_then_shares_every_row() {
    let mut store = store();
    let model = ir(catalogue(10, None), &[]);
    assert_eq!(store.export_full(&model, &meta("first")).unwrap().version, 1);
    let written = store.count("resources");
    assert_eq!(written, 31);
    let first = store.versions().unwrap().remove(0);
    assert_eq!(store.export_full_if_changed(&model, &meta("again")).unwrap(), ExportOutcome::Unchanged(first));
    assert_eq!(store.versions().unwrap().len(), 1, "an unchanged export stores no version");
    let forced = store.export_full(&model, &meta("forced")).unwrap();
    assert_eq!((forced.version, forced.resources), (2, 31));
    assert_eq!(store.count("resources"), written, "a forced unchanged export writes no resource row");
    assert_eq!(contents(&*store, 2), contents(&*store, 1));
}
}

crate::on_both_backends! {
fn a_changed_set_writes_only_its_rows() {
    let mut store = store();
    store.export_full(&ir(catalogue(10, None), &[]), &meta("first")).unwrap();
    let before = store.count("resources");
    let changed = store.export_full_if_changed(&ir(catalogue(10, Some((4, 7))), &[]), &meta("one set")).unwrap();
    assert!(matches!(&changed, ExportOutcome::Stored(info) if info.version == 2), "{changed:?}");
    assert_eq!(store.count("resources"), before + 3, "the three resources of set-4, and nothing else");
    // A new set adds its rows; a set that is gone closes its rows and adds none.
    let mut grown = catalogue(11, Some((4, 7)));
    grown.retain(|r| r.resource_set.as_deref() != Some("set-0"));
    store.export_full(&ir(grown, &[]), &meta("moved")).unwrap();
    assert_eq!(store.count("resources"), before + 6);
    let latest = contents(&*store, 3);
    assert_eq!(latest.len(), 31);
    assert!(latest.iter().all(|(name, ..)| !name.starts_with("r0-")));
    assert!(latest.iter().any(|(name, _, value, _)| name == "r4-1" && *value == 7));
    assert!(contents(&*store, 1).iter().all(|(_, _, value, _)| *value == 1), "version 1 is as it was");
}
}

/// A small pseudo-random sequence, so that the test is the same on every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % bound
    }
}

crate::on_both_backends! {
fn every_version_reads_as_exported_after_many_mixed_full_and_partial_exports() {
    let mut store = store();
    let mut random = Lcg(18);
    let mut seen = Vec::new();
    for step in 0..40 {
        let sets = 3 + random.next(5) as usize;
        let model = catalogue(sets, Some((random.next(sets as u64) as usize, random.next(4) as i64)));
        let version = if step > 0 && random.next(3) == 0 {
            // A partial export of one set, taken from the model.
            let set = format!("set-{}", random.next(3));
            let members = model.into_iter().filter(|r| r.resource_set.as_deref() == Some(set.as_str())).collect();
            partial(&mut *store, members).unwrap()
        } else {
            let exported = ir(model.clone(), &[]);
            match store.export_full_if_changed(&exported, &meta("full")).unwrap() {
                ExportOutcome::Stored(info) => {
                    // The model of a full export: the version holds exactly its resources.
                    assert_eq!(contents(&*store, info.version), summarise(&model), "step {step}");
                    info.version
                }
                ExportOutcome::Unchanged(_) => continue,
            }
        };
        seen.push((version, contents(&*store, version)));
        for (earlier, read) in &seen {
            assert_eq!(&contents(&*store, *earlier), read, "step {step}: version {earlier} changed");
        }
    }
    assert!(seen.len() > 20, "the sequence exported {} versions", seen.len());
}
}

/// A store of the previous layout (3, committed as written by the modelc of that layout: two full
/// versions of three sites) is migrated in place when opened, and its digests are right: the
/// resources of its latest version are found unchanged.
#[test]
fn a_layout_3_store_is_migrated_and_its_rows_compare_as_unchanged() {
    let dir = tempdir::Dir::new();
    let path = dir.path.join("store.sqlite");
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/layout-3.sqlite"), &path).unwrap();
    let mut store = SqliteStore::open(&path).unwrap();
    let db = rusqlite::Connection::open(&path).unwrap();
    let layout: i64 = db.query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0)).unwrap();
    assert_eq!(layout, modelc_store::sqlite::SCHEMA_VERSION);
    let missing: i64 = db.query_row("SELECT COUNT(*) FROM resources WHERE digest IS NULL", [], |r| r.get(0)).unwrap();
    assert_eq!(missing, 0);
    assert_eq!(store.versions().unwrap().len(), 2);
    let latest = store.snapshot(None).unwrap();
    let owners: Vec<(String, String)> = latest
        .resources
        .iter()
        .map(|r| {
            (r.attributes["name"].as_str().unwrap().to_owned(), r.attributes["owner"].as_str().unwrap().to_owned())
        })
        .collect();
    assert!(owners.contains(&("a".to_owned(), "platform".to_owned())), "{owners:?}");
    let again = ir(latest.resources, &[]);
    let unchanged = store.export_full_if_changed(&again, &meta("again")).unwrap();
    assert!(matches!(&unchanged, ExportOutcome::Unchanged(info) if info.version == 2), "{unchanged:?}");
}
