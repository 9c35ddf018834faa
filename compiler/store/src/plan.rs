//! What an export would change, with nothing written (`modelc plan`): the export's own checks
//! and merge decide the verdict, so a plan is refused exactly when the export would be, and the
//! change is the difference between the latest version and the version the export would make.

use modelc_ir::{Ir, Resource};

use crate::diff::{Diff, diff};
use crate::{Metadata, PartialRequest, Snapshot, StoreError, VersionInfo};

/// An export's effect, decided without writing.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Plan {
    /// The version the export would build on or replace (`None`: the store has none).
    pub base: Option<VersionInfo>,
    /// From the base to the version the export would store.
    pub changes: Diff,
}

/// The plan of a full export of `ir` over `latest` (`None`: no version yet): checked as the
/// export checks it, and compared with the latest version.
pub fn plan_full(latest: Option<Snapshot>, ir: &Ir) -> Result<Plan, StoreError> {
    crate::checks::check_full_export(ir)?;
    Ok(compare(latest, ir.resources.clone()))
}

/// The plan of a partial export: the export's merge against the store's current state (the
/// rows of `latest`, the latest version), applied to `latest` in memory.
pub(crate) fn plan_partial(
    current: &dyn crate::partial::CurrentState,
    latest: Option<Snapshot>,
    ir: &Ir,
    request: &PartialRequest,
) -> Result<Plan, StoreError> {
    let next = latest.as_ref().map_or(1, |l| l.info.version + 1);
    let merged = crate::partial::merge(current, ir, request, &Metadata::default(), next)?;
    let (base, before) = split(latest);
    let closed: std::collections::HashSet<&str> = merged.close_sets.iter().map(String::as_str).collect();
    let replaced: std::collections::HashSet<&str> = merged.replace.iter().map(|r| r.id.as_str()).collect();
    let mut after: Vec<Resource> = before
        .iter()
        .filter(|r| !r.resource_set.as_deref().is_some_and(|s| closed.contains(s)) && !replaced.contains(r.id.as_str()))
        .cloned()
        .collect();
    after.extend(merged.insert.iter().cloned());
    after.extend(merged.replace.iter().cloned());
    let from = base.as_ref().map_or(0, |b| b.version);
    Ok(Plan { changes: diff(from, &before, next, &after), base })
}

fn compare(latest: Option<Snapshot>, after: Vec<Resource>) -> Plan {
    let (base, before) = split(latest);
    let from = base.as_ref().map_or(0, |b| b.version);
    Plan { changes: diff(from, &before, from + 1, &after), base }
}

/// The latest version and its resources (none without a version).
fn split(latest: Option<Snapshot>) -> (Option<VersionInfo>, Vec<Resource>) {
    latest.map_or((None, Vec::new()), |snapshot| (Some(snapshot.info), snapshot.resources))
}
