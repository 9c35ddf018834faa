//! `modelc store copy`: a history moved between the embedded store and PostgreSQL, and back,
//! reads identically: the same versions (numbers, times, kinds, bases, messages), the same
//! resources in the same order, the same changes between versions and the same file contents;
//! and the next export goes on from the same number. A copy into a store that holds versions is
//! refused, and a copy that fails part way leaves its target as it was.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

mod support;

use modelc_ir::Resource;
use modelc_store::copy::{History, Imported};
use modelc_store::{Access, Locator, Metadata, PartialRequest, Store, StoreError};
use support::{ir, resource};

/// A history of 55 exports, full and partial, some with file contents, pruned to its latest 50
/// versions (so the copy starts at version 6, and some contents it needs were first stored
/// before that).
fn history(store: &mut dyn Store) {
    let mut state: u64 = 17;
    let mut below = |n: u64| {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % n
    };
    for step in 0..55u64 {
        let metadata = Metadata {
            created: format!("2026-11-{:02}T{:02}:{:02}:00Z", 1 + step / 24, step % 24, step % 60),
            source_hash: format!("{step:032x}"),
            message: format!("step {step}"),
        };
        let partial = step > 0 && below(3) == 0;
        let sets: Vec<u64> = if partial { vec![below(3)] } else { (0..3).collect() };
        let mut resources: Vec<Resource> = Vec::new();
        let mut files = Vec::new();
        for set in sets {
            for member in 0..(2 + below(3)) {
                let name = format!("s{set}-m{member}");
                let mut r = resource(&name, Some(&format!("set-{set}")), below(3) as i64, &[]);
                if member == 0 {
                    // A file whose content changes now and then, and comes back.
                    let text = format!("content {set} {}\n", below(4));
                    let hash = sha1_of(&text);
                    r.attributes.insert("hash".to_owned(), serde_json::json!(hash));
                    files.push((hash, text));
                }
                resources.push(r);
            }
        }
        if !partial || below(2) == 0 {
            resources.push(resource("shared", None, 0, &[]));
        }
        if below(4) == 0 {
            // The same resources in another order: a version of its own.
            resources.reverse();
        }
        let mut model = ir(resources, &[]);
        model.files = files.into_iter().collect();
        if partial {
            store.export_partial(&model, &PartialRequest::default(), &metadata).unwrap();
        } else {
            store.export_full(&model, &metadata).unwrap();
        }
    }
    let report = store.prune(50, false).unwrap();
    assert_eq!(report.kept.first(), Some(&6));
}

/// Not sha1, but a stand-in the store treats the same: a stable name for a text.
fn sha1_of(text: &str) -> String {
    format!("{:040x}", xxhash(text))
}

fn xxhash(text: &str) -> u128 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325_u128, |h, b| (h ^ u128::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Everything a user can read of a store, as text to compare.
fn everything(store: &dyn Store) -> String {
    let versions = store.versions().unwrap();
    let mut text = format!("{versions:?}\n");
    let mut hashes = Vec::new();
    for info in &versions {
        let snapshot = store.snapshot(Some(info.version)).unwrap();
        for r in &snapshot.resources {
            if let Some(hash) = r.attributes.get("hash").and_then(|h| h.as_str()) {
                hashes.push(hash.to_owned());
            }
        }
        text.push_str(&serde_json::to_string(&snapshot.resources).unwrap());
        text.push('\n');
    }
    for pair in versions.windows(2) {
        let changes = store.changes(pair[0].version, pair[1].version).unwrap();
        text.push_str(&serde_json::to_string(&(changes.before, changes.after)).unwrap());
        text.push('\n');
    }
    hashes.sort();
    hashes.dedup();
    let contents: std::collections::BTreeMap<_, _> = store.contents(&hashes).unwrap().into_iter().collect();
    assert_eq!(contents.len(), hashes.len(), "every file content a version names is there");
    text.push_str(&format!("{contents:?}\n"));
    text
}

/// The next export after the copy: the same number, and the same version, as in the source.
fn next_export(store: &mut dyn Store) -> String {
    let model = ir(vec![resource("after", Some("set-9"), 1, &[])], &[]);
    let info = store.export_partial(&model, &PartialRequest::default(), &support::meta("after")).unwrap();
    format!("{info:?} {}", serde_json::to_string(&store.snapshot(None).unwrap().resources).unwrap())
}

fn embedded(dir: &support::tempdir::Dir, name: &str, access: Access) -> Box<dyn Store> {
    modelc_store::open(&Locator::Embedded(dir.path.join(name)), access).unwrap()
}

#[test]
fn a_history_copied_between_embedded_stores_reads_identically() {
    let dir = support::tempdir::Dir::new();
    let mut source = embedded(&dir, "source.sqlite", Access::Create);
    history(source.as_mut());
    let expected = everything(source.as_ref());
    // Into a store that does not exist yet, and into one that exists but holds no version.
    let targets = [("new.sqlite", Access::Full), ("empty.sqlite", Access::Create)];
    for (name, access) in targets {
        let mut target = embedded(&dir, name, access);
        let report = modelc_store::copy(source.as_ref(), target.as_mut()).unwrap();
        assert_eq!(report.versions, (6..=55).collect::<Vec<_>>());
        assert!(report.contents > 0, "file contents moved with their versions");
        let target = embedded(&dir, name, Access::Existing);
        assert_eq!(everything(target.as_ref()), expected, "{name} reads as the source");
    }
    // Each goes on from the same number, to the same version.
    let after = next_export(source.as_mut());
    for (name, _) in targets {
        assert_eq!(next_export(embedded(&dir, name, Access::Existing).as_mut()), after, "{name}");
    }
}

#[test]
fn a_history_copied_to_postgresql_and_back_reads_identically() {
    let Some(postgres) = modelc_test_postgres::Postgres::start("the store copy test") else { return };
    let dir = support::tempdir::Dir::new();
    let mut source = embedded(&dir, "source.sqlite", Access::Create);
    history(source.as_mut());
    let expected = everything(source.as_ref());

    postgres.create_database("copied").unwrap();
    let url = postgres.url_with_password("copied");
    modelc_store::migrate(&url).unwrap();
    let mut server = modelc_store::open(&Locator::Postgres(url.clone()), Access::Existing).unwrap();
    let report = modelc_store::copy(source.as_ref(), server.as_mut()).unwrap();
    assert_eq!(report.versions, (6..=55).collect::<Vec<_>>());
    assert_eq!(everything(server.as_ref()), expected, "the PostgreSQL copy reads as the source");

    let mut back = embedded(&dir, "back.sqlite", Access::Full);
    modelc_store::copy(server.as_ref(), back.as_mut()).unwrap();
    let mut back = embedded(&dir, "back.sqlite", Access::Existing);
    assert_eq!(everything(back.as_ref()), expected, "copied back, it reads as the source");

    // Each goes on from the same number, to the same version.
    let after = next_export(source.as_mut());
    assert_eq!(next_export(server.as_mut()), after);
    assert_eq!(next_export(back.as_mut()), after);
}

/// A history whose third version fails its check, as a version that does not read back would.
struct FailingAtThird<'a> {
    source: &'a dyn Store,
    numbers: Vec<u64>,
    verified: usize,
}

impl History for FailingAtThird<'_> {
    fn next_version(&mut self) -> Result<Option<Imported>, StoreError> {
        let Some(number) = self.numbers.get(self.verified).copied() else { return Ok(None) };
        let previous = self.verified.checked_sub(1).map(|i| self.numbers[i]);
        Ok(Some(Imported {
            snapshot: self.source.snapshot(Some(number))?,
            contents: self.source.contents_written(previous, number)?,
        }))
    }

    fn verify(&mut self, expected: &Imported, written: &Imported) -> Result<(), StoreError> {
        assert_eq!(expected.snapshot.info, written.snapshot.info);
        self.verified += 1;
        if self.verified == 3 {
            return Err(StoreError::Storage("the third version differs".to_owned()));
        }
        Ok(())
    }
}

fn refusals(source: &dyn Store, empty: &mut dyn Store, full: &mut dyn Store) {
    let numbers: Vec<u64> = source.versions().unwrap().iter().map(|v| v.version).collect();
    let error = empty.import(&mut FailingAtThird { source, numbers, verified: 0 }).unwrap_err();
    assert_eq!(error, StoreError::Storage("the third version differs".to_owned()));
    assert!(empty.versions().unwrap().is_empty(), "a failed copy leaves nothing behind");
    assert_eq!(empty.snapshot(None).unwrap_err(), StoreError::Empty);
    // The target still takes a copy afterwards.
    modelc_store::copy(source, empty).unwrap();

    let before = everything(full);
    let error = modelc_store::copy(source, full).unwrap_err();
    assert!(error.to_string().contains("already holds versions"), "{error}");
    assert_eq!(everything(full), before, "a refused copy changes nothing");
}

#[test]
fn a_failed_or_refused_copy_leaves_the_target_as_it_was() {
    let dir = support::tempdir::Dir::new();
    let mut source = embedded(&dir, "source.sqlite", Access::Create);
    history(source.as_mut());
    let mut empty = embedded(&dir, "empty.sqlite", Access::Create);
    let mut full = embedded(&dir, "full.sqlite", Access::Create);
    full.export_full(&ir(vec![resource("x", None, 1, &[])], &[]), &support::meta("mine")).unwrap();
    refusals(source.as_ref(), empty.as_mut(), full.as_mut());

    // A store that did not exist is not created by a failed copy.
    let missing = dir.path.join("missing.sqlite");
    let mut absent = modelc_store::open(&Locator::Embedded(missing.clone()), Access::Full).unwrap();
    let numbers: Vec<u64> = source.versions().unwrap().iter().map(|v| v.version).collect();
    absent.import(&mut FailingAtThird { source: source.as_ref(), numbers, verified: 0 }).unwrap_err();
    assert!(!missing.exists());
    let leftovers: Vec<_> = std::fs::read_dir(&dir.path)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("missing"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    let Some(postgres) = modelc_test_postgres::Postgres::start("the store copy test") else { return };
    let server = |name: &str| {
        postgres.create_database(name).unwrap();
        let url = postgres.url_with_password(name);
        modelc_store::migrate(&url).unwrap();
        modelc_store::open(&Locator::Postgres(url), Access::Existing).unwrap()
    };
    let (mut empty, mut full) = (server("empty"), server("full"));
    full.export_full(&ir(vec![resource("x", None, 1, &[])], &[]), &support::meta("mine")).unwrap();
    refusals(source.as_ref(), empty.as_mut(), full.as_mut());
}
