//! The embedded store: one SQLite database (`.modelc/store.sqlite` by default).
//!
//! * `versions`: one row per version, with its metadata and counts;
//! * `resources`: one row per stored resource state, valid for the versions
//!   `first_version <= v < last_version` (`last_version` NULL: still current). A version's
//!   resources are the rows valid for it; an export closes the rows it replaces and inserts new
//!   ones, so earlier versions never change;
//! * `shared_edges`: the current `requires` of shared resources, by target, so a partial export
//!   finds the shared resources that pointed at what it removes without scanning them all;
//! * `meta`: the layout version (the next version number is one more than the highest).
//!
//! Every export runs in one `BEGIN IMMEDIATE` transaction: exports from several processes are
//! serialised (others wait up to [`BUSY_TIMEOUT`]), and a crash or a rejection leaves the
//! database exactly as it was (SQLite's write-ahead log makes the commit atomic).

mod deploys;
mod full;
mod import;
mod prune;

pub(crate) use full::Prefetched;

use crate::row::EncodedRow;

use std::path::Path;
use std::time::Duration;

use modelc_ir::{Ir, Resource};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::partial::{CurrentRow, MergePlan};
use crate::{ExportKind, Metadata, PartialRequest, Snapshot, Store, StoreError, VersionInfo};

/// SQLite's errors as the store's: the conversion is written here and used only in this module,
/// so no rusqlite type is part of the store's interface.
pub(crate) trait Sql<T> {
    fn sql(self) -> Result<T, StoreError>;
}

impl<T> Sql<T> for rusqlite::Result<T> {
    fn sql(self) -> Result<T, StoreError> {
        self.map_err(|error| StoreError::Storage(error.to_string()))
    }
}

/// The first column of every row `sql` gives.
pub(crate) fn column<T: rusqlite::types::FromSql>(db: &Connection, sql: &str) -> Result<Vec<T>, StoreError> {
    let mut query = db.prepare(sql).sql()?;
    let rows = query.query_map([], |r| r.get(0)).sql()?;
    rows.collect::<Result<_, _>>().sql()
}

/// The layout this code reads and writes. Version 2 added the runtime's tables
/// (`crate::deploys`), version 3 continuous mode's retry counters, version 4 the rows' digests,
/// version 5 each version's last row number and the index of closed rows by the version that
/// closed them (in place of an index by first version), version 6 the facts handlers learn; an
/// older store gets what it lacks when it is opened.
pub const SCHEMA_VERSION: i64 = 6;

/// The page size of a new store. Larger than SQLite's 4 KiB default: a full export of a large
/// model writes and indexes hundreds of megabytes, with fewer pages to balance and link, and a
/// partial export still touches only a few pages.
pub(crate) const PAGE_SIZE: i64 = 16 * 1024;

/// How long an export waits for another one to finish.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(120);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS versions (
    version INTEGER PRIMARY KEY,
    created TEXT NOT NULL,
    kind TEXT NOT NULL,
    base INTEGER,
    source_hash TEXT NOT NULL,
    message TEXT NOT NULL,
    resources INTEGER NOT NULL,
    sets INTEGER NOT NULL,
    last_seq INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS resources (
    seq INTEGER PRIMARY KEY,
    rid TEXT NOT NULL,
    set_name TEXT,
    hash TEXT NOT NULL,
    data TEXT NOT NULL,
    first_version INTEGER NOT NULL,
    last_version INTEGER,
    digest BLOB
);
CREATE INDEX IF NOT EXISTS current_by_rid ON resources (rid, digest, last_version) WHERE last_version IS NULL;
CREATE INDEX IF NOT EXISTS current_by_set ON resources (set_name) WHERE last_version IS NULL;
CREATE INDEX IF NOT EXISTS closed_by_version ON resources (last_version) WHERE last_version IS NOT NULL;
CREATE TABLE IF NOT EXISTS shared_edges (from_rid TEXT NOT NULL, to_rid TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS shared_edges_to ON shared_edges (to_rid);
CREATE INDEX IF NOT EXISTS shared_edges_from ON shared_edges (from_rid);
";

/// A store in one SQLite file.
pub struct SqliteStore {
    pub(crate) db: Connection,
}

/// Creates the store's file, if it is not there, readable and writable by its owner only
/// (0600): it holds every file's content, secrets included. SQLite gives its `-wal` and `-shm`
/// files the mode of the database file, so they are private too.
pub(crate) fn create_private(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(StoreError::Storage(format!("cannot create {}: {e}", path.display()))),
    }
}

/// A directory where the store's file was meant, said plainly (SQLite says "unable to open
/// database file", and reading commands said there was no store).
fn refuse_directory(path: &Path) -> Result<(), StoreError> {
    if path.is_dir() {
        return Err(StoreError::Storage(format!(
            "{} is a directory, not a store: name the store's file (`--store {}`)",
            path.display(),
            path.join("store.sqlite").display()
        )));
    }
    Ok(())
}

/// The checks of opening a store that must already be there: it is a file, and not an empty
/// one (every store is laid out when it is made; SQLite would take an empty file for an empty
/// database and write into it).
fn existing_store_file(path: &Path) -> Result<(), StoreError> {
    refuse_directory(path)?;
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() && meta.len() == 0 => Err(StoreError::Storage(format!(
            "{} is an empty file, not a store (`modelc export` makes one)",
            path.display()
        ))),
        Ok(meta) if meta.is_file() => Ok(()),
        _ => Err(StoreError::NotFound(path.display().to_string())),
    }
}

/// Opens the embedded store at `path` for `access` ([`crate::open`]).
pub(crate) fn open(path: &Path, access: crate::Access) -> Result<Box<dyn Store>, StoreError> {
    use crate::Access;
    Ok(match access {
        Access::Read => Box::new(SqliteStore::open_read_only(path)?),
        Access::Existing => Box::new(SqliteStore::open_existing(path)?),
        Access::Create => Box::new(SqliteStore::open(path)?),
        Access::Partial => Box::new(SqliteStore::open_for_partial(path)?),
        Access::Full if path.exists() => Box::new(SqliteStore::open(path)?),
        Access::Full => Box::new(full::Absent::new(path)),
    })
}

impl SqliteStore {
    /// Opens (creating if needed) the store at `path`, and its directory.
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| StoreError::Storage(format!("cannot create {}: {e}", dir.display())))?;
        }
        refuse_directory(path)?;
        create_private(path)?;
        let db = Connection::open(path).sql()?;
        db.busy_timeout(BUSY_TIMEOUT).sql()?;
        db.pragma_update(None, "synchronous", "NORMAL").sql()?;
        let mut store = SqliteStore { db };
        store.prepare()?;
        Ok(store)
    }

    /// Opens the store at `path` only if it exists: reading commands and partial exports never
    /// create one ([`StoreError::NotFound`]).
    pub fn open_existing(path: &Path) -> Result<SqliteStore, StoreError> {
        existing_store_file(path)?;
        SqliteStore::open(path)
    }

    /// Opens the store at `path` for reading only: nothing is created, migrated or written (a
    /// store of an older layout is refused until a writing command migrates it).
    pub fn open_read_only(path: &Path) -> Result<SqliteStore, StoreError> {
        existing_store_file(path)?;
        let db = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).sql()?;
        db.busy_timeout(BUSY_TIMEOUT).sql()?;
        let schema: Option<i64> = db
            .query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0))
            .optional()
            .map_err(|_| StoreError::Storage("an SQLite database, but not a modelc store".to_owned()))?;
        match schema {
            Some(SCHEMA_VERSION) => Ok(SqliteStore { db }),
            Some(other) => Err(StoreError::Storage(format!(
                "the store has layout version {other}, and this command only reads it: an export migrates it to version {SCHEMA_VERSION}"
            ))),
            None => Err(StoreError::Storage("an SQLite database, but not a modelc store".to_owned())),
        }
    }

    /// What exporting `ir` would change, decided by the export's own checks and merge (`partial`:
    /// a partial export with this request), in one read transaction, with nothing written.
    pub fn plan(&self, ir: &Ir, partial: Option<&PartialRequest>) -> Result<crate::plan::Plan, StoreError> {
        let latest = match self.snapshot(None) {
            Ok(snapshot) => Some(snapshot),
            Err(StoreError::Empty) => None,
            Err(error) => return Err(error),
        };
        let tx = self.db.unchecked_transaction().sql()?;
        // An export may have committed since the snapshot was read: the merge would then read
        // another version than the one compared with.
        if Self::latest(&tx)?.map(|l| l.version) != latest.as_ref().map(|l| l.info.version) {
            return Err(StoreError::Storage("the store changed while the plan was made; run it again".to_owned()));
        }
        let plan = match partial {
            Some(request) => crate::plan::plan_partial(&Current(&tx), latest, ir, request),
            None => crate::plan::plan_full(latest, ir),
        };
        tx.finish().sql()?;
        plan
    }

    /// Opens the store for a partial export: a store that does not exist has no version to build
    /// on, and is not created.
    pub fn open_for_partial(path: &Path) -> Result<SqliteStore, StoreError> {
        match SqliteStore::open_existing(path) {
            Err(StoreError::NotFound(_)) => Err(crate::checks::no_base()),
            other => other,
        }
    }

    /// Lays out an empty database as a store, or checks the layout of an existing one. Nothing
    /// is written to a database that already has tables: another program's database, or a
    /// store of another layout, is refused as it is.
    fn prepare(&mut self) -> Result<(), StoreError> {
        let tables: Vec<String> = column(&self.db, "SELECT name FROM sqlite_master WHERE type = 'table'")?;
        if tables.is_empty() {
            // The page size is fixed once the database is in write-ahead-log mode.
            self.db.pragma_update(None, "page_size", PAGE_SIZE).sql()?;
            self.db.pragma_update(None, "journal_mode", "WAL").sql()?;
            // Two processes may create the store at once: the second waits here, then finds
            // everything in place.
            let tx = self.db.transaction_with_behavior(TransactionBehavior::Immediate).sql()?;
            lay_out(&tx)?;
            tx.commit().sql()?;
            return Ok(());
        }
        if !tables.iter().any(|t| t == "meta") {
            return Err(StoreError::Storage("an SQLite database, but not a modelc store".to_owned()));
        }
        let schema: Option<i64> =
            self.db.query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0)).optional().sql()?;
        match schema {
            Some(SCHEMA_VERSION) => Ok(()),
            Some(old @ 1..=5) => {
                // One transaction: a store is migrated whole or not at all. Layouts before 6
                // lack some of the runtime's tables (made if missing), layouts before 4 the
                // rows' digests, and layouts before 5 the versions' last row numbers.
                let tx = self.db.transaction_with_behavior(TransactionBehavior::Immediate).sql()?;
                tx.execute_batch(deploys::SCHEMA).sql()?;
                if old < 4 {
                    add_digests(&tx)?;
                }
                if old < 5 {
                    add_row_ranges(&tx)?;
                }
                tx.execute("UPDATE meta SET value = ?1 WHERE key = 'schema'", [SCHEMA_VERSION]).sql()?;
                tx.commit().sql()?;
                Ok(())
            }
            Some(other) => Err(StoreError::Storage(format!(
                "the store has layout version {other}; this modelc reads version {SCHEMA_VERSION}"
            ))),
            None => Err(StoreError::Storage("an SQLite database, but not a modelc store".to_owned())),
        }
    }

    /// `PRAGMA integrity_check`: `ok` for a sound database.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        self.db.query_row("PRAGMA integrity_check", [], |r| r.get(0)).sql()
    }

    pub(crate) fn latest(db: &Connection) -> Result<Option<VersionInfo>, StoreError> {
        let latest: Option<u64> =
            db.query_row("SELECT MAX(version) FROM versions", [], |r| r.get::<_, Option<u64>>(0)).sql()?;
        match latest {
            Some(v) => Ok(Some(Self::info(db, v)?)),
            None => Ok(None),
        }
    }

    fn info(db: &Connection, version: u64) -> Result<VersionInfo, StoreError> {
        db.query_row(
            "SELECT version, created, kind, base, source_hash, message, resources, sets FROM versions WHERE version = ?1",
            [version],
            |r| {
                Ok(VersionInfo {
                    version: r.get(0)?,
                    created: r.get(1)?,
                    kind: if r.get::<_, String>(2)? == "partial" { ExportKind::Partial } else { ExportKind::Full },
                    base: r.get(3)?,
                    source_hash: r.get(4)?,
                    message: r.get(5)?,
                    resources: r.get(6)?,
                    sets: r.get(7)?,
                })
            },
        )
        .optional().sql()?
        .ok_or(StoreError::NoSuchVersion(version))
    }

    /// Records a version, once its rows are written: its last row number is the highest now.
    pub(crate) fn insert_version(db: &Connection, info: &VersionInfo) -> Result<(), StoreError> {
        db.execute(
            "INSERT INTO versions (version, created, kind, base, source_hash, message, resources, sets, last_seq)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, (SELECT COALESCE(MAX(seq), 0) FROM resources))",
            params![
                info.version,
                info.created,
                info.kind.as_str(),
                info.base,
                info.source_hash,
                info.message,
                info.resources,
                info.sets
            ],
        )
        .sql()?;
        Ok(())
    }

    /// Closes the current row of `rid` at `version` (and forgets its shared edges).
    pub(crate) fn close_resource(db: &Connection, rid: &str, version: u64) -> Result<(), StoreError> {
        db.prepare_cached("UPDATE resources SET last_version = ?1 WHERE rid = ?2 AND last_version IS NULL")
            .sql()?
            .execute(params![version, rid])
            .sql()?;
        db.prepare_cached("DELETE FROM shared_edges WHERE from_rid = ?1").sql()?.execute([rid]).sql()?;
        Ok(())
    }
}

/// The current state as a partial merge reads it, inside the export's transaction.
struct Current<'a>(&'a Connection);

impl crate::partial::CurrentState for Current<'_> {
    fn latest(&self) -> Result<Option<VersionInfo>, StoreError> {
        SqliteStore::latest(self.0)
    }

    fn current(&self, rid: &str) -> Result<Option<CurrentRow>, StoreError> {
        current_row(self.0, rid)
    }

    fn members(&self, set: &str) -> Result<Vec<String>, StoreError> {
        let mut query =
            self.0.prepare_cached("SELECT rid FROM resources WHERE set_name = ?1 AND last_version IS NULL").sql()?;
        query.query_map([set], |r| r.get(0)).sql()?.collect::<Result<_, _>>().sql()
    }

    fn shared_requirers(&self, rid: &str) -> Result<Vec<String>, StoreError> {
        let mut query = self.0.prepare_cached("SELECT from_rid FROM shared_edges WHERE to_rid = ?1").sql()?;
        query.query_map([rid], |r| r.get(0)).sql()?.collect::<Result<_, _>>().sql()
    }
}

/// Writes what a partial merge decided, as version `version`.
fn apply(db: &Connection, plan: &MergePlan, version: u64) -> Result<(), StoreError> {
    for set in &plan.close_sets {
        db.prepare_cached("UPDATE resources SET last_version = ?1 WHERE set_name = ?2 AND last_version IS NULL")
            .sql()?
            .execute(params![version, set])
            .sql()?;
    }
    let mut rows = RowWriter::new(db, version)?;
    for resource in &plan.insert {
        rows.insert(db, resource)?;
    }
    for resource in &plan.replace {
        SqliteStore::close_resource(db, &resource.id, version)?;
        rows.insert(db, resource)?;
    }
    SqliteStore::insert_version(db, &plan.info)
}

pub(crate) fn current_row(db: &Connection, rid: &str) -> Result<Option<CurrentRow>, StoreError> {
    let row = db
        .prepare_cached("SELECT set_name, hash, data FROM resources WHERE rid = ?1 AND last_version IS NULL")
        .sql()?
        .query_row([rid], |r| Ok((r.get::<_, Option<String>>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?)))
        .optional()
        .sql()?;
    row.map(|(set_name, hash, data)| Ok(CurrentRow { set_name, hash, resource: decode(&data)? })).transpose()
}

fn decode(data: &str) -> Result<Resource, StoreError> {
    serde_json::from_str(data).map_err(|e| StoreError::Storage(format!("a stored resource is unreadable: {e}")))
}

/// Writes the rows of one version, numbered after every row and version before it.
pub(crate) struct RowWriter {
    version: u64,
    next_seq: i64,
}

impl RowWriter {
    pub(crate) fn new(db: &Connection, version: u64) -> Result<RowWriter, StoreError> {
        Ok(RowWriter { version, next_seq: next_seq(db)? })
    }

    /// Inserts a resource row valid from the version, and its shared edges when it is shared.
    pub(crate) fn insert(&mut self, db: &Connection, resource: &Resource) -> Result<(), StoreError> {
        self.insert_encoded(db, resource, &EncodedRow::of(resource)?)
    }

    /// `insert` with the row already encoded.
    pub(crate) fn insert_encoded(
        &mut self,
        db: &Connection,
        resource: &Resource,
        row: &EncodedRow,
    ) -> Result<(), StoreError> {
        let mut insert = db
            .prepare_cached(
                "INSERT INTO resources (seq, rid, set_name, hash, data, first_version, digest)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .sql()?;
        insert
            .execute(params![
                self.next_seq,
                resource.id,
                resource.resource_set,
                row.hash,
                row.data,
                self.version,
                &row.digest[..]
            ])
            .sql()?;
        self.next_seq += 1;
        if resource.resource_set.is_none() {
            let mut edge = db.prepare_cached("INSERT INTO shared_edges (from_rid, to_rid) VALUES (?1, ?2)").sql()?;
            for required in &resource.requires {
                edge.execute(params![resource.id, required]).sql()?;
            }
        }
        Ok(())
    }
}

/// Creates a store's tables in an empty database.
fn lay_out(db: &Connection) -> Result<(), StoreError> {
    db.execute_batch(SCHEMA).sql()?;
    db.execute_batch(deploys::SCHEMA).sql()?;
    db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', ?1)", [SCHEMA_VERSION]).sql()?;
    Ok(())
}

fn stored_digest(value: rusqlite::types::ValueRef<'_>) -> Result<u128, StoreError> {
    let bytes: [u8; 16] = value
        .as_blob()
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| StoreError::Storage("a stored resource has no digest".to_owned()))?;
    Ok(u128::from_be_bytes(bytes))
}

/// Migration to layout 4: the digest column, filled from every row's JSON, and the index of
/// current rows covering it (a full export reads the current ids and digests from the index
/// alone, not the rows).
fn add_digests(db: &Connection) -> Result<(), StoreError> {
    db.execute_batch(
        "ALTER TABLE resources ADD COLUMN digest BLOB;
         DROP INDEX IF EXISTS current_by_rid;",
    )
    .sql()?;
    let rows: Vec<(i64, String)> = db
        .prepare("SELECT seq, data FROM resources")
        .sql()?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .sql()?
        .collect::<Result<_, _>>()
        .sql()?;
    let mut update = db.prepare("UPDATE resources SET digest = ?1 WHERE seq = ?2").sql()?;
    for (seq, data) in rows {
        update.execute(params![&crate::full::row_digest(data.as_bytes()).to_be_bytes()[..], seq]).sql()?;
    }
    db.execute_batch(
        "CREATE INDEX current_by_rid ON resources (rid, digest, last_version) WHERE last_version IS NULL;",
    )
    .sql()?;
    Ok(())
}

/// Migration to layout 5: each version's last row number, and the index of closed rows by the
/// version that closed them in place of the index by first version. SQLite numbered each row
/// above every row that existed when it was written, and those were first seen by versions no
/// newer than its own, so among the rows that remain (a prune deletes some), a version's last
/// row number is the highest number of the rows first seen by it or an older version.
fn add_row_ranges(db: &Connection) -> Result<(), StoreError> {
    db.execute_batch(
        "ALTER TABLE versions ADD COLUMN last_seq INTEGER NOT NULL DEFAULT 0;
         DROP INDEX IF EXISTS by_first_version;
         CREATE INDEX closed_by_version ON resources (last_version) WHERE last_version IS NOT NULL;",
    )
    .sql()?;
    let highest: std::collections::BTreeMap<u64, i64> = db
        .prepare("SELECT first_version, MAX(seq) FROM resources GROUP BY first_version")
        .sql()?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .sql()?
        .collect::<Result<_, _>>()
        .sql()?;
    let versions: Vec<u64> = column(db, "SELECT version FROM versions ORDER BY version")?;
    let mut update = db.prepare("UPDATE versions SET last_seq = ?1 WHERE version = ?2").sql()?;
    let mut last = 0;
    for version in versions {
        last = highest.range(..=version).next_back().map_or(last, |(_, seq)| (*seq).max(last));
        update.execute(params![last, version]).sql()?;
    }
    Ok(())
}

/// Closes the current row number `seq` at `version`, with its shared edges.
fn close_row(db: &Connection, seq: i64, version: u64) -> Result<(), StoreError> {
    db.prepare_cached("UPDATE resources SET last_version = ?1 WHERE seq = ?2")
        .sql()?
        .execute(params![version, seq])
        .sql()?;
    db.prepare_cached("DELETE FROM shared_edges WHERE from_rid = (SELECT rid FROM resources WHERE seq = ?1)")
        .sql()?
        .execute([seq])
        .sql()?;
    Ok(())
}

impl Store for SqliteStore {
    fn versions(&self) -> Result<Vec<VersionInfo>, StoreError> {
        let numbers: Vec<u64> = column(&self.db, "SELECT version FROM versions ORDER BY version")?;
        numbers.into_iter().map(|v| Self::info(&self.db, v)).collect()
    }

    fn snapshot(&self, version: Option<u64>) -> Result<Snapshot, StoreError> {
        // One read transaction: an export committing meanwhile is not half seen.
        let tx = self.db.unchecked_transaction().sql()?;
        let snapshot = snapshot_in(&tx, version)?;
        tx.finish().sql()?;
        Ok(snapshot)
    }

    fn changes(&self, from: u64, to: u64) -> Result<crate::Changes, StoreError> {
        let tx = self.db.unchecked_transaction().sql()?;
        // Both must exist, whichever way round.
        Self::info(&tx, from)?;
        Self::info(&tx, to)?;
        let (older, newer) = (from.min(to), from.max(to));
        let read = |sql: &str, values: &[&dyn rusqlite::ToSql]| -> Result<Vec<Resource>, StoreError> {
            let mut query = tx.prepare(sql).sql()?;
            let rows =
                query.query_map(values, |r| r.get::<_, String>(0)).sql()?.collect::<Result<Vec<_>, _>>().sql()?;
            rows.iter().map(|data| decode(data)).collect()
        };
        // Seen by the older version and closed by the time of the newer one: the index of
        // closed rows by the version that closed them.
        let only_older = read(
            "SELECT data FROM resources INDEXED BY closed_by_version
             WHERE last_version > ?1 AND last_version <= ?2 AND first_version <= ?1 ORDER BY seq",
            &[&older, &newer],
        )?;
        // Written after the older version and still seen by the newer one: the rows numbered
        // between the two versions' last rows.
        let only_newer = read(
            "SELECT data FROM resources WHERE seq > ?3 AND seq <= ?4 AND first_version > ?1 AND first_version <= ?2
             AND (last_version IS NULL OR last_version > ?2) ORDER BY seq",
            &[&older, &newer, &last_seq(&tx, older)?, &last_seq(&tx, newer)?],
        )?;
        tx.finish().sql()?;
        Ok(if from <= to {
            crate::Changes { before: only_older, after: only_newer }
        } else {
            crate::Changes { before: only_newer, after: only_older }
        })
    }

    fn plan(&self, ir: &Ir, partial: Option<&PartialRequest>) -> Result<crate::plan::Plan, StoreError> {
        SqliteStore::plan(self, ir, partial)
    }

    fn export_full_with(
        &mut self,
        ir: &Ir,
        metadata: &Metadata,
        force: bool,
        prefetched: Option<crate::Prefetched>,
    ) -> Result<crate::ExportOutcome, StoreError> {
        self.full_with(ir, metadata, force, prefetched.map(|p| p.0))
    }

    fn export_partial_with(
        &mut self,
        ir: &Ir,
        request: &PartialRequest,
        metadata: &Metadata,
        force: bool,
    ) -> Result<crate::ExportOutcome, StoreError> {
        self.partial(ir, request, metadata, force)
    }

    fn prune(&mut self, keep: u64, dry_run: bool) -> Result<crate::PruneReport, StoreError> {
        self.prune_versions(keep, dry_run)
    }

    fn contents(&self, hashes: &[String]) -> Result<std::collections::HashMap<String, Vec<u8>>, StoreError> {
        SqliteStore::contents(self, hashes)
    }

    fn record_deploy(&mut self, record: &crate::DeployRecord, carryover: &crate::Carryover) -> Result<u64, StoreError> {
        SqliteStore::record_deploy(self, record, carryover)
    }

    fn facts(&self) -> Result<Vec<crate::Fact>, StoreError> {
        SqliteStore::facts(self)
    }

    fn last_deploy(&self) -> Result<Option<crate::DeployRecord>, StoreError> {
        SqliteStore::last_deploy(self)
    }

    fn pending_refreshes(&self, agents: &[String]) -> Result<Vec<String>, StoreError> {
        SqliteStore::pending_refreshes(self, agents)
    }

    fn retry_counts(&self, agents: &[String]) -> Result<Vec<(String, u32)>, StoreError> {
        SqliteStore::retry_counts(self, agents)
    }

    fn deployed_purgeable(&self, agents: &[String]) -> Result<Vec<Resource>, StoreError> {
        SqliteStore::deployed_purgeable(self, agents)
    }

    fn contents_written(
        &self,
        after: Option<u64>,
        upto: u64,
    ) -> Result<std::collections::BTreeMap<String, Vec<u8>>, StoreError> {
        let mut query = self
            .db
            .prepare("SELECT hash, data FROM contents WHERE first_version > ?1 AND first_version <= ?2")
            .sql()?;
        let rows = query.query_map(params![after.unwrap_or(0), upto], |r| Ok((r.get(0)?, r.get(1)?))).sql()?;
        rows.collect::<Result<_, _>>().sql()
    }

    fn import(&mut self, history: &mut dyn crate::copy::History) -> Result<u64, StoreError> {
        self.import_history(history)
    }

    fn about(&self) -> Result<crate::About, StoreError> {
        let versions = self.versions()?;
        Ok(crate::About {
            backend: format!("embedded (SQLite {})", rusqlite::version()),
            layout: SCHEMA_VERSION,
            versions: versions.len() as u64,
            latest: versions.last().map(|v| v.version),
            bytes: self.size()?,
        })
    }
}

impl SqliteStore {
    /// A partial export; unless `force`, one that would store exactly the latest version's
    /// resources stores nothing.
    fn partial(
        &mut self,
        ir: &Ir,
        request: &PartialRequest,
        metadata: &Metadata,
        force: bool,
    ) -> Result<crate::ExportOutcome, StoreError> {
        let tx = self.db.transaction_with_behavior(TransactionBehavior::Immediate).sql()?;
        let version = next_version(&tx)?;
        // Any error returns before the commit: dropping the transaction rolls everything back.
        let plan = crate::partial::merge(&Current(&tx), ir, request, metadata, version)?;
        if let (false, Some(base)) = (force, plan.unchanged.clone()) {
            return Ok(crate::ExportOutcome::Unchanged(base));
        }
        apply(&tx, &plan, version)?;
        let info = plan.info;
        deploys::insert_contents(&tx, &ir.files, version)?;
        crate::failpoint::reached("partial-before-commit");
        tx.commit().sql()?;
        Ok(crate::ExportOutcome::Stored(info))
    }
}

/// The highest row number version `version` can see.
fn last_seq(db: &Connection, version: u64) -> Result<i64, StoreError> {
    db.query_row("SELECT last_seq FROM versions WHERE version = ?1", [version], |r| r.get(0)).sql()
}

/// The number the next row gets: above every row, and above every version's last row number
/// (a prune may have deleted the highest rows), so each version's rows are numbered above those
/// of every older version and `seq <= last_seq` selects what a version can see.
fn next_seq(db: &Connection) -> Result<i64, StoreError> {
    db.query_row(
        "SELECT MAX((SELECT COALESCE(MAX(seq), 0) FROM resources), (SELECT COALESCE(MAX(last_seq), 0) FROM versions)) + 1",
        [],
        |r| r.get(0),
    ).sql()
}

/// A version with its resources (`None`: the latest), read inside the caller's transaction.
pub(crate) fn snapshot_in(tx: &Connection, version: Option<u64>) -> Result<Snapshot, StoreError> {
    let latest = SqliteStore::latest(tx)?;
    let info = match (version, &latest) {
        (Some(v), _) => SqliteStore::info(tx, v)?,
        (None, Some(latest)) => latest.clone(),
        (None, None) => return Err(StoreError::Empty),
    };
    // The latest version's rows are the current ones (a partial index); an older version's
    // are those valid for it, among the rows numbered up to its last one.
    let rows = if latest.is_some_and(|l| l.version == info.version) {
        let mut query = tx.prepare("SELECT data FROM resources WHERE last_version IS NULL ORDER BY seq").sql()?;
        query.query_map([], |r| r.get::<_, String>(0)).sql()?.collect::<Result<Vec<_>, _>>().sql()?
    } else {
        let mut query = tx
            .prepare(
                "SELECT data FROM resources WHERE seq <= ?2 AND first_version <= ?1
             AND (last_version IS NULL OR last_version > ?1) ORDER BY seq",
            )
            .sql()?;
        let last_seq = last_seq(tx, info.version)?;
        query
            .query_map(params![info.version, last_seq], |r| r.get::<_, String>(0))
            .sql()?
            .collect::<Result<Vec<_>, _>>()
            .sql()?
    };
    let resources = rows.iter().map(|data| decode(data)).collect::<Result<Vec<_>, _>>()?;
    Ok(Snapshot { info, resources })
}

/// The number of the next version: one more than the last one ever written.
fn next_version(db: &Connection) -> Result<u64, StoreError> {
    let last: Option<u64> = db.query_row("SELECT MAX(version) FROM versions", [], |r| r.get(0)).sql()?;
    Ok(last.unwrap_or(0) + 1)
}
