//! The runtime's tables (see `crate::deploys`):
//!
//! * `contents`: file content by sha1, with the version that first stored it;
//! * `deploy_runs` and `deploy_results`: one row per deploy and per resource of it;
//! * `pending_refreshes`: receivers owed a refresh, by agent;
//! * `deployed_purgeable`: the purgeable resources (those with `purge_on_delete`, true or false)
//!   last deployed, by agent;
//! * `retry_counts`: continuous mode's failed runs per resource, by agent;
//! * `facts`: what handlers learnt, per resource and name, with the run that learnt it.

use std::collections::HashMap;

use modelc_ir::Resource;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::StoreError;
use crate::deploys::{Carryover, DeployRecord, DeployResult, Fact};
use crate::sqlite::Sql as _;
use crate::sqlite::SqliteStore;

pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS contents (hash TEXT PRIMARY KEY, first_version INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS deploy_runs (
    run INTEGER PRIMARY KEY,
    version INTEGER,
    source TEXT NOT NULL,
    started TEXT NOT NULL,
    ended TEXT NOT NULL,
    agents TEXT NOT NULL,
    converged INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS deploy_results (
    run INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    rid TEXT NOT NULL,
    agent TEXT NOT NULL,
    result TEXT NOT NULL,
    changes TEXT NOT NULL,
    error TEXT,
    duration_ms REAL NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (run, seq)
);
CREATE TABLE IF NOT EXISTS pending_refreshes (rid TEXT PRIMARY KEY, agent TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS deployed_purgeable (rid TEXT PRIMARY KEY, agent TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS retry_counts (rid TEXT PRIMARY KEY, agent TEXT NOT NULL, failures INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS facts (
    rid TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    run INTEGER NOT NULL,
    PRIMARY KEY (rid, name)
);
";

impl SqliteStore {
    /// The content stored for each of `hashes` that the store has.
    pub fn contents(&self, hashes: &[String]) -> Result<HashMap<String, Vec<u8>>, StoreError> {
        contents_in(&self.db, hashes)
    }

    /// Records a finished deploy with what it leaves for the next one, in one transaction.
    /// Returns the run's number.
    pub fn record_deploy(&mut self, record: &DeployRecord, carryover: &Carryover) -> Result<u64, StoreError> {
        let tx = self.db.transaction_with_behavior(TransactionBehavior::Immediate).sql()?;
        let run: u64 = tx.query_row("SELECT COALESCE(MAX(run), 0) + 1 FROM deploy_runs", [], |r| r.get(0)).sql()?;
        tx.execute(
            "INSERT INTO deploy_runs (run, version, source, started, ended, agents, converged)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                run,
                record.version,
                record.source,
                record.started,
                record.ended,
                serde_json::to_string(&record.agents).unwrap_or_default(),
                record.converged
            ],
        )
        .sql()?;
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO deploy_results (run, seq, rid, agent, result, changes, error, duration_ms, source)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )
                .sql()?;
            for (seq, r) in record.results.iter().enumerate() {
                insert
                    .execute(params![
                        run,
                        seq as u64,
                        r.id,
                        r.agent,
                        r.result,
                        r.changes.to_string(),
                        r.error,
                        r.duration_ms,
                        r.source
                    ])
                    .sql()?;
            }
            let mut forget_refreshes = tx.prepare_cached("DELETE FROM pending_refreshes WHERE agent = ?1").sql()?;
            let mut forget_purgeable = tx.prepare_cached("DELETE FROM deployed_purgeable WHERE agent = ?1").sql()?;
            let mut forget_retries = tx.prepare_cached("DELETE FROM retry_counts WHERE agent = ?1").sql()?;
            for agent in &record.agents {
                forget_refreshes.execute([agent]).sql()?;
                forget_purgeable.execute([agent]).sql()?;
                forget_retries.execute([agent]).sql()?;
            }
            let mut retries = tx
                .prepare_cached("INSERT OR REPLACE INTO retry_counts (rid, agent, failures) VALUES (?1, ?2, ?3)")
                .sql()?;
            for (rid, agent, failures) in &carryover.retry_counts {
                retries.execute(params![rid, agent, failures]).sql()?;
            }
            let mut refresh =
                tx.prepare_cached("INSERT OR REPLACE INTO pending_refreshes (rid, agent) VALUES (?1, ?2)").sql()?;
            for (rid, agent) in &carryover.pending_refreshes {
                refresh.execute([rid, agent]).sql()?;
            }
            let mut purgeable = tx
                .prepare_cached("INSERT OR REPLACE INTO deployed_purgeable (rid, agent, data) VALUES (?1, ?2, ?3)")
                .sql()?;
            for resource in &carryover.purgeable {
                let data = serde_json::to_string(resource).map_err(|e| StoreError::Storage(e.to_string()))?;
                purgeable.execute(params![resource.id, resource.agent, data]).sql()?;
            }
            let mut fact = tx
                .prepare_cached("INSERT OR REPLACE INTO facts (rid, name, value, run) VALUES (?1, ?2, ?3, ?4)")
                .sql()?;
            for Fact { id, name, value } in &carryover.facts {
                fact.execute(params![id, name, value, run]).sql()?;
            }
        }
        tx.commit().sql()?;
        Ok(run)
    }

    /// Every fact deploys learnt, by resource id then name.
    pub fn facts(&self) -> Result<Vec<Fact>, StoreError> {
        let mut query = self.db.prepare_cached("SELECT rid, name, value FROM facts ORDER BY rid, name").sql()?;
        let rows = query.query_map([], |r| Ok(Fact { id: r.get(0)?, name: r.get(1)?, value: r.get(2)? })).sql()?;
        rows.collect::<Result<_, _>>().sql()
    }

    /// The most recent deploy, with its results in run order.
    pub fn last_deploy(&self) -> Result<Option<DeployRecord>, StoreError> {
        let run: Option<u64> = self.db.query_row("SELECT MAX(run) FROM deploy_runs", [], |r| r.get(0)).sql()?;
        run.map(|run| deploy(&self.db, run)).transpose()
    }

    /// Receivers of `agents` whose refresh an earlier run could not do.
    pub fn pending_refreshes(&self, agents: &[String]) -> Result<Vec<String>, StoreError> {
        let mut query =
            self.db.prepare_cached("SELECT rid FROM pending_refreshes WHERE agent = ?1 ORDER BY rid").sql()?;
        let mut ids = Vec::new();
        for agent in agents {
            ids.extend(
                query.query_map([agent], |r| r.get::<_, String>(0)).sql()?.collect::<Result<Vec<_>, _>>().sql()?,
            );
        }
        Ok(ids)
    }

    /// Continuous mode's retry counters of `agents`' resources: `(id, failed runs)`.
    pub fn retry_counts(&self, agents: &[String]) -> Result<Vec<(String, u32)>, StoreError> {
        let mut query =
            self.db.prepare_cached("SELECT rid, failures FROM retry_counts WHERE agent = ?1 ORDER BY rid").sql()?;
        let mut counts = Vec::new();
        for agent in agents {
            let rows = query.query_map([agent], |r| Ok((r.get::<_, String>(0)?, r.get::<_, u32>(1)?))).sql()?;
            counts.extend(rows.collect::<Result<Vec<_>, _>>().sql()?);
        }
        Ok(counts)
    }

    /// The purgeable resources (with `purge_on_delete`, true or false) last deployed by `agents`.
    pub fn deployed_purgeable(&self, agents: &[String]) -> Result<Vec<Resource>, StoreError> {
        let mut query =
            self.db.prepare_cached("SELECT data FROM deployed_purgeable WHERE agent = ?1 ORDER BY rid").sql()?;
        let mut resources = Vec::new();
        for agent in agents {
            for data in query.query_map([agent], |r| r.get::<_, String>(0)).sql()? {
                let resource = serde_json::from_str(&data.sql()?)
                    .map_err(|e| StoreError::Storage(format!("a deployed resource is unreadable: {e}")))?;
                resources.push(resource);
            }
        }
        Ok(resources)
    }
}

/// Stores the content table of an export (each text once, by its sha1).
/// The contents stored for each of `hashes` that the store has, inside the caller's transaction.
pub(crate) fn contents_in<'a, C: FromIterator<(String, Vec<u8>)>>(
    db: &Connection,
    hashes: impl IntoIterator<Item = &'a String>,
) -> Result<C, StoreError> {
    let mut query = db.prepare_cached("SELECT data FROM contents WHERE hash = ?1").sql()?;
    let mut found = Vec::new();
    for hash in hashes {
        if let Some(data) = query.query_row([hash], |r| r.get::<_, Vec<u8>>(0)).optional().sql()? {
            found.push((hash.clone(), data));
        }
    }
    Ok(found.into_iter().collect())
}

pub(crate) fn insert_contents(
    db: &Connection,
    files: &indexmap::IndexMap<String, String>,
    version: u64,
) -> Result<(), StoreError> {
    let mut insert =
        db.prepare_cached("INSERT OR IGNORE INTO contents (hash, first_version, data) VALUES (?1, ?2, ?3)").sql()?;
    for (hash, text) in files {
        insert.execute(params![hash, version, text.as_bytes()]).sql()?;
    }
    Ok(())
}

fn deploy(db: &Connection, run: u64) -> Result<DeployRecord, StoreError> {
    let (version, source, started, ended, agents, converged) = db
        .query_row(
            "SELECT version, source, started, ended, agents, converged FROM deploy_runs WHERE run = ?1",
            [run],
            |r| {
                Ok((
                    r.get::<_, Option<u64>>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, bool>(5)?,
                ))
            },
        )
        .sql()?;
    let mut query = db.prepare_cached(
        "SELECT rid, agent, result, changes, error, duration_ms, source FROM deploy_results WHERE run = ?1 ORDER BY seq",
    ).sql()?;
    let results = query
        .query_map([run], |r| {
            Ok(DeployResult {
                id: r.get(0)?,
                agent: r.get(1)?,
                result: r.get(2)?,
                changes: serde_json::from_str(&r.get::<_, String>(3)?).unwrap_or(serde_json::Value::Null),
                error: r.get(4)?,
                duration_ms: r.get(5)?,
                source: r.get(6)?,
            })
        })
        .sql()?
        .collect::<Result<Vec<_>, _>>()
        .sql()?;
    Ok(DeployRecord {
        run,
        version,
        source,
        started,
        ended,
        agents: serde_json::from_str(&agents).unwrap_or_default(),
        converged,
        results,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(agents: &[&str]) -> DeployRecord {
        DeployRecord {
            run: 0,
            version: None,
            source: "test".into(),
            started: "2026-01-01T00:00:00Z".into(),
            ended: "2026-01-01T00:00:01Z".into(),
            agents: agents.iter().map(|a| (*a).to_owned()).collect(),
            converged: false,
            results: Vec::new(),
        }
    }

    #[test]
    fn retry_counts_are_kept_per_agent_until_that_agent_records_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("store.sqlite")).unwrap();
        let counts = vec![("r1".to_owned(), "a".to_owned(), 2), ("r2".to_owned(), "b".to_owned(), 5)];
        store.record_deploy(&record(&["a", "b"]), &Carryover { retry_counts: counts, ..Carryover::default() }).unwrap();
        assert_eq!(store.retry_counts(&["a".into()]).unwrap(), [("r1".to_owned(), 2)]);
        assert_eq!(store.retry_counts(&["a".into(), "b".into()]).unwrap().len(), 2);
        // Agent a records a run in which nothing failed: its counts go, b's stay.
        store.record_deploy(&record(&["a"]), &Carryover::default()).unwrap();
        assert!(store.retry_counts(&["a".into()]).unwrap().is_empty());
        assert_eq!(store.retry_counts(&["b".into()]).unwrap(), [("r2".to_owned(), 5)]);
    }
}
