//! Moving a history between stores (`modelc store copy`): every version of one store, with its
//! number, time, kind, base, source hash and message, and the file contents it stored, written
//! into another store that holds no version, of either backend. The target writes the whole
//! history in one transaction and reads each version back before it goes on to the next; a
//! version that does not read back exactly as the source holds it (byte for byte as JSON, in
//! the same order) rolls the whole copy back.
//!
//! Each version is written as the source stored it, not as a new full export would: the rows it
//! shares with the version before stay shared and in their place, and the rest are written after
//! them ([`import_plan`]), so every version reads back in the source's order.

use std::collections::BTreeMap;

use modelc_ir::Resource;
use serde::Serialize;

use crate::full::{CurrentDigests, FullPlan};
use crate::{Snapshot, Store, StoreError};

/// One version as a copy moves it: its resources and the file contents first stored with it.
#[derive(Debug, Clone)]
pub struct Imported {
    pub snapshot: Snapshot,
    /// The contents by sha1 (for the first version copied: every content it can name).
    pub contents: BTreeMap<String, Vec<u8>>,
}

/// Where a copy's versions come from, oldest first, and how each is checked once written.
pub trait History {
    /// The next version to write, or `None` at the end.
    fn next_version(&mut self) -> Result<Option<Imported>, StoreError>;
    /// `written` is `expected` as the target reads it back, inside the copy's transaction; an
    /// error rolls the copy back.
    fn verify(&mut self, expected: &Imported, written: &Imported) -> Result<(), StoreError>;
}

/// What a copy moved.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CopyReport {
    /// The versions copied, oldest first.
    pub versions: Vec<u64>,
    /// Resources over all versions (as each version counts them), and file contents.
    pub resources: u64,
    pub contents: u64,
}

/// Copies every version of `from` into `to`, which must hold no version; `to` is unchanged if
/// anything fails.
pub fn copy(from: &dyn Store, to: &mut dyn Store) -> Result<CopyReport, StoreError> {
    let numbers: Vec<u64> = from.versions()?.iter().map(|v| v.version).collect();
    let mut source = Source { store: from, numbers: numbers.iter(), previous: None, report: CopyReport::default() };
    to.import(&mut source)?;
    Ok(source.report)
}

/// The versions of a store, read one at a time as the target asks for them.
struct Source<'a> {
    store: &'a dyn Store,
    numbers: std::slice::Iter<'a, u64>,
    /// The last version handed out.
    previous: Option<u64>,
    report: CopyReport,
}

impl History for Source<'_> {
    fn next_version(&mut self) -> Result<Option<Imported>, StoreError> {
        let Some(&number) = self.numbers.next() else { return Ok(None) };
        let snapshot = self.store.snapshot(Some(number))?;
        let contents = self.store.contents_written(self.previous, number)?;
        self.previous = Some(number);
        Ok(Some(Imported { snapshot, contents }))
    }

    fn verify(&mut self, expected: &Imported, written: &Imported) -> Result<(), StoreError> {
        let version = expected.snapshot.info.version;
        let differs = |what: &str| {
            StoreError::Storage(format!("version {version} does not read back as the source holds it: {what} differ"))
        };
        if written.snapshot.info != expected.snapshot.info {
            return Err(differs("its number, time, kind, base, source hash, message or counts"));
        }
        if written.snapshot.resources.len() != expected.snapshot.resources.len()
            || !written.snapshot.resources.iter().zip(&expected.snapshot.resources).all(|(a, b)| same_json(a, b))
        {
            return Err(differs("its resources"));
        }
        if written.contents != expected.contents {
            return Err(differs("its file contents"));
        }
        self.report.versions.push(version);
        self.report.resources += expected.snapshot.resources.len() as u64;
        self.report.contents += expected.contents.len() as u64;
        Ok(())
    }
}

/// Why a copy is refused: the target already holds versions.
pub(crate) fn not_empty(latest: u64) -> StoreError {
    StoreError::Storage(format!(
        "the target store already holds versions (the latest is {latest}): a history is copied only into a store with none"
    ))
}

/// A copied version must come after every version the target has written.
pub(crate) fn check_number(version: u64, next: u64) -> Result<(), StoreError> {
    if version < next {
        return Err(StoreError::Storage(format!(
            "version {version} cannot follow version {}: the source's numbers must grow",
            next - 1
        )));
    }
    Ok(())
}

/// Byte for byte the same as stored JSON.
fn same_json(a: &Resource, b: &Resource) -> bool {
    match (serde_json::to_vec(a), serde_json::to_vec(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// How a copied version is written over the version before it (`current`, whose row keys grow
/// in its order): its longest leading run of resources that are current rows, unchanged and in
/// the same order, keeps those rows; every other current row is closed, and the rest of the
/// version is written after them. The version then reads back in its own order.
pub(crate) fn import_plan<'a>(current: &CurrentDigests, resources: &'a [Resource]) -> Result<FullPlan<'a>, StoreError> {
    let mut buffer = Vec::new();
    let mut kept = vec![false; current.len()];
    let mut last_key = i64::MIN;
    let mut split = resources.len();
    for (position, resource) in resources.iter().enumerate() {
        let digest = crate::full::resource_digest(resource, &mut buffer)?;
        match current.row(&resource.id) {
            Some((index, key, stored)) if stored == digest && key > last_key => {
                kept[index] = true;
                last_key = key;
            }
            _ => {
                split = position;
                break;
            }
        }
    }
    let mut close: Vec<i64> =
        kept.iter().enumerate().filter(|(_, kept)| !**kept).map(|(index, _)| current.key(index)).collect();
    close.sort_unstable();
    Ok(FullPlan { insert: resources[split..].iter().collect(), close })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::full::testing::{current, resource};

    fn ids<'a>(plan: &FullPlan<'a>) -> Vec<&'a str> {
        plan.insert.iter().map(|r| r.id.as_str()).collect()
    }

    #[test]
    fn the_unchanged_leading_rows_stay_and_the_rest_is_written_after_them() {
        let (a, b, c) = (resource("a", "1"), resource("b", "1"), resource("c", "1"));
        let stored = current(&[(&a, 1), (&b, 2), (&c, 3)]);
        let (b2, d) = (resource("b", "2"), resource("d", "1"));
        let version = vec![a.clone(), c.clone(), b2, d];
        let plan = import_plan(&stored, &version).unwrap();
        assert_eq!(ids(&plan), ["t::T[a,n=b]", "t::T[a,n=d]"], "a and c stay in place; b changed");
        assert_eq!(plan.close, [2]);
    }

    #[test]
    fn an_unchanged_row_out_of_order_is_written_again_to_keep_the_order() {
        let (a, b) = (resource("a", "1"), resource("b", "1"));
        let stored = current(&[(&a, 1), (&b, 2)]);
        let version = vec![b.clone(), a.clone()];
        let plan = import_plan(&stored, &version).unwrap();
        assert_eq!(ids(&plan), ["t::T[a,n=a]"], "b stays first, a is written after it");
        assert_eq!(plan.close, [1]);
    }

    #[test]
    fn after_the_first_new_resource_everything_is_written() {
        let (a, b) = (resource("a", "1"), resource("b", "1"));
        let stored = current(&[(&a, 1), (&b, 2)]);
        let version = vec![resource("z", "1"), a.clone(), b.clone()];
        let plan = import_plan(&stored, &version).unwrap();
        assert_eq!(ids(&plan), ["t::T[a,n=z]", "t::T[a,n=a]", "t::T[a,n=b]"]);
        assert_eq!(plan.close, [1, 2]);
    }
}
