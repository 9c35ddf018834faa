//! Modules' Python handlers at deploy time: a [`Handler`] for every resource type a module
//! registers a `@provider` for and modelc has no native handler of.
//!
//! Interpreters (the same `host.py` as plugins, in the role "handlers") run them for the life of
//! the [`PythonHandlers`], each one resource at a time, up to one per core (Python runs one
//! thread at a time) and one per Python-handled resource. The first is started when the
//! handlers are made and waited for (its imports say which types have handlers); the others are
//! forked from it ([`crate::forks`]: the modules imported already), or, where that fails,
//! started when needed. A handler that crashes its interpreter or outlasts its timeout fails
//! only its resource (with the Python traceback, or the time it was given), that interpreter is
//! stopped with what it started, and the next resource gets a new one. While a handler runs, the host asks back for operations on
//! the resource's target ([`Operator`]) and for file contents by hash.
#![allow(
    clippy::disallowed_methods,
    reason = "the host runs a process and enforces its time limit: the clock is the wall clock"
)]

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use modelc_ir::Resource;
use modelc_pyplugins::{ModulePython, PythonEnv};
use modelc_runtime::handler::{Context, Done, Handler, LogLine};
use modelc_runtime::operations::{Answer, Failure};
use modelc_runtime::report::Change;
use serde_json::{Value, json};

use crate::process::{Process, Silence};
use crate::{module_message, shim};

/// How long a Python handler may run when its resource has no `timeout`.
pub const DEFAULT_HANDLER_TIMEOUT: Duration = Duration::from_secs(600);

/// How long the interpreter may take to start and import the modules.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// How long forking the first interpreter into another may take.
const FORK_TIMEOUT: Duration = Duration::from_secs(10);

/// Does the operations handlers ask for on the machine a context names (`via`, `null` for this
/// one): `modelc_runtime::remote::Hosts` in a deploy.
pub trait Operator: Send + Sync {
    fn operate(&self, via: &Value, op: &str, args: &[Value], data: Option<&[u8]>) -> Result<Answer, Failure>;
}

/// Operations where a context leads, through a deploy's connections to other hosts.
impl Operator for modelc_runtime::remote::Hosts {
    fn operate(&self, via: &Value, op: &str, args: &[Value], data: Option<&[u8]>) -> Result<Answer, Failure> {
        modelc_runtime::remote::Hosts::operate(self, via, op, args, data)
    }
}

impl<T: Operator + ?Sized> Operator for Arc<T> {
    fn operate(&self, via: &Value, op: &str, args: &[Value], data: Option<&[u8]>) -> Result<Answer, Failure> {
        (**self).operate(via, op, args, data)
    }
}

/// Where modules' Python is for a deploy: the environment, and each module's Python as a
/// compile found it (a module's directory); any other module is looked for among the packages
/// the environment has installed.
#[derive(Debug, Clone, Default)]
pub struct ModuleCode {
    pub env: Option<PythonEnv>,
    pub modules: Vec<ModulePython>,
}

impl ModuleCode {
    fn module(&self, module: &str) -> Option<ModulePython> {
        self.modules
            .iter()
            .find(|m| m.module == module)
            .cloned()
            .or_else(|| modelc_pyplugins::module_python(module, None, self.env.as_ref()))
    }
}

/// `handlers` with modules' own handlers for the types of `resources` (those the run deploys) it
/// has none of, their
/// operations done by `operator`; and what the user should hear (no Python environment, a
/// module whose Python cannot be imported): those resources are then `no-handler`.
pub fn add_module_handlers(
    handlers: modelc_runtime::Handlers,
    operator: Box<dyn Operator>,
    code: &ModuleCode,
    resources: &[&Resource],
    debug_logs: bool,
) -> (modelc_runtime::Handlers, Vec<String>) {
    let wanted: BTreeSet<&str> =
        resources.iter().map(|r| r.entity_type.as_str()).filter(|t| handlers.get(t).is_none()).collect();
    let module_names: BTreeSet<&str> = wanted.iter().filter_map(|t| t.split("::").next()).collect();
    let modules: Vec<ModulePython> = module_names.iter().filter_map(|m| code.module(m)).collect();
    if modules.is_empty() {
        return (handlers, Vec::new());
    }
    let Some(env) = code.env.clone() else {
        let names: Vec<&str> = modules.iter().map(|m| m.module.as_str()).collect();
        let warning = format!(
            "no Python environment was found to run the handlers of {}; their resources have no handler \
             (choose one with --python)",
            names.join(", ")
        );
        return (handlers, vec![warning]);
    };
    let count = resources.iter().filter(|r| wanted.contains(r.entity_type.as_str())).count();
    match PythonHandlers::start(env, modules, operator, count) {
        Ok(python) => {
            let warnings = python
                .failed_modules()
                .iter()
                .map(|(module, trace)| format!("the Python of module `{module}` could not be imported:\n{trace}"))
                .collect();
            let types: Vec<String> = python.types().iter().filter(|t| wanted.contains(t.as_str())).cloned().collect();
            (handlers.with_module_handlers(types, python.with_debug_logs(debug_logs)), warnings)
        }
        Err(message) => (handlers, vec![format!("{message}; resources of modules' handlers have no handler")]),
    }
}

/// Operations on this machine only.
pub struct LocalOperator;

impl Operator for LocalOperator {
    fn operate(&self, via: &Value, op: &str, args: &[Value], data: Option<&[u8]>) -> Result<Answer, Failure> {
        if !via.is_null() && via.get("method_name").and_then(Value::as_str) != Some("local") {
            return Err(Failure::usage("this deploy reaches no other host"));
        }
        modelc_runtime::operations::perform(op, args, data)
    }
}

/// One interpreter of the pool.
#[derive(Default)]
enum Slot {
    /// None yet, or the last one was stopped: started when needed.
    #[default]
    Empty,
    Ready(Box<Process>),
}

/// The Python handlers of a deploy.
pub struct PythonHandlers {
    env: PythonEnv,
    modules: Vec<ModulePython>,
    types: BTreeSet<String>,
    /// Modules whose import failed, with the traceback.
    failed: Vec<(String, String)>,
    operator: Box<dyn Operator>,
    /// The interpreters, each running one handler at a time.
    hosts: Vec<Mutex<Slot>>,
    /// Whether handlers' DEBUG lines are kept in the report (`--verbose`).
    debug_logs: bool,
    /// Where the forked interpreters connect and their endings are written: dropped after
    /// `hosts`.
    forks: Option<crate::forks::Forks>,
}

impl std::fmt::Debug for PythonHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PythonHandlers").field("types", &self.types).finish_non_exhaustive()
    }
}

impl PythonHandlers {
    /// Starts an interpreter of `env` and has it import `modules`, which registers their
    /// handlers, then forks it: one interpreter per core, at most one per resource of
    /// `resources`.
    pub fn start(
        env: PythonEnv,
        modules: Vec<ModulePython>,
        operator: Box<dyn Operator>,
        resources: usize,
    ) -> Result<PythonHandlers, String> {
        let size = pool_size().min(resources.max(1));
        let mut handlers = PythonHandlers {
            env,
            modules,
            types: BTreeSet::new(),
            failed: Vec::new(),
            operator,
            hosts: (0..size).map(|_| Mutex::new(Slot::Empty)).collect(),
            debug_logs: false,
            forks: None,
        };
        let first = handlers.launch()?;
        let (mut process, loaded) = handlers.finish_launch(first)?;
        handlers.types = loaded
            .get("providers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect();
        handlers.failed = loaded
            .get("failed")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(module, trace)| (module.clone(), trace.as_str().unwrap_or_default().trim_end().to_owned()))
            .collect();
        handlers.fork_others(&mut process);
        *lock(&handlers.hosts[0]) = Slot::Ready(Box::new(process));
        Ok(handlers)
    }

    /// Fills the other slots with interpreters forked from `first`; those it cannot fork
    /// (no private directory, a fork that fails) are started when needed instead.
    fn fork_others(&mut self, first: &mut Process) {
        if self.hosts.len() < 2 {
            return;
        }
        let Ok(forks) = crate::forks::Forks::new() else { return };
        let deadline = Instant::now() + FORK_TIMEOUT;
        for slot in &self.hosts[1..] {
            match forks.fork(first, deadline) {
                Some(process) => *lock(slot) = Slot::Ready(Box::new(process)),
                None => break,
            }
        }
        self.forks = Some(forks);
    }

    /// Keeps handlers' DEBUG lines in the report (each call of a mitogen proxy, say).
    pub fn with_debug_logs(mut self, debug: bool) -> PythonHandlers {
        self.debug_logs = debug;
        self
    }

    /// The resource types a module registered a handler for.
    pub fn types(&self) -> &BTreeSet<String> {
        &self.types
    }

    /// Modules whose Python could not be imported, with the traceback.
    pub fn failed_modules(&self) -> &[(String, String)] {
        &self.failed
    }

    fn failed_start(&self, why: String) -> String {
        format!("the Python handler host ({}) did not start: {why}", self.env.interpreter.display())
    }

    /// An interpreter started and sent modelc's API and the modules to import, not waited for.
    fn launch(&self) -> Result<Process, String> {
        let mut process =
            Process::spawn_grouped(&self.env.interpreter, shim::HOST).map_err(|e| self.failed_start(e.to_string()))?;
        let modules: Vec<Value> = self.modules.iter().map(module_message).collect();
        let init = json!({
            "role": "handlers",
            "shim": shim::sources(true),
            "shim_digest": shim::digest(),
            "keep_code": shim::keeps_code(),
            "modules": modules,
        });
        let deadline = Instant::now() + START_TIMEOUT;
        for message in [init, json!({"op": "load", "modules": modules})] {
            process.send(&message, deadline).map_err(|s| self.failed_start(silence(s, "starting", START_TIMEOUT)))?;
        }
        Ok(process)
    }

    /// A launched interpreter once it is ready and has imported the modules: what `load` answered.
    fn finish_launch(&self, mut process: Process) -> Result<(Process, Value), String> {
        let deadline = Instant::now() + START_TIMEOUT;
        let mut answer =
            || process.receive(deadline).map_err(|s| self.failed_start(silence(s, "starting", START_TIMEOUT)));
        let ready = answer()?;
        if ready.get("ready").is_none() {
            return Err(self.failed_start(format!("it answered {ready}")));
        }
        let loaded = answer()?;
        Ok((process, loaded))
    }

    /// An interpreter no other call is using, ready: a ready one first, else a slot to start
    /// one in, else the first to be free.
    fn free_host(&self) -> Result<std::sync::MutexGuard<'_, Slot>, String> {
        let free = || self.hosts.iter().filter_map(|h| h.try_lock().ok());
        let mut slot = free()
            .find(|h| matches!(**h, Slot::Ready(_)))
            .or_else(|| free().next())
            .unwrap_or_else(|| lock(&self.hosts[0]));
        let process = match std::mem::take(&mut *slot) {
            Slot::Ready(process) => process,
            Slot::Empty => Box::new(self.finish_launch(self.launch()?)?.0),
        };
        *slot = Slot::Ready(process);
        Ok(slot)
    }

    /// Runs the handler of `resource` in a host, answering its questions, within `limit`.
    fn call(&self, resource: &Resource, context: &Context<'_>, limit: Duration) -> Result<Value, String> {
        let mut host = self.free_host()?;
        let Slot::Ready(process) = &mut *host else { return Err("the handler host did not start".to_owned()) };
        let deadline = Instant::now() + limit;
        let request = json!({
            "op": "deploy",
            "resource": {"id": resource.id, "attributes": resource.attributes, "requires": resource.requires},
            "dry_run": context.dry_run,
            "refresh": context.refresh,
            "debug": self.debug_logs,
        });
        let via = resource.attributes.get("via").cloned().unwrap_or(Value::Null);
        let outcome = (|| -> Result<Value, Silence> {
            process.send(&request, deadline)?;
            loop {
                let message = process.receive(deadline)?;
                if let Some(question) = message.get("ask") {
                    let answer = self.answer(question, &via, context);
                    process.send(&answer, deadline)?;
                } else if let Some(done) = message.get("done") {
                    return Ok(done.clone());
                } else {
                    return Ok(json!({"status": "failed", "error": message.get("failed").cloned().unwrap_or(message)}));
                }
            }
        })();
        match outcome {
            Ok(done) => Ok(done),
            Err(silence) => {
                let why = match &silence {
                    Silence::Closed => {
                        format!("the Python handler host stopped while the handler ran ({})", process.ending())
                    }
                    _ => self::silence(silence, "running the handler", limit),
                };
                process.kill();
                *host = Slot::Empty;
                Err(why)
            }
        }
    }

    /// The answer to a question the host asked while a handler ran.
    fn answer(&self, question: &Value, resource_via: &Value, context: &Context<'_>) -> Value {
        if let Some(hash) = question.get("content").and_then(Value::as_str) {
            return match context.content.content(hash) {
                Some(bytes) => json!({"data": base64::engine::general_purpose::STANDARD.encode(bytes)}),
                None => json!({"value": null}),
            };
        }
        let Some(op) = question.get("io").and_then(Value::as_str) else {
            return json!({"error": format!("modelc cannot answer {question}")});
        };
        // The proxy's own context, else the resource's (`self._io`).
        let via = question.get("context").filter(|c| !c.is_null()).unwrap_or(resource_via);
        let args = question.get("args").and_then(Value::as_array).cloned().unwrap_or_default();
        let data = match question
            .get("data")
            .and_then(Value::as_str)
            .map(|d| base64::engine::general_purpose::STANDARD.decode(d))
        {
            Some(Ok(data)) => Some(data),
            Some(Err(_)) => return json!({"error": "the data sent is not base64"}),
            None => None,
        };
        // A dry run's writes are refused by the host (`_host.refuse_in_dry_run`), before they
        // are asked for.
        match self.operator.operate(via, op, &args, data.as_deref()) {
            Ok(Answer { value, data: Some(bytes) }) => {
                json!({"value": value, "data": base64::engine::general_purpose::STANDARD.encode(bytes)})
            }
            Ok(Answer { value, data: None }) => json!({"value": value}),
            Err(Failure { message, errno, timed_out }) => {
                json!({"error": message, "errno": errno, "timed_out": timed_out})
            }
        }
    }
}

/// How many interpreters may run handlers at once: one per core.
fn pool_size() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get).clamp(1, 8)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Why the host said nothing, as a user reads it.
fn silence(silence: Silence, doing: &str, limit: Duration) -> String {
    match silence {
        Silence::TimedOut => format!(
            "the Python handler did not finish within its timeout of {} s ({doing}); its interpreter was stopped",
            limit.as_secs_f64()
        ),
        Silence::Closed => format!("the Python handler host stopped ({doing})"),
        Silence::Garbled(line) => format!("the Python handler host wrote {line:?}, which is not a message ({doing})"),
    }
}

impl Handler for PythonHandlers {
    fn deploy(&self, resource: &Resource, context: &Context<'_>) -> Result<Done, String> {
        let limit = context.timeout.filter(|t| !t.is_zero()).unwrap_or(DEFAULT_HANDLER_TIMEOUT);
        let done = self.call(resource, context, limit)?;
        done_of(&done)
    }
}

/// What the handler reported, as the engine takes it.
fn done_of(done: &Value) -> Result<Done, String> {
    let text = |key: &str| done.get(key).and_then(Value::as_str).map(str::to_owned);
    let status = text("status").unwrap_or_default();
    let logs: Vec<LogLine> = done
        .get("logs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|line| LogLine {
            level: line.get("level").and_then(Value::as_str).unwrap_or("INFO").to_owned(),
            message: line.get("message").and_then(Value::as_str).unwrap_or_default().to_owned(),
        })
        .collect();
    match status.as_str() {
        "deployed" | "dry" => {
            let mut changes: Vec<Change> = done
                .get("changes")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .map(|(field, change)| {
                    Change::new(
                        field,
                        change.get("current").cloned().unwrap_or(Value::Null),
                        change.get("desired").cloned().unwrap_or(Value::Null),
                    )
                })
                .collect();
            // A handler that says it changed something without listing what.
            let change = text("change").unwrap_or_default();
            if changes.is_empty() && status == "deployed" && !change.is_empty() && change != "nochange" {
                changes.push(Change::new("change", Value::Null, change));
            }
            let refreshed = done.get("reloaded").and_then(Value::as_bool).unwrap_or(false);
            let facts = done
                .get("facts")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(name, value)| Some((name.clone(), value.as_str()?.to_owned())))
                .collect();
            Ok(Done { changes, refreshed, skipped: None, logs, facts })
        }
        "skipped" => Ok(Done {
            skipped: Some(text("error").unwrap_or_else(|| "the handler skipped it".to_owned())),
            logs,
            ..Done::default()
        }),
        _ => Err(text("error").unwrap_or_else(|| format!("the handler reported {status:?}"))),
    }
}
