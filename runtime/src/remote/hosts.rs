//! The connections of a run: one per target, opened when its first resource is due, shared by
//! all its resources, kept until the pool is dropped (for `--watch`, across runs), at most
//! `max_open` at once. A target that could not be reached is not tried again for a while
//! (doubling, up to a minute), so its resources fail at once with the same message instead of
//! each waiting for ssh; a lost connection is replaced by the next call.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use modelc_ir::Resource;

use super::askpass::Secrets;
use super::binary::Binary;
use super::connection::{Connection, Setup};
use super::context::{Chain, Target};
use crate::handler::{Context, Done, Handler};

/// The first wait after a failed attempt to reach a target, and the longest.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const LONGEST_BACKOFF: Duration = Duration::from_secs(60);

/// How targets are reached.
#[derive(Debug, Clone)]
pub struct RemoteOptions {
    /// At most this many connections open at once (`--hosts N`).
    pub max_open: usize,
    /// The helper's cache directory on targets; `~/` is the connecting user's home.
    pub cache_dir: String,
    /// The executable run as the helper: this process's own when `None`.
    pub helper: Option<std::path::PathBuf>,
}

impl Default for RemoteOptions {
    fn default() -> RemoteOptions {
        RemoteOptions { max_open: 16, cache_dir: DEFAULT_CACHE_DIR.to_owned(), helper: None }
    }
}

/// How many resources a run deploys at once unless told (`--jobs`): one per core for the work
/// on this machine; when resources of the handled `agents` are on other hosts, whose work is
/// mostly waiting on the network, also one per target, up to `max_open` connections, so that
/// each connection is busy.
pub fn default_jobs(resources: &[Resource], agents: &HashSet<String>, max_open: usize) -> usize {
    let cores = crate::engine::Options::default().jobs;
    let targets: HashSet<String> = resources
        .iter()
        .filter(|r| agents.contains(&r.agent))
        .filter_map(|r| match Target::of(r) {
            Ok(Target::Remote(chain)) => Some(chain.key()),
            _ => None,
        })
        .collect();
    cores.max(targets.len().min(max_open))
}

/// Where targets keep the helper unless told otherwise.
pub const DEFAULT_CACHE_DIR: &str = "~/.cache/modelc/helpers";

/// The connections of a run.
pub struct Hosts {
    options: RemoteOptions,
    binary: OnceLock<Result<Binary, String>>,
    state: Mutex<Pool>,
    changed: Condvar,
}

#[derive(Default)]
struct Pool {
    /// Open connections by chain key, least recently used first.
    open: IndexMap<String, Arc<Connection>>,
    /// Chains being connected to now.
    opening: HashSet<String>,
    failures: HashMap<String, Failure>,
    /// How many times the helper was copied to a target.
    copies: usize,
}

struct Failure {
    at: Instant,
    wait: Duration,
    message: String,
}

impl Hosts {
    pub fn new(options: RemoteOptions) -> Hosts {
        Hosts { options, binary: OnceLock::new(), state: Mutex::default(), changed: Condvar::new() }
    }

    /// The connection to the end of `chain`, opened if need be (with `secrets`, the passwords
    /// of its hops).
    pub fn connection(&self, chain: &Chain, secrets: &Secrets) -> Result<Arc<Connection>, String> {
        let key = chain.key();
        let mut pool = self.lock();
        loop {
            if let Some(connection) = pool.open.shift_remove(&key) {
                if !connection.is_lost() {
                    pool.open.insert(key, Arc::clone(&connection));
                    return Ok(connection);
                }
                // Lost: closed outside the lock, and replaced below.
                drop(pool);
                drop(connection);
                pool = self.lock();
                continue;
            }
            if let Some(failure) = pool.failures.get(&key)
                && failure.at.elapsed() < failure.wait
            {
                return Err(failure.message.clone());
            }
            if pool.opening.contains(&key) {
                pool = self.wait(pool);
                continue;
            }
            if pool.open.len() + pool.opening.len() >= self.options.max_open.max(1) {
                // Make room by closing the least recently used connection nothing is using.
                let idle = pool.open.iter().position(|(_, c)| Arc::strong_count(c) == 1);
                match idle.and_then(|i| pool.open.shift_remove_index(i)) {
                    Some((_, idle)) => {
                        drop(pool);
                        drop(idle);
                        pool = self.lock();
                    }
                    None => pool = self.wait(pool),
                }
                continue;
            }
            break;
        }
        pool.opening.insert(key.clone());
        drop(pool);
        let opened = self.open(chain, secrets);
        let mut pool = self.lock();
        pool.opening.remove(&key);
        self.changed.notify_all();
        match opened {
            Ok(connection) => {
                pool.failures.remove(&key);
                pool.copies += usize::from(connection.copied);
                let connection = Arc::new(connection);
                pool.open.insert(key, Arc::clone(&connection));
                Ok(connection)
            }
            Err(message) => {
                let wait = pool.failures.get(&key).map_or(FIRST_BACKOFF, |f| (f.wait * 2).min(LONGEST_BACKOFF));
                pool.failures.insert(key, Failure { at: Instant::now(), wait, message: message.clone() });
                Err(message)
            }
        }
    }

    fn open(&self, chain: &Chain, secrets: &Secrets) -> Result<Connection, String> {
        let binary = self
            .binary
            .get_or_init(|| match &self.options.helper {
                Some(path) => Binary::read(path),
                None => Binary::this_process(),
            })
            .as_ref()
            .map_err(Clone::clone)?;
        Connection::open(chain, &Setup { binary, cache_dir: &self.options.cache_dir }, secrets)
    }

    /// How many times a helper had to be copied to a target so far.
    pub fn copies(&self) -> usize {
        self.lock().copies
    }

    /// How many connections are open.
    pub fn open_count(&self) -> usize {
        self.lock().open.len()
    }

    /// Closes every connection (their helpers end; nothing of theirs keeps running).
    pub fn close_all(&self) {
        let open: Vec<Arc<Connection>> = self.lock().open.drain(..).map(|(_, c)| c).collect();
        std::thread::scope(|scope| {
            for connection in &open {
                scope.spawn(move || connection.close());
            }
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pool> {
        super::lock(&self.state)
    }

    fn wait<'a>(&self, pool: std::sync::MutexGuard<'a, Pool>) -> std::sync::MutexGuard<'a, Pool> {
        self.changed
            .wait_timeout(pool, Duration::from_millis(100))
            .map(|(guard, _)| guard)
            .unwrap_or_else(|e| e.into_inner().0)
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        self.close_all();
    }
}

impl Hosts {
    /// Does an operation of a module's handler ([`crate::operations`]) where context `via`
    /// leads: here, or through the connection to that host, whose helper does it.
    pub fn operate(
        &self,
        via: &serde_json::Value,
        op: &str,
        args: &[serde_json::Value],
        data: Option<&[u8]>,
    ) -> Result<crate::operations::Answer, crate::operations::Failure> {
        let failure = |message: String| crate::operations::Failure::usage(message);
        // No context (a resource without `via`): this machine.
        let chain = if via.is_null() { None } else { Chain::from_context(via).map_err(failure)? };
        let Some(chain) = chain else { return crate::operations::perform(op, args, data) };
        let secrets = Secrets::of(via, &chain);
        let connection = self.connection(&chain, &secrets).map_err(failure)?;
        connection.operate(op, args, data)
    }
}

/// Deploys a resource whose context is another machine (or another user) through the
/// connection to it: the helper there runs the handler of its type.
pub struct RemoteHandler {
    hosts: Arc<Hosts>,
}

impl RemoteHandler {
    pub fn new(hosts: Arc<Hosts>) -> RemoteHandler {
        RemoteHandler { hosts }
    }
}

impl Handler for RemoteHandler {
    fn deploy(&self, resource: &Resource, context: &Context<'_>) -> Result<Done, String> {
        self.deploy_group(&[resource], std::slice::from_ref(context))
            .pop()
            .unwrap_or_else(|| Err("no result".to_owned()))
    }

    /// The guards run on the target. One that cannot be reached keeps nothing out: the deploy
    /// then fails with why.
    fn guarded_out(&self, resource: &Resource) -> Option<String> {
        if !crate::meta::has_guards(&resource.meta) {
            return None;
        }
        self.connection(resource).ok()?.guarded_out(resource).ok().flatten()
    }

    fn deploy_group(&self, members: &[&Resource], contexts: &[Context<'_>]) -> Vec<Result<Done, String>> {
        let Some(first) = members.first() else { return Vec::new() };
        match self.connection(first) {
            Ok(connection) => connection.deploy(members, contexts),
            Err(message) => vec![Err(message); members.len()],
        }
    }
}

impl RemoteHandler {
    /// The connection to where `resource`'s context leads, with the passwords it gives.
    fn connection(&self, resource: &Resource) -> Result<Arc<Connection>, String> {
        let chain = match Target::of(resource)? {
            Target::Remote(chain) => chain,
            Target::Local => return Err("its context is this machine".to_owned()),
        };
        let secrets = resource.attributes.get("via").map(|via| Secrets::of(via, &chain)).unwrap_or_default();
        self.hosts.connection(&chain, &secrets)
    }
}
