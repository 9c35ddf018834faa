//! `modelc deploy --watch`: continuous mode (`modelc_runtime::watch`) from the command line. It
//! deploys the store's latest version (or `--version N`), then keeps the machine converged:
//! drift is repaired as file-system events report it, polled resources are checked on their
//! interval, and each version `modelc export` stores is swapped in as soon as the store file
//! changes. Each step is recorded in the store with what it leaves for the next process (retry
//! counts, refreshes owed, purgeable resources).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use modelc_runtime::watch::{Continuous, Limits, Progress as Step, Stop, Version, Versions};

use super::*;

/// Ctrl-C's exit status (128 + SIGINT), as shells report it.
pub(super) const EXIT_INTERRUPTED: u8 = 130;

pub(super) fn deploy_watch(request: &Request, format: Format, color: bool, io: &mut Io<'_>) -> u8 {
    if request.ir.is_some() || request.dry_run {
        let what = if request.dry_run { "--dry-run" } else { "--ir" };
        return usage_error(io, &format!("--watch follows the store's versions; it cannot be combined with {what}"));
    }
    let store = match &request.path {
        Some(_) => match modelc_driver::locate(request.path.as_deref(), &io.cwd) {
            Ok(target) => crate::export::store_locator(request.store.as_ref(), Some(&target), &io.cwd),
            Err(error) => return usage_error(io, &error.to_string()),
        },
        None => crate::export::store_locator(request.store.as_ref(), None, &io.cwd),
    };
    let mut versions = StoreVersions { store: store.clone(), watch: None };
    let first = match request.version {
        Some(number) => versions.load(number).map(Some),
        None => versions.newer(None),
    };
    let first = match first {
        Ok(Some(version)) => version,
        Ok(None) => {
            let message =
                format!("--watch deploys the store's versions, and {store} has none: run `modelc export` first");
            return usage_error(io, &message);
        }
        Err(message) => return usage_error(io, &message),
    };
    let _lock = match lock(io) {
        Ok(lock) => lock,
        Err(message) => return usage_error(io, &message),
    };
    let selection = super::selection(request);
    let agents = super::selected_agents(&selection, &first.resources);
    let earlier = match super::earlier_runs(&store, &agents) {
        Ok(earlier) => earlier,
        Err(error) => return store_failure(io, format, color, &error, &store),
    };
    let code = super::modules::installed(io);
    let handlers = super::handlers(request, &code, &first.resources, &selection, io);
    let options = super::run_options(request, &first.resources, &selection);
    let mut continuous = Continuous::new(&handlers, options, selection, !request.no_autoedges, !request.no_autogroup);
    // What the last process deployed, so resources gone since are purged.
    continuous.swap(earlier.purgeable, Arc::new(MemoryContent::default()), &[], &[]);
    let number = first.number;
    continuous.swap(first.resources, first.content, &earlier.pending_refreshes, &earlier.retry_counts);
    let limits = Limits {
        converged_timeout: request.converged_timeout.map(Duration::from_secs_f64),
        max_runtime: request.max_runtime.map(Duration::from_secs_f64),
    };
    let _ = writeln!(
        io.stderr,
        "watching: version {number} from {}, for agents {}{}",
        store,
        agents.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", "),
        limits
            .converged_timeout
            .map(|t| format!("; stops after {}s without change", t.as_secs_f64()))
            .unwrap_or_default()
    );
    let mut current = Some(number);
    let mut record_failed = None;
    let stop = {
        let progress = Progress::new(io, format, 0, request.color_results);
        let stop = modelc_runtime::watch::run(
            &mut continuous,
            &mut versions,
            current,
            &limits,
            &progress,
            &mut |continuous, step| match step {
                Step::Swapped { version, swap, .. } => {
                    current = Some(version);
                    progress.say(&format!(
                        "version {version}: {} kept, {} new or changed, {} removed",
                        swap.kept, swap.replaced, swap.removed
                    ));
                }
                Step::Ran(report) => {
                    if let Err(error) = record_step(&store, continuous, report, &agents, current) {
                        record_failed = Some(error);
                    }
                }
            },
        );
        progress.clear();
        stop
    };
    if let Some(error) = record_failed {
        let _ = writeln!(io.stderr, "error: a run could not be recorded in {store}: {error}");
    }
    match stop {
        Ok(Stop::Idle { converged: true }) => {
            let _ = writeln!(io.stderr, "converged: nothing changed for the converged timeout");
            EXIT_OK
        }
        Ok(Stop::Idle { converged: false }) => {
            let _ = writeln!(
                io.stderr,
                "not converged: nothing changed for the converged timeout, but resources failed or are blocked"
            );
            EXIT_MODEL_ERRORS
        }
        Ok(Stop::MaxRuntime) => {
            let converged = continuous.converged();
            let _ = writeln!(
                io.stderr,
                "stopped: the maximum run time passed ({})",
                if converged { "converged" } else { "not converged" }
            );
            if converged { EXIT_OK } else { EXIT_MODEL_ERRORS }
        }
        Ok(Stop::Interrupted) => {
            let _ = writeln!(io.stderr, "interrupted: running resources finished, no more were started");
            EXIT_INTERRUPTED
        }
        Err(message) => usage_error(io, &message),
    }
}

/// Records one step of continuous mode: its results, and what the whole graph leaves for the
/// next process.
fn record_step(
    store: &Locator,
    continuous: &Continuous<'_>,
    report: &RunReport,
    agents: &[String],
    version: Option<u64>,
) -> Result<u64, StoreError> {
    let agent_of: HashMap<&str, &str> =
        continuous.resources().iter().map(|r| (r.id.as_str(), r.agent.as_str())).collect();
    let results = super::record::deploy_results(report, |r| agent_of.get(r.id.as_str()).copied().unwrap_or_default());
    let now = modelc_store::utc_now();
    let record = DeployRecord {
        run: 0,
        version,
        source: version.map_or_else(|| "watch".to_owned(), |v| format!("watch of version {v}")),
        started: now.clone(),
        ended: now,
        agents: agents.to_vec(),
        converged: continuous.converged(),
        results,
    };
    let state = continuous.carryover();
    let purgeable = continuous
        .resources()
        .iter()
        .filter(|r| agents.contains(&r.agent) && r.remembered_after_deploy())
        .cloned()
        .collect();
    let carryover = Carryover {
        pending_refreshes: state.pending_refreshes,
        purgeable,
        retry_counts: state.retry_counts,
        facts: super::record::facts(report),
    };
    modelc_store::open(store, Access::Create)?.record_deploy(&record, &carryover)
}

/// The store's versions, for the loop: the newest one, and how the loop learns that one may
/// have come (the store's files, or a server store's notifications).
struct StoreVersions {
    store: Locator,
    watch: Option<modelc_store::Watch>,
}

impl StoreVersions {
    fn load(&self, number: u64) -> Result<Version, String> {
        let (resources, content) = super::stored_version(&self.store, number).map_err(|e| e.to_string())?;
        Ok(Version { number, resources, content: Arc::new(content) })
    }
}

impl Versions for StoreVersions {
    fn newer(&mut self, current: Option<u64>) -> Result<Option<Version>, String> {
        let store = match modelc_store::open(&self.store, Access::Existing) {
            Ok(store) => store,
            Err(StoreError::NotFound(_)) => return Ok(None),
            Err(error) => return Err(error.to_string()),
        };
        let latest = store.versions().map_err(|e| e.to_string())?.last().map(|v| v.version);
        match latest {
            Some(number) if Some(number) != current => self.load(number).map(Some),
            _ => Ok(None),
        }
    }

    fn watch(&mut self, wake: modelc_runtime::watch::Wake) -> Result<Vec<PathBuf>, String> {
        let watch = modelc_store::watch(&self.store, move || wake.wake()).map_err(|e| e.to_string())?;
        let files = watch.files.clone();
        self.watch = Some(watch);
        Ok(files)
    }
}
