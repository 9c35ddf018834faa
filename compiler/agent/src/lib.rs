//! `modelc agent`: the `modelc deploy` engine fed by a `modelc server`.
//!
//! Each agent name an agent process serves ([`Agent`]) holds a lock on its name in the state
//! directory (so two processes on one machine never serve one name; several names and several
//! processes run side by side, none takes the machine-wide deploy lock) and a lease on it at
//! the server (so two machines never do). It then:
//!
//! * long-polls the server (`poller.rs`) for the releases that change its resources, fetches
//!   them with the file contents they name (cached by hash in the state directory), keeps them
//!   as its desired state (`state.rs`), and applies them with the engine, handlers and meta
//!   parameters of `modelc deploy`;
//! * waits for the results of other agents' resources that its own require, asking the server
//!   for them in batches (`awaited.rs`);
//! * repairs drift every repair interval and when a file it manages changes;
//! * reports every check of a resource as an action with an id it makes, written to an outbox
//!   in the state directory (one fsync per batch) before it is sent, and removed only once the
//!   server has acknowledged it (`outbox.rs`), so no result is lost or recorded twice;
//! * keeps enforcing its last desired state while the server is away, calling again with
//!   capped exponential back-off and jitter (`backoff.rs`).

#![allow(clippy::disallowed_methods, reason = "an agent keeps its state in files and times its polls")]
#![allow(clippy::print_stderr, reason = "the outbox says on stderr what it could not keep or send")]

mod agent;
mod awaited;
mod backoff;
mod drift;
mod outbox;
mod poller;
mod reporter;
mod state;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub use agent::{Agent, Event};

/// How agents run.
#[derive(Debug, Clone)]
pub struct Config {
    pub client: modelc_client::Client,
    /// Where each name's lock, desired state and outbox live, and the content cache.
    pub state_dir: PathBuf,
    /// How often every resource is checked again (and repaired) without a new version.
    pub repair_interval: Duration,
    /// How many resources deploy at once, per agent.
    pub jobs: usize,
    /// How long a long poll waits at most.
    pub poll: Duration,
    /// Repair a file's resource when the file changes (as `deploy --watch` does).
    pub watch_files: bool,
    /// How resources whose context is another host are reached (`deploy`'s `--hosts`,
    /// `--helper-dir`); their connections are kept across runs.
    pub remote: modelc_runtime::remote::RemoteOptions,
    /// Where modules' Python handlers are (the packages its environment has installed): the
    /// resources of types modelc has no handler of are deployed by them.
    pub modules: modelc_pyhost::handlers::ModuleCode,
}

impl Config {
    pub fn new(client: modelc_client::Client, state_dir: PathBuf) -> Config {
        Config {
            client,
            state_dir,
            repair_interval: Duration::from_secs(3600),
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()).min(8),
            poll: Duration::from_secs(modelc_api::LONG_POLL_SECONDS),
            watch_files: true,
            remote: modelc_runtime::remote::RemoteOptions::default(),
            modules: modelc_pyhost::handlers::ModuleCode::default(),
        }
    }
}

/// Serves `names` until `stop` is set: each name is started (locked and leased) first, so a
/// name held elsewhere is refused before anything runs; then each runs on its own thread, and
/// `events` hears what they do. The first agent that fails ends the call with its error once
/// the others have stopped.
pub fn run(
    config: &Config,
    names: &[String],
    stop: &Arc<AtomicBool>,
    events: impl Fn(&str, Event) + Send + Sync,
) -> Result<(), String> {
    let mut agents = Vec::new();
    for name in names {
        agents.push(Agent::start(config, name)?);
    }
    let events = &events;
    let errors: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = agents
            .into_iter()
            .map(|agent| {
                let stop = Arc::clone(stop);
                scope.spawn(move || {
                    let result = agent.run(&stop, &|name: &str, event: Event| events(name, event));
                    if result.is_err() {
                        // One agent's failure stops the process: its service restarts it whole.
                        stop.store(true, std::sync::atomic::Ordering::SeqCst);
                    }
                    result
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().unwrap_or_else(|_| Err("an agent panicked".to_owned())).err())
            .collect()
    });
    match errors.into_iter().next() {
        Some(error) => Err(error),
        None => Ok(()),
    }
}
