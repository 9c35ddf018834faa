//! Waking `deploy --watch` when a version lands in a PostgreSQL store: every export notifies
//! [`CHANNEL`] as it commits (notifications are sent at commit, never for a rolled-back
//! export), and a [`Listener`] thread holds a connection that `LISTEN`s to it. A lost connection
//! is opened again, and since notifications sent meanwhile are lost, the loop is woken then too.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;

use super::{connect, storage};
use crate::StoreError;

/// The notification channel of new versions.
pub const CHANNEL: &str = "modelc_versions";

/// How often the listening thread looks whether it should stop.
const POLL: Duration = Duration::from_millis(200);

/// How long it waits before connecting again after losing the connection.
const RECONNECT: Duration = Duration::from_secs(1);

/// A thread listening for new versions; stopped when dropped.
pub struct Listener {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Why a listener calls its callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wakeup<'a> {
    /// Listening began, or began again after a lost connection: notifications may have been
    /// missed, so look at the store.
    Missed,
    /// A notification on `channel`.
    Notified { channel: &'a str, payload: &'a str },
}

impl Listener {
    /// Connects to the store at `url` and listens for new versions; `wake` is called once now (a
    /// version may have landed before the listening began), then on every new version and after
    /// every reconnection. It returns false when no one needs waking any more, which ends the
    /// thread.
    pub(crate) fn start(url: &str, wake: impl Fn() -> bool + Send + 'static) -> Result<Listener, StoreError> {
        Listener::start_on(url, &[CHANNEL], move |_| wake())
    }

    /// Listens to `channels` ([`CHANNEL`], `fleet::RELEASES_CHANNEL`, …): as [`Listener::start`],
    /// with what woke it.
    pub fn start_on(
        url: &str,
        channels: &[&str],
        wake: impl Fn(Wakeup<'_>) -> bool + Send + 'static,
    ) -> Result<Listener, StoreError> {
        let channels: Vec<String> = channels.iter().map(|c| (*c).to_owned()).collect();
        let client = listening(url, &channels)?;
        let stop = Arc::new(AtomicBool::new(false));
        let url = url.to_owned();
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("store-listener".to_owned())
            .spawn(move || listen(client, &url, &channels, &stopped, &wake))
            .map_err(|e| StoreError::Storage(format!("cannot start listening to the store: {e}")))?;
        Ok(Listener { stop, thread: Some(thread) })
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn listening(url: &str, channels: &[String]) -> Result<postgres::Client, StoreError> {
    let mut client = connect(url)?;
    for channel in channels {
        client.batch_execute(&format!("LISTEN {channel}")).map_err(storage)?;
    }
    Ok(client)
}

fn listen(
    mut client: postgres::Client,
    url: &str,
    channels: &[String],
    stop: &AtomicBool,
    wake: &dyn Fn(Wakeup<'_>) -> bool,
) {
    if !wake(Wakeup::Missed) {
        return;
    }
    while !stop.load(Ordering::SeqCst) {
        let lost = {
            let mut notifications = client.notifications();
            let mut woken = notifications.timeout_iter(POLL);
            loop {
                match woken.next() {
                    Ok(Some(notification)) => {
                        let channel = notification.channel();
                        if !wake(Wakeup::Notified { channel, payload: notification.payload() }) {
                            return;
                        }
                    }
                    Ok(None) => break false,
                    Err(_) => break true,
                }
            }
        };
        if !lost && !client.is_closed() {
            continue;
        }
        // Connect again, however long the server is away; then look for what was missed.
        client = loop {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(RECONNECT);
            if let Ok(client) = listening(url, channels) {
                break client;
            }
        };
        if !wake(Wakeup::Missed) {
            return;
        }
    }
}
