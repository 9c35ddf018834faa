//! `exec::Run`: a command, run when its guards allow it, as the exec module does.
//!
//! * Guards, checked every run (also in a dry run): `creates` (a path that, when it exists,
//!   means the command already ran), `unless` (a command; run only when it fails, or does not
//!   exist), `onlyif` (a command; run only when it succeeds). Guards get `environment`, not `cwd`,
//!   as in the module.
//! * When the guards allow it, the command runs (in `cwd`, with `environment` added to the
//!   runtime's own, found in `path` when given), unless `reload_only`. An exit code not in
//!   `returns` fails the resource, or skips it with `skip_on_fail`.
//! * A refresh (a required resource that sends events changed) runs `reload` (or, with
//!   `reload_only` and no `reload`, the command), when the guards allow it. Unlike the module, a
//!   command that just ran in this deploy is not run a second time as its own reload.
//! * `timeout` (seconds) bounds every command; on expiry its whole process group is killed.

use std::path::Path;
use std::time::Duration;

use indexmap::IndexMap;
use modelc_ir::Resource;
use serde_json::Value;

use super::process::{self, Invocation, Ran, RunError};
use super::{flag, optional_int, optional_string, string};
use crate::handler::{Context, Done, Handler};
use crate::report::Change;

/// The module's default timeout, in seconds.
const DEFAULT_TIMEOUT: i64 = 300;

pub struct RunHandler;

struct Settings<'r> {
    command: &'r str,
    environment: IndexMap<String, String>,
    cwd: Option<&'r Path>,
    search_path: Option<&'r str>,
    timeout: Duration,
    returns: Vec<i64>,
}

impl Settings<'_> {
    fn invocation<'a>(&'a self, command: &'a str, cwd: Option<&'a Path>) -> Invocation<'a> {
        Invocation {
            command,
            environment: &self.environment,
            cwd,
            search_path: self.search_path,
            timeout: self.timeout,
            remove_environment: &[],
        }
    }
}

impl Handler for RunHandler {
    fn deploy(&self, resource: &Resource, context: &Context<'_>) -> Result<Done, String> {
        let mut settings = settings(resource)?;
        // The meta timeout bounds the command too, whichever is shorter.
        if let Some(limit) = context.timeout {
            settings.timeout = settings.timeout.min(limit);
        }
        if !guards_allow(resource, &settings)? {
            return Ok(Done::unchanged());
        }
        let reload_only = flag(resource, "reload_only")?;
        let reload = optional_string(resource, "reload")?;
        let mut done = Done::unchanged();
        if !reload_only {
            done.changes.push(Change::new("command", Value::Null, settings.command));
            if !context.dry_run {
                execute(resource, &settings, settings.command, &mut done)?;
            }
        }
        if context.refresh && done.skipped.is_none() {
            let command = match (reload, reload_only) {
                (Some(reload), _) => Some(reload),
                (None, true) => Some(settings.command),
                // The command itself is the reload, and it just ran.
                (None, false) => None,
            };
            if let Some(command) = command {
                done.changes.push(Change::new("reload", Value::Null, command));
                if !context.dry_run {
                    execute(resource, &settings, command, &mut done)?;
                }
            }
            done.refreshed = true;
        }
        Ok(done)
    }
}

fn settings(resource: &Resource) -> Result<Settings<'_>, String> {
    let environment = match resource.attributes.get("environment") {
        None | Some(Value::Null) => IndexMap::new(),
        Some(Value::Object(map)) => {
            map.iter().map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_owned))).collect()
        }
        Some(other) => return Err(format!("its `environment` is {other}, not a dict")),
    };
    let returns = match resource.attributes.get("returns") {
        None | Some(Value::Null) => vec![0],
        Some(Value::Array(codes)) => codes
            .iter()
            .map(|c| c.as_i64().ok_or_else(|| format!("its `returns` holds {c}, not an integer")))
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(format!("its `returns` is {other}, not a list of integers")),
    };
    let timeout = optional_int(resource, "timeout")?.unwrap_or(DEFAULT_TIMEOUT);
    if timeout <= 0 {
        return Err(format!("its `timeout` is {timeout}; give a number of seconds above 0"));
    }
    let cwd = optional_string(resource, "cwd")?.map(Path::new);
    if let Some(cwd) = cwd
        && !cwd.is_absolute()
    {
        return Err(format!("its `cwd` `{}` is a relative path; give an absolute path", cwd.display()));
    }
    Ok(Settings {
        command: string(resource, "command")?,
        environment,
        cwd,
        search_path: optional_string(resource, "path")?,
        timeout: Duration::from_secs(timeout as u64),
        returns,
    })
}

/// Whether `creates`, `unless` and `onlyif` let the command run.
fn guards_allow(resource: &Resource, settings: &Settings<'_>) -> Result<bool, String> {
    if let Some(creates) = optional_string(resource, "creates")?
        && std::fs::symlink_metadata(creates).is_ok()
    {
        return Ok(false);
    }
    let guard = |name: &str| -> Result<Option<i32>, String> {
        let Some(command) = optional_string(resource, name)? else { return Ok(None) };
        match process::run(&settings.invocation(command, None)) {
            Ok(ran) => Ok(Some(ran.code)),
            // A guard that does not exist did not succeed.
            Err(RunError::NotFound(_)) => Ok(Some(127)),
            Err(error) => Err(format!("its `{name}` command `{command}`: {error}")),
        }
    };
    if guard("unless")?.is_some_and(|code| code == 0) {
        return Ok(false);
    }
    if guard("onlyif")?.is_some_and(|code| code != 0) {
        return Ok(false);
    }
    Ok(true)
}

/// Runs `command`; an exit code not in `returns` fails the resource, or skips it.
fn execute(resource: &Resource, settings: &Settings<'_>, command: &str, done: &mut Done) -> Result<(), String> {
    let ran: Ran =
        process::run(&settings.invocation(command, settings.cwd)).map_err(|e| format!("`{command}`: {e}"))?;
    if settings.returns.contains(&i64::from(ran.code)) {
        return Ok(());
    }
    let mut message = format!("`{command}` exited with {} (expected {:?})", ran.code, settings.returns);
    if !ran.stderr.is_empty() {
        message.push_str(&format!(": {}", ran.stderr));
    } else if !ran.stdout.is_empty() {
        message.push_str(&format!(": {}", ran.stdout));
    }
    if flag(resource, "skip_on_fail")? {
        done.skipped = Some(message);
        return Ok(());
    }
    Err(message)
}
