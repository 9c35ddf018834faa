//! Partial export into a large store: the benchmark. For N = 1,000 / 10,000 / 100,000
//! networks, a catalogue (`modelc_tests::catalogue`, 5 hosts a network, a resource set per
//! network, one shared agent config) is compiled and exported in full; then the partial model of
//! network 0 with a single host is exported with `--partial`, several times. The table gives the
//! full export (store only), the partial export through the store's interface, and the whole
//! `modelc export --partial` command (compile the partial model, open the store, merge, commit).
//! Target: under 50 ms at every size, nearly flat. The reference's server took 4.3 s for one set
//! against 1,000 (spec: execution-and-export §4).
//!
//! Run with `cargo bench -p modelc-tests --bench store` (optionally followed by `--` and the
//! sizes, e.g. `-- 1000 10000`).
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stdout, reason = "benchmark code")]

use std::time::{Duration, Instant};

use modelc_store::{Metadata, PartialRequest, SqliteStore, Store};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const HOSTS_PER_NETWORK: usize = 5;
const DEFAULT_SIZES: [usize; 3] = [1_000, 10_000, 100_000];
const RUNS: usize = 7;

fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { DEFAULT_SIZES.to_vec() } else { sizes };
    println!(
        "{:>9} {:>10} {:>12} {:>10} {:>16} {:>16} {:>16}",
        "sets", "resources", "full (ms)", "db MiB", "partial (ms)", "median (ms)", "command (ms)"
    );
    for size in sizes {
        bench(size);
    }
}

fn bench(networks: usize) {
    let dir = std::env::temp_dir().join(format!("modelc-bench-store-{}-{networks}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let full = compile(&dir, "full.cf", &modelc_tests::catalogue::service_catalogue(networks, HOSTS_PER_NETWORK));
    let partial = compile(&dir, "network-0.cf", &modelc_tests::catalogue::service_catalogue(1, 1));
    let path = dir.join("store.sqlite");
    let mut store = SqliteStore::open(&path).unwrap();
    let metadata = Metadata { created: modelc_store::utc_now(), ..Metadata::default() };
    let started = Instant::now();
    store.export_full(&full, &metadata).unwrap();
    let full_time = started.elapsed();
    let resources = full.resources.len();
    drop(full);
    // The database and its write-ahead log (not yet checkpointed into it).
    let size = |suffix: &str| std::fs::metadata(format!("{}{suffix}", path.display())).map_or(0, |m| m.len());
    let db_mib = (size("") + size("-wal")) >> 20;

    let mut api = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        let info = store.export_partial(&partial, &PartialRequest::default(), &metadata).unwrap();
        api.push(started.elapsed());
        assert_eq!(info.resources as usize, resources - (HOSTS_PER_NETWORK - 1));
    }
    drop(store);
    let mut command = Vec::new();
    let store_arg = path.to_str().unwrap();
    for _ in 0..RUNS {
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        let mut io = modelc::Io {
            stdout: &mut stdout,
            stderr: &mut stderr,
            stderr_is_terminal: false,
            stdout_is_terminal: false,
            no_color: true,
            cwd: dir.clone(),
            deploy_lock: None,
        };
        let started = Instant::now();
        let code = modelc::run(["modelc", "export", "--partial", "network-0.cf", "--store", store_arg], &mut io);
        command.push(started.elapsed());
        assert_eq!(code, 0, "{}", String::from_utf8_lossy(&stderr));
    }
    api.sort();
    command.sort();
    println!(
        "{networks:>9} {resources:>10} {:>12.1} {db_mib:>10} {:>16.2} {:>16.2} {:>16.2}",
        ms(full_time),
        ms(api[0]),
        ms(api[RUNS / 2]),
        ms(command[RUNS / 2])
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Compiles `text` (written to `dir/name`) into its resources.
fn compile(dir: &std::path::Path, name: &str, text: &str) -> modelc_ir::Ir {
    let main = dir.join(name);
    std::fs::write(&main, text).unwrap();
    let target = modelc_driver::locate(Some(&main), dir).unwrap();
    let mut loaded = modelc_driver::load(&target, dir).unwrap();
    let compiled =
        modelc_driver::compile_resources(&mut loaded, modelc_exec::World::default(), modelc_refine::Options::default());
    assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.diagnostics);
    compiled.resources.unwrap()
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
