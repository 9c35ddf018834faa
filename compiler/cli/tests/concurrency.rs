//! Exports racing each other, as a team's do: eight `modelc export --partial` processes, each
//! sending 25 exports of its own resource set, with full exports and prunes mixed in, all at
//! once into one store. Every acknowledged export lands under the number it was told, the
//! numbers have no gaps, and the history is exactly what the same exports give when applied one
//! after the other in version order into a fresh embedded store: no export was built on a
//! version other than the one before it, and no full export lost a partial that landed after
//! it. Run against PostgreSQL and against the embedded store (several processes on one file).
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::path::{Path, PathBuf};
use std::process::Command;

use modelc_ir::{Ir, Resource, ResourceSet};
use modelc_store::{Access, Locator, Metadata, PartialRequest};

const EXPORTERS: usize = 8;
const PARTIALS: usize = 25;
const FULLS: usize = 6;
const PRUNES: usize = 3;

fn resource(name: &str, set: Option<&str>, value: usize) -> Resource {
    serde_json::from_value(serde_json::json!({
        "id": format!("test::R[internal,name={name}]"), "type": "test::R", "agent": "internal",
        "attributes": {"name": name, "value": value}, "requires": [], "send_event": false,
        "receive_events": true, "resource_set": set, "state": "available",
        "source": {"entity": "test::R", "file": "main.cf", "line": 1}
    }))
    .unwrap()
}

fn ir(resources: Vec<Resource>) -> Ir {
    let mut sets: Vec<ResourceSet> = Vec::new();
    for r in &resources {
        let Some(name) = &r.resource_set else { continue };
        match sets.iter_mut().find(|s| &s.name == name) {
            Some(set) => set.resources.push(r.id.clone()),
            None => sets.push(ResourceSet {
                name: name.clone(),
                resources: vec![r.id.clone()],
                source: modelc_ir::Source { entity: "std::ResourceSet".into(), file: "main.cf".into(), line: 2 },
            }),
        }
    }
    Ir::new(resources, sets)
}

/// Exporter `team`'s `round`th partial export: its set, of 1 to 3 members with values that
/// change every round, and the shared resource every export holds the same.
fn partial(team: usize, round: usize) -> Ir {
    let set = format!("team-{team}");
    let mut resources: Vec<Resource> =
        (0..1 + (round + team) % 3).map(|k| resource(&format!("{set}-r{k}"), Some(&set), round)).collect();
    resources.push(resource("shared", None, 0));
    ir(resources)
}

/// The `n`th full export: every team's set with one member, and the shared resource.
fn full(n: usize) -> Ir {
    let mut resources: Vec<Resource> = (0..EXPORTERS)
        .map(|team| {
            let set = format!("team-{team}");
            resource(&format!("{set}-base"), Some(&set), 1000 + n)
        })
        .collect();
    resources.push(resource("shared", None, 0));
    ir(resources)
}

/// What a version's message names: which export made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Export {
    Partial(usize, usize),
    Full(usize),
}

impl Export {
    fn message(self) -> String {
        match self {
            Export::Partial(team, round) => format!("team {team} round {round}"),
            Export::Full(n) => format!("full {n}"),
        }
    }

    fn ir(self) -> Ir {
        match self {
            Export::Partial(team, round) => partial(team, round),
            Export::Full(n) => full(n),
        }
    }

    fn file(self, dir: &Path) -> PathBuf {
        let path = dir.join(format!("{}.ir.json", self.message().replace(' ', "-")));
        if !path.exists() {
            std::fs::write(&path, self.ir().to_json()).unwrap();
        }
        path
    }
}

/// Runs `modelc export` for `export` against `store`; the version number it acknowledged.
fn run_export(dir: &Path, store: &str, export: Export) -> u64 {
    let file = export.file(dir);
    let mut command = Command::new(env!("CARGO_BIN_EXE_modelc"));
    command.current_dir(dir).env_remove("MODELC_STORE").args(["--format", "json", "export", "--store", store]);
    command.arg("--ir").arg(&file).args(["-m", &export.message(), "--force"]);
    if let Export::Partial(..) = export {
        command.arg("--partial");
    }
    let out = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{export:?}: {stdout}{}", String::from_utf8_lossy(&out.stderr));
    let document: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    document["version"]["version"].as_u64().unwrap()
}

fn run_prune(dir: &Path, store: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_modelc"))
        .current_dir(dir)
        .env_remove("MODELC_STORE")
        .args(["prune", "--keep", "40", "--store", store])
        .output()
        .unwrap();
    assert!(out.status.success(), "prune: {}", String::from_utf8_lossy(&out.stderr));
}

/// Races the exports against `store` and checks the history they leave.
fn race(dir: &Path, store: &str) {
    let acknowledged = std::sync::Mutex::new(vec![(run_export(dir, store, Export::Full(0)), Export::Full(0))]);
    std::thread::scope(|scope| {
        for team in 0..EXPORTERS {
            let acknowledged = &acknowledged;
            scope.spawn(move || {
                for round in 0..PARTIALS {
                    let export = Export::Partial(team, round);
                    let version = run_export(dir, store, export);
                    acknowledged.lock().unwrap().push((version, export));
                }
            });
        }
        let acknowledged = &acknowledged;
        scope.spawn(move || {
            for n in 1..=FULLS {
                std::thread::sleep(std::time::Duration::from_millis(150));
                let version = run_export(dir, store, Export::Full(n));
                acknowledged.lock().unwrap().push((version, Export::Full(n)));
            }
        });
        scope.spawn(move || {
            for _ in 0..PRUNES {
                std::thread::sleep(std::time::Duration::from_millis(300));
                run_prune(dir, store);
            }
        });
    });
    let mut acknowledged = acknowledged.into_inner().unwrap();
    acknowledged.sort_by_key(|(version, _)| *version);
    let total = 1 + EXPORTERS * PARTIALS + FULLS;
    let numbers: Vec<u64> = acknowledged.iter().map(|(version, _)| *version).collect();
    assert_eq!(numbers, (1..=total as u64).collect::<Vec<_>>(), "every export has its own number, with no gap");

    // The same exports, one after the other in version order, into a fresh embedded store.
    let replay_path = dir.join("replay.sqlite");
    let mut replay = modelc_store::open(&Locator::Embedded(replay_path), Access::Create).unwrap();
    let stored = modelc_store::open(&Locator::parse(store).unwrap(), Access::Existing).unwrap();
    let kept: Vec<u64> = stored.versions().unwrap().iter().map(|v| v.version).collect();
    assert_eq!(kept.last(), Some(&(total as u64)));
    assert!(kept.windows(2).all(|w| w[1] == w[0] + 1), "prune removes only the oldest: {kept:?}");
    for (version, export) in &acknowledged {
        let metadata = Metadata { created: String::new(), source_hash: String::new(), message: export.message() };
        let replayed = match export {
            Export::Partial(..) => replay.export_partial(&export.ir(), &PartialRequest::default(), &metadata),
            Export::Full(_) => replay.export_full(&export.ir(), &metadata),
        }
        .unwrap();
        assert_eq!(replayed.version, *version);
        if !kept.contains(version) {
            continue;
        }
        let snapshot = stored.snapshot(Some(*version)).unwrap();
        assert_eq!(snapshot.info.message, export.message(), "version {version} is the export told it was");
        assert_eq!((snapshot.info.kind, snapshot.info.base), (replayed.kind, replayed.base), "version {version}");
        let expected = replay.snapshot(Some(*version)).unwrap();
        assert_eq!(
            serde_json::to_string(&snapshot.resources).unwrap(),
            serde_json::to_string(&expected.resources).unwrap(),
            "version {version} ({}) holds what the exports in version order give",
            export.message()
        );
    }
}

fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(name).tempdir().unwrap()
}

#[test]
fn racing_exports_into_postgresql_land_whole_and_in_order() {
    let Some(postgres) = modelc_test_postgres::Postgres::start("the concurrent exports test") else { return };
    postgres.create_database("race").unwrap();
    let url = postgres.url_with_password("race");
    modelc_store::migrate(&url).unwrap();
    let dir = scratch("race-postgres");
    race(dir.path(), &url);
}

#[test]
fn racing_exports_into_the_embedded_store_land_whole_and_in_order() {
    let dir = scratch("race-embedded");
    let store = dir.path().join("store.sqlite").display().to_string();
    race(dir.path(), &store);
}
