//! A partial export (spec export §3.3): the next version is the latest one with the sets of the
//! partial model replaced whole, the deleted sets removed, the other sets kept, and shared
//! resources added or kept. Everything is checked before anything is written, and every rule
//! the reference breaks is a rejection here (see `docs/store.md`):
//!
//! * a resource may not move between sets, nor between a set and shared (the reference ignores
//!   a move from shared into a set and fails with an HTTP 500 on the reverse);
//! * a shared resource may not change its attributes;
//! * no resource of a set may require a resource of another set, whether that set is in the
//!   partial model or only in the store (the reference skips this check when no resource of the
//!   partial model existed before);
//! * every requirement must name a resource of the new version;
//! * a set may not be both exported and deleted.
//!
//! Cost: lookups by id and by set, so the work grows with the sets touched, not with the store.
//!
//! The merge is pure: it reads the current state through [`CurrentState`] and returns a
//! [`MergePlan`] that the storage layer applies in the export's transaction (`sqlite/mod.rs` does;
//! a server backend applies the same plan).

use std::collections::{BTreeSet, HashMap, HashSet};

use indexmap::IndexSet;

use modelc_ir::{Ir, Resource};

use crate::checks::{self, reject};
use crate::{ExportKind, Metadata, PartialRequest, Rule, StoreError, VersionInfo};

/// A resource's current row: its set, its attribute hash and its stored form.
pub(crate) struct CurrentRow {
    pub set_name: Option<String>,
    pub hash: String,
    pub resource: Resource,
}

/// What a partial merge reads of the store's current (latest) state.
pub(crate) trait CurrentState {
    /// The latest version.
    fn latest(&self) -> Result<Option<VersionInfo>, StoreError>;
    /// The current row of a resource.
    fn current(&self, rid: &str) -> Result<Option<CurrentRow>, StoreError>;
    /// The ids of a set's current members.
    fn members(&self, set: &str) -> Result<Vec<String>, StoreError>;
    /// The shared resources that currently require `rid`.
    fn shared_requirers(&self, rid: &str) -> Result<Vec<String>, StoreError>;
}

/// What a partial export writes, decided before anything is written.
pub(crate) struct MergePlan {
    /// Sets whose current rows are closed.
    pub close_sets: Vec<String>,
    /// New rows.
    pub insert: Vec<Resource>,
    /// Resources whose current row is closed and replaced by this one.
    pub replace: Vec<Resource>,
    /// The new version.
    pub info: VersionInfo,
    /// The base, when the new version would hold exactly its resources.
    pub unchanged: Option<VersionInfo>,
}

fn describe_set(set: Option<&str>) -> String {
    set.map_or_else(|| "shared (no set)".to_owned(), |s| format!("set `{s}`"))
}

pub(crate) fn merge(
    db: &dyn CurrentState,
    ir: &Ir,
    request: &PartialRequest,
    metadata: &Metadata,
    version: u64,
) -> Result<MergePlan, StoreError> {
    let Some(base) = db.latest()? else {
        return Err(checks::no_base());
    };
    // The sets the partial model holds resources for are replaced; its empty sets and the
    // ones named with --delete-resource-set are deleted.
    let updated: BTreeSet<&str> = ir.resources.iter().filter_map(|r| r.resource_set.as_deref()).collect();
    let explicit: BTreeSet<&str> = request.delete_sets.iter().map(String::as_str).collect();
    let both: Vec<String> = explicit.intersection(&updated).map(|s| (*s).to_owned()).collect();
    if !both.is_empty() && !request.soft_delete {
        return Err(reject(
            Rule::UpdatedAndDeleted,
            format!(
                "{} both exported and marked for deletion (use --soft-delete to keep sets that still have resources)",
                match both.as_slice() {
                    [one] => format!("resource set `{one}` is"),
                    many => format!(
                        "resource sets {} are",
                        many.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
                    ),
                }
            ),
            Vec::new(),
            both,
        ));
    }
    let empty = ir.sets.iter().filter(|s| s.resources.is_empty()).map(|s| s.name.as_str());
    // A set named for deletion that the store does not have is a typo more often than not: the
    // reference ignores it, modelc refuses it.
    let unknown: Vec<String> = explicit
        .iter()
        .filter(|s| !updated.contains(*s))
        .map(|s| db.members(s).map(|members| (s, members.is_empty())))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .filter(|(_, none)| *none)
        .map(|(s, _)| (*s).to_owned())
        .collect();
    if !unknown.is_empty() {
        let names = unknown.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ");
        return Err(reject(
            Rule::UnknownSet,
            format!("--delete-resource-set names {names}, which version {} does not have", base.version),
            Vec::new(),
            unknown,
        ));
    }
    let deleted: BTreeSet<&str> = explicit.iter().copied().chain(empty).filter(|s| !updated.contains(s)).collect();
    let replaced: BTreeSet<&str> = updated.union(&deleted).copied().collect();

    let payload = checks::by_id(ir)?;
    // Where each payload resource is now, and the shared ones that are already stored.
    let mut existing_shared: HashMap<&str, CurrentRow> = HashMap::new();
    for resource in &ir.resources {
        let Some(current) = db.current(&resource.id)? else { continue };
        if current.set_name != resource.resource_set {
            let (from, to) = (current.set_name.as_deref(), resource.resource_set.as_deref());
            return Err(reject(
                Rule::Moved,
                format!(
                    "resource `{}` cannot move from {} to {} in a partial export; export the full model to move it",
                    resource.id,
                    describe_set(from),
                    describe_set(to)
                ),
                vec![resource.id.clone()],
                [from, to].into_iter().flatten().map(str::to_owned).collect(),
            ));
        }
        if resource.resource_set.is_none() {
            let hash = crate::hash::attribute_hash(resource);
            if hash != current.hash {
                let changes = crate::diff::attribute_changes(
                    &crate::hash::compared_fields(&current.resource),
                    &crate::hash::compared_fields(resource),
                );
                let changes: Vec<String> =
                    changes.iter().map(|(name, (old, new))| format!("`{name}` {old} -> {new}")).collect();
                return Err(reject(
                    Rule::SharedChanged,
                    format!(
                        "shared resource `{}` (in no set) cannot be changed by a partial export: {} (from version {})",
                        resource.id,
                        changes.join(", "),
                        base.version
                    ),
                    vec![resource.id.clone()],
                    Vec::new(),
                ));
            }
            existing_shared.insert(&resource.id, current);
        }
    }
    // The old members of the replaced sets; those the payload does not hold again disappear.
    let mut old_members: Vec<(String, String)> = Vec::new();
    let mut replaced_in_base = 0u64;
    for set in &replaced {
        let members = db.members(set)?;
        if !members.is_empty() {
            replaced_in_base += 1;
        }
        old_members.extend(members.into_iter().map(|m| ((*set).to_owned(), m)));
    }
    let old_member_ids: HashSet<&str> = old_members.iter().map(|(_, rid)| rid.as_str()).collect();
    let removed: BTreeSet<&str> =
        old_members.iter().map(|(_, rid)| rid.as_str()).filter(|rid| !payload.contains_key(rid)).collect();
    // Requirements: each must name a resource of the new version, and never another set's.
    for resource in &ir.resources {
        for required in &resource.requires {
            let target_set = match payload.get(required.as_str()) {
                Some(target) => target.resource_set.clone(),
                None => match db.current(required)? {
                    Some(row) if !row.set_name.as_deref().is_some_and(|s| replaced.contains(s)) => row.set_name,
                    _ => return Err(checks::dangling(resource, required, Some(base.version))),
                },
            };
            checks::same_set_or_shared(resource, required, target_set.as_deref())?;
        }
    }
    // Shared resources kept from the base (and not in this export) that required what
    // disappears lose those edges, and only those (the reference drops every edge into a
    // replaced set, even to resources exported again).
    let mut pointing: BTreeSet<String> = BTreeSet::new();
    for rid in &removed {
        pointing.extend(db.shared_requirers(rid)?);
    }

    // Checks passed: what to write.
    let close_sets: Vec<String> = replaced.iter().map(|s| (*s).to_owned()).collect();
    let closed = old_members.len() as u64;
    let mut insert = Vec::new();
    let mut replace = Vec::new();
    for resource in &ir.resources {
        match (&resource.resource_set, existing_shared.get(resource.id.as_str())) {
            (Some(_), _) | (None, None) => insert.push(resource.clone()),
            (None, Some(current)) => {
                // Same attributes (checked). Its requirements on the replaced sets are the new
                // ones: the partial model says what it needs of them. Those on anything else
                // are kept.
                let mut requires: IndexSet<&str> = current
                    .resource
                    .requires
                    .iter()
                    .map(String::as_str)
                    .filter(|r| !old_member_ids.contains(r))
                    .collect();
                requires.extend(resource.requires.iter().map(String::as_str));
                let mut merged = resource.clone();
                merged.requires = requires.into_iter().map(str::to_owned).collect();
                if merged != current.resource {
                    replace.push(merged);
                }
                pointing.remove(&resource.id);
            }
        }
    }
    for rid in &pointing {
        let Some(current) = db.current(rid)? else { continue };
        let mut cleaned = current.resource;
        cleaned.requires.retain(|r| !removed.contains(r.as_str()));
        replace.push(cleaned);
    }
    let info = VersionInfo {
        version,
        created: metadata.created.clone(),
        kind: ExportKind::Partial,
        base: Some(base.version),
        source_hash: metadata.source_hash.clone(),
        message: metadata.message.clone(),
        resources: (base.resources + insert.len() as u64).saturating_sub(closed),
        sets: (base.sets + updated.len() as u64).saturating_sub(replaced_in_base),
    };
    // Unchanged: nothing goes, nothing shared changes, and every resource written again is
    // its current row (same set, attributes and requirements).
    let mut unchanged =
        replace.is_empty() && removed.is_empty() && info.resources == base.resources && info.sets == base.sets;
    for resource in &insert {
        if !unchanged {
            break;
        }
        unchanged = db.current(&resource.id)?.is_some_and(|row| row.resource == *resource);
    }
    let unchanged = unchanged.then(|| base.clone());
    Ok(MergePlan { close_sets, insert, replace, info, unchanged })
}
