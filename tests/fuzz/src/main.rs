//! `modelc-fuzz`: runs the fuzzer (see the crate's documentation in `lib.rs`).
//!
//! ```text
//! modelc-fuzz [--seed N] [--seconds S | --executions N] [--targets parse,check,fmt,lsp]
//!             [--corpus DIR]... [--out DIR] [--hang-seconds S] [--replay FILE --targets T]
//! ```
//! Each target gets an equal share of the budget (time or executions). The exit status is 0
//! when no input failed, 1 when some did (each is saved in `--out`), 3 on a hang.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::disallowed_methods,
    reason = "a test tool: it reads seed files, saves failing inputs and reports on the terminal"
)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use modelc_fuzz::coverage::{self, Coverage};
use modelc_fuzz::mutate::{MAX_INPUT, mutate};
use modelc_fuzz::rng::{Rng, hash};
use modelc_fuzz::targets::{self, Kind};
use modelc_fuzz::{cf_files, guard, repository_root};

/// The allocator `modelc` runs with: the code under test allocates as it does in the tool.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Called by SanitizerCoverage's module constructors in an instrumented build.
#[allow(unsafe_code, reason = "the instrumentation calls this C name")]
#[unsafe(no_mangle)]
pub extern "C" fn __sanitizer_cov_8bit_counters_init(start: *mut u8, stop: *mut u8) {
    coverage::register(start, stop);
}

/// How often a running target reports its progress.
const PROGRESS: Duration = Duration::from_secs(60);

/// An input running longer than this is a hang (in an optimised build; `--hang-seconds`).
const HANG: Duration = Duration::from_secs(5);

struct Options {
    seed: u64,
    seconds: Option<f64>,
    executions: Option<u64>,
    targets: Vec<Kind>,
    corpus: Vec<PathBuf>,
    out: PathBuf,
    replay: Option<PathBuf>,
    hang: Duration,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        seed: 1,
        seconds: None,
        executions: None,
        targets: Kind::ALL.to_vec(),
        corpus: Vec::new(),
        out: repository_root().join("target/fuzz-findings"),
        replay: None,
        hang: HANG,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--seed" => options.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--seconds" => options.seconds = Some(value()?.parse().map_err(|e| format!("--seconds: {e}"))?),
            "--executions" => options.executions = Some(value()?.parse().map_err(|e| format!("--executions: {e}"))?),
            "--targets" => {
                options.targets = value()?
                    .split(',')
                    .map(|name| Kind::named(name).ok_or_else(|| format!("no target `{name}` (parse, check, fmt, lsp)")))
                    .collect::<Result<_, _>>()?;
            }
            "--corpus" => options.corpus.push(PathBuf::from(value()?)),
            "--out" => options.out = PathBuf::from(value()?),
            "--replay" => options.replay = Some(PathBuf::from(value()?)),
            "--hang-seconds" => {
                let seconds: f64 = value()?.parse().map_err(|e| format!("--hang-seconds: {e}"))?;
                options.hang = Duration::from_secs_f64(seconds);
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if options.seconds.is_none() && options.executions.is_none() {
        options.seconds = Some(60.0);
    }
    Ok(options)
}

/// The seed inputs: the repository's `.cf` files, the public modules' corpus and the
/// conformance cases when `../shared` is beside the repository, and any `--corpus` directory.
fn seeds(options: &Options) -> Vec<Vec<u8>> {
    let root = repository_root();
    let mut dirs = vec![root.clone()];
    for shared in ["../shared/corpus", "../shared/conformance"] {
        dirs.push(root.join(shared));
    }
    dirs.extend(options.corpus.iter().cloned());
    let mut seeds: Vec<Vec<u8>> = dirs
        .iter()
        .flat_map(|dir| cf_files(dir))
        .filter_map(|file| std::fs::read(file).ok())
        .filter(|text| text.len() <= MAX_INPUT)
        .collect();
    seeds.sort();
    seeds.dedup();
    seeds
}

struct Report {
    executions: u64,
    failures: u64,
    corpus: usize,
    seconds: f64,
    notes: String,
}

fn fuzz(kind: Kind, seeds: &[Vec<u8>], options: &Options, coverage: &mut Coverage, budget: Budget) -> Report {
    let mut target = kind.start();
    let mut rng = Rng::new(options.seed ^ hash(kind.name().as_bytes()));
    let mut corpus: Vec<Vec<u8>> = seeds.to_vec();
    let (mut executions, mut failures) = (0, 0);
    let started = Instant::now();
    let mut reported = Instant::now();
    while !budget.spent(executions, started.elapsed()) {
        // A long run says how it is going once a minute.
        if executions % 256 == 0 && reported.elapsed() >= PROGRESS {
            reported = Instant::now();
            let rate = executions as f64 / started.elapsed().as_secs_f64();
            println!(
                "  {} {executions} executions ({rate:.0}/s), {failures} failures, corpus {}",
                kind.name(),
                corpus.len()
            );
        }
        // The seeds themselves first, then mutants of the corpus as it grows.
        let input = match seeds.get(executions as usize) {
            Some(seed) => seed.clone(),
            None => {
                let parent = &corpus[rng.below(corpus.len())];
                mutate(parent, &corpus, &mut rng)
            }
        };
        coverage.reset();
        guard::begin(&input);
        let result = target.run(&input);
        guard::end();
        executions += 1;
        if coverage.record() && executions as usize > seeds.len() {
            corpus.push(input.clone());
        }
        if let Err(failure) = result {
            failures += 1;
            save_failure(kind, &input, &failure, &options.out);
        } else if let Some(why) = target.curious() {
            save_curious(kind, &input, why, &options.out);
        }
    }
    Report {
        executions,
        failures,
        corpus: corpus.len(),
        seconds: started.elapsed().as_secs_f64(),
        notes: target.notes(),
    }
}

#[derive(Clone, Copy)]
enum Budget {
    Executions(u64),
    Time(Duration),
}

impl Budget {
    fn spent(self, executions: u64, elapsed: Duration) -> bool {
        match self {
            Budget::Executions(n) => executions >= n,
            Budget::Time(limit) => elapsed >= limit,
        }
    }
}

fn save_failure(kind: Kind, input: &[u8], failure: &str, out: &Path) {
    let _ = std::fs::create_dir_all(out);
    let path = out.join(format!("{}-{:016x}.cf", kind.name(), hash(input)));
    let _ = std::fs::write(&path, input);
    let _ = std::fs::write(path.with_extension("txt"), failure);
    eprintln!("FAILURE in {}: {failure}\n  input saved in {}", kind.name(), path.display());
}

/// Keeps an input that did not fail but that a person should read, in `curious/` beside the
/// failures, without stopping the run.
fn save_curious(kind: Kind, input: &[u8], why: &str, out: &Path) {
    let dir = out.join("curious");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{}-{:016x}.cf", kind.name(), hash(input)));
    let _ = std::fs::write(&path, input);
    let _ = std::fs::write(path.with_extension("txt"), why);
}

fn replay(kinds: &[Kind], file: &Path) -> i32 {
    let Ok(input) = std::fs::read(file) else {
        eprintln!("cannot read {}", file.display());
        return 2;
    };
    let mut status = 0;
    for kind in kinds {
        match kind.start().run(&input) {
            Ok(()) => println!("{}: ok", kind.name()),
            Err(failure) => {
                println!("{}: FAILED: {failure}", kind.name());
                status = 1;
            }
        }
    }
    status
}

fn main() {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("modelc-fuzz: {message}");
            std::process::exit(2);
        }
    };
    targets::quiet_panics();
    if let Some(file) = &options.replay {
        std::process::exit(replay(&options.targets, file));
    }
    let _ = std::fs::create_dir_all(&options.out);
    guard::save_on_abort(&options.out.join("aborted.cf"));
    guard::watch(options.hang, options.out.join("hang.cf"));
    let seeds = seeds(&options);
    let mut coverage = Coverage::new();
    let share = options.targets.len().max(1);
    let budget = match (options.executions, options.seconds) {
        (Some(n), _) => Budget::Executions(n / share as u64),
        (None, Some(seconds)) => Budget::Time(Duration::from_secs_f64(seconds / share as f64)),
        (None, None) => Budget::Time(Duration::from_secs(15)),
    };
    println!("modelc-fuzz: seed {}, {} seed inputs, {} targets", options.seed, seeds.len(), share);
    let mut failed = false;
    for kind in &options.targets {
        let report = fuzz(*kind, &seeds, &options, &mut coverage, budget);
        failed |= report.failures > 0;
        println!(
            "{:6} {:>10} executions in {:7.1} s ({:>8.0}/s), {} failures, corpus {}{}",
            kind.name(),
            report.executions,
            report.seconds,
            report.executions as f64 / report.seconds.max(1e-9),
            report.failures,
            report.corpus,
            if report.notes.is_empty() { String::new() } else { format!("; {}", report.notes) },
        );
    }
    // A hang ends the run where it happens (status 3), so a finished run had none.
    println!("hangs: none (no input ran over {} s)", options.hang.as_secs_f64());
    if coverage.measured() {
        let (reached, total) = coverage.edges();
        println!(
            "coverage: {reached} of {total} instrumented edges reached ({:.1}%)",
            reached as f64 * 100.0 / total as f64
        );
    } else {
        println!("coverage: not measured (an uninstrumented build; scripts/fuzz builds an instrumented one)");
    }
    std::process::exit(i32::from(failed));
}
