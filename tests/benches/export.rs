//! The store at scale (issue 19), as whole processes beside the compile of the same model: for
//! the service catalogue of N networks (5 hosts each, a set per network), the time of `modelc
//! compile`, and the time and bytes added to the store of a first full export, an unchanged
//! re-export (which stores nothing), a forced one (a version sharing every row), a full export
//! with one network added, and a partial export of one network. Then a history of `HISTORY`
//! versions (one network changed per version, through the store's interface) and `modelc show`
//! and `modelc diff` of old versions in it. Targets: unchanged and one-network full exports at
//! most 1.3× the compile and under 1 MB added; a first full export at most 1.6×.
//!
//! Each size runs on the embedded store and then, where PostgreSQL is installed, on a PostgreSQL
//! store (a server the bench starts on loopback, syncing every commit as a production server
//! does), each step also as a ratio to the embedded store's time. Targets for PostgreSQL: a
//! first full export at most 2× the embedded store's, an unchanged re-export adds nothing, a
//! partial export of one network under 50 ms, `diff` of neighbours under 20 ms after 1,000
//! versions.
//!
//! Run with `cargo bench -p modelc-tests --bench export` (optionally followed by `--` and the
//! sizes, e.g. `-- 1000 10000`, and `embedded` or `postgres` for one backend only).
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stdout, reason = "benchmark code")]

use std::path::{Path, PathBuf};

use modelc_store::{Access, Locator, Metadata, PartialRequest};
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
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sizes: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { DEFAULT_SIZES.to_vec() } else { sizes };
    let only = |name: &str| !args.iter().any(|a| a == "embedded" || a == "postgres") || args.iter().any(|a| a == name);
    let binary = release_binary();
    let server = if only("postgres") {
        let options = modelc_test_postgres::Options { durable: true, ..Default::default() };
        modelc_test_postgres::Postgres::start_with_options("the export benchmark", &options)
    } else {
        None
    };
    for networks in sizes {
        let dir = std::env::temp_dir().join(format!("modelc-bench-export-{}-{networks}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut embedded_times = Vec::new();
        if only("embedded") {
            embedded_times = bench(&binary, &dir, networks, &mut Embedded { dir: dir.clone() }, &[]);
        }
        if let Some(server) = &server {
            bench(&binary, &dir, networks, &mut Server::new(server), &embedded_times);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A store the steps run against, whose state can be saved after a step and restored before
/// each run of the next.
trait Backend {
    fn name(&self) -> &'static str;
    /// What `--store` names it.
    fn store(&self) -> String;
    /// Puts the store in the state saved as `state` (`None`: no store at all).
    fn restore(&mut self, state: Option<&str>);
    fn save(&mut self, state: &str);
    /// Its size in bytes, all written.
    fn size(&mut self) -> u64;
}

/// The embedded store: a file, its states copies of it.
struct Embedded {
    dir: PathBuf,
}

impl Backend for Embedded {
    fn name(&self) -> &'static str {
        "embedded"
    }

    fn store(&self) -> String {
        self.dir.join("s.sqlite").display().to_string()
    }

    fn restore(&mut self, state: Option<&str>) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(self.dir.join(format!("s.sqlite{suffix}")));
        }
        if let Some(state) = state {
            let store = self.dir.join("s.sqlite");
            std::fs::copy(self.dir.join(format!("{state}.sqlite")), &store).unwrap();
            // On disk before the run, or the run's first sync would write the copy.
            std::fs::File::open(&store).unwrap().sync_all().unwrap();
        }
    }

    fn save(&mut self, state: &str) {
        self.size();
        std::fs::copy(self.dir.join("s.sqlite"), self.dir.join(format!("{state}.sqlite"))).unwrap();
    }

    /// The database's size once its write-ahead log is checkpointed into it.
    fn size(&mut self) -> u64 {
        let path = self.dir.join("s.sqlite");
        // Opening a path that does not exist would create an empty database there.
        if !path.exists() {
            return 0;
        }
        let Ok(db) = rusqlite::Connection::open(&path) else { return 0 };
        let _ = db.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        std::fs::metadata(&path).map_or(0, |m| m.len())
    }
}

/// A PostgreSQL store: a database, its states databases made from it as a template.
struct Server<'a> {
    server: &'a modelc_test_postgres::Postgres,
    admin: postgres::Client,
}

impl<'a> Server<'a> {
    fn new(server: &'a modelc_test_postgres::Postgres) -> Server<'a> {
        let mut admin = server.connect("postgres").unwrap();
        admin.batch_execute("DROP DATABASE IF EXISTS s").unwrap();
        admin.batch_execute("DROP DATABASE IF EXISTS empty").unwrap();
        admin.batch_execute("CREATE DATABASE empty").unwrap();
        modelc_store::migrate(&server.url_with_password("empty")).unwrap();
        Server { server, admin }
    }
}

impl Backend for Server<'_> {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn store(&self) -> String {
        self.server.url_with_password("s")
    }

    fn restore(&mut self, state: Option<&str>) {
        self.admin.batch_execute("DROP DATABASE IF EXISTS s").unwrap();
        let template = state.unwrap_or("empty").replace('-', "_");
        self.admin.batch_execute(&format!("CREATE DATABASE s TEMPLATE \"{template}\"")).unwrap();
        // The maintenance autovacuum would do (statistics, visibility and free-space maps) done
        // now, so that what a run adds is what it wrote.
        self.server.connect("s").unwrap().batch_execute("VACUUM ANALYZE").unwrap();
        self.admin.batch_execute("CHECKPOINT").unwrap();
    }

    fn save(&mut self, state: &str) {
        let state = state.replace('-', "_");
        self.admin.batch_execute(&format!("DROP DATABASE IF EXISTS \"{state}\"")).unwrap();
        self.admin.batch_execute(&format!("CREATE DATABASE \"{state}\" TEMPLATE s")).unwrap();
    }

    /// The store's tables and indexes, as `modelc store info` counts them (the database's
    /// directory also holds caches a new connection writes).
    fn size(&mut self) -> u64 {
        let store = modelc_store::open(&Locator::parse(&self.store()).unwrap(), Access::Read).unwrap();
        store.about().unwrap().bytes
    }
}

/// The steps on `backend`; their best times. `baseline`: the embedded store's, to give ratios.
fn bench(binary: &Path, dir: &Path, networks: usize, backend: &mut dyn Backend, baseline: &[f64]) -> Vec<f64> {
    std::fs::write(dir.join("main.cf"), service_catalogue(networks, HOSTS)).unwrap();
    std::fs::write(dir.join("partial.cf"), service_catalogue(1, HOSTS - 1)).unwrap();
    let mut compiles: Vec<f64> = (0..RUNS).map(|_| timed(binary, dir, &["compile", "main.cf"]).seconds).collect();
    compiles.sort_by(f64::total_cmp);
    let compile = compiles[0];
    println!(
        "{networks} networks, {} store: compile {compile:.3} s (median {:.3} s)",
        backend.name(),
        compiles[RUNS / 2]
    );
    let store = backend.store();
    // Each step runs `RUNS` times, each on the store as the previous step left it, and keeps the
    // store of its last run for the next step.
    let mut state: Option<String> = None;
    let mut best = Vec::new();
    let mut step = |what: &str, args: &[&str]| {
        let mut seconds = Vec::new();
        let (mut added, mut peak) = (0, 0.0f64);
        for _ in 0..RUNS {
            backend.restore(state.as_deref());
            let before = backend.size();
            let run = timed(binary, dir, &[args, &["--store", &store]].concat());
            added = backend.size().saturating_sub(before);
            peak = peak.max(run.peak_mib);
            seconds.push(run.seconds);
        }
        seconds.sort_by(f64::total_cmp);
        let ratio =
            baseline.get(best.len()).map_or_else(String::new, |b| format!(" {:>5.2}x embedded", seconds[0] / b));
        println!(
            "  {what:<30} {:>7.3} s {:>5.2}x the compile (median {:.3} s){ratio} {:>11} bytes added {:>5.0} MiB peak",
            seconds[0],
            seconds[0] / compile,
            seconds[RUNS / 2],
            added,
            peak
        );
        best.push(seconds[0]);
        let saved = format!("after-{}", what.replace(' ', "-"));
        backend.save(&saved);
        state = Some(saved);
    };
    step("first full export", &["export", "main.cf"]);
    step("unchanged re-export", &["export", "main.cf"]);
    step("forced unchanged re-export", &["export", "main.cf", "--force"]);
    // The same file, one network more (a resource's source names its file: another file name
    // would change every resource).
    std::fs::write(dir.join("main.cf"), service_catalogue(networks + 1, HOSTS)).unwrap();
    step("one network added", &["export", "main.cf"]);
    step("partial export of one network", &["export", "--partial", "partial.cf"]);
    history(binary, dir, networks, &store, baseline, &mut best);
    best
}

/// `HISTORY` more versions, each changing one network (through the store's interface, from the
/// latest version's resources), then `show` and `diff` of old versions as whole processes.
/// `baseline` and `best`: as for the steps, continued.
fn history(binary: &Path, dir: &Path, networks: usize, store: &str, baseline: &[f64], best: &mut Vec<f64>) {
    let locator = Locator::parse(store).unwrap();
    let mut opened = modelc_store::open(&locator, Access::Existing).unwrap();
    let latest = opened.snapshot(None).unwrap();
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
        opened.export_partial(&ir, &PartialRequest::default(), &Metadata::default()).unwrap();
    }
    println!("  {HISTORY} one-network versions through the store: {:.1} s", started.elapsed().as_secs_f64());
    drop(opened);
    let mut measure = |what: String, args: &[&str], lines: bool| {
        let run = timed(binary, dir, &[args, &["--store", store]].concat());
        let ratio =
            baseline.get(best.len()).map_or_else(String::new, |b| format!(" {:>5.2}x embedded", run.seconds / b));
        let changed =
            if lines { format!(" ({} lines of changes)", run.stdout_lines.saturating_sub(2)) } else { String::new() };
        println!("  {what:<30} {:>8.3} s{ratio}{changed}", run.seconds);
        best.push(run.seconds);
    };
    for version in [first, first + HISTORY as u64 / 2] {
        measure(format!("show version {version}"), &["show", &version.to_string()], false);
    }
    // Two neighbours early and in the middle of the history (one network apart), and two versions
    // 500 apart (500 networks apart).
    let middle = first + HISTORY as u64 / 2;
    for (a, b) in [(first, first + 1), (middle, middle + 1), (first, middle)] {
        measure(format!("diff {a} {b}"), &["diff", &a.to_string(), &b.to_string()], true);
    }
}
