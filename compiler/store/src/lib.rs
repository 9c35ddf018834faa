//! The versioned desired-state store. Every export is a numbered, immutable **version**: the
//! resources of a compile (`modelc_ir::Resource`, with their sets and requires) plus its
//! metadata. A full export replaces everything; a **partial** export builds the next version
//! from the latest one, replacing only the resource sets it holds (spec export §3.3, with the
//! reference's bugs turned into clean rejections; see `docs/store.md`).
//!
//! [`Store`] is the interface, opened by [`open`] from where the store is ([`Locator`]);
//! [`sqlite::SqliteStore`] is the embedded implementation. The
//! layout is temporal: each stored row is valid from the version that wrote it until the version
//! that replaced it, so a partial export touches only the rows of the sets it replaces, and its
//! cost does not grow with the store.
#![allow(clippy::disallowed_methods, reason = "the store keeps its database and timestamps")]

mod checks;
pub mod copy;
pub mod deploys;
pub mod diff;
mod failpoint;
mod full;
mod hash;
mod open;
mod partial;
pub mod plan;
pub mod postgres;
mod row;
pub mod sqlite;
mod time;

use modelc_ir::Resource;
use serde::{Deserialize, Serialize};

pub use checks::check_full_export;
pub use copy::{CopyReport, copy};
pub use deploys::{Carryover, DeployRecord, DeployResult, Fact};
pub use failpoint::FAILPOINT_VAR;
pub use open::{Access, Locator, Prefetched, Watch, open, plan, prefetch, watch};
pub use postgres::{Migrated, PgStore, migrate};
pub use sqlite::SqliteStore;
pub use time::utc_now;

/// `n` random bytes from the operating system (token ids, action ids).
pub fn random_bytes(n: usize) -> Result<Vec<u8>, StoreError> {
    let mut bytes = vec![0; n];
    getrandom::fill(&mut bytes).map_err(|e| StoreError::Storage(format!("no random numbers: {e}")))?;
    Ok(bytes)
}

/// What an export that skips unchanged models did (`export_full_if_changed`,
/// `export_partial_if_changed`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExportOutcome {
    /// It stored this version.
    Stored(VersionInfo),
    /// The resources are exactly those of this version, the latest: nothing was written.
    Unchanged(VersionInfo),
}

/// What `prune` removed (or, in a dry run, would remove).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PruneReport {
    /// The versions kept, oldest first.
    pub kept: Vec<u64>,
    /// The versions removed, oldest first.
    pub removed: Vec<u64>,
    /// Resource rows removed.
    pub rows: u64,
    /// File contents removed: those no resource of a kept version names.
    pub contents: u64,
    /// The size of the store before and after (after: as before, in a dry run).
    pub bytes_before: u64,
    pub bytes_after: u64,
}

/// What a version says about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionInfo {
    pub version: u64,
    /// When it was written (UTC, `2026-11-22T14:39:44Z`).
    pub created: String,
    pub kind: ExportKind,
    /// The version a partial export was built on.
    pub base: Option<u64>,
    /// A hash of the model's source files.
    pub source_hash: String,
    pub message: String,
    pub resources: u64,
    pub sets: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExportKind {
    Full,
    Partial,
}

impl ExportKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ExportKind::Full => "full",
            ExportKind::Partial => "partial",
        }
    }
}

/// What an export records besides the resources.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Metadata {
    pub created: String,
    pub source_hash: String,
    pub message: String,
}

/// One stored version with its resources, in stored order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    pub info: VersionInfo,
    pub resources: Vec<Resource>,
}

/// What differs between two versions ([`Store::changes`]): the resources each holds that the
/// other does not hold exactly so, each side in its version's order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Changes {
    /// Of the first version: removed or changed by the second.
    pub before: Vec<Resource>,
    /// Of the second version: added or changed since the first.
    pub after: Vec<Resource>,
}

/// What a partial export deletes besides the sets it replaces.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PartialRequest {
    /// `--delete-resource-set`: sets to remove.
    pub delete_sets: Vec<String>,
    /// `--soft-delete`: do not delete a set that the export still holds resources for.
    pub soft_delete: bool,
}

/// Why an export was refused. The store is unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub rule: Rule,
    pub message: String,
    /// The resources involved (ids).
    pub resources: Vec<String>,
    /// The sets involved.
    pub sets: Vec<String>,
}

/// The rules a partial export must follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// There is no version to build on.
    NoBase,
    /// A set is both exported and asked to be deleted.
    UpdatedAndDeleted,
    /// A resource would move between sets, or between a set and shared.
    Moved,
    /// A shared resource would change its attributes.
    SharedChanged,
    /// A resource of one set would require a resource of another.
    CrossSet,
    /// A resource would require a resource the new version does not have.
    Dangling,
    /// The export holds two resources with the same id.
    DuplicateId,
    /// The export's resource sets and its resources disagree about who is a member.
    SetMismatch,
    /// `--delete-resource-set` names a set the store does not have.
    UnknownSet,
}

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    Rejected(Rejection),
    NoSuchVersion(u64),
    /// The store has no version yet.
    Empty,
    /// There is no store at this path.
    NotFound(String),
    /// The database could not be read or written.
    Storage(String),
    /// The operation contradicts the store's state (a release older than the latest one).
    Conflict(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Rejected(r) => f.write_str(&r.message),
            StoreError::NoSuchVersion(v) => write!(f, "there is no version {v}"),
            StoreError::Empty => f.write_str("the store has no version yet"),
            StoreError::NotFound(path) => write!(f, "there is no store at {path}: export a model first"),
            StoreError::Storage(message) => write!(f, "the store cannot be used: {message}"),
            StoreError::Conflict(message) => f.write_str(message),
        }
    }
}

/// A versioned store of desired state, and what the runtime keeps beside it: every operation
/// the commands use. Opened by [`open`] from a [`Locator`]; the embedded implementation is
/// [`SqliteStore`], and a server backend (PostgreSQL, for teams) implements the same operations
/// with the same guarantees: each export is one transaction, exports are serialised, versions
/// are immutable, and a refused export changes nothing.
pub trait Store {
    /// Every version, oldest first.
    fn versions(&self) -> Result<Vec<VersionInfo>, StoreError>;
    /// A version with its resources; `None` = the latest.
    fn snapshot(&self, version: Option<u64>) -> Result<Snapshot, StoreError>;
    /// What differs from version `from` to version `to` (either may be the older). Only the rows
    /// written or closed between the two are read, so the cost follows the changes, not the
    /// size of the versions or of the history. `diff::diff` over the two sides gives the same
    /// as over the two whole versions.
    fn changes(&self, from: u64, to: u64) -> Result<Changes, StoreError>;
    /// What exporting `resources` would change (`partial`: as a partial export with this
    /// request), decided by the export's own checks and merge, with nothing written.
    fn plan(&self, resources: &modelc_ir::Ir, partial: Option<&PartialRequest>) -> Result<plan::Plan, StoreError>;
    /// Stores `resources` as a new version that replaces everything. Rows that did not change
    /// are shared with the latest version, not written again. Unless `force`, when the resources
    /// are exactly those of the latest version it writes nothing and says so. `prefetched`: the
    /// store's current rows read beforehand ([`prefetch`]), used only if the store has not
    /// changed since.
    fn export_full_with(
        &mut self,
        resources: &modelc_ir::Ir,
        metadata: &Metadata,
        force: bool,
        prefetched: Option<Prefetched>,
    ) -> Result<ExportOutcome, StoreError>;
    /// A full export that stores a version whatever changed.
    fn export_full(&mut self, resources: &modelc_ir::Ir, metadata: &Metadata) -> Result<VersionInfo, StoreError> {
        match self.export_full_with(resources, metadata, true, None)? {
            ExportOutcome::Stored(info) | ExportOutcome::Unchanged(info) => Ok(info),
        }
    }
    /// A full export that writes nothing when the resources are those of the latest version.
    fn export_full_if_changed(
        &mut self,
        resources: &modelc_ir::Ir,
        metadata: &Metadata,
    ) -> Result<ExportOutcome, StoreError> {
        self.export_full_with(resources, metadata, false, None)
    }
    /// Builds a new version from the latest one: the sets in `resources` replace their old
    /// contents, the other sets are kept, shared resources are added or kept. Unless `force`,
    /// when the new version would hold exactly what the latest one holds it writes nothing and
    /// says so.
    fn export_partial_with(
        &mut self,
        resources: &modelc_ir::Ir,
        request: &PartialRequest,
        metadata: &Metadata,
        force: bool,
    ) -> Result<ExportOutcome, StoreError>;
    /// A partial export that stores a version whatever changed.
    fn export_partial(
        &mut self,
        resources: &modelc_ir::Ir,
        request: &PartialRequest,
        metadata: &Metadata,
    ) -> Result<VersionInfo, StoreError> {
        match self.export_partial_with(resources, request, metadata, true)? {
            ExportOutcome::Stored(info) | ExportOutcome::Unchanged(info) => Ok(info),
        }
    }
    /// A partial export that writes nothing when the new version would be the latest one.
    fn export_partial_if_changed(
        &mut self,
        resources: &modelc_ir::Ir,
        request: &PartialRequest,
        metadata: &Metadata,
    ) -> Result<ExportOutcome, StoreError> {
        self.export_partial_with(resources, request, metadata, false)
    }
    /// Deletes all but the latest `keep` versions (never the one the last deploy applied), the
    /// rows no kept version can see, and the file contents no remaining row names; `dry_run`
    /// says what it would remove and changes nothing.
    fn prune(&mut self, keep: u64, dry_run: bool) -> Result<PruneReport, StoreError>;
    /// The file content stored for each of `hashes` that the store has, by hash.
    fn contents(&self, hashes: &[String]) -> Result<std::collections::HashMap<String, Vec<u8>>, StoreError>;
    /// Records a deploy and what it leaves for the next one, in one transaction; its run number.
    fn record_deploy(&mut self, record: &DeployRecord, carryover: &Carryover) -> Result<u64, StoreError>;
    /// Every fact deploys learnt, by resource id then name.
    fn facts(&self) -> Result<Vec<Fact>, StoreError>;
    /// The most recent deploy, with its results in run order.
    fn last_deploy(&self) -> Result<Option<DeployRecord>, StoreError>;
    /// Receivers of `agents` whose refresh an earlier run could not do.
    fn pending_refreshes(&self, agents: &[String]) -> Result<Vec<String>, StoreError>;
    /// Continuous mode's retry counters of `agents`' resources: `(id, failed runs)`.
    fn retry_counts(&self, agents: &[String]) -> Result<Vec<(String, u32)>, StoreError>;
    /// The purgeable resources (with `purge_on_delete`, true or false) last deployed by `agents`.
    fn deployed_purgeable(&self, agents: &[String]) -> Result<Vec<Resource>, StoreError>;
    /// What the store is: its backend, layout version and size (`modelc store info`).
    fn about(&self) -> Result<About, StoreError>;
    /// The file contents first stored by the versions after `after` (`None`: from the first)
    /// up to `upto`, by hash: what a copy of the history moves with version `upto`.
    fn contents_written(
        &self,
        after: Option<u64>,
        upto: u64,
    ) -> Result<std::collections::BTreeMap<String, Vec<u8>>, StoreError>;
    /// Writes the versions of `history` into this store, which must hold no version, in one
    /// transaction under the exports' lock ([`copy::copy`]): each with its own number and
    /// metadata, read back and verified by `history` before the next. Returns how many.
    fn import(&mut self, history: &mut dyn copy::History) -> Result<u64, StoreError>;
}

/// What `modelc store info` says of a store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct About {
    /// `embedded (SQLite)` or `PostgreSQL <server version>`.
    pub backend: String,
    /// The version of its layout.
    pub layout: i64,
    /// How many versions it holds, and the latest one's number.
    pub versions: u64,
    pub latest: Option<u64>,
    /// Its size in bytes (the database file, or the tables and indexes).
    pub bytes: u64,
}
