//! Exports into PostgreSQL: the backend-neutral plans (`crate::full`, `crate::partial`) applied
//! in one transaction that holds the store's lock. New rows go in with one
//! `COPY … FROM STDIN (FORMAT binary)`, not a statement per row.

use std::cell::RefCell;

use modelc_ir::{Ir, Resource};
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::Type;
use postgres::{GenericClient, Transaction};

use super::{Current, LOCK, latest, signed, storage};
use crate::copy::{History, Imported};
use crate::full::CurrentDigests;
use crate::row::EncodedRow;
use crate::{ExportOutcome, Metadata, PartialRequest, StoreError, VersionInfo};

/// Begins an export's transaction and takes the store's lock: from here on, the latest version
/// is the one the export builds on, and its number is the next one.
fn begin(client: &mut postgres::Client) -> Result<Transaction<'_>, StoreError> {
    let mut tx = client.transaction().map_err(storage)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK]).map_err(storage)?;
    Ok(tx)
}

/// One more than the last version ever written.
fn next_version(tx: &mut Transaction<'_>) -> Result<u64, StoreError> {
    let last: Option<i64> = tx.query_one("SELECT MAX(version) FROM versions", &[]).map_err(storage)?.get(0);
    Ok(super::unsigned(last.unwrap_or(0)) + 1)
}

pub(super) fn full(
    client: &mut postgres::Client,
    ir: &Ir,
    metadata: &Metadata,
    force: bool,
) -> Result<ExportOutcome, StoreError> {
    let mut tx = begin(client)?;
    let current = current_digests(&mut tx)?;
    // The checks run while the resources are compared, and end before anything is written.
    let (checked, plan) = std::thread::scope(|scope| {
        let check = scope.spawn(|| crate::checks::check_full_export(ir));
        let plan = crate::full::plan(ir, &current);
        (check.join().unwrap_or_else(|_| Err(StoreError::Storage("checking the export failed".to_owned()))), plan)
    });
    checked?;
    let plan = plan?;
    let version = next_version(&mut tx)?;
    let latest = latest(&mut tx)?;
    if let (true, false, Some(latest)) = (plan.is_empty(), force, latest) {
        return Ok(ExportOutcome::Unchanged(latest));
    }
    for &row in &plan.close {
        close_row(&mut tx, row, version)?;
    }
    let first_rows = current.is_empty() && !plan.insert.is_empty();
    // Into an empty table, the indexes are built once after the rows rather than grown row by
    // row (each a sort instead of a random insertion per row: several times faster).
    let set_aside = if first_rows { set_aside_indexes(&mut tx)? } else { None };
    insert_rows(&mut tx, &plan.insert, version)?;
    if let Some(indexes) = set_aside {
        indexes.rebuild(&mut tx)?;
    }
    if first_rows {
        // The planner's statistics for the first rows, at once rather than at autovacuum's next
        // round: without them it misjudges the indexes' selectivity for a while. A small sample
        // is enough for that; these rows count as changes since this analysis, so autovacuum's
        // next round analyses the table with its full sample.
        tx.batch_execute("SET LOCAL default_statistics_target = 10; ANALYZE resources").map_err(storage)?;
    }
    let info = crate::full::version_info(version, metadata, ir);
    insert_version(&mut tx, &info)?;
    insert_contents(&mut tx, &ir.files, version)?;
    announce(&mut tx, version)?;
    crate::failpoint::reached("full-before-commit");
    tx.commit().map_err(storage)?;
    Ok(ExportOutcome::Stored(info))
}

pub(super) fn partial(
    client: &mut postgres::Client,
    ir: &Ir,
    request: &PartialRequest,
    metadata: &Metadata,
    force: bool,
) -> Result<ExportOutcome, StoreError> {
    let mut tx = begin(client)?;
    let version = next_version(&mut tx)?;
    let plan = crate::partial::merge(&Current(RefCell::new(&mut tx)), ir, request, metadata, version)?;
    if let (false, Some(base)) = (force, plan.unchanged.clone()) {
        return Ok(ExportOutcome::Unchanged(base));
    }
    for set in &plan.close_sets {
        tx.execute(
            "UPDATE resources SET last_version = $1 WHERE set_name = $2 AND last_version IS NULL",
            &[&signed(version), set],
        )
        .map_err(storage)?;
    }
    for resource in &plan.replace {
        close_resource(&mut tx, &resource.id, version)?;
    }
    let rows: Vec<&Resource> = plan.insert.iter().chain(&plan.replace).collect();
    insert_rows(&mut tx, &rows, version)?;
    insert_version(&mut tx, &plan.info)?;
    insert_contents(&mut tx, &ir.files, version)?;
    announce(&mut tx, version)?;
    crate::failpoint::reached("partial-before-commit");
    tx.commit().map_err(storage)?;
    Ok(ExportOutcome::Stored(plan.info))
}

/// Writes a copied history (`modelc store copy`) in one transaction under the store's lock,
/// each version read back and verified before the next.
pub(super) fn import(client: &mut postgres::Client, history: &mut dyn History) -> Result<u64, StoreError> {
    let mut tx = begin(client)?;
    if let Some(latest) = latest(&mut tx)? {
        return Err(crate::copy::not_empty(latest.version));
    }
    let mut copied = 0;
    while let Some(version) = history.next_version()? {
        let info = &version.snapshot.info;
        crate::copy::check_number(info.version, next_version(&mut tx)?)?;
        let current = current_digests(&mut tx)?;
        let plan = crate::copy::import_plan(&current, &version.snapshot.resources)?;
        drop(current);
        for &row in &plan.close {
            close_row(&mut tx, row, info.version)?;
        }
        insert_rows(&mut tx, &plan.insert, info.version)?;
        insert_version(&mut tx, info)?;
        let hashes: Vec<&str> = version.contents.keys().map(String::as_str).collect();
        let data: Vec<&[u8]> = version.contents.values().map(Vec::as_slice).collect();
        insert_content_rows(&mut tx, &hashes, &data, info.version)?;
        let hashes: Vec<String> = version.contents.keys().cloned().collect();
        let written = Imported {
            snapshot: super::snapshot_in(&mut tx, Some(info.version))?,
            contents: super::runs::contents(&mut tx, &hashes)?.into_iter().collect(),
        };
        history.verify(&version, &written)?;
        announce(&mut tx, info.version)?;
        copied += 1;
    }
    tx.commit().map_err(storage)?;
    Ok(copied)
}

/// Tells the store's listeners (`deploy --watch`) of `version`, when the transaction commits.
fn announce(tx: &mut Transaction<'_>, version: u64) -> Result<(), StoreError> {
    tx.execute("SELECT pg_notify($1, $2)", &[&super::listen::CHANNEL, &version.to_string()]).map_err(storage)?;
    Ok(())
}

/// The current rows' ids and digests, from the index that covers them.
fn current_digests(tx: &mut Transaction<'_>) -> Result<CurrentDigests, StoreError> {
    let rows = tx.query("SELECT seq, rid, digest FROM resources WHERE last_version IS NULL", &[]).map_err(storage)?;
    let mut current = CurrentDigests::with_capacity(rows.len());
    for row in &rows {
        let digest: &[u8] = row.get(2);
        let digest: [u8; 16] =
            digest.try_into().map_err(|_| StoreError::Storage("a stored resource has no digest".to_owned()))?;
        current.push(row.get(1), row.get(0), u128::from_be_bytes(digest));
    }
    Ok(current)
}

/// The secondary indexes of `resources`, dropped inside an export's transaction while it fills
/// the empty table: their definitions are read from the catalog, so the layout (`mod.rs`) stays
/// their one home, and they are made again exactly before the transaction commits.
struct SetAsideIndexes {
    definitions: Vec<String>,
}

/// Drops the secondary indexes of `resources` if it holds no row at all; `None` otherwise.
///
/// Dropping takes the table's exclusive lock until the export commits: readers of the (empty)
/// table wait for it. Nothing else waits on the exports' lock while holding the table's, so
/// this cannot deadlock.
fn set_aside_indexes(tx: &mut Transaction<'_>) -> Result<Option<SetAsideIndexes>, StoreError> {
    let empty: bool = tx.query_one("SELECT NOT EXISTS (SELECT 1 FROM resources)", &[]).map_err(storage)?.get(0);
    if !empty {
        return Ok(None);
    }
    let rows = tx
        .query(
            "SELECT x.indexrelid::regclass::text, pg_get_indexdef(x.indexrelid) FROM pg_index x
             WHERE x.indrelid = 'resources'::regclass AND NOT x.indisprimary ORDER BY 1",
            &[],
        )
        .map_err(storage)?;
    let mut definitions = Vec::with_capacity(rows.len());
    for row in &rows {
        // The name as `regclass` writes it: quoted, and qualified where the search path needs it.
        let name: String = row.get(0);
        tx.batch_execute(&format!("DROP INDEX {name}")).map_err(storage)?;
        definitions.push(row.get(1));
    }
    Ok(Some(SetAsideIndexes { definitions }))
}

impl SetAsideIndexes {
    fn rebuild(self, tx: &mut Transaction<'_>) -> Result<(), StoreError> {
        // Each build sorts every row once: in memory, not in temporary files. Exports run one
        // at a time (the exports' lock), so this is taken once.
        tx.batch_execute("SET LOCAL maintenance_work_mem = '256MB'").map_err(storage)?;
        for definition in &self.definitions {
            tx.batch_execute(definition).map_err(storage)?;
        }
        Ok(())
    }
}

/// Closes the row `seq` at `version`, with its shared edges.
fn close_row(tx: &mut Transaction<'_>, seq: i64, version: u64) -> Result<(), StoreError> {
    let rid: String = tx
        .query_one("UPDATE resources SET last_version = $1 WHERE seq = $2 RETURNING rid", &[&signed(version), &seq])
        .map_err(storage)?
        .get(0);
    tx.execute("DELETE FROM shared_edges WHERE from_rid = $1", &[&rid]).map_err(storage)?;
    Ok(())
}

/// Closes the current row of `rid` at `version`, with its shared edges.
fn close_resource(tx: &mut Transaction<'_>, rid: &str, version: u64) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE resources SET last_version = $1 WHERE rid = $2 AND last_version IS NULL",
        &[&signed(version), &rid],
    )
    .map_err(storage)?;
    tx.execute("DELETE FROM shared_edges WHERE from_rid = $1", &[&rid]).map_err(storage)?;
    Ok(())
}

/// Inserts `resources` as rows valid from `version`, numbered after every row and version
/// before them, with one binary `COPY`; and the shared ones' edges.
fn insert_rows(tx: &mut Transaction<'_>, resources: &[&Resource], version: u64) -> Result<(), StoreError> {
    if resources.is_empty() {
        return Ok(());
    }
    let mut seq: i64 = tx
        .query_one(
            "SELECT GREATEST((SELECT COALESCE(MAX(seq), 0) FROM resources), (SELECT COALESCE(MAX(last_seq), 0) FROM versions)) + 1",
            &[],
        )
        .map_err(storage)?
        .get(0);
    let version = signed(version);
    {
        let sink = tx
            .copy_in(
                "COPY resources (seq, rid, set_name, hash, data, first_version, digest, content, agent) FROM STDIN (FORMAT binary)",
            )
            .map_err(storage)?;
        let types = [
            Type::INT8,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::INT8,
            Type::BYTEA,
            Type::TEXT,
            Type::TEXT,
        ];
        let mut writer = BinaryCopyInWriter::new(sink, &types);
        for resource in resources {
            let row = EncodedRow::of(resource)?;
            let digest: &[u8] = &row.digest;
            // The file content it names, as `fs::File` names it (prune keeps what rows name).
            let content = resource.attributes.get("hash").and_then(|hash| hash.as_str());
            writer
                .write(&[
                    &seq,
                    &resource.id,
                    &resource.resource_set,
                    &row.hash,
                    &row.data,
                    &version,
                    &digest,
                    &content,
                    &resource.agent,
                ])
                .map_err(storage)?;
            seq += 1;
        }
        writer.finish().map_err(storage)?;
    }
    let shared: Vec<&&Resource> =
        resources.iter().filter(|r| r.resource_set.is_none() && !r.requires.is_empty()).collect();
    if !shared.is_empty() {
        let sink = tx.copy_in("COPY shared_edges (from_rid, to_rid) FROM STDIN (FORMAT binary)").map_err(storage)?;
        let mut writer = BinaryCopyInWriter::new(sink, &[Type::TEXT, Type::TEXT]);
        for resource in shared {
            for required in &resource.requires {
                writer.write(&[&resource.id, required]).map_err(storage)?;
            }
        }
        writer.finish().map_err(storage)?;
    }
    Ok(())
}

/// Records a version once its rows are written: its last row number is the highest now.
fn insert_version(tx: &mut impl GenericClient, info: &VersionInfo) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO versions (version, created, kind, base, source_hash, message, resources, sets, last_seq)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, (SELECT COALESCE(MAX(seq), 0) FROM resources))",
        &[
            &signed(info.version),
            &info.created,
            &info.kind.as_str(),
            &info.base.map(signed),
            &info.source_hash,
            &info.message,
            &signed(info.resources),
            &signed(info.sets),
        ],
    )
    .map_err(storage)?;
    Ok(())
}

/// Stores the content table of an export (each text once, by its sha1).
fn insert_contents(
    tx: &mut impl GenericClient,
    files: &indexmap::IndexMap<String, String>,
    version: u64,
) -> Result<(), StoreError> {
    if files.is_empty() {
        return Ok(());
    }
    let hashes: Vec<&str> = files.keys().map(String::as_str).collect();
    let data: Vec<&[u8]> = files.values().map(|text| text.as_bytes()).collect();
    insert_content_rows(tx, &hashes, &data, version)
}

/// Stores each content once by its hash, as first stored by `version`.
fn insert_content_rows(
    tx: &mut impl GenericClient,
    hashes: &[&str],
    data: &[&[u8]],
    version: u64,
) -> Result<(), StoreError> {
    if hashes.is_empty() {
        return Ok(());
    }
    tx.execute(
        "INSERT INTO contents (hash, first_version, data) SELECT hash, $1, data FROM UNNEST($2::text[], $3::bytea[])
         AS f(hash, data) ON CONFLICT (hash) DO NOTHING",
        &[&signed(version), &hashes, &data],
    )
    .map_err(storage)?;
    Ok(())
}
