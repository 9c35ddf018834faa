//! Running a command as `exec::Run` does: split with shell-word rules, run without a shell, in
//! a process group of its own so a timeout kills everything it started.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// How a command ended.
#[derive(Debug, Clone)]
pub struct Ran {
    /// The exit code; for a command killed by a signal, minus the signal (as Python reports it).
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Why a command could not be run to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// The program does not exist (for `unless`, a failed guard).
    NotFound(String),
    /// It ran longer than its timeout and was killed, with its process group.
    TimedOut(Duration),
    Other(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::NotFound(program) => write!(f, "the program `{program}` was not found"),
            RunError::TimedOut(limit) => write!(
                f,
                "it did not finish within its timeout of {} s; its process group was killed",
                limit.as_secs_f64()
            ),
            RunError::Other(message) => f.write_str(message),
        }
    }
}

/// What to run.
pub struct Invocation<'a> {
    pub command: &'a str,
    /// Added to the runtime's own environment.
    pub environment: &'a IndexMap<String, String>,
    pub cwd: Option<&'a Path>,
    /// Directories (`:`-separated) to find the program in, instead of `PATH`.
    pub search_path: Option<&'a str>,
    pub timeout: Duration,
    /// Variables of the runtime's own environment the command does not get.
    pub remove_environment: &'a [&'a str],
}

/// Splits `command` into words as a POSIX shell would (quotes, backslashes), without
/// expanding anything.
pub fn split(command: &str) -> Result<Vec<String>, RunError> {
    match shlex::split(command) {
        Some(words) if !words.is_empty() => Ok(words),
        Some(_) => Err(RunError::Other("the command is empty".to_owned())),
        None => Err(RunError::Other(format!("`{command}` cannot be split into words: a quote is not closed"))),
    }
}

/// Runs the invocation to its end or its timeout.
pub fn run(invocation: &Invocation<'_>) -> Result<Ran, RunError> {
    run_words(&split(invocation.command)?, invocation)
}

/// Runs `words` (the program, then its arguments) as `invocation` says, ignoring its command.
pub fn run_words(words: &[String], invocation: &Invocation<'_>) -> Result<Ran, RunError> {
    if words.is_empty() {
        return Err(RunError::Other("the command is empty".to_owned()));
    }
    let program = find_program(&words[0], invocation.search_path)?;
    let mut command = Command::new(&program);
    command
        .args(&words[1..])
        .envs(invocation.environment)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(cwd) = invocation.cwd {
        command.current_dir(cwd);
    }
    for name in invocation.remove_environment {
        command.env_remove(name);
    }
    let mut child = command.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound if invocation.cwd.is_some_and(|c| !c.is_dir()) => RunError::Other(format!(
            "its working directory {} does not exist",
            invocation.cwd.map(|c| c.display().to_string()).unwrap_or_default()
        )),
        std::io::ErrorKind::NotFound => RunError::NotFound(words[0].clone()),
        _ => RunError::Other(format!("cannot start `{}`: {e}", words[0])),
    })?;
    let group = Pid::from_raw(child.id() as i32);
    let _running = Running::register(group);
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let deadline = Instant::now() + invocation.timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = killpg(group, Signal::SIGKILL);
                let _ = child.wait();
                return Err(RunError::TimedOut(invocation.timeout));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(RunError::Other(format!("cannot wait for `{}`: {e}", words[0]))),
        }
    };
    let code = status.code().unwrap_or_else(|| -status.signal().unwrap_or(0));
    // A program that left children holding its output would keep the pipes open: take what
    // arrived within a moment and go on.
    let grace = Duration::from_millis(500);
    Ok(Ran { code, stdout: collect(stdout, grace), stderr: collect(stderr, grace) })
}

/// The process groups of the commands running now, so that a helper whose connection is gone
/// stops them all ([`kill_running`]); once it has, `true`, and a command started later is
/// stopped at once.
static RUNNING: std::sync::Mutex<(Vec<Pid>, bool)> = std::sync::Mutex::new((Vec::new(), false));

/// A running command's group, listed while it lives.
struct Running(Pid);

impl Running {
    fn register(group: Pid) -> Running {
        let mut running = RUNNING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        running.0.push(group);
        if running.1 {
            let _ = killpg(group, Signal::SIGKILL);
        }
        Running(group)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.lock().unwrap_or_else(std::sync::PoisonError::into_inner).0.retain(|&g| g != self.0);
    }
}

/// Kills every command running now, with its process group, and every one started from now on:
/// for a helper whose connection is gone, as it ends.
pub fn kill_running() {
    let mut running = RUNNING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    running.1 = true;
    for &group in &running.0 {
        let _ = killpg(group, Signal::SIGKILL);
    }
}

/// The program to start: as given when it names a path; else found in `search_path` when one
/// is given; else left to the system's `PATH` lookup.
fn find_program(program: &str, search_path: Option<&str>) -> Result<PathBuf, RunError> {
    if program.contains('/') {
        return Ok(PathBuf::from(program));
    }
    let Some(dirs) = search_path else { return Ok(PathBuf::from(program)) };
    dirs.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(program))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| RunError::NotFound(program.to_owned()))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Reads a pipe to its end on a thread of its own.
fn drain(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut pipe) = pipe {
        std::thread::spawn(move || {
            let mut buffer = Vec::new();
            let _ = pipe.read_to_end(&mut buffer);
            let _ = tx.send(buffer);
        });
    }
    rx
}

fn collect(output: mpsc::Receiver<Vec<u8>>, grace: Duration) -> String {
    let bytes = output.recv_timeout(grace).unwrap_or_default();
    String::from_utf8_lossy(&bytes).trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invocation(command: &str, timeout: Duration) -> Result<Ran, RunError> {
        let environment = IndexMap::new();
        run(&Invocation {
            command,
            environment: &environment,
            cwd: None,
            search_path: None,
            timeout,
            remove_environment: &[],
        })
    }

    #[test]
    fn words_are_split_without_a_shell() {
        let ran = invocation("echo 'a  b' $HOME ;", Duration::from_secs(10)).unwrap();
        assert_eq!(ran.stdout, "a  b $HOME ;");
        assert_eq!(ran.code, 0);
        assert!(split("echo 'open").is_err());
    }

    #[test]
    fn a_missing_program_is_named() {
        let error = invocation("/no/such/program", Duration::from_secs(10)).unwrap_err();
        assert_eq!(error, RunError::NotFound("/no/such/program".into()));
    }

    #[test]
    fn a_timeout_kills_the_whole_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("late");
        // The shell starts a child that would write the marker after the timeout.
        let script = format!("sh -c 'sleep 2 && touch {}' ", marker.display());
        let command = format!("sh -c \"{script} & wait\"");
        let error = invocation(&command, Duration::from_millis(300)).unwrap_err();
        assert!(matches!(error, RunError::TimedOut(_)));
        std::thread::sleep(Duration::from_millis(2500));
        assert!(!marker.exists(), "a process of the group lived on after the timeout");
    }
}
