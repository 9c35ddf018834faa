//! A run seen as actions: each resource this agent deploys gets an action with an id made here
//! when its handler starts (after its requirements were met), reported at once, and again with
//! its result when it finishes; a resource settled without running (blocked, say) gets one
//! that starts and finishes at once. Everything goes through the outbox.

use std::collections::HashMap;
use std::sync::Mutex;

use modelc_ir::Resource;
use modelc_runtime::{Observer, Outcome, ResourceReport};
use modelc_store::postgres::fleet::Action;

use crate::outbox::Outbox;

pub(crate) struct Reporter<'a> {
    pub(crate) name: &'a str,
    pub(crate) version: u64,
    pub(crate) outbox: &'a Outbox,
    /// Started actions by resource id: their id and start.
    pub(crate) started: Mutex<HashMap<String, (String, String)>>,
    /// Counts by result, for the summary.
    pub(crate) counts: Mutex<std::collections::BTreeMap<&'static str, usize>>,
    /// Own resources this run stands on without running them (an incremental run's): no action.
    pub(crate) standing: &'a std::collections::HashSet<String>,
    /// Whether each resource that ran converged.
    pub(crate) converged: Mutex<Vec<(String, bool)>>,
    /// The files the run settled, as each stood when its resource finished: a change made
    /// before the agent watches them again is drift all the same.
    pub(crate) settled: Mutex<Vec<(std::path::PathBuf, Option<crate::drift::Fingerprint>)>>,
}

impl Reporter<'_> {
    fn action_id() -> String {
        let bytes = modelc_store::random_bytes(16).unwrap_or_else(|_| {
            // No randomness: the time and a counter are unique enough within one agent.
            let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
            nanos.to_le_bytes().to_vec()
        });
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The time now, RFC 3339 with milliseconds.
pub(crate) fn now() -> String {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let seconds = modelc_store::utc_now();
    // `utc_now` gives whole seconds; the milliseconds keep actions of one second in order.
    format!("{}.{:03}Z", seconds.trim_end_matches('Z'), since.subsec_millis())
}

impl Observer for Reporter<'_> {
    fn started(&self, resource: &Resource) {
        if resource.agent != self.name || self.standing.contains(&resource.id) {
            return;
        }
        let (id, started) = (Self::action_id(), now());
        if let Ok(mut map) = self.started.lock() {
            map.insert(resource.id.clone(), (id.clone(), started.clone()));
        }
        self.outbox.push(Action {
            action_id: id,
            id: resource.id.clone(),
            agent: self.name.to_owned(),
            version: self.version,
            result: None,
            started,
            finished: None,
            error: None,
            changes: serde_json::Value::Null,
            facts: Default::default(),
        });
    }

    fn finished(&self, resource: &Resource, report: &ResourceReport) {
        if resource.agent != self.name || report.result == Outcome::NotHandled || self.standing.contains(&resource.id) {
            return;
        }
        if let Ok(mut converged) = self.converged.lock() {
            converged.push((resource.id.clone(), report.result.lets_dependents_run()));
        }
        if let Some(path) = modelc_runtime::watch::watcher::watched_path(resource)
            && let Ok(mut settled) = self.settled.lock()
        {
            let fingerprint = crate::drift::Fingerprint::of(&path);
            settled.push((path, fingerprint));
        }
        let finished = now();
        let (id, started) = self
            .started
            .lock()
            .ok()
            .and_then(|mut map| map.remove(&resource.id))
            .unwrap_or_else(|| (Self::action_id(), finished.clone()));
        if let Ok(mut counts) = self.counts.lock() {
            *counts.entry(report.result.as_str()).or_default() += 1;
        }
        self.outbox.push(Action {
            action_id: id,
            id: resource.id.clone(),
            agent: self.name.to_owned(),
            version: self.version,
            result: Some(report.result.as_str().to_owned()),
            started,
            finished: Some(finished),
            error: report.error.clone(),
            changes: serde_json::to_value(&report.changes).unwrap_or_default(),
            facts: report.facts.clone(),
        });
    }
}
