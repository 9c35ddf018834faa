//! A property test of the store's history: random sequences of full exports (changed, unchanged,
//! forced), partial exports (sets replaced, emptied, deleted) and prunes, over random models,
//! checked after every step against a simple in-memory model of what each version holds. Every
//! version still reads exactly as it did when it was written, whatever came after it; a full
//! export writes a row only for what changed; and the diff read from the rows that changed
//! between two versions is the diff of the two whole versions.
//!
//! Each history runs on the embedded store and, where PostgreSQL is there, on a server store
//! beside it, step by step: both give the same verdicts, versions, snapshots (byte for byte as
//! JSON) and changes.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

mod support;

use std::collections::BTreeMap;

use modelc_ir::Resource;
use modelc_store::{ExportOutcome, PartialRequest, Store, StoreError, diff};
use support::{ir, meta, resource};

const SETS: usize = 4;
const MEMBERS: usize = 5;

/// splitmix64: a small deterministic generator, so a failing seed can be replayed.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// What a version holds, by id: the model the store is checked against.
type Contents = BTreeMap<String, Resource>;

/// The members of set `set` in a random state: each present or not, with a value from a small
/// range (so that rows often stay the same) and sometimes a requirement on an earlier member.
fn random_members(random: &mut Random, set: usize) -> Vec<Resource> {
    let name = |i: usize| format!("s{set}-m{i}");
    let mut members: Vec<Resource> = Vec::new();
    for i in 0..MEMBERS {
        if !random.chance(60) {
            continue;
        }
        let requires: Vec<String> = match members.last() {
            Some(earlier) if random.chance(30) => {
                vec![earlier.attributes["name"].as_str().unwrap_or_default().to_owned()]
            }
            _ => Vec::new(),
        };
        let requires: Vec<&str> = requires.iter().map(String::as_str).collect();
        members.push(resource(&name(i), Some(&format!("set-{set}")), random.below(3) as i64, &requires));
    }
    members
}

/// The one shared resource, the same in every export that holds it.
fn shared() -> Resource {
    resource("shared", None, 0, &[])
}

fn by_id(resources: &[Resource]) -> Contents {
    resources.iter().map(|r| (r.id.clone(), r.clone())).collect()
}

fn json(resources: &[Resource]) -> String {
    serde_json::to_string(resources).unwrap()
}

/// A store under test, and how many resource rows it holds (open or closed).
struct Backend {
    name: &'static str,
    store: Box<dyn Store>,
    rows: Box<dyn Fn() -> i64>,
}

/// Every backend's answer to one step, which must be the same; the first one's.
fn same<T: std::fmt::Debug>(backends: &mut [Backend], context: &str, mut step: impl FnMut(&mut dyn Store) -> T) -> T {
    let mut answers = backends.iter_mut().map(|b| (b.name, step(b.store.as_mut())));
    let (first_name, first) = answers.next().unwrap();
    for (name, answer) in answers {
        assert_eq!(format!("{answer:?}"), format!("{first:?}"), "{context}: {name} answers as {first_name} does");
    }
    first
}

/// One run of `steps` random steps from `seed`, on each of `backends` in step.
fn run(seed: u64, steps: usize, backends: &mut [Backend]) {
    let mut random = Random(seed);
    // Every version the model says the store keeps: its contents and its JSON as first read.
    let mut versions: BTreeMap<u64, (Contents, String)> = BTreeMap::new();
    let mut next = 1;
    for step in 0..steps {
        let context = format!("seed {seed}, step {step}");
        let latest = versions.values().next_back().map(|(contents, _)| contents.clone());
        let rows_before: Vec<i64> = backends.iter().map(|b| (b.rows)()).collect();
        match random.below(10) {
            // A full export: a new random model, or the latest one again (in another order).
            0..=5 => {
                let resources: Vec<Resource> = match &latest {
                    Some(latest) if random.chance(25) => latest.values().rev().cloned().collect(),
                    // Only removals (whole sets, so no requirement dangles): the version writes no row.
                    Some(latest) if random.chance(20) => {
                        let dropped = format!("set-{}", random.below(SETS as u64));
                        latest.values().filter(|r| r.resource_set.as_ref() != Some(&dropped)).cloned().collect()
                    }
                    _ => {
                        let mut resources: Vec<Resource> = Vec::new();
                        for set in 0..SETS {
                            if random.chance(70) {
                                resources.extend(random_members(&mut random, set));
                            }
                        }
                        if random.chance(80) {
                            resources.push(shared());
                        }
                        resources
                    }
                };
                let force = random.chance(20);
                let expected = by_id(&resources);
                let unchanged = latest.as_ref() == Some(&expected);
                let written = latest.as_ref().map_or(expected.len(), |latest| {
                    expected.iter().filter(|(id, r)| latest.get(*id) != Some(*r)).count()
                });
                let model = ir(resources, &[]);
                let result = same(backends, &context, |store| {
                    if force {
                        store.export_full(&model, &meta("full")).map(ExportOutcome::Stored)
                    } else {
                        store.export_full_if_changed(&model, &meta("full"))
                    }
                });
                match result.unwrap() {
                    ExportOutcome::Unchanged(info) => {
                        assert!(unchanged && !force, "{context}: unchanged, but the model changed");
                        assert_eq!(Some(info.version), versions.keys().next_back().copied(), "{context}");
                    }
                    ExportOutcome::Stored(info) => {
                        assert!(!unchanged || force, "{context}: an unchanged model stored a version");
                        assert_eq!(info.version, next, "{context}");
                        versions.insert(next, (expected, String::new()));
                        next += 1;
                    }
                }
                for (backend, before) in backends.iter().zip(&rows_before) {
                    let added = (backend.rows)() - before;
                    assert_eq!(
                        added as usize, written,
                        "{context}: {}: a full export writes only what changed",
                        backend.name
                    );
                }
            }
            // A partial export: some sets replaced (some emptied), maybe one deleted.
            6..=8 => {
                let mut touched: Vec<usize> = (0..SETS).filter(|_| random.chance(35)).collect();
                if touched.is_empty() {
                    touched.push(random.below(SETS as u64) as usize);
                }
                let mut resources = Vec::new();
                let mut emptied = Vec::new();
                for &set in &touched {
                    let members = random_members(&mut random, set);
                    if members.is_empty() {
                        emptied.push(format!("set-{set}"));
                    }
                    resources.extend(members);
                }
                if random.chance(50) {
                    resources.push(shared());
                }
                let deleted: Vec<String> = (0..SETS)
                    .filter(|s| !touched.contains(s) && random.chance(15))
                    .map(|s| format!("set-{s}"))
                    .collect();
                let request = PartialRequest { delete_sets: deleted.clone(), soft_delete: false };
                let emptied: Vec<&str> = emptied.iter().map(String::as_str).collect();
                let model = ir(resources.clone(), &emptied);
                // Deleting a set the latest version does not have is refused.
                let unknown = latest.as_ref().is_some_and(|latest| {
                    deleted.iter().any(|set| !latest.values().any(|r| r.resource_set.as_ref() == Some(set)))
                });
                let result = same(backends, &context, |store| store.export_partial(&model, &request, &meta("partial")));
                match (result, &latest) {
                    (Err(StoreError::Rejected(rejection)), None) => {
                        assert_eq!(rejection.rule, modelc_store::Rule::NoBase, "{context}");
                    }
                    (Err(StoreError::Rejected(rejection)), Some(_)) if unknown => {
                        assert_eq!(rejection.rule, modelc_store::Rule::UnknownSet, "{context}");
                    }
                    (Ok(info), Some(latest)) => {
                        assert_eq!(info.version, next, "{context}");
                        let replaced: Vec<String> = touched.iter().map(|s| format!("set-{s}")).chain(deleted).collect();
                        let mut expected: Contents = latest
                            .iter()
                            .filter(|(_, r)| r.resource_set.as_ref().is_none_or(|set| !replaced.contains(set)))
                            .map(|(id, r)| (id.clone(), r.clone()))
                            .collect();
                        expected.extend(by_id(&resources));
                        versions.insert(next, (expected, String::new()));
                        next += 1;
                    }
                    (result, _) => panic!("{context}: unexpected {result:?}"),
                }
            }
            // A prune: the latest `keep` versions stay.
            _ => {
                let keep = 1 + random.below(3);
                let dry_run = random.chance(30);
                // The sizes are each backend's own.
                let report = same(backends, &context, |store| {
                    store.prune(keep, dry_run).map(|r| (r.kept, r.removed, r.rows, r.contents))
                });
                let (kept, removed, _, _) = report.unwrap();
                let report =
                    modelc_store::PruneReport { kept, removed, rows: 0, contents: 0, bytes_before: 0, bytes_after: 0 };
                let all: Vec<u64> = versions.keys().copied().collect();
                let newest = all.len().saturating_sub(keep as usize);
                assert_eq!(report.kept, all[newest..], "{context}: prune keeps the latest {keep}");
                assert_eq!(report.removed, all[..newest], "{context}");
                if !dry_run {
                    for version in &report.removed {
                        versions.remove(version);
                    }
                }
                for backend in backends.iter() {
                    let stored: Vec<u64> = backend.store.versions().unwrap().iter().map(|v| v.version).collect();
                    assert_eq!(stored, versions.keys().copied().collect::<Vec<_>>(), "{context}: the versions kept");
                }
            }
        }
        check(backends, &mut versions, &mut random, &context);
    }
}

/// Every version the model keeps reads as the model says, and exactly as it first read; the
/// diff of two random versions from their changed rows is the diff of the whole versions.
fn check(
    backends: &mut [Backend],
    versions: &mut BTreeMap<u64, (Contents, String)>,
    random: &mut Random,
    context: &str,
) {
    for backend in backends.iter() {
        let stored: Vec<u64> = backend.store.versions().unwrap().iter().map(|v| v.version).collect();
        assert_eq!(stored, versions.keys().copied().collect::<Vec<_>>(), "{context}: {}: the versions", backend.name);
    }
    let mut snapshots = BTreeMap::new();
    for (version, (expected, first_read)) in versions.iter_mut() {
        // Byte for byte the same on every backend.
        let snapshot = same(backends, context, |store| json(&store.snapshot(Some(*version)).unwrap().resources));
        let snapshot: Vec<Resource> = serde_json::from_str(&snapshot).unwrap();
        assert_eq!(&by_id(&snapshot), expected, "{context}: version {version} holds what the model says");
        let read = json(&snapshot);
        if first_read.is_empty() {
            *first_read = read;
        } else {
            assert_eq!(first_read, &read, "{context}: version {version} reads as it did when written");
        }
        snapshots.insert(*version, snapshot);
    }
    let numbers: Vec<u64> = versions.keys().copied().collect();
    if numbers.is_empty() {
        return;
    }
    // Each version against the next, both ways, and a few random pairs.
    let adjacent = numbers.windows(2).flat_map(|pair| [(pair[0], pair[1]), (pair[1], pair[0])]);
    let random_pairs: Vec<(u64, u64)> = (0..3)
        .map(|_| {
            let pick = |random: &mut Random| numbers[random.below(numbers.len() as u64) as usize];
            (pick(random), pick(random))
        })
        .collect();
    for (from, to) in adjacent.chain(random_pairs) {
        let changes = same(backends, context, |store| {
            let changes = store.changes(from, to).unwrap();
            (json(&changes.before), json(&changes.after))
        });
        let changes = modelc_store::Changes {
            before: serde_json::from_str(&changes.0).unwrap(),
            after: serde_json::from_str(&changes.1).unwrap(),
        };
        assert_eq!(
            diff::diff(from, &changes.before, to, &changes.after),
            diff::diff(from, &snapshots[&from], to, &snapshots[&to]),
            "{context}: diff {from} {to}"
        );
    }
}

fn embedded() -> (Backend, support::tempdir::Dir) {
    let (store, dir) = support::embedded_store();
    let path = dir.path.join("store.sqlite");
    let rows = move || {
        let db = rusqlite::Connection::open(&path).unwrap();
        db.query_row("SELECT COUNT(*) FROM resources", [], |r| r.get(0)).unwrap()
    };
    (Backend { name: "the embedded store", store: Box::new(store), rows: Box::new(rows) }, dir)
}

/// A server store in a new database of `server`.
fn server(server: &modelc_test_postgres::Postgres, database: &str) -> Backend {
    server.create_database(database).unwrap();
    let url = server.url_with_password(database);
    modelc_store::migrate(&url).unwrap();
    let store = modelc_store::PgStore::open(&url).unwrap();
    let mut admin = server.connect(database).unwrap();
    let rows = move || admin.query_one("SELECT COUNT(*) FROM resources", &[]).unwrap().get::<_, i64>(0);
    let rows = std::cell::RefCell::new(rows);
    Backend { name: "the PostgreSQL store", store: Box::new(store), rows: Box::new(move || (rows.borrow_mut())()) }
}

#[test]
fn every_version_reads_as_written_through_random_histories() {
    for seed in 0..64 {
        let (backend, _dir) = embedded();
        run(seed, 30, &mut [backend]);
    }
}

#[test]
fn the_server_store_keeps_the_same_histories_as_the_embedded_one() {
    let Some(postgres) = modelc_test_postgres::Postgres::start("the PostgreSQL history test") else { return };
    for seed in 0..16 {
        let (embedded, _dir) = embedded();
        run(seed, 30, &mut [embedded, server(&postgres, &format!("history{seed}"))]);
    }
}
