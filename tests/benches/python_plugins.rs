//! 10,000 calls of a trivial Python plugin with distinct arguments (no result is cached), against
//! the same number of calls of a Rust std plugin, and against Python's own cost of such a call
//! (decoding the arguments, the call, encoding the result, in a loop in Python alone).
//! The per-call figure of the Python plugin excludes the interpreter's start, measured apart
//! (a compile with a single call). Needs `python3` on PATH. Run with
//! `cargo bench -p modelc-tests --bench python_plugins`.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stdout, reason = "benchmark code")]

use std::path::Path;
use std::time::{Duration, Instant};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CALLS: usize = 10_000;
const RUNS: usize = 5;

const PLUGINS: &str =
    "from inmanta.plugins import plugin\n\n\n@plugin\ndef is_one(x: \"any\") -> \"bool\":\n    return x == 1\n";

fn main() {
    let Some(python) = modelc_tests::python3("the Python plugin benchmark") else { return };
    let dir = std::env::temp_dir().join(format!("modelc-bench-python-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("libs/m/model")).unwrap();
    std::fs::create_dir_all(dir.join("libs/m/plugins")).unwrap();
    std::fs::write(dir.join("project.yml"), "name: bench\nmodulepath: libs\n").unwrap();
    std::fs::write(dir.join("libs/m/model/_init.cf"), "").unwrap();
    std::fs::write(dir.join("libs/m/plugins/__init__.py"), PLUGINS).unwrap();
    let model = |call: &str, n: usize| format!("import m\nr = [{call} for i in std::sequence({n})]\n");
    let none = best(&dir, &python, &model("i", CALLS));
    let rust = best(&dir, &python, &model("std::is_unknown(i)", CALLS));
    let start = best(&dir, &python, &model("m::is_one(i)", 1));
    let py = best(&dir, &python, &model("m::is_one(i)", CALLS));
    let own = python_own_cost(&python);
    let per = |total: Duration, base: Duration, n: usize| (total.as_secs_f64() - base.as_secs_f64()) / n as f64 * 1e6;
    let rust_call = per(rust, none, CALLS);
    let python_call = per(py, start, CALLS - 1);
    println!("{CALLS} calls, best of {RUNS} compiles");
    println!("{:<44} {:>10.1} ms", "compile without calls", none.as_secs_f64() * 1e3);
    println!("{:<44} {:>10.1} ms", "compile with 10,000 std::is_unknown calls", rust.as_secs_f64() * 1e3);
    println!("{:<44} {:>10.1} ms", "compile with 1 Python call (interpreter start)", start.as_secs_f64() * 1e3);
    println!("{:<44} {:>10.1} ms", "compile with 10,000 Python calls", py.as_secs_f64() * 1e3);
    println!("{:<44} {:>10.2} µs", "per Rust std plugin call", rust_call);
    println!("{:<44} {:>10.2} µs", "Python's own cost of a call", own);
    println!("{:<44} {:>10.2} µs", "per Python plugin call", python_call);
    println!("{:<44} {:>10.1} ×", "Python call / (Rust call + Python's own)", python_call / (rust_call.max(0.0) + own));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The fastest of a few compiles of `model` (checked, executed, refined), the interpreter
/// started by the compile that needs it.
fn best(dir: &Path, python: &Path, model: &str) -> Duration {
    std::fs::write(dir.join("main.cf"), model).unwrap();
    (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let target = modelc_driver::locate(Some(dir), dir).unwrap();
            let mut loaded = modelc_driver::load_with_python(&target, dir, Some(python)).unwrap();
            let mut world = modelc_exec::World::default();
            let host = modelc_driver::python_host(&loaded, &mut world, Duration::from_secs(60));
            let compiled = modelc_driver::compile_resources(&mut loaded, world, modelc_refine::Options::default());
            assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.diagnostics);
            drop(compiled);
            drop(host);
            started.elapsed()
        })
        .min()
        .unwrap()
}

/// Python's own cost of one call as the host makes it: the request decoded from JSON, the
/// plugin called, the answer encoded, in microseconds (best of a few loops of 10,000).
fn python_own_cost(python: &Path) -> f64 {
    let script = format!(
        r#"import json, time
def is_one(x):
    return x == 1
lines = [json.dumps({{"op": "call", "p": "m::is_one", "args": [i], "kwargs": {{}}}}) for i in range({CALLS})]
best = None
for _ in range({RUNS}):
    t = time.perf_counter()
    for line in lines:
        m = json.loads(line)
        out = json.dumps({{"result": is_one(*m["args"], **m["kwargs"])}})
    d = time.perf_counter() - t
    best = d if best is None or d < best else best
print(best / {CALLS} * 1e6)
"#
    );
    let out = std::process::Command::new(python).args(["-c", &script]).output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().parse().unwrap()
}
