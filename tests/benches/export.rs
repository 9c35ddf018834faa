//! The store at scale (issue 19), as whole processes beside the compile of the same model: for
//! the service catalogue of N networks (5 hosts each, a set per network), the time of `modelc
//! compile`, and the time and bytes added to the store of a first full export, an unchanged
//! re-export (which stores nothing), a forced one (a version sharing every row), a full export
//! with one network added, and a partial export of one network. Then a history of `HISTORY`
//! versions (one network changed per version, through the store's interface) and `modelc show`
//! and `modelc diff` of old versions in it. Targets: unchanged and one-network full exports at
//! most 1.3× the compile and under 1 MB added; a first full export at most 1.6×.
//!
//! Run with `cargo bench -p modelc-tests --bench export` (optionally followed by `--` and the
//! sizes, e.g. `-- 1000 10000`).
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stdout, reason = "benchmark code")]

use std::path::{Path, PathBuf};

use modelc_store::{Metadata, PartialRequest, SqliteStore, Store};
use modelc_tests::catalogue::service_catalogue;
use modelc_tests::process::{release_binary, timed};

const DEFAULT_SIZES: [usize; 3] = [1_000, 10_000, 100_000];
const HOSTS: usize = 5;
/// Runs of each measurement: the best and the median are printed (this machine's page-fault
/// cost varies from one run to the next).
const RUNS: usize = 3;
/// Versions in the history that `show` and `diff` read.
const HISTORY: usize = 1_000;

fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { DEFAULT_SIZES.to_vec() } else { sizes };
    let binary = release_binary();
    for networks in sizes {
        bench(&binary, networks);
    }
}

fn bench(binary: &Path, networks: usize) {
    let dir = std::env::temp_dir().join(format!("modelc-bench-export-{}-{networks}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("main.cf"), service_catalogue(networks, HOSTS)).unwrap();
    std::fs::write(dir.join("partial.cf"), service_catalogue(1, HOSTS - 1)).unwrap();
    // The database's size once its write-ahead log is checkpointed into it.
    let size = || {
        // Opening a path that does not exist would create an empty database there.
        if !dir.join("s.sqlite").exists() {
            return 0;
        }
        let Ok(db) = rusqlite::Connection::open(dir.join("s.sqlite")) else { return 0 };
        let _ = db.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        std::fs::metadata(dir.join("s.sqlite")).map_or(0, |m| m.len())
    };
    let mut compiles: Vec<f64> = (0..RUNS).map(|_| timed(binary, &dir, &["compile", "main.cf"]).seconds).collect();
    compiles.sort_by(f64::total_cmp);
    let compile = compiles[0];
    println!("{networks} networks: compile {compile:.3} s (median {:.3} s)", compiles[RUNS / 2]);
    let store = dir.join("s.sqlite");
    // Each step runs `RUNS` times, each on the store as the previous step left it (a copy of it,
    // checkpointed), and keeps the store of its last run for the next step.
    let mut state: Option<PathBuf> = None;
    let mut step = |what: &str, args: &[&str]| {
        let mut seconds = Vec::new();
        let (mut added, mut peak) = (0, 0.0f64);
        for _ in 0..RUNS {
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(dir.join(format!("s.sqlite{suffix}")));
            }
            if let Some(saved) = &state {
                std::fs::copy(saved, &store).unwrap();
                // On disk before the run, or the run's first sync would write the copy.
                std::fs::File::open(&store).unwrap().sync_all().unwrap();
            }
            let before = size();
            let run = timed(binary, &dir, args);
            added = size().saturating_sub(before);
            peak = peak.max(run.peak_mib);
            seconds.push(run.seconds);
        }
        seconds.sort_by(f64::total_cmp);
        println!(
            "  {what:<30} {:>7.3} s {:>5.2}x the compile (median {:.3} s {:>5.2}x) {:>11} bytes added {:>5.0} MiB peak",
            seconds[0],
            seconds[0] / compile,
            seconds[RUNS / 2],
            seconds[RUNS / 2] / compile,
            added,
            peak
        );
        let saved = dir.join(format!("after-{}.sqlite", what.replace(' ', "-")));
        std::fs::copy(&store, &saved).unwrap();
        state = Some(saved);
    };
    step("first full export", &["export", "main.cf", "--store", "s.sqlite"]);
    step("unchanged re-export", &["export", "main.cf", "--store", "s.sqlite"]);
    step("forced unchanged re-export", &["export", "main.cf", "--force", "--store", "s.sqlite"]);
    // The same file, one network more (a resource's source names its file: another file name
    // would change every resource).
    std::fs::write(dir.join("main.cf"), service_catalogue(networks + 1, HOSTS)).unwrap();
    step("one network added", &["export", "main.cf", "--store", "s.sqlite"]);
    step("partial export of one network", &["export", "--partial", "partial.cf", "--store", "s.sqlite"]);
    history(binary, &dir, networks);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `HISTORY` more versions, each changing one network (through the store's interface, from the
/// latest version's resources), then `show` and `diff` of old versions as whole processes.
fn history(binary: &Path, dir: &Path, networks: usize) {
    let path = dir.join("s.sqlite");
    let mut store = SqliteStore::open(&path).unwrap();
    let latest = store.snapshot(None).unwrap();
    let first = latest.info.version;
    let started = std::time::Instant::now();
    for step in 0..HISTORY {
        let set = format!("network-{}", step % networks);
        let mut members: Vec<modelc_ir::Resource> =
            latest.resources.iter().filter(|r| r.resource_set.as_deref() == Some(set.as_str())).cloned().collect();
        for member in &mut members {
            member.attributes.insert("name", serde_json::json!(format!("changed-{step}")));
        }
        let ids = members.iter().map(|r| r.id.clone()).collect();
        let source = modelc_ir::Source { entity: "std::ResourceSet".into(), file: "main.cf".into(), line: 1 };
        let ir = modelc_ir::Ir::new(members, vec![modelc_ir::ResourceSet { name: set, resources: ids, source }]);
        store.export_partial(&ir, &PartialRequest::default(), &Metadata::default()).unwrap();
    }
    println!("  {HISTORY} one-network versions through the store: {:.1} s", started.elapsed().as_secs_f64());
    drop(store);
    for version in [first, first + HISTORY as u64 / 2] {
        let shown = timed(binary, dir, &["show", &version.to_string(), "--store", "s.sqlite"]);
        println!("  show version {version:<20} {:>8.3} s", shown.seconds);
    }
    // Two neighbours early and in the middle of the history (one network apart), and two versions
    // 500 apart (500 networks apart).
    let middle = first + HISTORY as u64 / 2;
    for (a, b) in [(first, first + 1), (middle, middle + 1), (first, middle)] {
        let diff = timed(binary, dir, &["diff", &a.to_string(), &b.to_string(), "--store", "s.sqlite"]);
        let changed = diff.stdout_lines.saturating_sub(2);
        println!("  diff {a} {b:<20} {:>8.3} s ({changed} lines of changes)", diff.seconds);
    }
}
