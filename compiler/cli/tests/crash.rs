//! Exports killed half-way (a real `modelc` child process, `SIGKILL`) leave the store as it was:
//! the database is sound, holds the versions it held, each of them whole, and the next export
//! gets the next number. Two ways of killing: at a failpoint inside the export's transaction
//! (after every row is written, before the commit: the worst moment, every time), and at
//! moments spread over an export's run, so that some land while SQLite commits.
//!
//! The same against a PostgreSQL store, and there also with the server stopped at once
//! (`SIGQUIT`, no shutdown checkpoint) at moments spread over an export's run, then started
//! again: every acknowledged version reads whole and as exported, no other version exists, and
//! the next export works.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

#[cfg(feature = "failpoints")]
use modelc_store::Store;
use modelc_store::{Access, FAILPOINT_VAR, Locator, SqliteStore, VersionInfo};

fn modelc(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_modelc"));
    command.current_dir(dir).env_remove(FAILPOINT_VAR).stdout(Stdio::null()).stderr(Stdio::piped());
    command
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("modelc-crash-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `networks` networks of `hosts` hosts, a resource set per network, one shared resource;
/// every host carries `tag`.
fn catalogue(networks: usize, hosts: usize, tag: &str) -> String {
    format!(
        r#"entity Host extends std::Resource:
    int network
    int id
    string tag
end
index Host(network, id)
implement Host using std::none

entity Monitor extends std::Resource:
    string name
end
index Monitor(name)
implement Monitor using std::none

Monitor(name="monitor")
for n in std::sequence({networks}):
    set = std::ResourceSet(name="network-{{{{n}}}}")
    for h in std::sequence({hosts}):
        set.resources += Host(network=n, id=h, tag="{tag}")
    end
end
"#
    )
}

/// What a reader sees: every version's metadata and the latest version's resources, after
/// checking that the database is sound and the latest version holds as many resources as it says.
#[derive(Debug, PartialEq)]
struct State {
    versions: Vec<VersionInfo>,
    latest: String,
}

fn state(store: &Path) -> State {
    assert_eq!(SqliteStore::open_existing(store).unwrap().integrity_check().unwrap(), "ok");
    state_at(&Locator::Embedded(store.to_owned()))
}

fn state_at(store: &Locator) -> State {
    let store = modelc_store::open(store, Access::Existing).unwrap();
    let versions = store.versions().unwrap();
    for (i, info) in versions.iter().enumerate() {
        assert_eq!(info.version, i as u64 + 1, "versions are consecutive");
    }
    let mut latest = String::new();
    if let Some(info) = versions.last() {
        let snapshot = store.snapshot(None).unwrap();
        assert_eq!(snapshot.resources.len() as u64, info.resources, "version {} is whole", info.version);
        latest = serde_json::to_string(&snapshot.resources).unwrap();
    }
    State { versions, latest }
}

fn run(command: &mut Command) {
    let out = command.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Full and partial exports into `store` (of `full.cf`'s version), each killed at its failpoint
/// inside the transaction: the store then reads as `before`.
#[cfg(feature = "failpoints")]
fn kill_at_failpoints(dir: &Path, store: &str, before: &State, read: impl Fn() -> State) {
    use std::io::{BufRead, BufReader};
    for (point, args) in [
        ("full-before-commit", vec!["export", "changed.cf"]),
        ("partial-before-commit", vec!["export", "--partial", "network-0.cf"]),
    ] {
        let mut child = modelc(dir).args(&args).args(["--store", store]).env(FAILPOINT_VAR, point).spawn().unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let reached =
            stderr.lines().map_while(Result::ok).any(|line| line.contains(&format!("failpoint {point} reached")));
        assert!(reached, "{point}: the export never reached its failpoint");
        child.kill().unwrap();
        assert!(!child.wait().unwrap().success());
        assert_eq!(&read(), before, "{point}: the killed export left a trace");
    }
}

/// Needs the store's failpoints: `cargo test -p modelc --features failpoints --test crash`
/// (`scripts/test` runs it so).
#[cfg(feature = "failpoints")]
#[test]
fn an_export_killed_inside_its_transaction_changes_nothing() {
    let dir = scratch("failpoint");
    std::fs::write(dir.join("full.cf"), catalogue(20, 3, "a")).unwrap();
    std::fs::write(dir.join("changed.cf"), catalogue(20, 3, "b")).unwrap();
    std::fs::write(dir.join("network-0.cf"), catalogue(1, 1, "a")).unwrap();
    let store = dir.join("store.sqlite");
    run(modelc(&dir).args(["export", "full.cf", "--store", "store.sqlite"]));
    let before = state(&store);

    kill_at_failpoints(&dir, "store.sqlite", &before, || state(&store));
    // The store works on: the next export is version 2.
    run(modelc(&dir).args(["export", "--partial", "network-0.cf", "--store", "store.sqlite"]));
    let store = SqliteStore::open_existing(&store).unwrap();
    assert_eq!(store.versions().unwrap().iter().map(|v| v.version).collect::<Vec<_>>(), [1, 2]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A first export builds the store beside its path: killed before it puts the store in place,
/// it leaves no store, and the next export builds one and removes what the killed one left.
#[cfg(feature = "failpoints")]
#[test]
fn a_first_export_killed_before_its_store_is_in_place_leaves_no_store() {
    use std::io::{BufRead, BufReader};
    let dir = scratch("first-export");
    std::fs::write(dir.join("full.cf"), catalogue(20, 3, "a")).unwrap();
    let point = "new-store-before-publish";
    let mut child =
        modelc(&dir).args(["export", "full.cf", "--store", "store.sqlite"]).env(FAILPOINT_VAR, point).spawn().unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let reached = stderr.lines().map_while(Result::ok).any(|line| line.contains(&format!("failpoint {point} reached")));
    assert!(reached, "the export never reached its failpoint");
    child.kill().unwrap();
    assert!(!child.wait().unwrap().success());
    assert!(!dir.join("store.sqlite").exists(), "a killed first export left a store");
    run(modelc(&dir).args(["export", "full.cf", "--store", "store.sqlite"]));
    let left: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(!left.iter().any(|name| name.contains(".new-")), "{left:?}");
    assert_eq!(state(&dir.join("store.sqlite")).versions.len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn exports_killed_at_any_moment_leave_whole_versions() {
    let dir = scratch("anytime");
    // Two models whose every resource differs, compiled once, so that the exports below spend
    // their time writing (a full export writes only what changed).
    for tag in ["a", "b"] {
        std::fs::write(dir.join("main.cf"), catalogue(1_500, 5, tag)).unwrap();
        run(modelc(&dir).args(["compile", "main.cf", "-o", &format!("resources-{tag}.json")]));
    }
    let store = dir.join("store.sqlite");
    let export = |dir: &Path, step: u32| {
        let mut command = modelc(dir);
        let ir = if step.is_multiple_of(2) { "resources-a.json" } else { "resources-b.json" };
        command.args(["export", "--force", "--ir", ir, "--store", "store.sqlite"]);
        command
    };
    let started = Instant::now();
    run(&mut export(&dir, 0));
    let duration = started.elapsed();
    // Kills from a tenth of an export's time to past its end.
    for step in 1..=14u32 {
        let before = state(&store);
        let mut child = export(&dir, step).spawn().unwrap();
        std::thread::sleep(duration * step / 10);
        let _ = child.kill();
        let finished = child.wait().unwrap().success();
        let after = state(&store);
        // Either the export committed before the kill (one more whole version), or nothing changed.
        if after.versions.len() == before.versions.len() + 1 {
            assert_eq!(
                after.versions[..before.versions.len()],
                before.versions,
                "step {step}: earlier versions changed"
            );
        } else {
            assert!(!finished, "step {step}: a finished export wrote no version");
            assert_eq!(after, before, "step {step}: a killed export left a trace");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A build without the `failpoints` feature has no failpoint: the variable does nothing and
/// the binary holds no trace of the hook.
#[cfg(not(feature = "failpoints"))]
#[test]
fn a_normal_build_has_no_failpoints() {
    let binary = std::fs::read(env!("CARGO_BIN_EXE_modelc")).unwrap();
    let message = b"modelc-store: failpoint";
    assert!(!binary.windows(message.len()).any(|w| w == message), "the binary holds the failpoint hook");
    let dir = scratch("no-failpoint");
    std::fs::write(dir.join("main.cf"), catalogue(2, 1, "a")).unwrap();
    let out = modelc(&dir)
        .args(["export", "main.cf", "--store", "store.sqlite"])
        .env(FAILPOINT_VAR, "full-before-commit")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !stderr.contains("failpoint reached"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A PostgreSQL server with a migrated store, and its URL; `None` where there is none (and not
/// in CI).
fn postgres_store(what: &str, database: &str) -> Option<(modelc_test_postgres::Postgres, String)> {
    let server = modelc_test_postgres::Postgres::start(what)?;
    server.create_database(database).unwrap();
    let url = server.url_with_password(database);
    modelc_store::migrate(&url).unwrap();
    Some((server, url))
}

/// Version `version` of `store` holds exactly the resources of the IR file `ir` (each as
/// exported; the order of rows shared with the version before is theirs).
fn holds(store: &Locator, version: u64, ir: &Path) {
    let sorted = |resources: Vec<modelc_ir::Resource>| {
        let mut texts: Vec<String> = resources.iter().map(|r| serde_json::to_string(r).unwrap()).collect();
        texts.sort();
        texts
    };
    let exported = modelc_ir::Ir::from_json(&std::fs::read_to_string(ir).unwrap()).unwrap();
    let stored = modelc_store::open(store, Access::Existing).unwrap().snapshot(Some(version)).unwrap();
    assert!(sorted(stored.resources) == sorted(exported.resources), "version {version} holds {}", ir.display());
}

#[cfg(feature = "failpoints")]
#[test]
fn a_postgresql_export_killed_inside_its_transaction_changes_nothing() {
    let Some((_server, url)) = postgres_store("the PostgreSQL crash test", "failpoint") else { return };
    let store = Locator::Postgres(url.clone());
    let dir = scratch("postgres-failpoint");
    std::fs::write(dir.join("full.cf"), catalogue(20, 3, "a")).unwrap();
    std::fs::write(dir.join("changed.cf"), catalogue(20, 3, "b")).unwrap();
    std::fs::write(dir.join("network-0.cf"), catalogue(1, 1, "a")).unwrap();
    run(modelc(&dir).args(["export", "full.cf", "--store", &url]));
    let before = state_at(&store);
    kill_at_failpoints(&dir, &url, &before, || state_at(&store));
    run(modelc(&dir).args(["export", "--partial", "network-0.cf", "--store", &url]));
    let versions = modelc_store::open(&store, Access::Existing).unwrap().versions().unwrap();
    assert_eq!(versions.iter().map(|v| v.version).collect::<Vec<_>>(), [1, 2], "the next export takes the next number");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A first export fills the empty table with its indexes set aside and builds them after the
/// rows: killed before it commits, it leaves the store empty with every index as it was, and
/// once done the indexes are exactly the layout's.
#[cfg(feature = "failpoints")]
#[test]
fn a_first_postgresql_export_killed_before_it_commits_leaves_the_indexes_as_they_were() {
    use std::io::{BufRead, BufReader};
    let Some((server, url)) = postgres_store("the PostgreSQL crash test", "first-failpoint") else { return };
    let indexes = || -> Vec<String> {
        let mut client = server.connect("first-failpoint").unwrap();
        let rows = client
            .query("SELECT indexdef FROM pg_indexes WHERE tablename = 'resources' ORDER BY indexname", &[])
            .unwrap();
        rows.iter().map(|row| row.get(0)).collect()
    };
    let laid_out = indexes();
    assert_eq!(laid_out.len(), 6, "{laid_out:?}");
    let store = Locator::Postgres(url.clone());
    let dir = scratch("postgres-first-failpoint");
    std::fs::write(dir.join("full.cf"), catalogue(20, 3, "a")).unwrap();
    let point = "full-before-commit";
    let mut child =
        modelc(&dir).args(["export", "full.cf", "--store", &url]).env(FAILPOINT_VAR, point).spawn().unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let reached = stderr.lines().map_while(Result::ok).any(|line| line.contains(&format!("failpoint {point} reached")));
    assert!(reached, "the export never reached its failpoint");
    child.kill().unwrap();
    assert!(!child.wait().unwrap().success());
    assert!(state_at(&store).versions.is_empty(), "a killed first export stored a version");
    assert_eq!(indexes(), laid_out, "a killed first export changed the indexes");
    run(modelc(&dir).args(["export", "full.cf", "--store", &url]));
    assert_eq!(state_at(&store).versions.len(), 1);
    assert_eq!(indexes(), laid_out, "the indexes are built again exactly as laid out");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Exports into PostgreSQL interrupted at moments spread over their run, by `interrupt` (which
/// kills the exporter, or stops the server and starts it again).
fn postgres_exports_interrupted(
    name: &str,
    mut interrupt: impl FnMut(&mut std::process::Child, &mut modelc_test_postgres::Postgres),
) {
    let Some((mut server, url)) = postgres_store("the PostgreSQL crash test", name) else { return };
    let store = Locator::Postgres(url.clone());
    let dir = scratch(&format!("postgres-{name}"));
    for tag in ["a", "b"] {
        std::fs::write(dir.join("main.cf"), catalogue(1_500, 5, tag)).unwrap();
        run(modelc(&dir).args(["compile", "main.cf", "-o", &format!("resources-{tag}.json")]));
    }
    let ir = |step: u32| dir.join(if step.is_multiple_of(2) { "resources-a.json" } else { "resources-b.json" });
    let export = |step: u32| {
        let mut command = modelc(&dir);
        command.args(["export", "--force", "--ir"]).arg(ir(step)).args(["--store", &url]);
        command
    };
    let started = Instant::now();
    run(&mut export(0));
    let duration = started.elapsed();
    let (mut acknowledged, mut interrupted) = (1, 0);
    for step in 1..=14u32 {
        let before = state_at(&store);
        let mut child = export(step).spawn().unwrap();
        std::thread::sleep(duration * step / 10);
        interrupt(&mut child, &mut server);
        let finished = child.wait().unwrap().success();
        interrupted += u64::from(!finished);
        let after = state_at(&store);
        if after.versions.len() == before.versions.len() + 1 {
            // It committed (acknowledged or not): whole, as exported, the earlier ones unchanged.
            assert_eq!(
                after.versions[..before.versions.len()],
                before.versions,
                "step {step}: earlier versions changed"
            );
            holds(&store, after.versions.last().unwrap().version, &ir(step));
            acknowledged += u64::from(finished);
        } else {
            assert!(!finished, "step {step}: an acknowledged export is not there");
            assert_eq!(after, before, "step {step}: an interrupted export left a trace");
        }
    }
    assert!(acknowledged > 1, "some exports ended before they were interrupted");
    assert!(interrupted > 0, "some exports were interrupted");
    // The store works on.
    run(&mut export(0));
    let latest = state_at(&store).versions.last().unwrap().version;
    holds(&store, latest, &ir(0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn postgresql_exports_killed_at_any_moment_leave_whole_versions() {
    postgres_exports_interrupted("killed", |child, _| {
        let _ = child.kill();
    });
}

#[test]
fn postgresql_stopped_at_any_moment_of_an_export_keeps_whole_versions() {
    postgres_exports_interrupted("crashed", |_, server| {
        server.crash();
        server.restart().unwrap();
    });
}
