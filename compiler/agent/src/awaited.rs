//! Requirements across agents: a resource that requires another agent's waits for that
//! resource's result in this version, which the server gives for all the resources this run
//! waits on in one call (a long poll that answers once one of them has a result), never one
//! call per edge. The server counts only a result at least as new as the last release that
//! changed that agent, so nothing is met early.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use modelc_client::Client;

pub(crate) struct RemoteResults {
    pub(crate) client: Client,
    pub(crate) version: u64,
    pub(crate) wait: Duration,
    pub(crate) stop: Arc<AtomicBool>,
    /// The agent's own resources an incremental run does not deploy again: they stand as
    /// they converged.
    pub(crate) own: std::collections::HashSet<String>,
}

impl modelc_runtime::engine::Awaited for RemoteResults {
    fn wait(&self, ids: &[String]) -> Vec<(String, String, Option<String>)> {
        let (own, foreign): (Vec<&String>, Vec<&String>) = ids.iter().partition(|id| self.own.contains(*id));
        if !own.is_empty() {
            return own.into_iter().map(|id| (id.clone(), "unchanged".to_owned(), None)).collect();
        }
        let ids: Vec<String> = foreign.into_iter().cloned().collect();
        if self.stop.load(Ordering::SeqCst) {
            return Vec::new();
        }
        match self.client.requirements(self.version, &ids, self.wait) {
            Ok(found) => found.into_iter().filter_map(|r| Some((r.id, r.result?, r.error))).collect(),
            Err(error) if error.is_transient() => {
                // The server is away: ask again shortly (the run goes on with what it can).
                crate::poller::sleep_unless_stopped(Duration::from_secs(1), &self.stop);
                Vec::new()
            }
            Err(error) => {
                // Not allowed to know (a token for other agents): what requires them is blocked,
                // with the reason.
                let why = error.to_string();
                ids.iter().map(|id| (id.clone(), "failed".to_owned(), Some(why.clone()))).collect()
            }
        }
    }
}
