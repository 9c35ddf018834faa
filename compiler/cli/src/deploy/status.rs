//! `modelc status`: the last recorded run, and what did not converge.

use super::*;

/// `modelc status`: the last run, and its resources that did not converge.
pub(crate) fn status(store: Option<&Locator>, format: Format, color: bool, io: &mut Io<'_>) -> u8 {
    let store = crate::export::store_locator(store, None, &io.cwd);
    let last = match modelc_store::open(&store, Access::Existing).and_then(|s| s.last_deploy()) {
        Ok(last) => last,
        Err(error) => return crate::export::store_failure(io, format, color, &error, &store),
    };
    if let Some(path) = store.file() {
        warn_if_readable(path, format, io);
    }
    let Some(run) = last else {
        if format == Format::Json {
            let _ = writeln!(io.stdout, "null");
        } else {
            let _ = writeln!(io.stdout, "no deploy has been recorded in {store}");
        }
        return EXIT_OK;
    };
    let problems: Vec<&DeployResult> = run
        .results
        .iter()
        .filter(|r| !matches!(r.result.as_str(), "changed" | "unchanged" | "would-change" | "not-evaluated"))
        .collect();
    if format == Format::Json {
        let _ =
            writeln!(io.stdout, "{}", serde_json::to_string_pretty(&status_json(&run, &problems)).unwrap_or_default());
        return if run.converged { EXIT_OK } else { EXIT_MODEL_ERRORS };
    }
    let count = |word: &str| run.results.iter().filter(|r| r.result == word).count();
    let _ = writeln!(
        io.stdout,
        "run {} of {} ({}), {} → {}, agents {}: {}",
        run.run,
        run.source,
        run.version.map_or_else(|| "no stored version".to_owned(), |v| format!("version {v}")),
        run.started,
        run.ended,
        run.agents.join(", "),
        if run.converged { "converged" } else { "not converged" }
    );
    let _ = writeln!(
        io.stdout,
        "  {} changed, {} unchanged, {} failed, {} blocked, {} skipped, {} without handler, {} undeployable",
        count("changed"),
        count("unchanged"),
        count("failed"),
        count("blocked"),
        count("skipped"),
        count("no-handler"),
        count("undeployable")
    );
    if !problems.is_empty() {
        let _ = writeln!(io.stdout, "not converged:");
        for r in problems {
            let _ = writeln!(io.stdout, "  {:<13} {}", r.result, r.id);
            if let Some(error) = &r.error {
                let _ = writeln!(io.stdout, "                {error} ({})", r.source);
            }
        }
    }
    if run.converged { EXIT_OK } else { EXIT_MODEL_ERRORS }
}

/// A store others can read holds every file's content where they can read it (stores made
/// before modelc created them 0600 are 0644): said on stderr, with the fix.
fn warn_if_readable(path: &Path, format: Format, io: &mut Io<'_>) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::metadata(path) else { return };
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 && format != Format::Json {
        let _ = writeln!(
            io.stderr,
            "warning: the store {} can be read or written by others (mode {mode:o}): it holds every file's content, \
             secrets included; `chmod 600 {}` makes it private",
            path.display(),
            path.display()
        );
    }
}

/// The last run in the shape a server's status has (`{version, agents, resources}`, times in
/// RFC 3339), so one script reads both; a local run's resources share its start and end. The
/// run's own fields (`run`, `source`, `converged`, `not_converged`) come with it.
fn status_json(run: &DeployRecord, problems: &[&DeployResult]) -> serde_json::Value {
    let agents: Vec<serde_json::Value> = run
        .agents
        .iter()
        .map(|name| serde_json::json!({"name": name, "connected": false, "version": run.version}))
        .collect();
    let resources: Vec<serde_json::Value> = run
        .results
        .iter()
        .map(|r| {
            serde_json::json!({
                "id": r.id, "agent": r.agent, "version": run.version, "result": r.result,
                "started": run.started, "finished": run.ended, "error": r.error,
                "changes": r.changes, "source": r.source,
            })
        })
        .collect();
    serde_json::json!({
        "version": run.version,
        "agents": agents,
        "resources": resources,
        "run": run.run,
        "source": run.source,
        "converged": run.converged,
        "not_converged": problems,
    })
}
