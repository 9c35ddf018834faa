//! The long poll, on its own thread: asks the server for the last release that changed this
//! agent, and says so when it is newer than the one announced last. A server that is away is
//! called again with back-off (the agent meanwhile enforces what it has); a lease another
//! process took, or a token the server refuses, ends the agent.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossbeam_channel::Sender;
use modelc_api::ErrorKind;
use modelc_client::Client;

use crate::backoff::Backoff;

/// What wakes an agent's loop.
#[derive(Debug)]
pub(crate) enum Wake {
    /// A release changed this agent's resources: deploy this version.
    Version(u64),
    /// A file a resource manages changed.
    File,
    /// The server cannot be reached (or can again): said once per change.
    Connected(bool),
    /// The agent must stop: why.
    Fatal(String),
}

pub(crate) struct Poller {
    pub(crate) client: Client,
    pub(crate) name: String,
    pub(crate) holder: String,
    /// The version the agent has.
    pub(crate) known: Option<u64>,
    pub(crate) wait: Duration,
    pub(crate) stop: Arc<AtomicBool>,
}

impl Poller {
    pub(crate) fn run(mut self, wake: &Sender<Wake>) {
        let mut backoff = Backoff::new(Duration::from_millis(250), Duration::from_secs(30));
        let mut connected = true;
        while !self.stop.load(Ordering::SeqCst) {
            match self.client.work(&self.name, &self.holder, self.known, self.wait) {
                Ok(work) => {
                    backoff.reset();
                    if !connected {
                        connected = true;
                        let _ = wake.send(Wake::Connected(true));
                    }
                    if let Some(version) = work.version.filter(|v| Some(*v) > self.known) {
                        self.known = Some(version);
                        if wake.send(Wake::Version(version)).is_err() {
                            return;
                        }
                    }
                }
                Err(error) if error.is_transient() => {
                    if connected {
                        connected = false;
                        let _ = wake.send(Wake::Connected(false));
                    }
                    sleep_unless_stopped(backoff.next(), &self.stop);
                }
                Err(error) => {
                    let why = match error.kind() {
                        Some(ErrorKind::Conflict) => {
                            format!("agent `{}` was taken by another process: {error}", self.name)
                        }
                        _ => format!("the server refused agent `{}`: {error}", self.name),
                    };
                    let _ = wake.send(Wake::Fatal(why));
                    return;
                }
            }
        }
    }
}

/// Sleeps `wait`, waking early when `stop` is set.
pub(crate) fn sleep_unless_stopped(wait: Duration, stop: &AtomicBool) {
    let until = std::time::Instant::now() + wait;
    while !stop.load(Ordering::SeqCst) {
        let now = std::time::Instant::now();
        if now >= until {
            return;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(100)));
    }
}
