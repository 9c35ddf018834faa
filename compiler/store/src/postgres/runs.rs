//! The runtime's records in PostgreSQL (deploys, what they leave for the next one, file
//! contents) and `prune`, each write in one transaction.

use std::collections::HashMap;

use postgres::Transaction;

use super::{DEPLOY_LOCK, LOCK, signed, storage, unsigned};
use crate::deploys::{Carryover, DeployRecord, DeployResult, Fact};
use crate::{PruneReport, StoreError};

pub(super) fn contents(tx: &mut Transaction<'_>, hashes: &[String]) -> Result<HashMap<String, Vec<u8>>, StoreError> {
    let rows = tx.query("SELECT hash, data FROM contents WHERE hash = ANY($1)", &[&hashes]).map_err(storage)?;
    Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
}

pub(super) fn record_deploy(
    client: &mut postgres::Client,
    record: &DeployRecord,
    carryover: &Carryover,
) -> Result<u64, StoreError> {
    let mut tx = client.transaction().map_err(storage)?;
    // Runs are numbered in order: one recorder at a time.
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&DEPLOY_LOCK]).map_err(storage)?;
    let run: i64 = tx.query_one("SELECT COALESCE(MAX(run), 0) + 1 FROM deploy_runs", &[]).map_err(storage)?.get(0);
    tx.execute(
        "INSERT INTO deploy_runs (run, version, source, started, ended, agents, converged)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        &[
            &run,
            &record.version.map(signed),
            &record.source,
            &record.started,
            &record.ended,
            &serde_json::to_string(&record.agents).unwrap_or_default(),
            &record.converged,
        ],
    )
    .map_err(storage)?;
    let insert = tx
        .prepare(
            "INSERT INTO deploy_results (run, seq, rid, agent, result, changes, error, duration_ms, source)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .map_err(storage)?;
    for (seq, r) in record.results.iter().enumerate() {
        let changes = r.changes.to_string();
        tx.execute(
            &insert,
            &[&run, &(seq as i64), &r.id, &r.agent, &r.result, &changes, &r.error, &r.duration_ms, &r.source],
        )
        .map_err(storage)?;
    }
    for table in ["pending_refreshes", "deployed_purgeable", "retry_counts"] {
        tx.execute(&format!("DELETE FROM {table} WHERE agent = ANY($1)"), &[&record.agents]).map_err(storage)?;
    }
    for (rid, agent, failures) in &carryover.retry_counts {
        tx.execute(
            "INSERT INTO retry_counts (rid, agent, failures) VALUES ($1, $2, $3)
             ON CONFLICT (rid) DO UPDATE SET agent = EXCLUDED.agent, failures = EXCLUDED.failures",
            &[rid, agent, &i64::from(*failures)],
        )
        .map_err(storage)?;
    }
    for (rid, agent) in &carryover.pending_refreshes {
        tx.execute(
            "INSERT INTO pending_refreshes (rid, agent) VALUES ($1, $2) ON CONFLICT (rid) DO UPDATE SET agent = EXCLUDED.agent",
            &[rid, agent],
        )
        .map_err(storage)?;
    }
    for resource in &carryover.purgeable {
        let data = serde_json::to_string(resource).map_err(|e| StoreError::Storage(e.to_string()))?;
        tx.execute(
            "INSERT INTO deployed_purgeable (rid, agent, data) VALUES ($1, $2, $3)
             ON CONFLICT (rid) DO UPDATE SET agent = EXCLUDED.agent, data = EXCLUDED.data",
            &[&resource.id, &resource.agent, &data],
        )
        .map_err(storage)?;
    }
    keep_facts(&mut tx, &carryover.facts)?;
    tx.commit().map_err(storage)?;
    Ok(unsigned(run))
}

/// Keeps `facts`, each replacing the value kept for its resource and name.
pub(super) fn keep_facts(tx: &mut Transaction<'_>, facts: &[Fact]) -> Result<(), StoreError> {
    if facts.is_empty() {
        return Ok(());
    }
    let ids: Vec<&str> = facts.iter().map(|f| f.id.as_str()).collect();
    let names: Vec<&str> = facts.iter().map(|f| f.name.as_str()).collect();
    let values: Vec<&str> = facts.iter().map(|f| f.value.as_str()).collect();
    tx.execute(
        // One statement whatever the count; the last of a batch's duplicates wins.
        "INSERT INTO facts (rid, name, value, learnt)
         SELECT DISTINCT ON (rid, name) rid, name, value, now()
         FROM UNNEST($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS t(rid, name, value, at)
         ORDER BY rid, name, at DESC
         ON CONFLICT (rid, name) DO UPDATE SET value = EXCLUDED.value, learnt = EXCLUDED.learnt",
        &[&ids, &names, &values],
    )
    .map_err(storage)?;
    Ok(())
}

pub(super) fn facts(tx: &mut Transaction<'_>) -> Result<Vec<Fact>, StoreError> {
    let rows = tx
        .query("SELECT rid, name, value FROM facts ORDER BY rid COLLATE \"C\", name COLLATE \"C\"", &[])
        .map_err(storage)?;
    Ok(rows.iter().map(|row| Fact { id: row.get(0), name: row.get(1), value: row.get(2) }).collect())
}

pub(super) fn last_deploy(tx: &mut Transaction<'_>) -> Result<Option<DeployRecord>, StoreError> {
    let Some(row) = tx
        .query_opt(
            "SELECT run, version, source, started, ended, agents, converged FROM deploy_runs ORDER BY run DESC LIMIT 1",
            &[],
        )
        .map_err(storage)?
    else {
        return Ok(None);
    };
    let run: i64 = row.get(0);
    let results = tx
        .query(
            "SELECT rid, agent, result, changes, error, duration_ms, source FROM deploy_results WHERE run = $1 ORDER BY seq",
            &[&run],
        )
        .map_err(storage)?
        .iter()
        .map(|r| DeployResult {
            id: r.get(0),
            agent: r.get(1),
            result: r.get(2),
            changes: serde_json::from_str(r.get(3)).unwrap_or(serde_json::Value::Null),
            error: r.get(4),
            duration_ms: r.get(5),
            source: r.get(6),
        })
        .collect();
    Ok(Some(DeployRecord {
        run: unsigned(run),
        version: row.get::<_, Option<i64>>(1).map(unsigned),
        source: row.get(2),
        started: row.get(3),
        ended: row.get(4),
        agents: serde_json::from_str(row.get(5)).unwrap_or_default(),
        converged: row.get(6),
        results,
    }))
}

/// Keeps the latest `keep` versions (and the one the last deploy applied), deletes the rows no
/// kept version can see and the contents no remaining row names, under the exports' lock.
pub(super) fn prune(client: &mut postgres::Client, keep: u64, dry_run: bool) -> Result<PruneReport, StoreError> {
    if keep == 0 {
        return Err(StoreError::Storage("prune keeps at least one version".to_owned()));
    }
    let mut tx = client.transaction().map_err(storage)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK]).map_err(storage)?;
    let bytes_before = size(&mut tx)?;
    let all: Vec<u64> = tx
        .query("SELECT version FROM versions ORDER BY version", &[])
        .map_err(storage)?
        .iter()
        .map(|row| unsigned(row.get(0)))
        .collect();
    // These stay, however old: the version the last deploy applied (it is what runs), the latest
    // released one (what agents deploy) and those a live agent is deploying now (a dead one's,
    // its lease run out, no longer hold a version back).
    let protected: Vec<u64> = tx
        .query(
            "(SELECT version FROM deploy_runs WHERE version IS NOT NULL ORDER BY run DESC LIMIT 1)
             UNION SELECT MAX(version) FROM releases
             UNION SELECT deploying FROM agents WHERE deploying IS NOT NULL AND expires >= now()",
            &[],
        )
        .map_err(storage)?
        .iter()
        .filter_map(|row| row.get::<_, Option<i64>>(0))
        .map(unsigned)
        .collect();
    let newest = all.len().saturating_sub(usize::try_from(keep).unwrap_or(usize::MAX));
    let kept: Vec<u64> =
        all.iter().enumerate().filter(|(i, v)| *i >= newest || protected.contains(v)).map(|(_, v)| *v).collect();
    let removed: Vec<u64> = all.iter().copied().filter(|v| !kept.contains(v)).collect();
    let kept_signed: Vec<i64> = kept.iter().copied().map(signed).collect();
    let removed_signed: Vec<i64> = removed.iter().copied().map(signed).collect();
    // A closed row is seen by the versions in [first_version, last_version); open rows are seen
    // by the latest, which is always kept.
    let rows = tx
        .execute(
            "DELETE FROM resources WHERE last_version IS NOT NULL AND NOT EXISTS (
                SELECT 1 FROM UNNEST($1::bigint[]) AS kept(version)
                WHERE kept.version >= resources.first_version AND kept.version < resources.last_version)",
            &[&kept_signed],
        )
        .map_err(storage)?;
    tx.execute("DELETE FROM versions WHERE version = ANY($1)", &[&removed_signed]).map_err(storage)?;
    let contents = tx
        .execute(
            "DELETE FROM contents WHERE NOT EXISTS (SELECT 1 FROM resources WHERE resources.content = contents.hash)",
            &[],
        )
        .map_err(storage)?;
    let mut report = PruneReport { kept, removed, rows, contents, bytes_before, bytes_after: bytes_before };
    if dry_run {
        // Dropping the transaction undoes it all.
        return Ok(report);
    }
    tx.commit().map_err(storage)?;
    // The space of deleted rows is reused by later writes; a plain VACUUM makes it so now.
    client.batch_execute("VACUUM resources, contents, shared_edges, versions").map_err(storage)?;
    report.bytes_after = size(client)?;
    Ok(report)
}

/// The size of the store's tables and indexes, in bytes.
pub(super) fn size(client: &mut impl postgres::GenericClient) -> Result<u64, StoreError> {
    let bytes: i64 = client
        .query_one(
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
             JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = current_schema() AND c.relkind = 'r'",
            &[],
        )
        .map_err(storage)?
        .get(0);
    Ok(unsigned(bytes))
}
