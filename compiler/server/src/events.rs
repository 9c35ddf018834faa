//! What wakes waiting calls: releases and recorded results, from whichever server stored them.
//! One thread per server listens to the store's `modelc_releases` and `modelc_results`
//! channels and broadcasts each to the waiting handlers in this process. A release is broadcast
//! with the agents it changed (read once here, not by every waiting agent), so only those
//! agents' long polls answer. While the database is away, or after a reconnection (when
//! notifications may have been missed), waiters are told to look again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use modelc_store::PgStore;
use modelc_store::postgres::Wakeup;
use modelc_store::postgres::fleet::{RELEASES_CHANNEL, RESULTS_CHANNEL};
use tokio::sync::broadcast;

#[derive(Debug, Clone)]
pub(crate) enum Event {
    /// A version was released, changing these agents.
    Released { agents: Arc<[String]> },
    /// Some agent recorded results.
    Results,
    /// Notifications may have been missed: everyone looks again.
    Missed,
}

/// Waiting calls subscribe here.
pub(crate) type Events = broadcast::Sender<Event>;

/// How many events a slow waiter may fall behind before it is told it missed some.
const BACKLOG: usize = 4096;

/// Starts listening to the store at `url` until `stop`; connects again for as long as it must.
pub(crate) fn start(url: String, stop: Arc<AtomicBool>) -> Events {
    let (sender, _) = broadcast::channel(BACKLOG);
    let events = sender.clone();
    let spawned = std::thread::Builder::new().name("server-events".to_owned()).spawn(move || {
        while !stop.load(Ordering::SeqCst) {
            let reader = Reader { url: url.clone(), store: Mutex::new(None) };
            let sender = events.clone();
            let listening =
                modelc_store::postgres::Listener::start_on(&url, &[RELEASES_CHANNEL, RESULTS_CHANNEL], move |wakeup| {
                    let _ = sender.send(reader.event(wakeup));
                    true
                });
            match listening {
                Ok(listener) => {
                    while !stop.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(200));
                    }
                    drop(listener);
                }
                Err(_) => {
                    let _ = events.send(Event::Missed);
                    std::thread::sleep(Duration::from_secs(1));
                }
            }
        }
    });
    if spawned.is_err() {
        eprintln!("warning: cannot start listening for releases: agents will learn of them at their next poll");
    }
    sender
}

/// Turns notifications into events, reading a release's agents with its own connection.
struct Reader {
    url: String,
    store: Mutex<Option<PgStore>>,
}

impl Reader {
    fn event(&self, wakeup: Wakeup<'_>) -> Event {
        let Wakeup::Notified { channel, payload } = wakeup else { return Event::Missed };
        if channel == RESULTS_CHANNEL {
            return Event::Results;
        }
        let Ok(version) = payload.parse::<u64>() else { return Event::Missed };
        match self.release_agents(version) {
            Some(agents) => Event::Released { agents: agents.into() },
            None => Event::Missed,
        }
    }

    fn release_agents(&self, version: u64) -> Option<Vec<String>> {
        let mut store = self.store.lock().ok()?;
        if store.as_ref().is_none_or(PgStore::is_closed) {
            *store = PgStore::open(&self.url).ok();
        }
        store.as_mut()?.release_of(version).ok().flatten().map(|release| release.agents)
    }
}
