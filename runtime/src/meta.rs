//! What the engine does with a resource's meta parameters (`modelc_ir::Meta`): counting
//! semaphores held while it deploys, and retries with their waits. The clock is a trait so that
//! tests observe the waits without waiting.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Where the engine waits between retries, and what time it is for rate limits.
pub trait Clock: Send + Sync {
    fn sleep(&self, duration: Duration);
    /// A number in [0, 1), for jitter.
    fn random(&self) -> f64;
    /// Time since some fixed moment (monotonic): what token buckets and timers measure.
    fn now(&self) -> Duration {
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        START.get_or_init(std::time::Instant::now).elapsed()
    }
}

/// The real clock: `thread::sleep`, and randomness from the operating system.
pub struct SystemClock;

impl Clock for SystemClock {
    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration);
    }

    fn random(&self) -> f64 {
        let mut bytes = [0u8; 8];
        if getrandom::fill(&mut bytes).is_err() {
            return 0.5;
        }
        (u64::from_le_bytes(bytes) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The semaphore that `--sema N` puts on every resource: its name sorts before any a model can
/// write, so it is always taken first.
pub(crate) const GLOBAL: &str = "";

/// The counting semaphores of a run, by name, created at their first use with their size.
#[derive(Default)]
pub(crate) struct Semaphores {
    held: Mutex<HashMap<String, (usize, usize)>>,
    freed: Condvar,
}

impl Semaphores {
    /// Takes one unit of each semaphore, in the order given (sorted by name, so two resources
    /// with overlapping semaphores never wait for each other in a circle), and returns a guard
    /// that gives them back.
    pub(crate) fn acquire<'s>(&'s self, wanted: &[(String, usize)]) -> Held<'s> {
        let mut taken = Vec::with_capacity(wanted.len());
        for (name, size) in wanted {
            let mut held = self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            loop {
                let entry = held.entry(name.clone()).or_insert((*size, 0));
                if entry.1 < entry.0 {
                    entry.1 += 1;
                    break;
                }
                held = self.freed.wait(held).unwrap_or_else(std::sync::PoisonError::into_inner);
            }
            taken.push(name.clone());
        }
        Held { semaphores: self, taken }
    }
}

/// Semaphore units held while a resource deploys (released when dropped, a panic included).
pub(crate) struct Held<'s> {
    semaphores: &'s Semaphores,
    taken: Vec<String>,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let mut held = self.semaphores.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for name in &self.taken {
            if let Some(entry) = held.get_mut(name) {
                entry.1 = entry.1.saturating_sub(1);
            }
        }
        drop(held);
        self.semaphores.freed.notify_all();
    }
}

/// Whether the resource has a guard at all (meta `creates`, `only_if` or `not_if`).
pub(crate) fn has_guards(meta: &modelc_ir::Meta) -> bool {
    [&meta.creates, &meta.only_if, &meta.not_if].iter().any(|guard| guard.as_deref().is_some_and(|g| !g.is_empty()))
}

/// Why the resource's guards keep it from deploying now, if they do: its `creates` path exists,
/// its `only_if` command fails (or does not exist), or its `not_if` command succeeds. Guards run
/// in dry runs too (they should only read).
pub(crate) fn guarded_out(meta: &modelc_ir::Meta) -> Option<String> {
    if let Some(path) = meta.creates.as_deref().filter(|p| !p.is_empty())
        && std::path::Path::new(path).exists()
    {
        return Some(format!("{path} exists (its `creates` guard)"));
    }
    let run = |command: &str| -> Result<i32, String> {
        let environment = indexmap::IndexMap::new();
        let invocation = crate::handlers::process::Invocation {
            command,
            environment: &environment,
            cwd: None,
            search_path: None,
            timeout: meta.timeout.filter(|t| *t > 0.0).map_or(Duration::from_secs(300), Duration::from_secs_f64),
            remove_environment: &[],
        };
        match crate::handlers::process::run(&invocation) {
            Ok(ran) => Ok(ran.code),
            Err(crate::handlers::process::RunError::NotFound(_)) => Ok(127),
            Err(error) => Err(error.to_string()),
        }
    };
    if let Some(command) = meta.only_if.as_deref().filter(|c| !c.is_empty()) {
        match run(command) {
            Ok(0) => {}
            Ok(code) => return Some(format!("its `only_if` guard `{command}` exited with {code}")),
            Err(error) => return Some(format!("its `only_if` guard `{command}` did not run: {error}")),
        }
    }
    if let Some(command) = meta.not_if.as_deref().filter(|c| !c.is_empty())
        && run(command) == Ok(0)
    {
        return Some(format!("its `not_if` guard `{command}` succeeded"));
    }
    None
}

/// The wait before retry number `attempt` (1 for the first), jitter drawn from `clock`.
pub fn retry_wait(meta: &modelc_ir::Meta, attempt: u32, clock: &dyn Clock) -> Duration {
    let mut seconds = meta.retry_delay(attempt);
    if let modelc_ir::Backoff::Exponential { jitter: true, .. } = meta.backoff {
        seconds *= 0.5 + clock.random() / 2.0;
    }
    Duration::from_secs_f64(seconds.max(0.0))
}
