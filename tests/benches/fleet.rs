//! The load test of `modelc server` and `modelc agent` (issue 33): a server process on
//! 127.0.0.1 in front of a PostgreSQL the bench starts (syncing every commit, as a production
//! server does), `AGENTS` agents of the real agent code in this one process with `PER_AGENT`
//! `NullResource`s each, every resource in its own resource set (100,000 sets by default), and
//! `EXPORTERS` exporter threads of the real client code, each replacing one set per partial
//! export and releasing it. It measures, against the targets:
//!
//! | what | target |
//! |---|---|
//! | a partial export via the server into 100,000 sets | p50 ≤ 50 ms alone, p95 ≤ 250 ms loaded |
//! | sustained partial exports | ≥ 40/s |
//! | release until all 100,000 resources have reported | ≤ 30 s |
//! | a one-set change | wakes only its agent, converges in ≤ 1 s |
//! | server memory | ≤ 512 MiB RSS |
//! | actions lost or duplicated | 0 |
//!
//! and, with `full`, a full export of the 100,000-network catalogue through the server against
//! the same export into an embedded store (target: at most 2×).
//!
//! Bounded: it stops itself after 5 minutes whatever happens. Not part of CI. Run with
//! `cargo bench -p modelc-tests --bench fleet` (optionally `-- AGENTS PER_AGENT SECONDS`, e.g.
//! `-- 20 100 10` for a quick look), or `-- full` for the full-export comparison.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stdout, reason = "benchmark code")]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use modelc_api::ExportRequest;
use modelc_client::{Client, ClientOptions};
use modelc_ir::{Ir, Resource, ResourceSet};
use modelc_store::postgres::fleet::Role;
use modelc_store::{Metadata, PartialRequest};
use modelc_tests::process::release_binary;

const AGENTS: usize = 200;
const PER_AGENT: usize = 500;
const EXPORTERS: usize = 8;
/// How long the exporters run together.
const LOADED_SECONDS: u64 = 60;
/// The whole run stops itself after this.
const BOUND: Duration = Duration::from_secs(300);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    // The full-export comparison makes twelve exports of 500,001 resources: it has more time.
    let bound = if args.iter().any(|a| a == "full") { BOUND * 3 } else { BOUND };
    std::thread::spawn(move || {
        std::thread::sleep(bound);
        println!("stopped: the benchmark ran for {} s, its bound", bound.as_secs());
        std::process::exit(3);
    });
    let binary = release_binary();
    let options = modelc_test_postgres::Options { durable: true, ..Default::default() };
    let Some(postgres) = modelc_test_postgres::Postgres::start_with_options("the fleet load test", &options) else {
        println!("PostgreSQL is not installed: nothing measured");
        return;
    };
    if args.iter().any(|a| a == "full") {
        full_export(&binary, &postgres);
        return;
    }
    let numbers: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let agents = numbers.first().copied().unwrap_or(AGENTS);
    let per_agent = numbers.get(1).copied().unwrap_or(PER_AGENT);
    let loaded = Duration::from_secs(numbers.get(2).map_or(LOADED_SECONDS, |s| *s as u64));
    load(&binary, &postgres, agents, per_agent, loaded);
}

/// A laid-out store in a new database, with an admin token; its URL and the token.
fn store(postgres: &modelc_test_postgres::Postgres, database: &str) -> (String, String) {
    postgres.create_database(database).unwrap();
    let url = postgres.url_with_password(database);
    modelc_store::migrate(&url).unwrap();
    (url.clone(), token(&url, Role::Admin, &[]))
}

fn token(url: &str, role: Role, agents: &[String]) -> String {
    let mut store = modelc_store::PgStore::open(url).unwrap();
    let token = modelc_api::new_token().unwrap();
    store.create_token(&modelc_api::hash_token(&token), role, agents).unwrap();
    token
}

/// A server process on a free port; its URL, its log file.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    #[allow(clippy::zombie_processes, reason = "the `Server` it returns kills and waits for it when dropped")]
    fn start(binary: &Path, store: &str, log: &Path) -> Server {
        let mut child = Command::new(binary)
            .args(["server", "--store", store, "--listen", "127.0.0.1:0", "--connections", "24"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (found, url) = (Arc::new(Mutex::new(None::<String>)), log.to_owned());
        let seen = Arc::clone(&found);
        std::thread::spawn(move || {
            let mut file = std::fs::File::create(url).unwrap();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("listening on ").nth(1) {
                    *seen.lock().unwrap() = Some(rest.trim().to_owned());
                }
                use std::io::Write;
                let _ = writeln!(file, "{line}");
            }
        });
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(url) = found.lock().unwrap().clone() {
                return Server { child, url };
            }
            if Instant::now() >= until {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the server did not start");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The peak resident memory of the server process, in MiB.
    fn peak_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        let kib: f64 = status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            .unwrap_or(0.0);
        kib / 1024.0
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn null(agent: usize, index: usize, value: usize) -> Resource {
    let agent = format!("agent-{agent}");
    serde_json::from_value(serde_json::json!({
        "id": format!("std::testing::NullResource[{agent},name=r{index}]"),
        "type": "std::testing::NullResource", "agent": agent,
        "attributes": {"name": format!("r{index}"), "agentname": agent, "value": value.to_string(),
            "fail": false, "purged": false, "purge_on_delete": false, "send_event": true},
        "requires": [], "send_event": true, "receive_events": true,
        "resource_set": format!("{agent}-r{index}"), "state": "available",
        "source": {"entity": "std::testing::NullResource", "file": "main.cf", "line": 1}
    }))
    .unwrap()
}

fn ir(resources: Vec<Resource>) -> Ir {
    let sets = resources
        .iter()
        .map(|r| ResourceSet {
            name: r.resource_set.clone().unwrap(),
            resources: vec![r.id.clone()],
            source: modelc_ir::Source { entity: "std::ResourceSet".into(), file: "main.cf".into(), line: 2 },
        })
        .collect();
    Ir::new(resources, sets)
}

fn export(client: &Client, resources: Vec<Resource>, partial: bool, release: bool) -> u64 {
    let request = ExportRequest {
        ir: std::borrow::Cow::Owned(ir(resources)),
        partial: partial.then(PartialRequest::default),
        metadata: Metadata { created: modelc_store::utc_now(), source_hash: "0".into(), message: String::new() },
        force: true,
        release,
    };
    client.export(&request).unwrap().version.version
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn load(binary: &Path, postgres: &modelc_test_postgres::Postgres, agents: usize, per_agent: usize, loaded: Duration) {
    let dir = std::env::temp_dir().join(format!("modelc-bench-fleet-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (url, admin) = store(postgres, "fleet");
    let server = Server::start(binary, &url, &dir.join("server.log"));
    let names: Vec<String> = (0..agents).map(|a| format!("agent-{a}")).collect();
    let agent_token = token(&url, Role::Agent, &names);
    let exporter = Client::new(&server.url, Some(admin.clone()), &ClientOptions::default()).unwrap();
    let total = agents * per_agent;
    println!(
        "{agents} agents × {per_agent} NullResources = {total} resources, each in its own set; {EXPORTERS} exporters"
    );

    let started = Instant::now();
    let all: Vec<Resource> = (0..agents).flat_map(|a| (0..per_agent).map(move |i| null(a, i, 0))).collect();
    let first = export(&exporter, all, false, false);
    println!("full export of {total} resources through the server: {:.2} s", started.elapsed().as_secs_f64());

    // The agents, in this process: the real agent code, each name with its own threads.
    let stop = Arc::new(AtomicBool::new(false));
    let deployed: Arc<Mutex<Vec<(String, u64, usize)>>> = Arc::default();
    let started_agents = Arc::new(AtomicUsize::new(0));
    let agent_thread = {
        let client = Client::new(&server.url, Some(agent_token), &ClientOptions::default()).unwrap();
        let mut config = modelc_agent::Config::new(client, dir.join("agents"));
        config.watch_files = false;
        config.jobs = 2;
        let (stop, deployed, started_agents, names) =
            (Arc::clone(&stop), Arc::clone(&deployed), Arc::clone(&started_agents), names.clone());
        std::thread::spawn(move || {
            modelc_agent::run(&config, &names, &stop, |name, event| match event {
                modelc_agent::Event::Started { .. } => {
                    started_agents.fetch_add(1, Ordering::SeqCst);
                }
                modelc_agent::Event::Deployed { version, counts } => {
                    let actions = counts.iter().map(|(_, n)| n).sum();
                    deployed.lock().unwrap().push((name.to_owned(), version, actions));
                }
                modelc_agent::Event::Warning(message) => println!("  agent {name}: {message}"),
                _ => {}
            })
        })
    };
    while started_agents.load(Ordering::SeqCst) < agents {
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut db = postgres.connect("fleet").unwrap();
    let reported = |db: &mut postgres::Client, version: u64| -> i64 {
        db.query_one(
            "SELECT COUNT(*) FROM resource_states WHERE finished IS NOT NULL AND version >= $1",
            &[&(version as i64)],
        )
        .unwrap()
        .get(0)
    };

    // Release: until every resource has reported.
    let released = Instant::now();
    exporter.release(Some(first)).unwrap();
    while reported(&mut db, first) < total as i64 {
        std::thread::sleep(Duration::from_millis(50));
    }
    let release_seconds = released.elapsed().as_secs_f64();
    println!("release until all {total} resources reported: {release_seconds:.2} s");

    // Partial exports alone, each of one set, released.
    let mut alone = Vec::new();
    for k in 0..30 {
        let t = Instant::now();
        export(&exporter, vec![null(k % agents, k % per_agent, 1000 + k)], true, true);
        alone.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    alone.sort_by(f64::total_cmp);
    // Let the agents those woke finish.
    std::thread::sleep(Duration::from_secs(3));

    // One set changed: only its agent deploys the version, and converges.
    let (agent, index) = (agents / 2, per_agent / 2);
    let before = deployed.lock().unwrap().len();
    let t = Instant::now();
    let version = export(&exporter, vec![null(agent, index, 999_999)], true, true);
    let id = format!("std::testing::NullResource[agent-{agent},name=r{index}]");
    loop {
        let row = db
            .query_opt(
                "SELECT 1 FROM resource_states WHERE rid = $1 AND version = $2 AND finished IS NOT NULL",
                &[&id, &(version as i64)],
            )
            .unwrap();
        if row.is_some() || t.elapsed() > Duration::from_secs(30) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let one_set = t.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_secs(1));
    let woken: Vec<String> = deployed.lock().unwrap()[before..].iter().map(|(name, _, _)| name.clone()).collect();
    println!("one set changed: converged in {:.0} ms; agents woken: {woken:?}", one_set * 1000.0);

    // Loaded: the exporters together.
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let loaded_started = Instant::now();
    std::thread::scope(|scope| {
        for e in 0..EXPORTERS {
            let (latencies, exporter) = (Arc::clone(&latencies), exporter.clone());
            scope.spawn(move || {
                let mut round = 0;
                while loaded_started.elapsed() < loaded {
                    let agent = (e + EXPORTERS * round) % agents;
                    let t = Instant::now();
                    export(&exporter, vec![null(agent, round % per_agent, 2000 + round)], true, true);
                    latencies.lock().unwrap().push(t.elapsed().as_secs_f64() * 1000.0);
                    round += 1;
                }
            });
        }
    });
    let loaded_seconds = loaded_started.elapsed().as_secs_f64();
    let mut loaded_latencies = latencies.lock().unwrap().clone();
    loaded_latencies.sort_by(f64::total_cmp);
    let rate = loaded_latencies.len() as f64 / loaded_seconds;

    // Every agent finishes what it was given; then the actions are counted.
    let settle = Instant::now();
    loop {
        let busy: i64 = db.query_one("SELECT COUNT(*) FROM agents WHERE deploying IS NOT NULL", &[]).unwrap().get(0);
        let outboxes: usize = names
            .iter()
            .map(|n| std::fs::read_dir(dir.join("agents").join(n).join("outbox")).map_or(0, |d| d.count()))
            .sum();
        if busy == 0 && outboxes == 0 || settle.elapsed() > Duration::from_secs(60) {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(1));
    let peak = server.peak_mib();
    stop.store(true, Ordering::SeqCst);
    let _ = agent_thread.join();
    let expected: usize = deployed.lock().unwrap().iter().map(|(_, _, n)| n).sum();
    let row = db
        .query_one("SELECT COUNT(*), COUNT(DISTINCT (rid, version)) FROM actions WHERE finished IS NOT NULL", &[])
        .unwrap();
    let (recorded, distinct): (i64, i64) = (row.get(0), row.get(1));
    let unfinished: i64 = db.query_one("SELECT COUNT(*) FROM actions WHERE finished IS NULL", &[]).unwrap().get(0);
    let lost = expected as i64 - recorded;
    let duplicated = recorded - distinct;

    let mut table = BTreeMap::new();
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    let p50 = percentile(&alone, 0.5);
    let p95 = percentile(&loaded_latencies, 0.95);
    table.insert(1, format!("| partial export, alone | p50 {p50:.1} ms (target ≤ 50) | {} |", verdict(p50 <= 50.0)));
    table.insert(
        2,
        format!(
            "| partial export, loaded ({EXPORTERS} exporters) | p50 {:.1} ms, p95 {p95:.1} ms (target ≤ 250) | {} |",
            percentile(&loaded_latencies, 0.5),
            verdict(p95 <= 250.0)
        ),
    );
    table.insert(3, format!("| sustained partial exports | {rate:.1}/s (target ≥ 40) | {} |", verdict(rate >= 40.0)));
    table.insert(
        4,
        format!(
            "| release until all {total} resources reported | {release_seconds:.2} s (target ≤ 30) | {} |",
            verdict(release_seconds <= 30.0)
        ),
    );
    let only = woken.iter().all(|w| *w == format!("agent-{agent}")) && !woken.is_empty();
    table.insert(
        5,
        format!(
            "| one-set change | woke {} agent(s), only its own: {only}; converged in {:.0} ms (target ≤ 1000) | {} |",
            woken.len(),
            one_set * 1000.0,
            verdict(only && one_set <= 1.0)
        ),
    );
    table.insert(6, format!("| server memory | {peak:.0} MiB peak RSS (target ≤ 512) | {} |", verdict(peak <= 512.0)));
    table.insert(
        7,
        format!(
            "| actions lost or duplicated | {expected} made, {recorded} recorded: {lost} lost, {duplicated} duplicated, {unfinished} unfinished | {} |",
            verdict(lost == 0 && duplicated == 0 && unfinished == 0)
        ),
    );
    println!();
    println!("| what | measured | target |");
    println!("|---|---|---|");
    for line in table.values() {
        println!("{line}");
    }
    println!(
        "\n(exports while loaded: {}; the server's log: {})",
        loaded_latencies.len(),
        dir.join("server.log").display()
    );
    let _ = std::fs::remove_dir_all(dir.join("agents"));
}

/// The full export of the 100,000-network catalogue through the server, against the same
/// export into an embedded store, as whole `modelc export` processes (compile included).
fn full_export(binary: &Path, postgres: &modelc_test_postgres::Postgres) {
    let networks = 100_000;
    let dir = std::env::temp_dir().join(format!("modelc-bench-fleet-full-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("main.cf"), modelc_tests::catalogue::service_catalogue(networks, 5)).unwrap();
    std::fs::write(dir.join("project.yml"), "name: catalogue\n").unwrap();
    let ir = dir.join("ir.json");
    let compiled = Command::new(binary).current_dir(&dir).args(["compile", ".", "-o"]).arg(&ir).output().unwrap();
    assert!(compiled.status.success(), "{}", String::from_utf8_lossy(&compiled.stderr));
    let time = |args: &[&str], token: Option<&str>| {
        let mut command = Command::new(binary);
        command.current_dir(&dir).args(args);
        if let Some(token) = token {
            command.env("MODELC_TOKEN", token);
        }
        let t = Instant::now();
        let out = command.output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        t.elapsed().as_secs_f64()
    };
    // Each a first export: into a new embedded store, and through a server into a new database;
    // of the model (compiled by the export, as a user runs it) and of its IR read from a file
    // (the store's part alone, which the server's overhead weighs on most).
    // The target is the model's; the IR's figure shows the store's part alone.
    for (what, kind, source, target) in
        [("the model", "model", &["."][..], true), ("its IR, read", "ir", &["--ir", "ir.json"][..], false)]
    {
        let mut local = Vec::new();
        let mut remote = Vec::new();
        for run in 0..3 {
            let sqlite = dir.join(format!("store-{kind}-{run}.sqlite"));
            let args = [&["export"][..], source, &["--store", sqlite.to_str().unwrap()]].concat();
            local.push(time(&args, None));
            let database = format!("full_{kind}_{run}");
            let (url, admin) = store(postgres, &database);
            let server = Server::start(binary, &url, &dir.join(format!("{database}.log")));
            let args = [&["export"][..], source, &["--server", &server.url]].concat();
            remote.push(time(&args, Some(&admin)));
        }
        local.sort_by(f64::total_cmp);
        remote.sort_by(f64::total_cmp);
        let ratio = remote[1] / local[1];
        let verdict = match (target, ratio <= 2.0) {
            (false, _) => "no target",
            (true, true) => "met (target ≤ 2×)",
            (true, false) => "MISSED (target ≤ 2×)",
        };
        println!(
            "| full export of {networks} networks, {what} (median of 3) | embedded {:.2} s, via the server {:.2} s: {ratio:.2}× | {verdict} |",
            local[1], remote[1],
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
