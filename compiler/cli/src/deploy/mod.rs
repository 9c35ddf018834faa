//! `modelc deploy` and `modelc status`: the runtime (`modelc-runtime`) seen from the command
//! line. Deploy takes its resources from a fresh compile, an IR file or a stored version, runs
//! them on this machine under a machine-wide lock, shows progress and a summary, and records
//! the run in the store (a dry run records nothing and changes nothing).

use std::cell::RefCell;
use std::collections::HashSet;

use indexmap::IndexSet;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use modelc_ir::{Ir, Resource};
use modelc_runtime::plan::Disposition;
use modelc_runtime::{
    AgentSelection, Handlers, MemoryContent, NotificationReport, Observer, Options, Outcome, Plan, ResourceReport,
    RunReport,
};
use modelc_store::{Access, Carryover, DeployRecord, DeployResult, Fact, Locator, StoreError};
use nix::fcntl::{Flock, FlockArg};

use crate::output::Reporter;
use crate::{EXIT_MODEL_ERRORS, EXIT_OK, EXIT_USAGE, Format, Io, usage_error};

mod lock;
mod modules;
mod output;
mod progress;
mod record;
mod status;
mod watch;

pub(crate) use modules::{ModuleCode, installed as installed_modules};
pub(crate) use status::status;

use lock::lock;
use output::{print_json, print_left_behind, print_summary};
use progress::Progress;
use record::record;

pub(crate) struct Request {
    pub path: Option<PathBuf>,
    pub ir: Option<PathBuf>,
    pub version: Option<u64>,
    pub store: Option<Locator>,
    pub agents: Vec<String>,
    pub jobs: Option<usize>,
    pub dry_run: bool,
    /// `--sema N`: a global limit on resources deploying at once.
    pub sema: Option<usize>,
    /// `--hosts N`, `--helper-dir DIR`: how other hosts are reached.
    pub remote: modelc_runtime::remote::RemoteOptions,
    /// `--no-autoedges`: only the edges the model states.
    pub no_autoedges: bool,
    /// `--no-autogroup`: every resource applied on its own.
    pub no_autogroup: bool,
    /// `--graph FILE`: a YAML graph, deployed alone or merged with the model.
    pub graph: Option<PathBuf>,
    /// `--watch`: continuous mode.
    pub watch: bool,
    /// `--converged-timeout S`: continuous mode stops once nothing changed for S seconds.
    pub converged_timeout: Option<f64>,
    /// `--max-runtime S`: continuous mode stops after S seconds.
    pub max_runtime: Option<f64>,
    /// Set by Ctrl-C: running resources finish, no more start.
    pub interrupt: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Colour the results printed on stdout.
    pub color_results: bool,
}

/// What is deployed, and where it came from.
struct Desired {
    ir: Ir,
    version: Option<u64>,
    source: String,
    content: MemoryContent,
    store: Locator,
    /// Where modules' Python handlers are.
    code: ModuleCode,
}

pub(crate) fn deploy(request: &Request, format: Format, color: bool, io: &mut Io<'_>) -> u8 {
    if request.watch {
        return watch::deploy_watch(request, format, color, io);
    }
    let desired = match desired(request, format, color, io) {
        Ok(desired) => desired,
        Err(status) => return status,
    };
    let _lock = match lock(io) {
        Ok(lock) => lock,
        Err(message) => return usage_error(io, &message),
    };
    let selection = selection(request);
    let agents = selected_agents(&selection, &desired.ir.resources);
    // What earlier runs left is read while modules' handlers start (an interpreter's start
    // takes longer).
    let (handlers, earlier) = std::thread::scope(|scope| {
        let earlier = scope.spawn(|| earlier_runs(&desired.store, &agents));
        let handlers = handlers(request, &desired.code, &desired.ir.resources, &selection, io);
        (handlers, earlier.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    });
    let earlier = match earlier {
        Ok(earlier) => earlier,
        Err(error) => return store_failure(io, format, color, &error, &desired.store),
    };
    let mut plan =
        Plan::new(desired.ir.resources.clone(), &earlier.purgeable, &selection, &handlers, &earlier.pending_refreshes);
    if !request.no_autoedges {
        plan.add_autoedges();
    }
    // After the autoedges: a group must respect every edge.
    if !request.no_autogroup {
        plan.add_autogroups(&handlers);
    }
    // A misspelt `--agent` would otherwise deploy nothing and call it converged.
    for agent in &request.agents {
        if !plan.resources.iter().any(|r| r.agent == *agent) {
            let known: IndexSet<&str> = plan.resources.iter().map(|r| r.agent.as_str()).collect();
            let known: Vec<String> = known.iter().map(|a| format!("`{a}`")).collect();
            let _ = writeln!(
                io.stderr,
                "warning: no resource belongs to agent `{agent}`; the agents of this version are {}",
                if known.is_empty() { "none".to_owned() } else { known.join(", ") }
            );
        }
    }
    let options = run_options(request, &plan.resources, &selection);
    let started = modelc_store::utc_now();
    let report = {
        let progress = Progress::new(io, format, plan.len(), request.color_results);
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
        let recorded =
            modelc_store::open(&desired.store, Access::Create).and_then(|mut s| s.record_deploy(&record, &carryover));
        if let Err(error) = recorded {
            let _ = writeln!(io.stderr, "error: the run could not be recorded in {}: {error}", desired.store);
            status = EXIT_USAGE;
        }
    }
    match format {
        Format::Json => print_json(io, &desired, &plan, &report, &agents, request.dry_run),
        _ => {
            print_summary(io, &report, request.dry_run);
            print_left_behind(io, &plan, request.dry_run);
        }
    }
    if request.interrupt.load(std::sync::atomic::Ordering::SeqCst) {
        let _ = writeln!(io.stderr, "interrupted: running resources finished, no more were started");
        return watch::EXIT_INTERRUPTED;
    }
    status
}

/// What earlier runs (of `deploy` or `deploy --watch`) left for the resources of some agents.
#[derive(Debug, Default)]
pub(crate) struct EarlierRuns {
    /// The purgeable resources deployed, purged when the model no longer has them.
    pub(crate) purgeable: Vec<Resource>,
    /// The refreshes still owed.
    pub(crate) pending_refreshes: Vec<String>,
    /// Failed resources' retries counted so far (a watching process carries them on).
    pub(crate) retry_counts: Vec<(String, u32)>,
}

/// What earlier runs left for the resources of `agents` (nothing without a store).
pub(crate) fn earlier_runs(store: &Locator, agents: &[String]) -> Result<EarlierRuns, StoreError> {
    match modelc_store::open(store, Access::Existing) {
        Ok(store) => Ok(EarlierRuns {
            purgeable: store.deployed_purgeable(agents)?,
            pending_refreshes: store.pending_refreshes(agents)?,
            retry_counts: store.retry_counts(agents)?,
        }),
        Err(StoreError::NotFound(_)) => Ok(EarlierRuns::default()),
        Err(error) => Err(error),
    }
}

/// The handlers of a deploy: the shipped ones, on this machine and, through connections kept
/// for as long as the handlers live (closed when they are dropped), on the hosts resources'
/// contexts name; and modules' own handlers for the types modelc has none of among the
/// `resources` of the agents `selection` deploys.
pub(crate) fn handlers(
    request: &Request,
    code: &ModuleCode,
    resources: &[Resource],
    selection: &AgentSelection,
    io: &mut Io<'_>,
) -> Handlers {
    let agents = selection.agents(resources);
    let deployed: Vec<&Resource> = resources.iter().filter(|r| agents.contains(r.agent.as_str())).collect();
    let hosts = std::sync::Arc::new(modelc_runtime::remote::Hosts::new(request.remote.clone()));
    let handlers =
        Handlers::builtin().with_remote(modelc_runtime::remote::RemoteHandler::new(std::sync::Arc::clone(&hosts)));
    let (handlers, warnings) =
        modelc_pyhost::handlers::add_module_handlers(handlers, Box::new(hosts), code, &deployed, crate::verbose());
    for warning in warnings {
        let _ = writeln!(io.stderr, "warning: {warning}");
    }
    handlers
}

/// The agents whose resources a run deploys: those `--agent` names, else this machine's.
pub(crate) fn selection(request: &Request) -> AgentSelection {
    if request.agents.is_empty() {
        let host = nix::unistd::gethostname().map(|h| h.to_string_lossy().into_owned()).unwrap_or_default();
        AgentSelection::ThisMachine { host }
    } else {
        AgentSelection::Named(request.agents.clone())
    }
}

/// The agents of `resources` that `selection` deploys, sorted.
pub(crate) fn selected_agents(selection: &AgentSelection, resources: &[Resource]) -> Vec<String> {
    let mut agents: Vec<String> = selection.agents(resources).into_iter().collect();
    agents.sort();
    agents
}

/// How a run of `resources` goes: `--jobs` (else [`jobs`]), `--dry-run`, `--sema`, Ctrl-C.
pub(crate) fn run_options(request: &Request, resources: &[Resource], selection: &AgentSelection) -> Options {
    Options {
        jobs: request.jobs.unwrap_or_else(|| jobs(request, resources, selection)).max(1),
        dry_run: request.dry_run,
        sema: request.sema,
        interrupt: std::sync::Arc::clone(&request.interrupt),
        ..Options::default()
    }
}

/// `--jobs` unless given: the cores, and more when resources are on other hosts.
fn jobs(request: &Request, resources: &[modelc_ir::Resource], selection: &AgentSelection) -> usize {
    modelc_runtime::remote::default_jobs(resources, &selection.agents(resources), request.remote.max_open)
}

/// A store that cannot be read (or has no such version) stops a deploy before it starts: an
/// I/O or usage error (exit status 2), reported as the store commands report it.
fn store_failure(io: &mut Io<'_>, format: Format, color: bool, error: &StoreError, store: &Locator) -> u8 {
    crate::export::store_failure(io, format, color, error, store);
    EXIT_USAGE
}

/// Reads what to deploy: an IR file, a stored version, or a fresh compile, and the YAML graph
/// `--graph` names, alone or merged with it.
fn desired(request: &Request, format: Format, color: bool, io: &mut Io<'_>) -> Result<Desired, u8> {
    let Some(file) = &request.graph else { return desired_model(request, format, color, io) };
    let path = if file.is_absolute() { file.clone() } else { io.cwd.join(file) };
    let graph = std::fs::read_to_string(&path)
        .map_err(|e| usage_error(io, &format!("cannot read the graph {}: {e}", path.display())))
        .and_then(|text| {
            let handlers = Handlers::builtin();
            let vocabulary =
                modelc_runtime::yamlgraph::Vocabulary { shapes: modelc_driver::writable_shapes(), handlers: &handlers };
            modelc_runtime::yamlgraph::parse(&text, &file.display().to_string(), &vocabulary)
                .map_err(|errors| graph_errors(io, &errors))
        })?;
    let graph_content = graph.content.clone();
    let alone = request.path.is_none() && request.ir.is_none() && request.version.is_none();
    let mut desired = if alone {
        let store = crate::export::store_locator(request.store.as_ref(), None, &io.cwd);
        let source = format!("graph {}", file.display());
        let code = modules::installed(io);
        Desired {
            ir: Ir::new(Vec::new(), Vec::new()),
            version: None,
            source,
            content: MemoryContent::default(),
            store,
            code,
        }
    } else {
        let mut desired = desired_model(request, format, color, io)?;
        desired.source = format!("{} with graph {}", desired.source, file.display());
        desired.version = None;
        desired
    };
    let model = std::mem::take(&mut desired.ir.resources);
    desired.ir.resources =
        modelc_runtime::yamlgraph::merge(model, graph).map_err(|errors| graph_errors(io, &errors))?;
    desired.content.0.extend(graph_content.0);
    Ok(desired)
}

/// A graph that cannot be deployed: every problem, and exit status 1.
fn graph_errors(io: &mut Io<'_>, errors: &[String]) -> u8 {
    for error in errors {
        let _ = writeln!(io.stderr, "error: {error}");
    }
    EXIT_MODEL_ERRORS
}

/// Reads the model's desired state: an IR file, a stored version, or a fresh compile.
fn desired_model(request: &Request, format: Format, color: bool, io: &mut Io<'_>) -> Result<Desired, u8> {
    if let Some(file) = &request.ir {
        let exported = crate::export::read_ir(file, &io.cwd).map_err(|message| usage_error(io, &message))?;
        let store = crate::export::store_locator(request.store.as_ref(), None, &io.cwd);
        let content = MemoryContent::of_ir(&exported.ir);
        let code = modules::installed(io);
        return Ok(Desired {
            ir: exported.ir,
            version: None,
            source: file.display().to_string(),
            content,
            store,
            code,
        });
    }
    if let Some(number) = request.version {
        let store = crate::export::store_locator(request.store.as_ref(), None, &io.cwd);
        let (resources, content) =
            stored_version(&store, number).map_err(|error| store_failure(io, format, color, &error, &store))?;
        let ir = Ir::new(resources, Vec::new());
        let source = format!("version {number}");
        let code = modules::installed(io);
        return Ok(Desired { ir, version: Some(number), source, content, store, code });
    }
    let target =
        modelc_driver::locate(request.path.as_deref(), &io.cwd).map_err(|error| usage_error(io, &error.to_string()))?;
    let store = crate::export::store_locator(request.store.as_ref(), Some(&target), &io.cwd);
    let place = crate::place::Place::Store(store.clone());
    let exported = crate::export::compile(&target, false, &place, format, color, io)?;
    let mut diagnostics = exported.diagnostics;
    if !diagnostics.is_empty() {
        // Warnings: shown, and the deploy goes on.
        Reporter { files: &exported.files, format: Format::Human, color, file_count: exported.file_count }
            .report(io, &mut diagnostics);
    }
    // A compile of the model the latest version was exported from deploys that version.
    let version = modelc_store::open(&store, Access::Existing)
        .and_then(|s| s.versions())
        .ok()
        .and_then(|versions| versions.last().filter(|v| v.source_hash == exported.source_hash).map(|v| v.version));
    let content = MemoryContent::of_ir(&exported.ir);
    let source = format!("compile of {}", target_name(&target));
    Ok(Desired { ir: exported.ir, version, source, content, store, code: exported.code })
}

/// A stored version's resources and the file content they name, as deploys read them.
fn stored_version(store: &Locator, number: u64) -> Result<(Vec<Resource>, MemoryContent), StoreError> {
    let store = modelc_store::open(store, Access::Existing)?;
    let snapshot = store.snapshot(Some(number))?;
    let hashes: Vec<String> = snapshot
        .resources
        .iter()
        .filter_map(|r| r.attributes.get("hash").and_then(|h| h.as_str()).map(str::to_owned))
        .collect();
    let contents = store.contents(&hashes)?;
    Ok((snapshot.resources, MemoryContent(contents)))
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
