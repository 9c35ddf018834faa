//! `modelc deploy` and `modelc status`: the runtime (`modelc-runtime`) seen from the command
//! line. Deploy takes its resources from a fresh compile, an IR file or a stored version, runs
//! them on this machine under a machine-wide lock, shows progress and a summary, and records
//! the run in the store (a dry run records nothing and changes nothing).

use std::cell::RefCell;
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use modelc_ir::{Ir, Resource};
use modelc_runtime::plan::Disposition;
use modelc_runtime::{
    AgentSelection, Handlers, MemoryContent, Observer, Options, Outcome, Plan, ResourceReport, RunReport,
};
use modelc_store::{Carryover, DeployRecord, DeployResult, SqliteStore, Store, StoreError};
use nix::fcntl::{Flock, FlockArg};

use crate::output::Reporter;
use crate::{EXIT_MODEL_ERRORS, EXIT_OK, EXIT_USAGE, Format, Io, usage_error};

/// Where the machine-wide deploy lock is, unless `MODELC_DEPLOY_LOCK` names another file.
fn lock_path() -> PathBuf {
    std::env::var_os("MODELC_DEPLOY_LOCK")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("modelc-deploy.lock"))
}

pub(crate) struct Request {
    pub path: Option<PathBuf>,
    pub ir: Option<PathBuf>,
    pub version: Option<u64>,
    pub store: Option<PathBuf>,
    pub agents: Vec<String>,
    pub jobs: Option<usize>,
    pub dry_run: bool,
}

/// What is deployed, and where it came from.
struct Desired {
    ir: Ir,
    version: Option<u64>,
    source: String,
    content: MemoryContent,
    store_path: PathBuf,
}

pub(crate) fn deploy(request: &Request, format: Format, color: bool, io: &mut Io<'_>) -> u8 {
    let desired = match desired(request, format, color, io) {
        Ok(desired) => desired,
        Err(status) => return status,
    };
    let _lock = match lock(io) {
        Ok(lock) => lock,
        Err(message) => return usage_error(io, &message),
    };
    let host = nix::unistd::gethostname().map(|h| h.to_string_lossy().into_owned()).unwrap_or_default();
    let selection = if request.agents.is_empty() {
        AgentSelection::ThisMachine { host: host.clone() }
    } else {
        AgentSelection::Named(request.agents.clone())
    };
    let agents: Vec<String> = {
        let mut agents: Vec<String> = selection.agents(&desired.ir.resources).into_iter().collect();
        agents.sort();
        agents
    };
    // What earlier runs left: refreshes still owed, purgeable resources now gone.
    let store = match SqliteStore::open_existing(&desired.store_path) {
        Ok(store) => Some(store),
        Err(StoreError::NotFound(_)) => None,
        Err(error) => return store_failure(io, format, color, &error, &desired.store_path),
    };
    let (previous, pending) = match &store {
        Some(store) => match (store.deployed_purgeable(&agents), store.pending_refreshes(&agents)) {
            (Ok(previous), Ok(pending)) => (previous, pending),
            (Err(error), _) | (_, Err(error)) => {
                return store_failure(io, format, color, &error, &desired.store_path);
            }
        },
        None => (Vec::new(), Vec::new()),
    };
    drop(store);
    let handlers = Handlers::builtin();
    let plan = Plan::new(desired.ir.resources.clone(), &previous, &selection, &handlers, &pending);
    let options =
        Options { jobs: request.jobs.unwrap_or_else(|| Options::default().jobs).max(1), dry_run: request.dry_run };
    let started = modelc_store::utc_now();
    let report = {
        let progress = Progress::new(io, format, plan.len());
        if format == Format::Human {
            progress.header(&desired, &agents, &plan, &options);
        }
        let report = modelc_runtime::run(&plan, &handlers, &desired.content, &options, &progress);
        progress.clear();
        report
    };
    let ended = modelc_store::utc_now();
    let mut status = if report.converged() { EXIT_OK } else { EXIT_MODEL_ERRORS };
    if !request.dry_run {
        let (record, carryover) = record(&desired, &plan, &report, &agents, started, ended);
        let recorded = SqliteStore::open(&desired.store_path).and_then(|mut s| s.record_deploy(&record, &carryover));
        if let Err(error) = recorded {
            let _ = writeln!(
                io.stderr,
                "error: the run could not be recorded in {}: {error}",
                desired.store_path.display()
            );
            status = EXIT_USAGE;
        }
    }
    match format {
        Format::Json => print_json(io, &desired, &plan, &report, &agents, request.dry_run),
        _ => print_summary(io, &report, request.dry_run),
    }
    status
}

/// A store that cannot be read (or has no such version) stops a deploy before it starts: an
/// I/O or usage error (exit status 2), reported as the store commands report it.
fn store_failure(io: &mut Io<'_>, format: Format, color: bool, error: &StoreError, path: &Path) -> u8 {
    crate::export::store_failure(io, format, color, error, path);
    EXIT_USAGE
}

/// Reads what to deploy: an IR file, a stored version, or a fresh compile.
fn desired(request: &Request, format: Format, color: bool, io: &mut Io<'_>) -> Result<Desired, u8> {
    if let Some(file) = &request.ir {
        let exported = crate::export::read_ir(file, &io.cwd).map_err(|message| usage_error(io, &message))?;
        let store_path = crate::export::store_path(request.store.as_deref(), None, &io.cwd);
        let content =
            MemoryContent(exported.ir.files.iter().map(|(h, t)| (h.clone(), t.as_bytes().to_vec())).collect());
        return Ok(Desired { ir: exported.ir, version: None, source: file.display().to_string(), content, store_path });
    }
    if let Some(number) = request.version {
        let store_path = crate::export::store_path(request.store.as_deref(), None, &io.cwd);
        let loaded = SqliteStore::open_existing(&store_path).and_then(|store| {
            let snapshot = store.snapshot(Some(number))?;
            let hashes: Vec<String> = snapshot
                .resources
                .iter()
                .filter_map(|r| r.attributes.get("hash").and_then(|h| h.as_str()).map(str::to_owned))
                .collect();
            Ok((snapshot, store.contents(&hashes)?))
        });
        let (snapshot, contents) = loaded.map_err(|error| store_failure(io, format, color, &error, &store_path))?;
        let ir = Ir::new(snapshot.resources, Vec::new());
        let source = format!("version {number}");
        return Ok(Desired { ir, version: Some(number), source, content: MemoryContent(contents), store_path });
    }
    let target =
        modelc_driver::locate(request.path.as_deref(), &io.cwd).map_err(|error| usage_error(io, &error.to_string()))?;
    let store_path = crate::export::store_path(request.store.as_deref(), Some(&target), &io.cwd);
    let exported = crate::export::compile(&target, false, format, color, io)?;
    let mut diagnostics = exported.diagnostics;
    if !diagnostics.is_empty() {
        // Warnings: shown, and the deploy goes on.
        Reporter { files: &exported.files, format: Format::Human, color, file_count: exported.file_count }
            .report(io, &mut diagnostics);
    }
    // A compile of the model the latest version was exported from deploys that version.
    let version = SqliteStore::open_existing(&store_path)
        .and_then(|s| s.versions())
        .ok()
        .and_then(|versions| versions.last().filter(|v| v.source_hash == exported.source_hash).map(|v| v.version));
    let content = MemoryContent(exported.ir.files.iter().map(|(h, t)| (h.clone(), t.as_bytes().to_vec())).collect());
    let source = format!("compile of {}", target_name(&target));
    Ok(Desired { ir: exported.ir, version, source, content, store_path })
}

fn target_name(target: &modelc_driver::Target) -> String {
    match target {
        modelc_driver::Target::Project(project) => project.root.display().to_string(),
        modelc_driver::Target::Module { root, .. } => root.display().to_string(),
        modelc_driver::Target::Files(files) => {
            files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ")
        }
    }
}

/// Takes the machine-wide deploy lock; a second deploy waits for the first and says so.
fn lock(io: &mut Io<'_>) -> Result<Flock<File>, String> {
    let path = lock_path();
    let open = || OpenOptions::new().read(true).write(true).create(true).truncate(false).mode(0o666).open(&path);
    let file = open()
        .or_else(|_| File::open(&path))
        .map_err(|e| format!("cannot open the deploy lock {}: {e}", path.display()))?;
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => Ok(lock),
        Err((file, nix::errno::Errno::EWOULDBLOCK)) => {
            let _ =
                writeln!(io.stderr, "waiting for another deploy on this machine to finish (lock {})…", path.display());
            Flock::lock(file, FlockArg::LockExclusive)
                .map_err(|(_, e)| format!("cannot take the deploy lock {}: {e}", path.display()))
        }
        Err((_, e)) => Err(format!("cannot take the deploy lock {}: {e}", path.display())),
    }
}

/// The run as the store records it, and what it leaves for the next run.
fn record(
    desired: &Desired,
    plan: &Plan,
    report: &RunReport,
    agents: &[String],
    started: String,
    ended: String,
) -> (DeployRecord, Carryover) {
    let results = report
        .resources
        .iter()
        .filter(|r| r.result != Outcome::NotHandled)
        .map(|r| DeployResult {
            id: r.id.clone(),
            agent: plan.resources[r.index].agent.clone(),
            result: r.result.as_str().to_owned(),
            changes: serde_json::to_value(&r.changes).unwrap_or_default(),
            error: r.error.clone(),
            duration_ms: r.duration_ms,
            source: r.source.clone(),
        })
        .collect();
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
    let flag = |r: &Resource, name: &str| r.attributes.get(name).and_then(|v| v.as_bool()).unwrap_or(false);
    let mut purgeable = Vec::new();
    for report in &report.resources {
        let resource = &plan.resources[report.index];
        if plan.dispositions[report.index] != Disposition::Deploy {
            continue;
        }
        if in_version.contains(resource.id.as_str()) {
            if flag(resource, "purge_on_delete") && !flag(resource, "purged") {
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
    (record, Carryover { pending_refreshes, purgeable })
}

/// The live display: on a terminal, a status line rewritten in place; otherwise nothing live.
/// Each finished resource is printed as a line (human format only).
struct Progress<'a, 'io> {
    io: RefCell<&'a mut Io<'io>>,
    format: Format,
    total: usize,
    done: RefCell<usize>,
    live: bool,
}

impl<'a, 'io> Progress<'a, 'io> {
    fn new(io: &'a mut Io<'io>, format: Format, total: usize) -> Progress<'a, 'io> {
        let live = io.stderr_is_terminal && format == Format::Human;
        Progress { io: RefCell::new(io), format, total, done: RefCell::new(0), live }
    }

    fn header(&self, desired: &Desired, agents: &[String], plan: &Plan, options: &Options) {
        let handled = plan.dispositions.iter().filter(|d| **d != Disposition::NotHandled).count();
        let version = desired.version.map(|v| format!(", version {v}")).unwrap_or_default();
        let mode = if options.dry_run { "dry run: checking" } else { "deploying" };
        let mut io = self.io.borrow_mut();
        let _ = writeln!(
            io.stderr,
            "{mode} {handled} of {} resources ({}{version}) for agents {} with {} jobs",
            plan.len(),
            desired.source,
            agents.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", "),
            options.jobs
        );
    }

    fn clear(&self) {
        if self.live {
            let mut io = self.io.borrow_mut();
            let _ = write!(io.stderr, "\r\x1b[K");
        }
    }
}

impl Observer for Progress<'_, '_> {
    fn started(&self, resource: &Resource) {
        if self.live {
            let done = *self.done.borrow();
            let mut io = self.io.borrow_mut();
            let _ = write!(io.stderr, "\r\x1b[K[{done}/{}] {}", self.total, resource.id);
            let _ = io.stderr.flush();
        }
    }

    fn finished(&self, _resource: &Resource, report: &ResourceReport) {
        *self.done.borrow_mut() += 1;
        if self.format != Format::Human || report.result == Outcome::NotHandled {
            return;
        }
        let mut io = self.io.borrow_mut();
        if self.live {
            let _ = write!(io.stderr, "\r\x1b[K");
        }
        let _ = write!(io.stdout, "{}", describe(report));
    }
}

/// A finished resource as a few lines: result, id, why, and what changed.
fn describe(report: &ResourceReport) -> String {
    let mut text = format!("{:<13} {}", report.result.as_str(), report.id);
    if report.refreshed {
        text.push_str(" (refreshed)");
    }
    text.push('\n');
    if let Some(error) = &report.error {
        text.push_str(&format!("              {error} ({})\n", report.source));
    }
    for change in &report.changes {
        let show = |v: &serde_json::Value| match v {
            serde_json::Value::Null => "(none)".to_owned(),
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        text.push_str(&format!("              {}: {} → {}\n", change.field, show(&change.old), show(&change.new)));
        if let Some(diff) = &change.diff {
            for line in diff.lines() {
                text.push_str(&format!("                {line}\n"));
            }
        }
    }
    text
}

fn print_summary(io: &mut Io<'_>, report: &RunReport, dry_run: bool) {
    let order = [
        Outcome::Changed,
        Outcome::WouldChange,
        Outcome::Unchanged,
        Outcome::NotEvaluated,
        Outcome::Failed,
        Outcome::Blocked,
        Outcome::Skipped,
        Outcome::NoHandler,
        Outcome::Undeployable,
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
    let _ = writeln!(io.stderr, "{verdict}: {counts} in {:.2} s", report.duration_ms / 1000.0);
}

fn print_json(io: &mut Io<'_>, desired: &Desired, plan: &Plan, report: &RunReport, agents: &[String], dry_run: bool) {
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
    for outcome in [
        Outcome::Changed,
        Outcome::Unchanged,
        Outcome::Failed,
        Outcome::Blocked,
        Outcome::Skipped,
        Outcome::WouldChange,
        Outcome::NotEvaluated,
        Outcome::NoHandler,
        Outcome::Undeployable,
        Outcome::NotHandled,
    ] {
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
        "resources": resources,
    });
    let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(&document).unwrap_or_default());
}

/// `modelc status`: the last run, and its resources that did not converge.
pub(crate) fn status(store: Option<&Path>, format: Format, color: bool, io: &mut Io<'_>) -> u8 {
    let path = crate::export::store_path(store, None, &io.cwd);
    let last = match SqliteStore::open_existing(&path).and_then(|s| s.last_deploy()) {
        Ok(last) => last,
        Err(error) => return crate::export::store_failure(io, format, color, &error, &path),
    };
    let Some(run) = last else {
        if format == Format::Json {
            let _ = writeln!(io.stdout, "null");
        } else {
            let _ = writeln!(io.stdout, "no deploy has been recorded in {}", path.display());
        }
        return EXIT_OK;
    };
    let problems: Vec<&DeployResult> = run
        .results
        .iter()
        .filter(|r| !matches!(r.result.as_str(), "changed" | "unchanged" | "would-change" | "not-evaluated"))
        .collect();
    if format == Format::Json {
        let mut value = serde_json::to_value(&run).unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            map.insert("not_converged".into(), serde_json::to_value(&problems).unwrap_or_default());
        }
        let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(&value).unwrap_or_default());
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
