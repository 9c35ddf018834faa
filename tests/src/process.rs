//! Running the release `modelc` as a whole process, for the benchmarks that measure it the way a
//! user meets it: wall time around the process, peak memory as `/usr/bin/time` reports it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// `cargo build --release` of the `modelc` binary; its path. Call from a benchmark: it runs from
/// `target/release/deps`, and the binary is beside `deps`.
pub fn release_binary() -> PathBuf {
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--release", "-q", "-p", "modelc", "--bin", "modelc"])
        .status()
        .unwrap();
    assert!(status.success(), "cargo build --release -p modelc failed");
    let exe = std::env::current_exe().unwrap();
    let release = exe.parent().and_then(|deps| deps.parent()).unwrap();
    release.join("modelc")
}

/// What one run took.
pub struct Run {
    pub seconds: f64,
    pub peak_mib: f64,
    pub stderr: String,
    /// Lines printed on stdout.
    pub stdout_lines: usize,
}

/// Runs `binary` with `args` in `dir` under `/usr/bin/time`, and checks it succeeded.
pub fn timed(binary: &Path, dir: &Path, args: &[&str]) -> Run {
    timed_in(binary, dir, args, &[])
}

/// As [`timed`], with the environment `env(1)` makes of `env_args` (`["-u", "NAME"]`: without
/// the variable NAME).
pub fn timed_in(binary: &Path, dir: &Path, args: &[&str], env_args: &[&str]) -> Run {
    let started = Instant::now();
    let wrapper: Vec<&str> = if env_args.is_empty() { Vec::new() } else { [&["env"], env_args].concat() };
    let out = under_time(binary, dir, args, &wrapper).output().unwrap();
    let seconds = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}: {stderr}");
    let kib: f64 = stderr.lines().last().unwrap().trim().parse().unwrap();
    Run { seconds, peak_mib: kib / 1024.0, stderr, stdout_lines: out.stdout.split(|b| *b == b'\n').count() }
}

/// What one run took, whether it succeeded or not.
pub struct Measured {
    pub seconds: f64,
    pub peak_mib: f64,
    /// The exit status; 124 when it ran past the time limit and was stopped.
    pub code: Option<i32>,
}

/// Runs `binary` with `args` in `dir` under `/usr/bin/time`, stopped after 300 s, whatever
/// its outcome (a malformed input is expected to fail, in proportion to its size).
pub fn measured(binary: &Path, dir: &Path, args: &[&str]) -> Measured {
    let started = Instant::now();
    let out = under_time(binary, dir, args, &["timeout", "300"]).output().unwrap();
    let seconds = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let kib: f64 = stderr.lines().last().and_then(|l| l.trim().parse().ok()).unwrap_or(f64::NAN);
    Measured { seconds, peak_mib: kib / 1024.0, code: out.status.code() }
}

/// `binary ARGS` in `dir`, without colour, under `/usr/bin/time` printing the peak resident
/// set in KiB as its last line, through `wrapper` (`timeout 300`) if one is given.
fn under_time(binary: &Path, dir: &Path, args: &[&str], wrapper: &[&str]) -> Command {
    let mut command = Command::new("/usr/bin/time");
    command.args(["-f", "%M"]).args(wrapper).arg(binary).args(["--color", "never"]).args(args).current_dir(dir);
    command
}
