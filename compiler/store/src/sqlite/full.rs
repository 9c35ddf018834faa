//! A full export into SQLite: the current rows' digests are read from the index that covers
//! them, the comparison (`crate::full`) decides what to write, and the writes are batched:
//! prepared statements in one transaction, with the rows' JSON encoded on another thread while
//! this one inserts. A store that does not exist yet is built whole in a file beside it, without
//! a journal, and put in place when it is complete ([`SqliteStore::export_full_at`]).

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use modelc_ir::{Ir, Resource};
use rusqlite::{Connection, TransactionBehavior};

use super::{RowWriter, SqliteStore, deploys};
use crate::full::{CurrentDigests, FullPlan};
use crate::sqlite::Sql as _;
use crate::{ExportOutcome, Metadata, StoreError, VersionInfo};

/// The indexes over current rows, dropped while a first export fills an empty table and built
/// after it (one sort each, instead of a random insertion per row).
const CURRENT_INDEXES: [(&str, &str); 2] = [
    ("current_by_rid", "resources (rid, digest, last_version) WHERE last_version IS NULL"),
    ("current_by_set", "resources (set_name) WHERE last_version IS NULL"),
];

/// Rows encoded per batch handed from the encoding thread to the writing one.
const BATCH: usize = 2048;

/// The current rows' digests, read before the export (on another thread while the model
/// compiles). The export uses them only if the store's latest version is still the one they
/// were read at: current rows change only with a new version.
pub(crate) struct Prefetched {
    /// The latest version and its last row number when the digests were read.
    at: (VersionInfo, i64),
    digests: CurrentDigests,
}

impl Prefetched {
    /// Reads the current rows' digests of the store at `path`, if it exists and has the current
    /// layout; opened read-only, so nothing is created or migrated. `None` otherwise: the export
    /// then reads them itself.
    pub(crate) fn read(path: &Path) -> Option<Prefetched> {
        let mut store = SqliteStore::open_read_only(path).ok()?;
        let tx = store.db.transaction().ok()?;
        let at = latest_with_last_seq(&tx).ok()??;
        let digests = current_digests(&tx).ok()?;
        Some(Prefetched { at, digests })
    }
}

/// The embedded store where there is none yet, opened for a full export ([`crate::Access::Full`]):
/// it reads as a store with no version, and a full export builds it whole
/// ([`SqliteStore::export_full_at`]), so a refused one creates nothing.
pub(crate) struct Absent {
    path: PathBuf,
}

impl Absent {
    pub(crate) fn new(path: &Path) -> Absent {
        Absent { path: path.to_owned() }
    }

    fn not_found(&self) -> StoreError {
        StoreError::NotFound(self.path.display().to_string())
    }
}

impl crate::Store for Absent {
    fn versions(&self) -> Result<Vec<VersionInfo>, StoreError> {
        Ok(Vec::new())
    }

    fn snapshot(&self, _version: Option<u64>) -> Result<crate::Snapshot, StoreError> {
        Err(StoreError::Empty)
    }

    fn changes(&self, from: u64, _to: u64) -> Result<crate::Changes, StoreError> {
        Err(StoreError::NoSuchVersion(from))
    }

    fn plan(&self, ir: &Ir, partial: Option<&crate::PartialRequest>) -> Result<crate::plan::Plan, StoreError> {
        match partial {
            None => crate::plan::plan_full(None, ir),
            Some(_) => Err(crate::checks::no_base()),
        }
    }

    fn export_full_with(
        &mut self,
        ir: &Ir,
        metadata: &Metadata,
        force: bool,
        prefetched: Option<crate::Prefetched>,
    ) -> Result<ExportOutcome, StoreError> {
        SqliteStore::export_full_at(&self.path, ir, metadata, force, prefetched)
    }

    fn export_partial_with(
        &mut self,
        _ir: &Ir,
        _request: &crate::PartialRequest,
        _metadata: &Metadata,
        _force: bool,
    ) -> Result<ExportOutcome, StoreError> {
        Err(crate::checks::no_base())
    }

    fn prune(&mut self, _keep: u64, _dry_run: bool) -> Result<crate::PruneReport, StoreError> {
        Err(self.not_found())
    }

    fn contents(&self, _hashes: &[String]) -> Result<std::collections::HashMap<String, Vec<u8>>, StoreError> {
        Ok(std::collections::HashMap::new())
    }

    fn record_deploy(&mut self, record: &crate::DeployRecord, carryover: &crate::Carryover) -> Result<u64, StoreError> {
        SqliteStore::open(&self.path)?.record_deploy(record, carryover)
    }

    fn facts(&self) -> Result<Vec<crate::Fact>, StoreError> {
        Ok(Vec::new())
    }

    fn last_deploy(&self) -> Result<Option<crate::DeployRecord>, StoreError> {
        Ok(None)
    }

    fn pending_refreshes(&self, _agents: &[String]) -> Result<Vec<String>, StoreError> {
        Ok(Vec::new())
    }

    fn retry_counts(&self, _agents: &[String]) -> Result<Vec<(String, u32)>, StoreError> {
        Ok(Vec::new())
    }

    fn deployed_purgeable(&self, _agents: &[String]) -> Result<Vec<Resource>, StoreError> {
        Ok(Vec::new())
    }

    fn about(&self) -> Result<crate::About, StoreError> {
        Err(self.not_found())
    }

    fn contents_written(
        &self,
        _after: Option<u64>,
        _upto: u64,
    ) -> Result<std::collections::BTreeMap<String, Vec<u8>>, StoreError> {
        Ok(std::collections::BTreeMap::new())
    }

    fn import(&mut self, history: &mut dyn crate::copy::History) -> Result<u64, StoreError> {
        SqliteStore::import_at(&self.path, history)
    }
}

/// The latest version with its last row number.
fn latest_with_last_seq(db: &Connection) -> Result<Option<(VersionInfo, i64)>, StoreError> {
    let Some(latest) = SqliteStore::latest(db)? else { return Ok(None) };
    let last_seq = super::last_seq(db, latest.version)?;
    Ok(Some((latest, last_seq)))
}

impl SqliteStore {
    /// A full export to the store at `path`, which is created if there is none. A new store is
    /// built whole in a temporary file beside `path`, without a journal (nothing else can see
    /// it), synced, and then linked into place only if `path` still does not exist: a crash
    /// leaves no store rather than half of one, and another exporter that created the store
    /// meanwhile wins (this export then goes into its store, as if it had waited its turn). A
    /// refused export creates nothing.
    ///
    /// `prefetched`: the current rows' digests if they were read beforehand
    /// ([`Prefetched::read`]); used only if the store has not changed since.
    pub fn export_full_at(
        path: &Path,
        ir: &Ir,
        metadata: &Metadata,
        force: bool,
        prefetched: Option<crate::Prefetched>,
    ) -> Result<ExportOutcome, StoreError> {
        let prefetched = prefetched.map(|p| p.0);
        if path.exists() {
            return SqliteStore::open(path)?.full_with(ir, metadata, force, prefetched);
        }
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)
            .map_err(|e| StoreError::Storage(format!("cannot create {}: {e}", dir.display())))?;
        remove_abandoned_builds(path);
        let temporary = build_path(path);
        // The build is thrown away if the export is refused, so it need not wait for the checks.
        let built = std::thread::scope(|scope| {
            let check = scope.spawn(|| crate::checks::check_full_export(ir));
            let built = build(&temporary, ir, metadata);
            joined(check)?;
            built
        });
        let linked = built.map(|info| {
            crate::failpoint::reached("new-store-before-publish");
            (std::fs::hard_link(&temporary, path), info)
        });
        let _ = std::fs::remove_file(&temporary);
        match linked? {
            (Ok(()), info) => {
                // The new name is durable once the directory is.
                if let Ok(dir) = std::fs::File::open(dir) {
                    let _ = dir.sync_all();
                }
                Ok(ExportOutcome::Stored(info))
            }
            // Another exporter created the store first, or the file system has no hard links:
            // export into the store at `path` as usual.
            (Err(_), _) => SqliteStore::open(path)?.full_with(ir, metadata, force, None),
        }
    }

    /// A full export into this store, in one transaction. `Unchanged`, with nothing written,
    /// when nothing changed and `force` is false.
    pub(crate) fn full_with(
        &mut self,
        ir: &Ir,
        metadata: &Metadata,
        force: bool,
        prefetched: Option<Prefetched>,
    ) -> Result<ExportOutcome, StoreError> {
        let tx = self.db.transaction_with_behavior(TransactionBehavior::Immediate).sql()?;
        // Holding the write lock, the latest version is what the export builds on.
        let current = match prefetched {
            Some(prefetched) if latest_with_last_seq(&tx)?.as_ref() == Some(&prefetched.at) => prefetched.digests,
            _ => current_digests(&tx)?,
        };
        // The checks run while the resources are compared, and end before anything is written:
        // a refused export leaves the store's files exactly as they were.
        let result = std::thread::scope(|scope| {
            let check = scope.spawn(|| crate::checks::check_full_export(ir));
            write_full(&tx, ir, metadata, force, current, move || joined(check))
        })?;
        if let ExportOutcome::Stored(_) = result {
            crate::failpoint::reached("full-before-commit");
            tx.commit().sql()?;
        }
        // Otherwise dropping the transaction writes nothing.
        Ok(result)
    }
}

/// The outcome of the export's checks, run on another thread.
fn joined(check: std::thread::ScopedJoinHandle<'_, Result<(), StoreError>>) -> Result<(), StoreError> {
    check.join().unwrap_or_else(|_| Err(StoreError::Storage("checking the export failed".to_owned())))
}

/// Compares and writes, inside the caller's transaction; `checked` (the export's checks) must
/// pass before anything is written.
fn write_full(
    db: &Connection,
    ir: &Ir,
    metadata: &Metadata,
    force: bool,
    current: CurrentDigests,
    checked: impl FnOnce() -> Result<(), StoreError>,
) -> Result<ExportOutcome, StoreError> {
    let version = super::next_version(db)?;
    let latest = SqliteStore::latest(db)?;
    let plan = crate::full::plan(ir, &current);
    drop(current);
    checked()?;
    let plan = plan?;
    if let (true, false, Some(latest)) = (plan.is_empty(), force, latest) {
        return Ok(ExportOutcome::Unchanged(latest));
    }
    apply(db, &plan, version)?;
    let info = crate::full::version_info(version, metadata, ir);
    SqliteStore::insert_version(db, &info)?;
    deploys::insert_contents(db, &ir.files, version)?;
    Ok(ExportOutcome::Stored(info))
}

/// Writes a full export's plan as version `version`.
pub(super) fn apply(db: &Connection, plan: &FullPlan<'_>, version: u64) -> Result<(), StoreError> {
    for &row in &plan.close {
        super::close_row(db, row, version)?;
    }
    let empty: bool = db.query_row("SELECT NOT EXISTS (SELECT 1 FROM resources)", [], |r| r.get(0)).sql()?;
    if empty {
        for (name, _) in CURRENT_INDEXES {
            db.execute_batch(&format!("DROP INDEX IF EXISTS {name}")).sql()?;
        }
    }
    insert_rows(db, &plan.insert, version)?;
    if empty {
        for (name, definition) in CURRENT_INDEXES {
            db.execute_batch(&format!("CREATE INDEX {name} ON {definition}")).sql()?;
        }
    }
    Ok(())
}

/// Inserts `resources` as rows valid from `version`; their JSON, digests and attribute hashes
/// are encoded on a second thread, a batch ahead of the inserts.
fn insert_rows(db: &Connection, resources: &[&Resource], version: u64) -> Result<(), StoreError> {
    std::thread::scope(|scope| {
        let (sender, batches) = mpsc::sync_channel::<Result<Vec<super::EncodedRow>, StoreError>>(4);
        scope.spawn(move || {
            for part in resources.chunks(BATCH) {
                let batch = part.iter().map(|r| super::EncodedRow::of(r)).collect();
                if sender.send(batch).is_err() {
                    return; // The writer stopped at an error.
                }
            }
        });
        let mut rows = RowWriter::new(db, version)?;
        let mut done = 0;
        for batch in batches {
            for row in batch? {
                rows.insert_encoded(db, resources[done], &row)?;
                done += 1;
            }
        }
        Ok(())
    })
}

/// Every current row: its id, row number and digest, read from the index that covers them (the
/// rows' JSON is not read).
pub(super) fn current_digests(db: &Connection) -> Result<CurrentDigests, StoreError> {
    let count: usize = db
        .query_row("SELECT COUNT(*) FROM resources INDEXED BY current_by_rid WHERE last_version IS NULL", [], |r| {
            r.get(0)
        })
        .sql()?;
    let mut current = CurrentDigests::with_capacity(count);
    let mut query = db
        .prepare("SELECT seq, rid, digest FROM resources INDEXED BY current_by_rid WHERE last_version IS NULL")
        .sql()?;
    let mut cursor = query.query([]).sql()?;
    while let Some(row) = cursor.next().sql()? {
        let rid = row.get_ref(1).sql()?.as_str().map_err(|e| StoreError::Storage(e.to_string()))?;
        current.push(rid, row.get(0).sql()?, super::stored_digest(row.get_ref(2).sql()?)?);
    }
    Ok(current)
}

/// Builds a new store holding `ir` as version 1 in the file `path`, synced to disk.
fn build(path: &Path, ir: &Ir, metadata: &Metadata) -> Result<VersionInfo, StoreError> {
    let _ = std::fs::remove_file(path);
    super::create_private(path)?;
    let mut db = Connection::open(path).sql()?;
    // Nothing else can open this file until it is linked into place, and a failed build is
    // deleted: the journal would only double the writes.
    db.pragma_update(None, "journal_mode", "OFF").sql()?;
    db.pragma_update(None, "synchronous", "OFF").sql()?;
    db.pragma_update(None, "page_size", super::PAGE_SIZE).sql()?;
    let tx = db.transaction().sql()?;
    super::lay_out(&tx)?;
    let info = match write_full(&tx, ir, metadata, true, CurrentDigests::default(), || Ok(()))? {
        ExportOutcome::Stored(info) | ExportOutcome::Unchanged(info) => info,
    };
    tx.commit().sql()?;
    // The store is used in write-ahead-log mode, which its header records.
    db.pragma_update(None, "journal_mode", "WAL").sql()?;
    db.close().map_err(|(_, e)| StoreError::Storage(e.to_string()))?;
    std::fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| StoreError::Storage(format!("cannot sync {}: {e}", path.display())))?;
    Ok(info)
}

/// A temporary file of this process to build the new store `path` in: `NAME.new-PID-N`, where N
/// tells apart the builds of one process's threads.
pub(super) fn build_path(path: &Path) -> PathBuf {
    static BUILDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let build = BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!("{name}.new-{}-{build}", std::process::id()))
}

/// Removes the temporary files of builds whose process is gone (killed before it linked its
/// store into place). Where processes cannot be looked up (no `/proc`), they are left.
fn remove_abandoned_builds(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else { return };
    if !Path::new("/proc/self").exists() {
        return;
    }
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let prefix = format!("{}.new-", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let pid = file.strip_prefix(&prefix).and_then(|rest| rest.split('-').next()?.parse::<u32>().ok());
        let Some(pid) = pid else { continue };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
