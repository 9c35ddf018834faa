//! Results survive failure: every action is written to the outbox (a file per batch, synced
//! once) before it is sent, and its file removed only once the server acknowledged the batch.
//! Batches are sent in the order they were written; one the server cannot take now is sent
//! again, with back-off, until it can: the server records each action once, however often it
//! arrives. An outbox left by a process that died is sent by the next one.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, unbounded};
use modelc_client::Client;
use modelc_store::postgres::fleet::Action;

use crate::backoff::Backoff;
use crate::state::{private_dir, sync_dir};

/// How long actions gather before their batch is written.
const GATHER: Duration = Duration::from_millis(100);

/// The most actions in one batch.
const BATCH: usize = 2000;

pub(crate) struct Outbox {
    actions: Sender<Action>,
    /// Batches written and not yet acknowledged.
    pending: Arc<(Mutex<usize>, Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
    stop: Arc<AtomicBool>,
}

impl Outbox {
    /// Opens the outbox in `dir` and starts sending it (what a previous process left first).
    pub(crate) fn open(dir: PathBuf, client: Client, holder: String) -> Result<Outbox, String> {
        private_dir(&dir)?;
        let left = batches(&dir)?;
        let pending = Arc::new((Mutex::new(left.len()), Condvar::new()));
        let next = left.last().map_or(1, |(n, _)| n + 1);
        let (actions, received) = unbounded();
        let stop = Arc::new(AtomicBool::new(false));
        let sender = Sender_ { dir, client, holder, pending: Arc::clone(&pending), next, stop: Arc::clone(&stop) };
        let thread = std::thread::Builder::new()
            .name("agent-outbox".to_owned())
            .spawn(move || sender.run(&received))
            .map_err(|e| format!("cannot start the outbox: {e}"))?;
        Ok(Outbox { actions, pending, thread: Some(thread), stop })
    }

    /// Queues an action: it is written with the next batch, then sent.
    pub(crate) fn push(&self, action: Action) {
        let _ = self.actions.send(action);
    }

    /// Waits up to `timeout` for everything queued to be acknowledged; whether it was.
    pub(crate) fn flush(&self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let queued = !self.actions.is_empty();
            let (lock, changed) = &*self.pending;
            let pending = lock.lock().map_or(0, |p| *p);
            if !queued && pending == 0 {
                return true;
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return false;
            }
            if let Ok(guard) = lock.lock() {
                let _ = changed.wait_timeout(guard, (deadline - now).min(Duration::from_millis(50)));
            }
        }
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Closing the channel ends the thread once it has written what was queued.
        let (actions, _) = unbounded();
        drop(std::mem::replace(&mut self.actions, actions));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The batches in `dir`, by number.
fn batches(dir: &Path) -> Result<Vec<(u64, PathBuf)>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read the outbox {}: {e}", dir.display()))?;
    let mut found: Vec<(u64, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let number = name.strip_suffix(".json")?.parse().ok()?;
            Some((number, e.path()))
        })
        .collect();
    found.sort();
    Ok(found)
}

/// The outbox's thread: writes batches, sends them in order.
#[allow(non_camel_case_types, reason = "the sending half, named apart from crossbeam's Sender")]
struct Sender_ {
    dir: PathBuf,
    client: Client,
    holder: String,
    pending: Arc<(Mutex<usize>, Condvar)>,
    next: u64,
    stop: Arc<AtomicBool>,
}

impl Sender_ {
    fn run(mut self, received: &Receiver<Action>) {
        let mut backoff = Backoff::new(Duration::from_millis(200), Duration::from_secs(30));
        let mut retry_at: Option<std::time::Instant> = None;
        loop {
            // Gather what arrives, waiting longer while nothing is due.
            let wait = match (self.count() > 0, retry_at) {
                (true, Some(at)) => at.saturating_duration_since(std::time::Instant::now()),
                (true, None) => Duration::ZERO,
                (false, _) => Duration::from_secs(3600),
            };
            let mut batch = Vec::new();
            match received.recv_timeout(wait) {
                Ok(action) => batch.push(action),
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                    // Stopping: what is written stays for the next process; one last try.
                    let _ = self.send_written();
                    return;
                }
            }
            if !batch.is_empty() {
                let until = std::time::Instant::now() + GATHER;
                while batch.len() < BATCH {
                    match received.recv_deadline(until) {
                        Ok(action) => batch.push(action),
                        Err(_) => break,
                    }
                }
                if let Err(error) = self.write(&batch) {
                    eprintln!("warning: {error}: sending without keeping the actions first");
                    let _ = self.client.report(&self.holder, &batch);
                }
            }
            if retry_at.is_some_and(|at| std::time::Instant::now() < at) {
                continue;
            }
            match self.send_written() {
                Ok(()) => {
                    backoff.reset();
                    retry_at = None;
                }
                Err(()) => {
                    if self.stop.load(Ordering::SeqCst) {
                        return;
                    }
                    retry_at = Some(std::time::Instant::now() + backoff.next());
                }
            }
        }
    }

    fn count(&self) -> usize {
        self.pending.0.lock().map_or(0, |p| *p)
    }

    fn set_count(&self, count: usize) {
        if let Ok(mut pending) = self.pending.0.lock() {
            *pending = count;
        }
        self.pending.1.notify_all();
    }

    /// Writes a batch: one file, synced once.
    fn write(&mut self, batch: &[Action]) -> Result<(), String> {
        let bytes = serde_json::to_vec(batch).map_err(|e| format!("cannot encode actions: {e}"))?;
        let path = self.dir.join(format!("{:020}.json", self.next));
        crate::state::write_atomic(&path, &bytes)?;
        self.next += 1;
        self.set_count(self.count() + 1);
        Ok(())
    }

    /// Sends the written batches in order, removing each once acknowledged.
    fn send_written(&self) -> Result<(), ()> {
        let Ok(written) = batches(&self.dir) else { return Err(()) };
        for (count, (_, path)) in written.iter().enumerate() {
            let actions: Vec<Action> = match std::fs::read(path).ok().and_then(|b| serde_json::from_slice(&b).ok()) {
                Some(actions) => actions,
                None => {
                    // Damaged (a crash between write and rename cannot do this; a disk can): it
                    // cannot be sent, and must not stop what comes after.
                    let _ = std::fs::rename(path, path.with_extension("damaged"));
                    continue;
                }
            };
            match self.client.report(&self.holder, &actions) {
                Ok(_) => {
                    let _ = std::fs::remove_file(path);
                    let _ = sync_dir(&self.dir);
                    self.set_count(written.len() - count - 1);
                }
                Err(error) if error.is_transient() => return Err(()),
                Err(error) => {
                    // Refused for good (a revoked token): kept aside, never resent in a loop.
                    eprintln!("error: the server refused {} actions: {error}", actions.len());
                    let _ = std::fs::rename(path, path.with_extension("refused"));
                    self.set_count(written.len() - count - 1);
                }
            }
        }
        Ok(())
    }
}
