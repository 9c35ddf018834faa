//! A full export's plan: which resources are written and which current rows are closed, decided
//! by comparing every exported resource with the current row of its id. A resource whose row is
//! byte-for-byte what it would write again (same JSON, so same set, attributes, requirements and
//! source) keeps that row, shared with the new version; a changed one closes its row and writes a
//! new one; a new one is written; a current row no exported resource claims is closed.
//!
//! The comparison is by digest ([`row_digest`], 128 bits of xxh3 over the row's JSON): stored
//! with each row, so no stored resource is read or decoded. It is plain Rust over what a backend
//! reads ([`CurrentDigests`]) and returns a [`FullPlan`] that the backend applies in the export's
//! transaction (`sqlite/full.rs` does; a server backend applies the same plan).

use modelc_ir::{Ir, Resource};
use rustc_hash::FxHashMap;

use crate::StoreError;

/// The current rows as a full export compares against them: by resource id, the row's key in
/// the backend and the digest of its JSON.
#[derive(Default)]
pub(crate) struct CurrentDigests {
    /// `id_digest` of the resource id → index in `rows`.
    by_id: FxHashMap<Digest, u32>,
    /// (row key, digest of the row's JSON).
    rows: Vec<(i64, Digest)>,
}

/// A 128-bit digest as two words: aligned to 8 bytes, not 16, so the tables of half a million
/// rows take a quarter less room.
type Digest = [u64; 2];

fn split(digest: u128) -> Digest {
    [(digest >> 64) as u64, digest as u64]
}

impl CurrentDigests {
    pub(crate) fn with_capacity(rows: usize) -> CurrentDigests {
        CurrentDigests {
            by_id: FxHashMap::with_capacity_and_hasher(rows, Default::default()),
            rows: Vec::with_capacity(rows),
        }
    }

    /// Adds the current row `key` of resource `rid`, whose JSON has digest `digest`.
    pub(crate) fn push(&mut self, rid: &str, key: i64, digest: u128) {
        let index = u32::try_from(self.rows.len()).unwrap_or(u32::MAX);
        self.by_id.insert(split(id_digest(rid)), index);
        self.rows.push((key, split(digest)));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// The current row of resource `rid`: its index here, its key and its digest.
    pub(crate) fn row(&self, rid: &str) -> Option<(usize, i64, u128)> {
        let index = *self.by_id.get(&split(id_digest(rid)))? as usize;
        let (key, [high, low]) = self.rows[index];
        Some((index, key, (u128::from(high) << 64) | u128::from(low)))
    }

    /// The key of the row at `index`.
    pub(crate) fn key(&self, index: usize) -> i64 {
        self.rows[index].0
    }
}

/// What a full export writes.
pub(crate) struct FullPlan<'a> {
    /// Resources to write, in the export's order: new ones and changed ones.
    pub insert: Vec<&'a Resource>,
    /// Current rows to close, in ascending key order: those of changed and of gone resources.
    pub close: Vec<i64>,
}

impl FullPlan<'_> {
    /// Nothing to write: the export holds exactly the current rows.
    pub(crate) fn is_empty(&self) -> bool {
        self.insert.is_empty() && self.close.is_empty()
    }
}

/// What a full export of `ir` records as version `version`.
pub(crate) fn version_info(version: u64, metadata: &crate::Metadata, ir: &Ir) -> crate::VersionInfo {
    crate::VersionInfo {
        version,
        created: metadata.created.clone(),
        kind: crate::ExportKind::Full,
        base: None,
        source_hash: metadata.source_hash.clone(),
        message: metadata.message.clone(),
        resources: ir.resources.len() as u64,
        sets: ir.sets.iter().filter(|s| !s.resources.is_empty()).count() as u64,
    }
}

/// How one exported resource compares with the current rows.
#[derive(Clone, Copy)]
enum Outcome {
    /// Its current row (this index of `CurrentDigests::rows`) is what it would write.
    Same(u32),
    /// Its current row (this index) differs.
    Changed(u32),
    New,
}

/// Compares every resource of `ir` with `current`. The digests are computed on every core: each
/// one serialises a resource, which is most of the work.
pub(crate) fn plan<'a>(ir: &'a Ir, current: &CurrentDigests) -> Result<FullPlan<'a>, StoreError> {
    let outcomes = if current.is_empty() {
        vec![Outcome::New; ir.resources.len()]
    } else {
        compare_in_parallel(&ir.resources, current)?
    };
    let mut seen = vec![false; current.rows.len()];
    let mut insert = Vec::new();
    let mut close = Vec::new();
    for (resource, outcome) in ir.resources.iter().zip(outcomes) {
        match outcome {
            Outcome::Same(index) => seen[index as usize] = true,
            Outcome::Changed(index) => {
                seen[index as usize] = true;
                close.push(current.rows[index as usize].0);
                insert.push(resource);
            }
            Outcome::New => insert.push(resource),
        }
    }
    close.extend(current.rows.iter().zip(seen).filter(|(_, seen)| !seen).map(|((key, _), _)| *key));
    close.sort_unstable();
    Ok(FullPlan { insert, close })
}

fn compare_in_parallel(resources: &[Resource], current: &CurrentDigests) -> Result<Vec<Outcome>, StoreError> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let chunk = resources.len().div_ceil(threads).max(1);
    let compare = |part: &[Resource]| -> Result<Vec<Outcome>, StoreError> {
        let mut buffer = Vec::new();
        part.iter()
            .map(|resource| {
                let Some(&index) = current.by_id.get(&split(id_digest(&resource.id))) else { return Ok(Outcome::New) };
                let same = current.rows[index as usize].1 == split(resource_digest(resource, &mut buffer)?);
                Ok(if same { Outcome::Same(index) } else { Outcome::Changed(index) })
            })
            .collect()
    };
    let parts: Vec<Result<Vec<Outcome>, StoreError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = resources.chunks(chunk).map(|part| scope.spawn(move || compare(part))).collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(StoreError::Storage("comparing resources failed".to_owned()))))
            .collect()
    });
    let mut outcomes = Vec::with_capacity(resources.len());
    for part in parts {
        outcomes.extend(part?);
    }
    Ok(outcomes)
}

/// The digest rows are compared by: 128 bits of xxh3 over the row's JSON.
pub(crate) fn row_digest(json: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(json)
}

/// `row_digest` of the row `resource` would be written as, serialised into `buffer` (reused from
/// one resource to the next, so that comparing allocates nothing).
pub(crate) fn resource_digest(resource: &Resource, buffer: &mut Vec<u8>) -> Result<u128, StoreError> {
    buffer.clear();
    serde_json::to_writer(&mut *buffer, resource).map_err(|e| StoreError::Storage(e.to_string()))?;
    Ok(row_digest(buffer))
}

/// A resource id as a key (128 bits: two ids never meet in practice).
fn id_digest(rid: &str) -> u128 {
    xxhash_rust::xxh3::xxh3_128(rid.as_bytes())
}

/// Rows for the unit tests of plans (`full`, `copy`).
#[cfg(test)]
pub(crate) mod testing {
    use modelc_ir::Resource;

    use super::{CurrentDigests, resource_digest};

    /// `t::T[a,n=NAME]` with the attribute `v`.
    pub(crate) fn resource(name: &str, value: &str) -> Resource {
        serde_json::from_value(serde_json::json!({
            "id": format!("t::T[a,n={name}]"), "type": "t::T", "agent": "a", "attributes": {"v": value},
            "requires": [], "send_event": false, "receive_events": true, "resource_set": null,
            "state": "available", "source": {"entity": "t::T", "file": "m.cf", "line": 1}
        }))
        .unwrap()
    }

    /// The current rows: each resource with its row key.
    pub(crate) fn current(rows: &[(&Resource, i64)]) -> CurrentDigests {
        let mut current = CurrentDigests::default();
        for (resource, key) in rows {
            current.push(&resource.id, *key, resource_digest(resource, &mut Vec::new()).unwrap());
        }
        current
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{current, resource};
    use super::*;

    #[test]
    fn same_rows_stay_changed_and_gone_ones_close_and_new_ones_are_written() {
        let (a, b, c) = (resource("a", "a"), resource("b", "b"), resource("c", "c"));
        let stored = current(&[(&a, 10), (&b, 11), (&c, 12)]);
        let b2 = resource("b", "B");
        let d = resource("d", "d");
        let ir = Ir::new(vec![d.clone(), b2.clone(), a.clone()], Vec::new());
        let plan = plan(&ir, &stored).unwrap();
        let inserted: Vec<&str> = plan.insert.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(inserted, ["t::T[a,n=d]", "t::T[a,n=b]"], "new and changed, in the export's order");
        assert_eq!(plan.close, [11, 12], "b changed, c is gone; a stays");
    }

    #[test]
    fn an_identical_export_plans_nothing() {
        let (a, b) = (resource("a", "a"), resource("b", "b"));
        let stored = current(&[(&a, 1), (&b, 2)]);
        let ir = Ir::new(vec![b, a], Vec::new());
        assert!(plan(&ir, &stored).unwrap().is_empty(), "order alone is no change");
    }
}
