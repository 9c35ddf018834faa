//! What the store records of a run, and what the run leaves for the next one.

use super::*;

/// The results of a run as the store records them (the resources this run handled), each
/// with its agent, which `agent_of` finds.
pub(super) fn deploy_results<'r>(
    report: &'r RunReport,
    agent_of: impl Fn(&'r ResourceReport) -> &'r str,
) -> Vec<DeployResult> {
    report
        .resources
        .iter()
        .filter(|r| r.result != Outcome::NotHandled)
        .map(|r| DeployResult {
            id: r.id.clone(),
            agent: agent_of(r).to_owned(),
            result: r.result.as_str().to_owned(),
            changes: serde_json::to_value(&r.changes).unwrap_or_default(),
            error: r.error.clone(),
            duration_ms: r.duration_ms,
            source: r.source.clone(),
        })
        .collect()
}

/// The run as the store records it, and what it leaves for the next run.
pub(super) fn record(
    desired: &Desired,
    plan: &Plan,
    report: &RunReport,
    agents: &[String],
    started: String,
    ended: String,
) -> (DeployRecord, Carryover) {
    let results = deploy_results(report, |r| plan.resources[r.index].agent.as_str());
    let record = DeployRecord {
        run: 0,
        version: desired.version,
        source: desired.source.clone(),
        started,
        ended,
        agents: agents.to_vec(),
        converged: report.converged(),
        results,
    };
    let in_version: HashSet<&str> = desired.ir.resources.iter().map(|r| r.id.as_str()).collect();
    let mut purgeable = Vec::new();
    for report in &report.resources {
        let resource = &plan.resources[report.index];
        if plan.dispositions[report.index] != Disposition::Deploy {
            continue;
        }
        if in_version.contains(resource.id.as_str()) {
            // Every purgeable resource is remembered, whether or not it is purged on delete:
            // the next run purges those that are, and says that the others stay.
            if resource.remembered_after_deploy() {
                purgeable.push(resource.clone());
            }
        } else if !matches!(report.result, Outcome::Changed | Outcome::Unchanged) {
            // A purge that did not happen is tried again next time.
            let mut original = resource.clone();
            original.attributes.insert("purged".to_owned(), serde_json::Value::Bool(false));
            purgeable.push(original);
        }
    }
    let pending_refreshes = report
        .pending_refreshes
        .iter()
        .filter_map(|id| plan.resources.iter().find(|r| r.id == *id).map(|r| (id.clone(), r.agent.clone())))
        .collect();
    (record, Carryover { pending_refreshes, purgeable, retry_counts: Vec::new(), facts: facts(report) })
}

/// The facts the run's handlers learnt, for the store to keep.
pub(super) fn facts(report: &RunReport) -> Vec<Fact> {
    report
        .resources
        .iter()
        .flat_map(|r| {
            r.facts.iter().map(|(name, value)| Fact { id: r.id.clone(), name: name.clone(), value: value.clone() })
        })
        .collect()
}
