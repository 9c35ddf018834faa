//! What the runtime keeps in the store besides versions:
//!
//! * file content by sha1, written with the version that first needed it, so a stored version
//!   deploys without its model;
//! * one record per deploy (the version, when it started and ended, which agents it handled)
//!   and per resource (its result, changes, error and duration): [`DeployRecord`];
//! * receivers whose refresh a run could not do (the next run does it), the resources with
//!   `purge_on_delete` last deployed, per agent (a later version without one purges it), and
//!   continuous mode's retry counters: [`Carryover`];
//! * the facts handlers learnt about resources ([`Fact`]), each kept until a later deploy
//!   learns it again, for `std::getfact` in later compiles.
//!
//! Recording a run with its carryover is one transaction. The SQLite layout and queries are in
//! `sqlite/deploys.rs`.

use modelc_ir::Resource;
use serde::Serialize;

/// One deploy, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeployRecord {
    /// Its number (1, 2, …), given by the store.
    pub run: u64,
    /// The stored version deployed; `None` for a fresh compile or an IR file.
    pub version: Option<u64>,
    /// What was deployed: `version 3`, `compile of /srv/project`, `ir.json`.
    pub source: String,
    pub started: String,
    pub ended: String,
    /// The agents the run handled.
    pub agents: Vec<String>,
    /// Every handled resource converged.
    pub converged: bool,
    pub results: Vec<DeployResult>,
}

/// One resource's result in a recorded deploy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeployResult {
    pub id: String,
    pub agent: String,
    /// `changed`, `unchanged`, `failed`, `blocked`, … (the runtime's words).
    pub result: String,
    /// The changes, as the runtime reports them (a JSON array).
    pub changes: serde_json::Value,
    pub error: Option<String>,
    pub duration_ms: f64,
    /// Where the model creates it (`main.cf:12`).
    pub source: String,
}

/// What a finished deploy leaves for the next one: the refreshes still owed and the
/// purgeable resources now deployed, for the agents it handled.
#[derive(Debug, Clone, Default)]
pub struct Carryover {
    pub pending_refreshes: Vec<(String, String)>,
    pub purgeable: Vec<Resource>,
    /// Continuous mode's retry counters: `(id, agent, failed runs)` of resources that have
    /// used some of their retries.
    pub retry_counts: Vec<(String, String, u32)>,
    /// What handlers learnt about the resources they deployed: it replaces the value kept for
    /// the same resource and name.
    pub facts: Vec<Fact>,
}

/// A fact a handler learnt about a resource (`set_fact`, a Python handler's `facts`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Fact {
    /// The resource's versionless id.
    pub id: String,
    pub name: String,
    /// Text, as the reference keeps facts.
    pub value: String,
}
