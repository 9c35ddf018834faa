//! The plugin host: runs the plugins that modules write in Python, in a process of the Python
//! environment the user chose (ARCHITECTURE.md says why a process rather than an embedded
//! interpreter).
//!
//! [`PythonHost`] starts the interpreter on the first call and keeps it for the compile: one
//! interpreter per compile, none when no Python plugin is called. It sends modelc's own
//! `inmanta` API with the first message ([`shim`]), then, for each call, the arguments; while the
//! plugin runs, the host asks back for the attributes it reads and for std's plugins it calls,
//! and modelc answers through the executor's [`PluginContext`]. A read of a value that is not
//! complete yet ends the call with "wait", and the executor makes it again later.
//!
//! A call that takes longer than the time limit stops the interpreter; so does the end of the
//! compile. Either way the failure is the call's diagnostic, never a hang.
#![allow(
    clippy::disallowed_methods,
    reason = "the host runs a process and enforces its time limit: the clock is the wall clock, not the model's"
)]

mod codec;
mod depend;
mod forks;
pub mod handlers;
mod map;
mod process;
mod shim;

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use modelc_exec::{DependAnswer, DependBatch, ForeignError, ForeignPlugins, MapAnswer, MapBatch, MapFailure};
use modelc_pyplugins::{ModulePython, PythonEnv};
use modelc_std_plugins::{AttributeError, PluginContext, PluginError};
use modelc_stdlib::PluginSignature;
use modelc_value::{InstanceId, Value};
use serde_json::json;

use crate::process::{Process, Silence};

/// The default time limit of one plugin call (and of the interpreter's start).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs modules' Python plugins for one compile.
#[derive(Debug)]
pub struct PythonHost {
    env: PythonEnv,
    modules: Vec<ModulePython>,
    /// Every loaded module's directory (`Project.get().modules[name]._path`).
    module_roots: Vec<(String, PathBuf)>,
    /// The project's directory: plugins' data directories are under it.
    base: PathBuf,
    /// The Inmanta environment id plugins see (`Context.get_environment_id`).
    environment: Option<String>,
    timeout: Duration,
    state: Mutex<State>,
}

#[derive(Default)]
enum State {
    #[default]
    NotStarted,
    /// Spawned ahead of need (`prepare`), sent its start and this many module loads, whose
    /// answers are read when it is first used.
    Starting(Box<Process>, usize),
    Running(Box<Process>, Started),
    /// It stopped (a timeout, a crash) or never started: every later call fails with this.
    Failed(String, Option<Started>),
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            State::NotStarted => f.write_str("NotStarted"),
            State::Starting(_, loads) => write!(f, "Starting({loads})"),
            State::Running(_, started) => write!(f, "Running({started:?})"),
            State::Failed(why, _) => write!(f, "Failed({why:?})"),
        }
    }
}

/// The interpreter that ran, as it describes itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    pub executable: String,
    pub version: String,
}

impl PythonHost {
    pub fn new(env: PythonEnv, modules: Vec<ModulePython>, base: PathBuf, timeout: Duration) -> PythonHost {
        PythonHost {
            env,
            modules,
            module_roots: Vec::new(),
            base,
            environment: None,
            timeout,
            state: Mutex::new(State::NotStarted),
        }
    }

    /// The directories of the modules the compile loads, as plugins find them through
    /// `inmanta.module.Project`.
    pub fn with_module_roots(mut self, roots: Vec<(String, PathBuf)>) -> PythonHost {
        self.module_roots = roots;
        self
    }

    /// The environment id plugins see (`inmanta_environment` in the reference's config).
    pub fn with_environment(mut self, environment: Option<String>) -> PythonHost {
        self.environment = environment;
        self
    }

    /// Which interpreter ran plugins, as a user reads it; `None` when none started.
    pub fn ran(&self) -> Option<String> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let started = match &*state {
            State::Running(_, started) | State::Failed(_, Some(started)) => started,
            _ => return None,
        };
        Some(format!("{} (Python {}, {})", started.executable, started.version, self.env.source.describe()))
    }

    fn failed_start(&self, why: String) -> String {
        format!("{} did not start: {why}", self.env.interpreter.display())
    }

    /// Starts the interpreter and sends it modelc's API, without waiting for it.
    fn spawn(&self) -> Result<Process, String> {
        let failed = |why: String| self.failed_start(why);
        let mut process = Process::spawn(&self.env.interpreter, shim::HOST).map_err(|e| failed(e.to_string()))?;
        let shim = shim::sources(false);
        let modules: Vec<serde_json::Value> = self.modules.iter().map(module_message).collect();
        let roots: serde_json::Map<String, serde_json::Value> =
            self.module_roots.iter().map(|(name, root)| (name.clone(), json!(root.display().to_string()))).collect();
        let init = json!({
            "shim": shim,
            "shim_digest": shim::digest(),
            "keep_code": shim::keeps_code(),
            "modules": modules,
            "module_roots": roots,
            "base": self.base.display().to_string(),
            "environment": self.environment,
        });
        let deadline = Instant::now() + self.timeout;
        if process.send(&init, deadline).is_err() {
            return Err(failed(process.ending()));
        }
        Ok(process)
    }

    /// Waits for a spawned interpreter to say it is ready.
    fn await_ready(&self, mut process: Process) -> Result<(Process, Started), String> {
        let failed = |why: String| self.failed_start(why);
        let deadline = Instant::now() + self.timeout;
        match process.receive(deadline) {
            Ok(ready) if ready.get("ready").is_some() => {
                let text = |key: &str| ready.get(key).and_then(|v| v.as_str()).unwrap_or("?").to_owned();
                Ok((process, Started { executable: text("executable"), version: text("version") }))
            }
            Ok(other) => Err(failed(format!("it answered {other}"))),
            Err(Silence::TimedOut) => {
                process.kill();
                Err(failed(format!("it did not answer within {}", seconds(self.timeout))))
            }
            Err(Silence::Closed) => Err(failed(format!("{} (is it Python 3.8 or later?)", process.ending()))),
            Err(Silence::Garbled(line)) => {
                process.kill();
                Err(failed(format!("it wrote {line:?} instead of answering")))
            }
        }
    }
}

/// A module as the host imports it: which package, and the dotted names of its other files.
fn module_message(module: &ModulePython) -> serde_json::Value {
    let submodules: Vec<String> =
        module.files.iter().map(|(ns, _)| ns.replace("::", ".")).filter(|ns| ns != &module.module).collect();
    json!({
        "module": module.module,
        "package": module.package.display().to_string(),
        "submodules": submodules,
    })
}

/// A time limit as a user reads it: `60 s`, `0.5 s`.
fn seconds(limit: Duration) -> String {
    format!("{} s", limit.as_secs_f64())
}

fn host_error(message: impl Into<String>) -> ForeignError {
    ForeignError::Host { message: message.into(), detail: None }
}

impl PythonHost {
    /// Sends `request` to the interpreter (started on first need) and answers its questions
    /// until it gives its final message; the parts of the answer it sends ahead go to `parts`.
    /// A host that stopped fails this and every later request.
    fn exchange(
        &self,
        request: &[u8],
        context: &mut dyn PluginContext,
        parts: &mut dyn FnMut(&[u8]),
    ) -> Result<Vec<u8>, String> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if matches!(*state, State::NotStarted) {
            *state = match self.spawn() {
                Ok(process) => State::Starting(Box::new(process), 0),
                Err(why) => State::Failed(why, None),
            };
        }
        if matches!(*state, State::Starting(..)) {
            let State::Starting(process, loads) = std::mem::take(&mut *state) else { unreachable!() };
            *state = match self.await_ready(*process) {
                Ok((mut process, started)) => {
                    // The loads `prepare` asked for: their answers come before anything else's
                    // (a failed load is reported again by the call that needs the module).
                    let deadline = Instant::now() + self.timeout;
                    match (0..loads).try_for_each(|_| process.receive(deadline).map(drop)) {
                        Ok(()) => State::Running(Box::new(process), started),
                        Err(_) => State::Failed(
                            format!("the Python interpreter stopped ({})", process.ending()),
                            Some(started),
                        ),
                    }
                }
                Err(why) => State::Failed(why, None),
            };
        }
        let (process, started) = match &mut *state {
            State::Running(process, started) => (process, started.clone()),
            State::Failed(why, _) => return Err(why.clone()),
            State::NotStarted | State::Starting(..) => return Err("the interpreter did not start".to_owned()),
        };
        let deadline = Instant::now() + self.timeout;
        let silence = match converse(process, request, deadline, context, parts) {
            Ok(answer) => return Ok(answer),
            Err(silence) => silence,
        };
        let why = match silence {
            Silence::TimedOut => {
                process.kill();
                format!(
                    "it did not return within {}, and the Python interpreter was stopped (the limit is --plugin-timeout)",
                    seconds(self.timeout)
                )
            }
            Silence::Closed => format!("the Python interpreter stopped while it ran ({})", process.ending()),
            Silence::Garbled(line) => {
                process.kill();
                format!("the plugin host wrote {line:?}, which is not a message, and was stopped")
            }
        };
        *state = State::Failed(format!("the Python interpreter had stopped earlier: {why}"), Some(started));
        Err(why)
    }
}

impl ForeignPlugins for PythonHost {
    fn call(
        &self,
        plugin: &PluginSignature,
        caller: &str,
        positional: &[Value],
        keywords: &[(String, Value)],
        context: &mut dyn PluginContext,
    ) -> Result<Value, ForeignError> {
        let request = json!({
            "op": "call",
            "p": plugin.fqn(),
            "caller": caller,
            "args": positional.iter().map(|v| codec::encode(v, context)).collect::<Vec<_>>(),
            "kwargs": keywords.iter().map(|(k, v)| (k.clone(), codec::encode(v, context))).collect::<serde_json::Map<_, _>>(),
        });
        // A call's answer comes whole.
        let line = self.exchange(&process::line(&request), context, &mut |_| {}).map_err(host_error)?;
        let message: serde_json::Value = serde_json::from_slice(&line)
            .map_err(|why| host_error(format!("the plugin host's answer could not be read: {why}")))?;
        let text = |key: &str| message.get(key).and_then(|v| v.as_str()).unwrap_or_default().to_owned();
        if let Some(result) = message.get("result") {
            return codec::decode(result).map_err(|why| host_error(format!("its result could not be read: {why}")));
        }
        if message.get("wait").is_some() {
            return Err(ForeignError::NotYetSet);
        }
        if let Some(raised) = message.get("raised") {
            let field = |key: &str| raised.get(key).and_then(|v| v.as_str()).unwrap_or_default().to_owned();
            return Err(ForeignError::Raised {
                kind: field("kind"),
                message: field("message"),
                traceback: field("traceback"),
                explicit: raised.get("explicit").and_then(|v| v.as_bool()).unwrap_or(false),
            });
        }
        let detail = message.get("detail").and_then(|v| v.as_str()).map(str::to_owned);
        Err(ForeignError::Host { message: text("failed"), detail })
    }

    /// Each instance is sent with the attributes the mappers read of it, so that most reads
    /// need no round trip: those their source shows, else (in two steps) those the mappers of a
    /// few instances asked for one by one.
    fn map_resources(&self, batch: &MapBatch<'_>, context: &mut dyn PluginContext) -> Result<MapAnswer, MapFailure> {
        let mut answer = MapAnswer::default();
        if !batch.reads.is_empty() {
            self.map_part(batch, &batch.items, batch.reads, context, &mut answer)?;
            return Ok(answer);
        }
        let probe = batch.items.len().min(PROBE);
        let (first, rest) = batch.items.split_at(probe);
        let reads = self.map_part(batch, first, &[], context, &mut answer)?;
        if !rest.is_empty() {
            self.map_part(batch, rest, &reads, context, &mut answer)?;
        }
        Ok(answer)
    }

    fn run_dependency_managers(
        &self,
        batch: &DependBatch<'_>,
        context: &mut dyn PluginContext,
    ) -> Result<DependAnswer, MapFailure> {
        let request = depend::request(batch, context);
        let line =
            self.exchange(&request, context, &mut |_| {}).map_err(|message| MapFailure { message, detail: None })?;
        depend::read(&line).map_err(|(message, detail)| MapFailure { message, detail })
    }

    fn prepare(&self, modules: &[String]) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if !matches!(*state, State::NotStarted) {
            return;
        }
        *state = match self.spawn() {
            Ok(mut process) => {
                let deadline = Instant::now() + self.timeout;
                let sent = modules
                    .iter()
                    .take_while(|module| process.send(&json!({ "op": "load", "module": module }), deadline).is_ok())
                    .count();
                State::Starting(Box::new(process), sent)
            }
            Err(why) => State::Failed(why, None),
        };
    }
}

/// How many instances of a type are mapped before the host says which attributes its mappers
/// read.
const PROBE: usize = 16;

impl PythonHost {
    /// Maps `items` of `batch`, each sent with its attributes named in `send` (their values
    /// answer the mappers' reads without a round trip); appends to `answer`, and returns which
    /// attributes of the items themselves the mappers asked for.
    fn map_part(
        &self,
        batch: &MapBatch<'_>,
        items: &[InstanceId],
        send: &[String],
        context: &mut dyn PluginContext,
        answer: &mut MapAnswer,
    ) -> Result<Vec<String>, MapFailure> {
        let ask_reads = send.is_empty() && batch.reads.is_empty();
        let request = map::request(batch, items, send, ask_reads, context);
        // The host sends its answer in parts as it maps, each read here while it maps the next.
        let mut collected = map::Collected::new(batch.id.is_some(), answer);
        let line = self
            .exchange(&request, context, &mut |part| collected.add(part))
            .map_err(|message| MapFailure { message, detail: None })?;
        let reads = collected.finish(&line).map_err(|(message, detail)| MapFailure { message, detail })?;
        Ok(reads)
    }
}

/// One request: sent, then the host's questions answered until it gives its final message.
fn converse(
    process: &mut Process,
    request: &[u8],
    deadline: Instant,
    context: &mut dyn PluginContext,
    parts: &mut dyn FnMut(&[u8]),
) -> Result<Vec<u8>, Silence> {
    process.send_line(request, deadline)?;
    loop {
        let line = process.receive_line(deadline)?;
        let garbled = || Silence::Garbled(String::from_utf8_lossy(&line).into_owned());
        // The host writes every question and every part with its `op` first, and the final
        // message without one: told apart by their first bytes, so the final message (a batch's
        // answer is read into its own types) and the parts are parsed only once, by their reader.
        match op_of(&line) {
            None => return Ok(line),
            Some(b"part") => {
                parts(&line);
                continue;
            }
            Some(_) => {}
        }
        let message: serde_json::Value = serde_json::from_slice(&line).map_err(|_| garbled())?;
        let answer = match message.get("op").and_then(|v| v.as_str()) {
            Some("get") => read_attribute(&message, context),
            Some("std") => call_std(&message, context),
            Some("entity") => {
                let entity = message.get("t").and_then(|v| v.as_str()).unwrap_or_default();
                match context.entity_type(entity) {
                    Some(info) => json!({ "v": { "$d": { "parents": info.parents, "attributes": info.attributes } } }),
                    None => json!({ "error": format!("there is no entity {entity}") }),
                }
            }
            _ => json!({ "error": format!("modelc does not understand {message}") }),
        };
        process.send(&answer, deadline)?;
    }
}

/// The `op` a host message starts with (`{"op":"get",…`), if it is a question or a part.
fn op_of(line: &[u8]) -> Option<&[u8]> {
    let rest = line.strip_prefix(b"{\"op\":\"")?;
    rest.iter().position(|b| *b == b'"').map(|end| &rest[..end])
}

/// An attribute a plugin reads of an instance.
fn read_attribute(message: &serde_json::Value, context: &mut dyn PluginContext) -> serde_json::Value {
    let instance = message.get("i").and_then(|v| v.as_u64()).and_then(|i| u32::try_from(i).ok());
    let attribute = message.get("a").and_then(|v| v.as_str()).unwrap_or_default();
    let Some(instance) = instance else { return json!({ "error": "no such instance" }) };
    answer_read(context, InstanceId(instance), attribute)
}

/// The answer to a read of `attribute` of `instance`: its value, "not yet", or why it has none.
fn answer_read(context: &mut dyn PluginContext, instance: InstanceId, attribute: &str) -> serde_json::Value {
    match context.attribute(instance, attribute) {
        Ok(value) => json!({ "v": codec::encode(&value, context) }),
        Err(AttributeError::NotYetSet) => json!({ "wait": 1 }),
        Err(AttributeError::NotFound(why)) => json!({ "notfound": why }),
        Err(AttributeError::OptionalEmpty(why)) => json!({ "optional": why }),
    }
}

/// A call's positional and keyword arguments.
type Arguments = (Vec<Value>, Vec<(String, Value)>);

/// A std plugin called from Python (`inmanta_plugins.std.<name>`): modelc's std runs it.
fn call_std(message: &serde_json::Value, context: &mut dyn PluginContext) -> serde_json::Value {
    let name = message.get("p").and_then(|v| v.as_str()).unwrap_or_default();
    let Some(signature) = modelc_stdlib::signatures::lookup(name) else {
        return json!({ "error": format!("there is no plugin std::{name}") });
    };
    let decode_all = || -> Result<Arguments, String> {
        let args = message.get("args").and_then(|v| v.as_array()).cloned().unwrap_or_default();
        let kwargs = message.get("kwargs").and_then(|v| v.as_object()).cloned().unwrap_or_default();
        let positional = args.iter().map(codec::decode).collect::<Result<_, _>>()?;
        let keywords = kwargs.iter().map(|(k, v)| Ok((k.clone(), codec::decode(v)?))).collect::<Result<_, String>>()?;
        Ok((positional, keywords))
    };
    let (positional, keywords) = match decode_all() {
        Ok(args) => args,
        Err(why) => return json!({ "error": why }),
    };
    let bound = match modelc_std_plugins::bind(signature, positional, keywords) {
        Ok(bound) => bound,
        Err(error) => return json!({ "error": error.message(&signature.fqn()) }),
    };
    match modelc_std_plugins::call(name, bound, context) {
        Ok(value) => json!({ "v": codec::encode(&value, context) }),
        Err(PluginError::NotYetSet) => json!({ "wait": 1 }),
        Err(error) => json!({ "error": format!("std::{name}: {error}") }),
    }
}

#[cfg(test)]
mod tests {
    use super::op_of;

    #[test]
    fn questions_and_parts_are_told_from_the_final_answer_by_their_first_bytes() {
        assert_eq!(op_of(br#"{"op":"get","i":1,"a":"name"}"#), Some(&b"get"[..]));
        assert_eq!(op_of(br#"{"op":"part","values":[]}"#), Some(&b"part"[..]));
        assert_eq!(op_of(br#"{"values":[],"outcomes":[{"op":"x"}]}"#), None);
        assert_eq!(op_of(br#"{"op":"#), None);
    }
}
