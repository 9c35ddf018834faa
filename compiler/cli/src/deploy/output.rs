//! The end of a run: the summary line, or the JSON report.

use super::*;

pub(super) fn print_summary(io: &mut Io<'_>, report: &RunReport, dry_run: bool) {
    let order = [
        Outcome::Changed,
        Outcome::WouldChange,
        Outcome::Unchanged,
        Outcome::NotEvaluated,
        Outcome::WouldFail,
        Outcome::Failed,
        Outcome::Blocked,
        Outcome::Skipped,
        Outcome::Guarded,
        Outcome::NoHandler,
        Outcome::Undeployable,
        Outcome::Interrupted,
        Outcome::NotHandled,
    ];
    let counts: Vec<String> = order
        .iter()
        .filter_map(|o| {
            let n = report.count(*o);
            (n > 0).then(|| format!("{n} {}", if *o == Outcome::NotHandled { "not handled here" } else { o.as_str() }))
        })
        .collect();
    let verdict = match (report.converged(), dry_run) {
        (true, false) => "converged",
        (true, true) => "dry run, nothing changed",
        (false, false) => "not converged",
        (false, true) => "dry run, nothing changed; a real run would not converge",
    };
    let counts = if counts.is_empty() { "no resources".to_owned() } else { counts.join(", ") };
    let took = if report.duration_ms < 1000.0 {
        format!("{:.1} ms", report.duration_ms)
    } else {
        format!("{:.2} s", report.duration_ms / 1000.0)
    };
    let _ = writeln!(io.stderr, "{verdict}: {counts} in {took}");
}

/// The resources the model no longer has that stay on the machine (they are not purged on
/// delete), and how to remove them.
pub(super) fn print_left_behind(io: &mut Io<'_>, plan: &Plan, dry_run: bool) {
    if plan.left_behind.is_empty() {
        return;
    }
    let one = plan.left_behind.len() == 1;
    let stay = match (dry_run, one) {
        (true, _) => "would stay",
        (false, true) => "stays",
        (false, false) => "stay",
    };
    let _ = writeln!(
        io.stderr,
        "note: {} removed from the model {stay} on this machine: {} not set `purge_on_delete`",
        modelc_diagnostics::count(plan.left_behind.len() as u64, "resource"),
        if one { "it does" } else { "they do" },
    );
    for id in &plan.left_behind {
        let _ = writeln!(io.stderr, "  {}", modelc_diagnostics::terminal::escape(id));
    }
    let _ = writeln!(io.stderr, "  {}", modelc_ir::HOW_TO_PURGE);
}

pub(super) fn print_json(
    io: &mut Io<'_>,
    desired: &Desired,
    plan: &Plan,
    report: &RunReport,
    agents: &[String],
    dry_run: bool,
) {
    let resources: Vec<serde_json::Value> = report
        .resources
        .iter()
        .map(|r| {
            let mut value = serde_json::to_value(r).unwrap_or_default();
            if let Some(map) = value.as_object_mut() {
                map.insert("agent".into(), plan.resources[r.index].agent.clone().into());
            }
            value
        })
        .collect();
    let mut summary = serde_json::Map::new();
    for outcome in Outcome::ALL {
        summary.insert(outcome.as_str().to_owned(), report.count(outcome).into());
    }
    let document = serde_json::json!({
        "source": desired.source,
        "version": desired.version,
        "dry_run": dry_run,
        "agents": agents,
        "converged": report.converged(),
        "duration_ms": report.duration_ms,
        "summary": summary,
        "pending_refreshes": report.pending_refreshes,
        "left_behind": plan.left_behind,
        "notifications": report.notifications,
        "resources": resources,
    });
    let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(&document).unwrap_or_default());
}
