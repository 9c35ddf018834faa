//! `prune`: keep the latest N versions (and the one the last deploy used), drop the rows no kept
//! version can see, and give the space back to the file system.

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use crate::sqlite::Sql as _;
use crate::sqlite::SqliteStore;
use crate::{PruneReport, StoreError};

impl SqliteStore {
    pub(crate) fn prune_versions(&mut self, keep: u64, dry_run: bool) -> Result<PruneReport, StoreError> {
        if keep == 0 {
            return Err(StoreError::Storage("prune keeps at least one version".to_owned()));
        }
        let bytes_before = self.size()?;
        let tx = self.db.transaction_with_behavior(TransactionBehavior::Immediate).sql()?;
        let all: Vec<u64> = super::column(&tx, "SELECT version FROM versions ORDER BY version")?;
        // The version the last deploy applied stays, however old: it is what runs.
        let deployed: Option<u64> = tx
            .query_row("SELECT version FROM deploy_runs WHERE version IS NOT NULL ORDER BY run DESC LIMIT 1", [], |r| {
                r.get(0)
            })
            .optional()
            .sql()?;
        let newest = all.len().saturating_sub(keep as usize);
        let kept: Vec<u64> =
            all.iter().enumerate().filter(|(i, v)| *i >= newest || Some(**v) == deployed).map(|(_, v)| *v).collect();
        let removed: Vec<u64> = all.iter().copied().filter(|v| !kept.contains(v)).collect();
        tx.execute_batch("CREATE TEMP TABLE kept (version INTEGER PRIMARY KEY)").sql()?;
        for version in &kept {
            tx.execute("INSERT INTO kept (version) VALUES (?1)", [version]).sql()?;
        }
        // A closed row is seen by the versions in [first_version, last_version); open rows are
        // seen by the latest, which is always kept.
        let rows = tx
            .execute(
                "DELETE FROM resources WHERE last_version IS NOT NULL AND NOT EXISTS (
                SELECT 1 FROM kept WHERE kept.version >= resources.first_version
                                     AND kept.version < resources.last_version)",
                [],
            )
            .sql()?;
        for version in &removed {
            tx.execute("DELETE FROM versions WHERE version = ?1", params![version]).sql()?;
        }
        tx.execute_batch("DROP TABLE kept").sql()?;
        let contents = remove_unnamed_contents(&tx)?;
        let mut report =
            PruneReport { kept, removed, rows: rows as u64, contents, bytes_before, bytes_after: bytes_before };
        if dry_run {
            // Dropping the transaction undoes it all.
            return Ok(report);
        }
        tx.commit().sql()?;
        // Outside the transaction: VACUUM rewrites the file without the freed pages.
        self.db.execute_batch("VACUUM").sql()?;
        report.bytes_after = self.size()?;
        Ok(report)
    }

    /// The size of the database in bytes (its pages).
    pub(crate) fn size(&self) -> Result<u64, StoreError> {
        let pages: u64 = self.db.query_row("PRAGMA page_count", [], |r| r.get(0)).sql()?;
        let size: u64 = self.db.query_row("PRAGMA page_size", [], |r| r.get(0)).sql()?;
        Ok(pages * size)
    }
}

/// Deletes the file contents that no remaining resource row names (by its `hash` attribute, as
/// `fs::File` does), and returns how many. Only rows that mention a `hash` are parsed.
fn remove_unnamed_contents(db: &rusqlite::Connection) -> Result<u64, StoreError> {
    let any: bool = db.query_row("SELECT EXISTS (SELECT 1 FROM contents)", [], |r| r.get(0)).sql()?;
    if !any {
        return Ok(0);
    }
    let removed = db
        .execute(
            "DELETE FROM contents WHERE hash NOT IN (
            SELECT json_extract(data, '$.attributes.hash') FROM resources
            WHERE instr(data, '\"hash\"') > 0 AND json_extract(data, '$.attributes.hash') IS NOT NULL)",
            [],
        )
        .sql()?;
    Ok(removed as u64)
}
