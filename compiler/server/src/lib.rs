//! `modelc server`: a stateless JSON API (`modelc_api`) in front of a PostgreSQL store.
//!
//! Exporters send compiled IRs (`modelc export --server`), readers list, show and compare
//! versions, and agents (`modelc agent`) long-poll for the releases that change their
//! resources, fetch those, wait for the results of resources other agents deploy, and report
//! their actions. Everything the server knows is in the database (`modelc_store::postgres::
//! fleet`), so servers can be restarted at will, and two on one database serve the same agents:
//! they learn of each other's releases and results through `LISTEN/NOTIFY` (`events.rs`).
//!
//! The handlers are async (axum on tokio); the store is synchronous, so every store call runs
//! on tokio's blocking pool with a pooled connection (`pool.rs`). While the database is away,
//! calls answer 503 with `Retry-After`, and connections are made again as it comes back.
#![allow(clippy::print_stderr, reason = "the server logs what it does, one line per request, on stderr")]
#![allow(clippy::disallowed_methods, reason = "the server times requests and long polls")]

mod auth;
mod body;
mod error;
mod events;
mod pool;
mod retention;
mod routes;
mod serve;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub(crate) use serve::App;
pub use serve::serve;

/// How a server runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// The store: a `postgresql://` URL (`modelc store migrate` has laid it out).
    pub store: String,
    /// Where to listen; port 0 picks a free one (printed at start).
    pub listen: SocketAddr,
    /// TLS: a PEM certificate chain and its private key.
    pub tls: Option<TlsFiles>,
    /// Serve plain HTTP on an address other than loopback (tokens travel in clear text).
    pub insecure_http: bool,
    /// Keep this many versions, pruning the others on a timer (never the latest released one
    /// nor one an agent is deploying).
    pub keep: Option<u64>,
    /// How often `keep` prunes.
    pub prune_interval: Duration,
    /// The largest request body taken, compressed (and 16 times that, uncompressed).
    pub max_body: usize,
    /// How long an agent's name stays held after its last call.
    pub lease: Duration,
    /// How long a long poll waits at most.
    pub long_poll: Duration,
    /// Database connections at most.
    pub connections: usize,
}

/// The files of `--tls-cert` and `--tls-key`.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Large enough for the IR of 100,000 networks, compressed (about 20 MB).
pub const DEFAULT_MAX_BODY: usize = 256 * 1024 * 1024;

impl Config {
    /// A configuration with the defaults.
    pub fn new(store: String, listen: SocketAddr) -> Config {
        Config {
            store,
            listen,
            tls: None,
            insecure_http: false,
            keep: None,
            prune_interval: Duration::from_secs(60),
            max_body: DEFAULT_MAX_BODY,
            lease: Duration::from_secs(30),
            long_poll: Duration::from_secs(modelc_api::LONG_POLL_SECONDS),
            connections: 16,
        }
    }

    /// Why the server must not start as configured: plain HTTP beyond loopback without
    /// `--insecure-http`.
    pub fn check(&self) -> Result<(), String> {
        if self.tls.is_none() && !self.listen.ip().is_loopback() && !self.insecure_http {
            return Err(format!(
                "refusing to serve plain HTTP on {}: tokens would cross the network in clear text; give \
                 --tls-cert and --tls-key, listen on 127.0.0.1, or pass --insecure-http",
                self.listen
            ));
        }
        Ok(())
    }
}

/// Runs a server until SIGINT or SIGTERM, on a runtime of its own.
pub fn run(config: Config) -> Result<(), String> {
    config.check()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("modelc-server")
        .build()
        .map_err(|e| format!("cannot start the server's runtime: {e}"))?;
    runtime.block_on(serve(config, shutdown_signal()))
}

/// Resolves on the first SIGINT or SIGTERM.
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut interrupt), Ok(mut terminate)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
    else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = interrupt.recv() => {}
        _ = terminate.recv() => {}
    }
}
