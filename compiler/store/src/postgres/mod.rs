//! The server store: one PostgreSQL database per environment, for teams.
//!
//! The layout is the embedded store's (`crate::sqlite`): `versions`; `resources`, one row per
//! stored resource state valid for `first_version <= v < last_version`; `shared_edges`;
//! `contents` by hash; and the runtime's tables. Its version is in `meta`, written by
//! `modelc store migrate` ([`migrate`]), which is the only command that creates or changes it:
//! every other one refuses a database that is not migrated, or is newer, or holds tables it
//! does not know, and leaves it untouched.
//!
//! Every export and prune is one transaction that first takes the store's advisory lock
//! ([`LOCK`]): exports are serialised, and each reads the latest version and takes its number
//! under the lock, so a full export and a partial one racing each other never lose the partial.
//! A refused or interrupted export rolls back: its number is not used, and no row of it stays.

mod connect;
pub mod fleet;
mod listen;
mod runs;
mod tls;
mod write;

use std::cell::RefCell;

use modelc_ir::{Ir, Resource};
use postgres::GenericClient;

pub(crate) use connect::{connect, parse};
pub use listen::{CHANNEL as VERSIONS_CHANNEL, Listener, Wakeup};

use crate::partial::CurrentRow;
use crate::{ExportKind, PartialRequest, Snapshot, StoreError, VersionInfo};

/// The layout this code reads and writes: the first one ([`LAYOUT_1`]) and each upgrade of
/// [`UPGRADES`] up to it.
pub const SCHEMA_VERSION: i64 = 4;

/// The advisory lock every export and prune of a store takes in its transaction (one database
/// per store: the key need only be fixed). "modelc" in ASCII.
const LOCK: i64 = 0x6d6f_6465_6c63;

/// The lock that numbers deploy runs, one recorder at a time (apart from the exports' lock, so a
/// deploy's record never waits for an export).
const DEPLOY_LOCK: i64 = LOCK + 1;

/// Every table of the layout: a database holding others is not a store this code may touch.
const TABLES: [&str; 18] = [
    "meta",
    "releases",
    "agent_releases",
    "tokens",
    "agents",
    "actions",
    "resource_states",
    "versions",
    "resources",
    "shared_edges",
    "contents",
    "deploy_runs",
    "deploy_results",
    "pending_refreshes",
    "deployed_purgeable",
    "retry_counts",
    "schema_history",
    "facts",
];

/// The first layout, as `migrate` created it. Never edited: a change is an upgrade, so that a new
/// store and an upgraded one are laid out by the same statements.
const LAYOUT_1: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL);
CREATE TABLE schema_history (version BIGINT PRIMARY KEY, migrated TEXT NOT NULL);
CREATE TABLE versions (
    version BIGINT PRIMARY KEY,
    created TEXT NOT NULL,
    kind TEXT NOT NULL,
    base BIGINT,
    source_hash TEXT NOT NULL,
    message TEXT NOT NULL,
    resources BIGINT NOT NULL,
    sets BIGINT NOT NULL,
    last_seq BIGINT NOT NULL
);
CREATE TABLE resources (
    seq BIGINT PRIMARY KEY,
    rid TEXT NOT NULL,
    set_name TEXT,
    hash TEXT NOT NULL,
    data TEXT NOT NULL,
    first_version BIGINT NOT NULL,
    last_version BIGINT,
    digest BYTEA NOT NULL
);
CREATE UNIQUE INDEX current_by_rid ON resources (rid) INCLUDE (digest) WHERE last_version IS NULL;
CREATE INDEX current_by_set ON resources (set_name) WHERE last_version IS NULL;
CREATE INDEX closed_by_version ON resources (last_version) WHERE last_version IS NOT NULL;
CREATE TABLE shared_edges (from_rid TEXT NOT NULL, to_rid TEXT NOT NULL);
CREATE INDEX shared_edges_to ON shared_edges (to_rid);
CREATE INDEX shared_edges_from ON shared_edges (from_rid);
CREATE TABLE contents (hash TEXT PRIMARY KEY, first_version BIGINT NOT NULL, data BYTEA NOT NULL);
CREATE TABLE deploy_runs (
    run BIGINT PRIMARY KEY,
    version BIGINT,
    source TEXT NOT NULL,
    started TEXT NOT NULL,
    ended TEXT NOT NULL,
    agents TEXT NOT NULL,
    converged BOOLEAN NOT NULL
);
CREATE TABLE deploy_results (
    run BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    rid TEXT NOT NULL,
    agent TEXT NOT NULL,
    result TEXT NOT NULL,
    changes TEXT NOT NULL,
    error TEXT,
    duration_ms DOUBLE PRECISION NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (run, seq)
);
CREATE TABLE pending_refreshes (rid TEXT PRIMARY KEY, agent TEXT NOT NULL);
CREATE TABLE deployed_purgeable (rid TEXT PRIMARY KEY, agent TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE retry_counts (rid TEXT PRIMARY KEY, agent TEXT NOT NULL, failures BIGINT NOT NULL);
";

/// Each layout after the first: its version and the statements that make it from the one before.
const UPGRADES: [(i64, &str); 3] = [
    (
        // 2: the file content a row names (its `hash` attribute), in a column with an index, so
        // that prune finds the contents no row names by index lookups rather than by parsing
        // every row.
        2,
        "ALTER TABLE resources ADD COLUMN content TEXT;
         UPDATE resources SET content = data::jsonb -> 'attributes' ->> 'hash'
           WHERE strpos(data, '\"hash\"') > 0 AND jsonb_typeof(data::jsonb -> 'attributes' -> 'hash') = 'string';
         CREATE INDEX rows_by_content ON resources (content) WHERE content IS NOT NULL;",
    ),
    (
        // 3: what `modelc server` and its agents keep (`fleet.rs`): each row's agent (an agent
        // reads only its own rows), releases and the agents each one changed, API tokens (their
        // hashes), agents' leases, the actions agents report, and each resource's latest one.
        3,
        "ALTER TABLE resources ADD COLUMN agent TEXT;
         UPDATE resources SET agent = data::jsonb ->> 'agent';
         CREATE INDEX rows_by_agent ON resources (agent, first_version);
         CREATE TABLE releases (version BIGINT PRIMARY KEY, released TEXT NOT NULL);
         CREATE TABLE agent_releases (agent TEXT NOT NULL, version BIGINT NOT NULL, PRIMARY KEY (agent, version));
         CREATE TABLE tokens (
             id TEXT PRIMARY KEY,
             hash BYTEA NOT NULL UNIQUE,
             role TEXT NOT NULL,
             agents TEXT[] NOT NULL,
             created TEXT NOT NULL,
             revoked TEXT
         );
         CREATE TABLE agents (
             name TEXT PRIMARY KEY,
             holder TEXT,
             expires TIMESTAMPTZ,
             deploying BIGINT,
             deployed BIGINT,
             seen TEXT NOT NULL
         );
         CREATE TABLE actions (
             seq BIGSERIAL UNIQUE,
             action_id TEXT PRIMARY KEY,
             rid TEXT NOT NULL,
             agent TEXT NOT NULL,
             version BIGINT NOT NULL,
             result TEXT,
             started TEXT NOT NULL,
             finished TEXT,
             error TEXT,
             changes TEXT
         );
         CREATE INDEX actions_by_agent ON actions (agent, seq);
         CREATE TABLE resource_states (
             rid TEXT PRIMARY KEY,
             agent TEXT NOT NULL,
             action_id TEXT NOT NULL,
             version BIGINT NOT NULL,
             result TEXT,
             started TEXT NOT NULL,
             finished TEXT,
             error TEXT
         );
         CREATE INDEX states_by_agent ON resource_states (agent);",
    ),
    (
        // 4: the facts handlers learn (`crate::deploys::Fact`), from local deploys and agents'
        // actions, each with when it was learnt.
        4,
        "CREATE TABLE facts (
             rid TEXT NOT NULL,
             name TEXT NOT NULL,
             value TEXT NOT NULL,
             learnt TIMESTAMPTZ NOT NULL DEFAULT now(),
             PRIMARY KEY (rid, name)
         );",
    ),
];

/// A store in a PostgreSQL database.
pub struct PgStore {
    /// Reads take `&self` (the `Store` interface), and a client needs `&mut` for any query.
    client: RefCell<postgres::Client>,
}

/// What `modelc store migrate` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Migrated {
    /// The database was empty: the layout is now this version.
    Created(i64),
    /// The layout was upgraded from the first version to the second.
    Upgraded(i64, i64),
    /// It already had this layout.
    Current(i64),
}

/// Creates the layout in an empty database, or upgrades an older one, in one transaction.
pub fn migrate(url: &str) -> Result<Migrated, StoreError> {
    migrate_to(url, SCHEMA_VERSION)
}

/// [`migrate`], up to layout `target` only: the upgrade tests make stores of older layouts so.
#[doc(hidden)]
pub fn migrate_to(url: &str, target: i64) -> Result<Migrated, StoreError> {
    let mut client = connect(url)?;
    let mut tx = client.transaction().map_err(storage)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK]).map_err(storage)?;
    let migrated = match layout(&mut tx)? {
        Layout::Empty => {
            tx.batch_execute(LAYOUT_1).map_err(storage)?;
            tx.execute("INSERT INTO meta (key, value) VALUES ('schema', 1)", &[]).map_err(storage)?;
            record_layout(&mut tx, 1)?;
            upgrade(&mut tx, 1, target)?;
            Migrated::Created(target)
        }
        Layout::Store(current) if current == target => Migrated::Current(current),
        Layout::Store(newer) if newer > SCHEMA_VERSION => return Err(newer_layout(newer)),
        Layout::Store(older) if older < target => {
            upgrade(&mut tx, older, target)?;
            Migrated::Upgraded(older, target)
        }
        Layout::Store(current) => Migrated::Current(current),
        Layout::Foreign(why) => return Err(StoreError::Storage(why)),
    };
    tx.commit().map_err(storage)?;
    Ok(migrated)
}

/// Applies the upgrades after layout `from` up to `to`, each recorded.
fn upgrade(tx: &mut postgres::Transaction<'_>, from: i64, to: i64) -> Result<(), StoreError> {
    for (version, statements) in UPGRADES.iter().filter(|(version, _)| *version > from && *version <= to) {
        tx.batch_execute(statements).map_err(storage)?;
        tx.execute("UPDATE meta SET value = $1 WHERE key = 'schema'", &[version]).map_err(storage)?;
        record_layout(tx, *version)?;
    }
    Ok(())
}

fn record_layout(tx: &mut postgres::Transaction<'_>, version: i64) -> Result<(), StoreError> {
    tx.execute("INSERT INTO schema_history (version, migrated) VALUES ($1, $2)", &[&version, &crate::utc_now()])
        .map_err(storage)?;
    Ok(())
}

/// What a database holds.
enum Layout {
    Empty,
    Store(i64),
    /// Tables that are not a modelc store's, or not only: why it is refused.
    Foreign(String),
}

fn layout(client: &mut impl GenericClient) -> Result<Layout, StoreError> {
    let tables: Vec<String> = client
        .query("SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1", &[])
        .map_err(storage)?
        .iter()
        .map(|row| row.get(0))
        .collect();
    if tables.is_empty() {
        return Ok(Layout::Empty);
    }
    let unknown: Vec<&str> = tables.iter().map(String::as_str).filter(|t| !TABLES.contains(t)).collect();
    if !unknown.is_empty() {
        return Ok(Layout::Foreign(format!(
            "the database holds tables that are not a modelc store's ({}): modelc does not touch it",
            unknown.join(", ")
        )));
    }
    if !tables.iter().any(|t| t == "meta") {
        return Ok(Layout::Foreign("the database is not a modelc store (it has no `meta` table)".to_owned()));
    }
    let version: Option<i64> =
        client.query_opt("SELECT value FROM meta WHERE key = 'schema'", &[]).map_err(storage)?.map(|row| row.get(0));
    Ok(match version {
        Some(version) => Layout::Store(version),
        None => Layout::Foreign("the database is not a modelc store (its `meta` names no layout)".to_owned()),
    })
}

fn newer_layout(version: i64) -> StoreError {
    StoreError::Storage(format!(
        "the store has layout version {version}, newer than this modelc's ({SCHEMA_VERSION}): use a newer modelc"
    ))
}

impl PgStore {
    /// Opens the store at `url`, which `modelc store migrate` must have laid out.
    pub fn open(url: &str) -> Result<PgStore, StoreError> {
        let mut client = connect(url)?;
        match layout(&mut client)? {
            Layout::Store(SCHEMA_VERSION) => Ok(PgStore { client: RefCell::new(client) }),
            Layout::Empty => Err(StoreError::Storage(
                "the database is not laid out as a store yet: run `modelc store migrate --store URL` first".to_owned(),
            )),
            Layout::Store(newer) if newer > SCHEMA_VERSION => Err(newer_layout(newer)),
            Layout::Store(older) => Err(StoreError::Storage(format!(
                "the store has layout version {older}: run `modelc store migrate --store URL` to upgrade it to {SCHEMA_VERSION}"
            ))),
            Layout::Foreign(why) => Err(StoreError::Storage(why)),
        }
    }

    /// Whether the connection is gone (the server restarted or went away): the store must be
    /// opened again.
    pub fn is_closed(&self) -> bool {
        self.client.borrow().is_closed()
    }

    /// One read transaction (repeatable read: what it reads is one moment of the store).
    fn read<T>(
        &self,
        f: impl FnOnce(&mut postgres::Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut client = self.client.borrow_mut();
        let mut tx = client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(storage)?;
        let value = f(&mut tx)?;
        tx.commit().map_err(storage)?;
        Ok(value)
    }
}

pub(crate) fn storage(error: postgres::Error) -> StoreError {
    StoreError::Storage(describe(&error))
}

/// A PostgreSQL error as a user reads it: the server's message (and its detail), or the
/// client's.
pub(crate) fn describe(error: &postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{} ({detail})", db.message()),
            None => db.message().to_owned(),
        },
        None => {
            let mut text = error.to_string();
            let mut source = std::error::Error::source(error);
            while let Some(cause) = source {
                text = format!("{text}: {cause}");
                source = cause.source();
            }
            text
        }
    }
}

/// Versions and rows use the layout's signed integers; modelc's numbers are unsigned.
fn signed(number: u64) -> i64 {
    i64::try_from(number).unwrap_or(i64::MAX)
}

fn unsigned(number: i64) -> u64 {
    u64::try_from(number).unwrap_or(0)
}

pub(crate) fn latest(db: &mut impl GenericClient) -> Result<Option<VersionInfo>, StoreError> {
    let latest: Option<i64> = db.query_one("SELECT MAX(version) FROM versions", &[]).map_err(storage)?.get(0);
    latest.map(|v| info(db, unsigned(v))).transpose()
}

/// The columns a version's information is read from, in [`version_info`]'s order.
const VERSION_COLUMNS: &str = "version, created, kind, base, source_hash, message, resources, sets";

fn info(db: &mut impl GenericClient, version: u64) -> Result<VersionInfo, StoreError> {
    let row = db
        .query_opt(&format!("SELECT {VERSION_COLUMNS} FROM versions WHERE version = $1"), &[&signed(version)])
        .map_err(storage)?
        .ok_or(StoreError::NoSuchVersion(version))?;
    Ok(version_info(&row))
}

fn version_info(row: &postgres::Row) -> VersionInfo {
    VersionInfo {
        version: unsigned(row.get(0)),
        created: row.get(1),
        kind: if row.get::<_, String>(2) == "partial" { ExportKind::Partial } else { ExportKind::Full },
        base: row.get::<_, Option<i64>>(3).map(unsigned),
        source_hash: row.get(4),
        message: row.get(5),
        resources: unsigned(row.get(6)),
        sets: unsigned(row.get(7)),
    }
}

fn last_seq(db: &mut impl GenericClient, version: u64) -> Result<i64, StoreError> {
    Ok(db.query_one("SELECT last_seq FROM versions WHERE version = $1", &[&signed(version)]).map_err(storage)?.get(0))
}

fn decode(data: &str) -> Result<Resource, StoreError> {
    serde_json::from_str(data).map_err(|e| StoreError::Storage(format!("a stored resource is unreadable: {e}")))
}

fn decode_rows(rows: &[postgres::Row]) -> Result<Vec<Resource>, StoreError> {
    rows.iter().map(|row| decode(row.get(0))).collect()
}

/// A version with its resources (`None`: the latest), read inside the caller's transaction.
fn snapshot_in(tx: &mut impl GenericClient, version: Option<u64>) -> Result<Snapshot, StoreError> {
    let latest = latest(tx)?;
    let info = match (version, &latest) {
        (Some(v), _) => info(tx, v)?,
        (None, Some(latest)) => latest.clone(),
        (None, None) => return Err(StoreError::Empty),
    };
    let rows = if latest.is_some_and(|l| l.version == info.version) {
        tx.query("SELECT data FROM resources WHERE last_version IS NULL ORDER BY seq", &[])
    } else {
        let last = last_seq(tx, info.version)?;
        tx.query(
            "SELECT data FROM resources WHERE seq <= $2 AND first_version <= $1
             AND COALESCE(last_version, 9223372036854775807) > $1 ORDER BY seq",
            &[&signed(info.version), &last],
        )
    }
    .map_err(storage)?;
    Ok(Snapshot { info, resources: decode_rows(&rows)? })
}

/// The current state as a partial merge reads it, inside the export's transaction.
struct Current<'a, 't>(RefCell<&'a mut postgres::Transaction<'t>>);

impl crate::partial::CurrentState for Current<'_, '_> {
    fn latest(&self) -> Result<Option<VersionInfo>, StoreError> {
        latest(&mut **self.0.borrow_mut())
    }

    fn current(&self, rid: &str) -> Result<Option<CurrentRow>, StoreError> {
        let row = self
            .0
            .borrow_mut()
            .query_opt("SELECT set_name, hash, data FROM resources WHERE rid = $1 AND last_version IS NULL", &[&rid])
            .map_err(storage)?;
        row.map(|row| Ok(CurrentRow { set_name: row.get(0), hash: row.get(1), resource: decode(row.get(2))? }))
            .transpose()
    }

    fn members(&self, set: &str) -> Result<Vec<String>, StoreError> {
        let rows = self
            .0
            .borrow_mut()
            .query("SELECT rid FROM resources WHERE set_name = $1 AND last_version IS NULL", &[&set])
            .map_err(storage)?;
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }

    fn shared_requirers(&self, rid: &str) -> Result<Vec<String>, StoreError> {
        let rows = self
            .0
            .borrow_mut()
            .query("SELECT from_rid FROM shared_edges WHERE to_rid = $1", &[&rid])
            .map_err(storage)?;
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }
}

impl crate::Store for PgStore {
    fn contents_written(
        &self,
        after: Option<u64>,
        upto: u64,
    ) -> Result<std::collections::BTreeMap<String, Vec<u8>>, StoreError> {
        self.read(|tx| {
            let rows = tx
                .query(
                    "SELECT hash, data FROM contents WHERE first_version > $1 AND first_version <= $2",
                    &[&signed(after.unwrap_or(0)), &signed(upto)],
                )
                .map_err(storage)?;
            Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
        })
    }

    fn import(&mut self, history: &mut dyn crate::copy::History) -> Result<u64, StoreError> {
        write::import(self.client.get_mut(), history)
    }

    fn about(&self) -> Result<crate::About, StoreError> {
        self.read(|tx| {
            let server: String = tx.query_one("SHOW server_version", &[]).map_err(storage)?.get(0);
            let row = tx.query_one("SELECT COUNT(*), MAX(version) FROM versions", &[]).map_err(storage)?;
            let latest: Option<i64> = row.get(1);
            Ok(crate::About {
                backend: format!("PostgreSQL {server}"),
                layout: SCHEMA_VERSION,
                versions: unsigned(row.get(0)),
                latest: latest.map(unsigned),
                bytes: runs::size(tx)?,
            })
        })
    }

    fn versions(&self) -> Result<Vec<VersionInfo>, StoreError> {
        self.read(|tx| {
            let rows =
                tx.query(&format!("SELECT {VERSION_COLUMNS} FROM versions ORDER BY version"), &[]).map_err(storage)?;
            Ok(rows.iter().map(version_info).collect())
        })
    }

    fn snapshot(&self, version: Option<u64>) -> Result<Snapshot, StoreError> {
        self.read(|tx| snapshot_in(tx, version))
    }

    fn changes(&self, from: u64, to: u64) -> Result<crate::Changes, StoreError> {
        self.read(|tx| {
            info(tx, from)?;
            info(tx, to)?;
            let (older, newer) = (signed(from.min(to)), signed(from.max(to)));
            let only_older = tx
                .query(
                    "SELECT data FROM resources WHERE last_version > $1 AND last_version <= $2 AND first_version <= $1
                     ORDER BY seq",
                    &[&older, &newer],
                )
                .map_err(storage)?;
            let (older_seq, newer_seq) = (last_seq(tx, unsigned(older))?, last_seq(tx, unsigned(newer))?);
            let only_newer = tx
                .query(
                    // `COALESCE`, not `last_version IS NULL OR …`: that would tempt the planner to
                    // combine the partial index of every current row with the row range.
                    "SELECT data FROM resources WHERE seq > $3 AND seq <= $4 AND first_version > $1 AND first_version <= $2
                     AND COALESCE(last_version, 9223372036854775807) > $2 ORDER BY seq",
                    &[&older, &newer, &older_seq, &newer_seq],
                )
                .map_err(storage)?;
            let (only_older, only_newer) = (decode_rows(&only_older)?, decode_rows(&only_newer)?);
            Ok(if from <= to {
                crate::Changes { before: only_older, after: only_newer }
            } else {
                crate::Changes { before: only_newer, after: only_older }
            })
        })
    }

    fn plan(&self, ir: &Ir, partial: Option<&PartialRequest>) -> Result<crate::plan::Plan, StoreError> {
        // One repeatable-read transaction: the base and the rows the merge reads are one moment
        // of the store, whatever commits meanwhile.
        self.read(|tx| {
            let base = match snapshot_in(tx, None) {
                Ok(snapshot) => Some(snapshot),
                Err(StoreError::Empty) => None,
                Err(error) => return Err(error),
            };
            match partial {
                Some(request) => crate::plan::plan_partial(&Current(RefCell::new(tx)), base, ir, request),
                None => crate::plan::plan_full(base, ir),
            }
        })
    }

    fn export_full_with(
        &mut self,
        ir: &Ir,
        metadata: &crate::Metadata,
        force: bool,
        _prefetched: Option<crate::Prefetched>,
    ) -> Result<crate::ExportOutcome, StoreError> {
        write::full(self.client.get_mut(), ir, metadata, force)
    }

    fn export_partial_with(
        &mut self,
        ir: &Ir,
        request: &PartialRequest,
        metadata: &crate::Metadata,
        force: bool,
    ) -> Result<crate::ExportOutcome, StoreError> {
        write::partial(self.client.get_mut(), ir, request, metadata, force)
    }

    fn prune(&mut self, keep: u64, dry_run: bool) -> Result<crate::PruneReport, StoreError> {
        runs::prune(self.client.get_mut(), keep, dry_run)
    }

    fn contents(&self, hashes: &[String]) -> Result<std::collections::HashMap<String, Vec<u8>>, StoreError> {
        self.read(|tx| runs::contents(tx, hashes))
    }

    fn record_deploy(&mut self, record: &crate::DeployRecord, carryover: &crate::Carryover) -> Result<u64, StoreError> {
        runs::record_deploy(self.client.get_mut(), record, carryover)
    }

    fn facts(&self) -> Result<Vec<crate::Fact>, StoreError> {
        self.read(runs::facts)
    }

    fn last_deploy(&self) -> Result<Option<crate::DeployRecord>, StoreError> {
        self.read(runs::last_deploy)
    }

    fn pending_refreshes(&self, agents: &[String]) -> Result<Vec<String>, StoreError> {
        self.read(|tx| {
            let rows = tx
                .query(
                    "SELECT rid FROM pending_refreshes WHERE agent = ANY($1) ORDER BY array_position($1, agent), rid",
                    &[&agents],
                )
                .map_err(storage)?;
            Ok(rows.iter().map(|row| row.get(0)).collect())
        })
    }

    fn retry_counts(&self, agents: &[String]) -> Result<Vec<(String, u32)>, StoreError> {
        self.read(|tx| {
            let rows = tx
                .query("SELECT rid, failures FROM retry_counts WHERE agent = ANY($1) ORDER BY array_position($1, agent), rid", &[&agents])
                .map_err(storage)?;
            Ok(rows.iter().map(|row| (row.get(0), u32::try_from(row.get::<_, i64>(1)).unwrap_or(u32::MAX))).collect())
        })
    }

    fn deployed_purgeable(&self, agents: &[String]) -> Result<Vec<Resource>, StoreError> {
        self.read(|tx| {
            let rows = tx
                .query(
                    "SELECT data FROM deployed_purgeable WHERE agent = ANY($1) ORDER BY array_position($1, agent), rid",
                    &[&agents],
                )
                .map_err(storage)?;
            rows.iter()
                .map(|row| {
                    serde_json::from_str(row.get(0))
                        .map_err(|e| StoreError::Storage(format!("a deployed resource is unreadable: {e}")))
                })
                .collect()
        })
    }
}
