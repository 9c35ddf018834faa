//! Deploying on other machines (and as other users) through the contexts a model names: a
//! resource's `via` chain ([`context`]) becomes `ssh` and `sudo` invocations ([`command`]) that
//! start this same modelc on the target as a helper ([`helper`]), copied there once and cached
//! by its hash ([`binary`], the bootstrap in [`command`]). The helper serves deploy calls over
//! the channel ([`protocol`]) with the handlers a local run uses; a run keeps one connection
//! per target ([`connection`], [`hosts`]), and [`RemoteHandler`] is how the engine reaches it.
//! Passwords reach `ssh` and `sudo` through an askpass program ([`askpass`]).
//! `docs/runtime.md` says how contexts map to connections.

pub mod askpass;
pub mod binary;
pub mod command;
pub mod connection;
pub mod context;
pub mod helper;
pub mod hosts;
pub mod protocol;

pub use context::{Chain, Target};
pub use hosts::{DEFAULT_CACHE_DIR, Hosts, RemoteHandler, RemoteOptions, default_jobs};

/// Locks `mutex`, also after a thread panicked holding it: what the remote side's shared state
/// guards (calls waiting, the pool, a channel's writer) stays usable.
fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
