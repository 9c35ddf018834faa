//! `modelc deploy --ir` as a whole process (best of 5: on a small machine the runs vary more
//! than the gap measured) for 1,000 files written by a module's own Python handler (the public
//! `files` module's `TextFile`, through its mitogen proxy, whose operations modelc does),
//! against 1,000 `fs::File`s written by modelc's native handler: the
//! first deploy into an empty directory, and the re-check that finds nothing to do. The
//! modules come from the registry into a throwaway environment (`modelc-test-pyenv`). Run with
//! `cargo bench -p modelc-tests --bench python_handlers`.
//!
//! Target (issue 35): the Python re-check costs at most 5 times the native one.
//!
//! The processes run without PYTHONDONTWRITEBYTECODE, as a user's do by default (this machine
//! sets it): with it, a handler host compiles modelc's API anew each time instead of reading it
//! from the environment's `__pycache__` (`CodeCache` in `host.py`), ≈ 20 ms more a deploy.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stdout, reason = "benchmark code")]

use std::path::Path;

const FILES: usize = 1_000;
const RUNS: usize = 5;
/// `env(1)`'s arguments for a user's default environment (see the module's doc).
const USER_DEFAULT: &[&str] = &["-u", "PYTHONDONTWRITEBYTECODE"];

const PACKAGES: [&str; 5] = [
    "inmanta-module-files==2.1.1",
    "inmanta-module-fs==1.1.2",
    "inmanta-module-mitogen==0.2.5",
    "mitogen==0.3.54",
    "PyYAML==6.0.3",
];

fn model(kind: &str, target: &Path) -> String {
    let target = target.display();
    let each = match kind {
        "python" => {
            format!("    files::TextFile(host=host, path=\"{target}/f{{{{i}}}}\", content=\"content {{{{i}}}}\\n\")")
        }
        _ => format!("    fs::File(host=host, path=\"{target}/f{{{{i}}}}\", content=\"content {{{{i}}}}\\n\")"),
    };
    format!(
        "import files\nimport fs\nimport mitogen\n\nhost = std::Host(name=\"localhost\", os=std::linux, via=mitogen::Local())\n\
         for i in std::sequence({FILES}):\n{each}\nend\n"
    )
}

fn main() {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let Some(env) = modelc_test_pyenv::registry_env(cache, "python-handlers-bench", &PACKAGES) else { return };
    let python = env.join("bin/python");
    let python = python.to_str().unwrap();
    let binary = modelc_tests::process::release_binary();
    let dir = std::env::temp_dir().join(format!("modelc-bench-python-handlers-{}", std::process::id()));
    let mut best = std::collections::BTreeMap::new();
    for kind in ["native", "python"] {
        let project = dir.join(kind);
        let target = project.join("target");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join("project.yml"), "name: bench\n").unwrap();
        std::fs::write(project.join("main.cf"), model(kind, &target)).unwrap();
        modelc_tests::process::timed(&binary, &project, &["--python", python, "-q", "compile", ".", "-o", "ir.json"]);
        let deploy = ["--python", python, "-q", "deploy", "--ir", "ir.json", "--store", "store.db"];
        let (mut first, mut again) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..RUNS {
            let _ = std::fs::remove_dir_all(&target);
            let _ = std::fs::remove_file(project.join("store.db"));
            std::fs::create_dir_all(&target).unwrap();
            let timed = || modelc_tests::process::timed_in(&binary, &project, &deploy, USER_DEFAULT).seconds;
            first = first.min(timed());
            assert_eq!(std::fs::read_dir(&target).unwrap().count(), FILES, "{kind}: every file written");
            again = again.min(timed());
        }
        best.insert(kind, (first, again));
    }
    let (native, python) = (best["native"], best["python"]);
    println!("{FILES} files, deploy --ir, best of {RUNS} processes");
    println!("{:<44} {:>10} {:>10}", "", "first", "re-check");
    println!("{:<44} {:>8.3} s {:>8.3} s", "fs::File (modelc's native handler)", native.0, native.1);
    println!("{:<44} {:>8.3} s {:>8.3} s", "files::TextFile (the module's Python handler)", python.0, python.1);
    println!(
        "{:<44} {:>8.2} × {:>8.2} ×",
        "ratio (target for the re-check: at most 5)",
        python.0 / native.0,
        python.1 / native.1
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
