//! The operations modules' Python handlers do on their resource's machine: what the public
//! mitogen module's `Proxy` (and the reference's `self._io`) offers — test, stat, read, write,
//! change mode and owner, make and remove, link, run a command. modelc does them here for a
//! local context, and in its SSH helper on the host a context names, so the same code serves
//! both and no Python runs on the target.
//!
//! Each behaves as the module's own function on the target does (`inmanta_mitogen.put` writes
//! in place, `file_stat` follows links, `symlink_stat` does not); a failure carries the OS
//! error number, so the handler sees the `OSError` Python would raise.

use std::fs::{self, Metadata};
use std::io::Write as _;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use indexmap::IndexMap;
use nix::unistd::{Gid, Group, Uid, User};
use serde_json::{Value, json};

use crate::handlers::process::{Invocation, RunError, run_words};

/// What an operation gives back: a JSON value and, for a read, the bytes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Answer {
    pub value: Value,
    pub data: Option<Vec<u8>>,
}

impl Answer {
    fn value(value: impl Into<Value>) -> Answer {
        Answer { value: value.into(), data: None }
    }
}

/// Why an operation failed: the message, the OS error number when the OS refused, the time
/// limit when `run` was stopped at it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Failure {
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errno: Option<i32>,
    /// `run`'s command ran past its time limit and was killed (Python's
    /// `subprocess.TimeoutExpired` for the handler).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<TimedOut>,
}

/// A command `run` stopped at its time limit: what `subprocess.TimeoutExpired` says of it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TimedOut {
    /// The program and its arguments.
    pub command: Vec<String>,
    pub seconds: f64,
}

impl Failure {
    /// A failure that is not the OS's.
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure { message: message.into(), errno: None, timed_out: None }
    }

    fn os(what: &str, path: &str, error: &std::io::Error) -> Failure {
        let errno = error.raw_os_error();
        let reason = match errno {
            Some(code) => nix::errno::Errno::from_raw(code).desc().to_owned(),
            None => error.to_string(),
        };
        Failure {
            message: format!("[Errno {}] {reason}: '{path}' ({what})", errno.unwrap_or(0)),
            errno,
            timed_out: None,
        }
    }
}

/// The longest a command run for a handler may take when the handler gives no timeout.
const RUN_LIMIT: Duration = Duration::from_secs(24 * 3600);

/// Does operation `op` with `args` (and `data`, for a write).
pub fn perform(op: &str, args: &[Value], data: Option<&[u8]>) -> Result<Answer, Failure> {
    let path = |i: usize| -> Result<&str, Failure> {
        args.get(i)
            .and_then(Value::as_str)
            .ok_or_else(|| Failure::usage(format!("`{op}` needs a path as argument {i}")))
    };
    let optional = |i: usize| args.get(i).and_then(Value::as_str).filter(|s| !s.is_empty());
    match op {
        "lexists" => Ok(Answer::value(fs::symlink_metadata(path(0)?).is_ok())),
        "islink" => Ok(Answer::value(fs::symlink_metadata(path(0)?).is_ok_and(|m| m.file_type().is_symlink()))),
        "file_stat" => {
            let p = path(0)?;
            let meta = fs::metadata(p).map_err(|e| Failure::os("stat", p, &e))?;
            Ok(Answer::value(stat_of(&meta, true)?))
        }
        "symlink_stat" => {
            let p = path(0)?;
            let meta = fs::symlink_metadata(unresolved_last(p)).map_err(|e| Failure::os("lstat", p, &e))?;
            Ok(Answer::value(stat_of(&meta, false)?))
        }
        "hash_file" => {
            let p = path(0)?;
            let bytes = fs::read(p).map_err(|e| Failure::os("read", p, &e))?;
            Ok(Answer::value(crate::handlers::posix::sha1_bytes(&bytes)))
        }
        "read_binary" => {
            let p = path(0)?;
            let bytes = fs::read(p).map_err(|e| Failure::os("read", p, &e))?;
            Ok(Answer { value: Value::Null, data: Some(bytes) })
        }
        "readlink" => {
            let p = path(0)?;
            let target = fs::read_link(p).map_err(|e| Failure::os("readlink", p, &e))?;
            Ok(Answer::value(target.to_string_lossy().into_owned()))
        }
        "put" => {
            let p = path(0)?;
            let mut file = fs::File::create(p).map_err(|e| Failure::os("open", p, &e))?;
            file.write_all(data.unwrap_or_default()).map_err(|e| Failure::os("write", p, &e))?;
            Ok(Answer::default())
        }
        "chmod" => {
            let p = path(0)?;
            let written =
                args.get(1).map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned)).unwrap_or_default();
            let mode = u32::from_str_radix(&written, 8)
                .map_err(|_| Failure::usage(format!("invalid literal for int() with base 8: '{written}'")))?;
            fs::set_permissions(p, fs::Permissions::from_mode(mode)).map_err(|e| Failure::os("chmod", p, &e))?;
            Ok(Answer::default())
        }
        "chown" => {
            let p = path(0)?;
            let (user, group) = (id_argument(args.get(1)), id_argument(args.get(2)));
            if user.is_none() && group.is_none() {
                return Err(Failure::usage("user and/or group must be set"));
            }
            let uid = user.as_deref().map(uid_of).transpose()?;
            let gid = group.as_deref().map(gid_of).transpose()?;
            std::os::unix::fs::chown(p, uid, gid).map_err(|e| Failure::os("chown", p, &e))?;
            Ok(Answer::default())
        }
        "mkdir" => {
            let p = path(0)?;
            fs::create_dir(p).map_err(|e| Failure::os("mkdir", p, &e))?;
            Ok(Answer::default())
        }
        "rmtree" => {
            let p = path(0)?;
            if fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(Failure::usage(format!("Cannot call rmtree on a symbolic link: '{p}'")));
            }
            fs::remove_dir_all(p).map_err(|e| Failure::os("rmtree", p, &e))?;
            Ok(Answer::default())
        }
        "remove" => {
            let p = path(0)?;
            if fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()) {
                let error = std::io::Error::from_raw_os_error(nix::errno::Errno::EISDIR as i32);
                return Err(Failure::os("remove", p, &error));
            }
            fs::remove_file(p).map_err(|e| Failure::os("remove", p, &e))?;
            Ok(Answer::default())
        }
        "symlink" => {
            let (source, target) = (path(0)?, path(1)?);
            std::os::unix::fs::symlink(source, target).map_err(|e| Failure::os("symlink", target, &e))?;
            Ok(Answer::default())
        }
        "run" => run(args, optional(3)),
        other => Err(Failure::usage(format!("modelc does no operation `{other}` on a target"))),
    }
}

/// `path` with every link resolved but the last element's own (as `inmanta_files.symlink_stat`
/// finds it).
fn unresolved_last(path: &str) -> PathBuf {
    let path = Path::new(path);
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else { return path.to_path_buf() };
    let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
    fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf()).join(name)
}

/// `{owner, group, permissions}` of a path: names (ids when `fallback` and no name has them),
/// the mode's last four octal digits read as a decimal number (0o100644 → 644).
fn stat_of(meta: &Metadata, fallback: bool) -> Result<Value, Failure> {
    let owner = match user_name(meta.uid()) {
        Some(name) => name,
        None if fallback => meta.uid().to_string(),
        None => return Err(Failure::usage(format!("'getpwuid(): uid not found: {}'", meta.uid()))),
    };
    let group = match group_name(meta.gid()) {
        Some(name) => name,
        None if fallback => meta.gid().to_string(),
        None => return Err(Failure::usage(format!("'getgrgid(): gid not found: {}'", meta.gid()))),
    };
    let octal = format!("{:o}", meta.mode());
    let last_four = &octal[octal.len().saturating_sub(4)..];
    Ok(json!({"owner": owner, "group": group, "permissions": last_four.parse::<i64>().unwrap_or(0)}))
}

/// Names found by id, kept for the process: a lookup reads the system's user database, which
/// costs more than the `stat` it names (a handler stats every file it manages). Only names that
/// were found are kept, so a user a handler creates is found at its first use.
static NAMES: std::sync::Mutex<Names> = std::sync::Mutex::new((Vec::new(), Vec::new()));

fn user_name(uid: u32) -> Option<String> {
    named(uid, |names| &mut names.0, |uid| User::from_uid(Uid::from_raw(uid)).ok().flatten().map(|u| u.name))
}

fn group_name(gid: u32) -> Option<String> {
    named(gid, |names| &mut names.1, |gid| Group::from_gid(Gid::from_raw(gid)).ok().flatten().map(|g| g.name))
}

type Names = (Vec<(u32, String)>, Vec<(u32, String)>);

fn named(
    id: u32,
    table: impl Fn(&mut Names) -> &mut Vec<(u32, String)>,
    look_up: impl Fn(u32) -> Option<String>,
) -> Option<String> {
    let mut names = NAMES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, name)) = table(&mut names).iter().find(|(known, _)| *known == id) {
        return Some(name.clone());
    }
    let name = look_up(id)?;
    table(&mut names).push((id, name.clone()));
    Some(name)
}

/// A user or group argument: a name, an id (a number), or none.
fn id_argument(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

fn uid_of(name: &str) -> Result<u32, Failure> {
    match User::from_name(name) {
        Ok(Some(user)) => Ok(user.uid.as_raw()),
        _ => name.parse().map_err(|_| Failure::usage(format!("no such user: '{name}'"))),
    }
}

fn gid_of(name: &str) -> Result<u32, Failure> {
    match Group::from_name(name) {
        Ok(Some(group)) => Ok(group.gid.as_raw()),
        _ => name.parse().map_err(|_| Failure::usage(format!("no such group: '{name}'"))),
    }
}

/// `run(command, arguments, env, cwd, timeout)`: no shell; `env` is added to this process's
/// environment (which loses `PYTHONPATH` unless `env` sets it); the result is
/// `[stdout, stderr, code]`, the outputs stripped.
fn run(args: &[Value], cwd: Option<&str>) -> Result<Answer, Failure> {
    let command = args.first().and_then(Value::as_str).ok_or_else(|| Failure::usage("`run` needs a command"))?;
    let mut words = vec![command.to_owned()];
    if let Some(Value::Array(arguments)) = args.get(1) {
        words.extend(arguments.iter().map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_owned)));
    }
    let mut environment: IndexMap<String, String> = IndexMap::new();
    let given = args.get(2).and_then(Value::as_object);
    if let Some(given) = given {
        for (name, value) in given {
            environment.insert(name.clone(), value.as_str().map_or_else(|| value.to_string(), str::to_owned));
        }
    }
    let timeout = args.get(4).and_then(Value::as_f64).map_or(RUN_LIMIT, Duration::from_secs_f64);
    let invocation = Invocation {
        command,
        environment: &environment,
        cwd: cwd.map(Path::new),
        search_path: None,
        timeout,
        remove_environment: if given.is_some_and(|g| g.contains_key("PYTHONPATH")) { &[] } else { &["PYTHONPATH"] },
    };
    match run_words(&words, &invocation) {
        Ok(ran) => Ok(Answer::value(json!([ran.stdout.trim(), ran.stderr.trim(), ran.code]))),
        Err(RunError::NotFound(program)) => Err(Failure {
            message: format!("[Errno 2] No such file or directory: '{program}'"),
            errno: Some(nix::errno::Errno::ENOENT as i32),
            timed_out: None,
        }),
        Err(RunError::TimedOut(limit)) => Err(Failure {
            message: format!("Command '{}' timed out after {} seconds", words.join(" "), limit.as_secs_f64()),
            errno: None,
            timed_out: Some(TimedOut { command: words, seconds: limit.as_secs_f64() }),
        }),
        Err(error) => Err(Failure::usage(error.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(op: &str, args: Value) -> Result<Answer, Failure> {
        perform(op, args.as_array().unwrap(), None)
    }

    #[test]
    fn files_are_tested_written_read_and_changed_as_the_module_does() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f").display().to_string();
        assert_eq!(call("lexists", json!([file])).unwrap().value, json!(false));
        perform("put", &[json!(file)], Some(b"hello\n")).unwrap();
        assert_eq!(call("read_binary", json!([file])).unwrap().data.unwrap(), b"hello\n");
        assert_eq!(call("hash_file", json!([file])).unwrap().value, json!("f572d396fae9206628714fb2ce00f72e94f2258f"));
        call("chmod", json!([file, "640"])).unwrap();
        let stat = call("file_stat", json!([file])).unwrap().value;
        assert_eq!(stat["permissions"], json!(640));
        let link = dir.path().join("l").display().to_string();
        call("symlink", json!([file, link])).unwrap();
        assert_eq!(call("islink", json!([link])).unwrap().value, json!(true));
        assert_eq!(call("readlink", json!([link])).unwrap().value, json!(file));
        assert_eq!(call("symlink_stat", json!([link])).unwrap().value["permissions"], json!(777));
        let missing = call("file_stat", json!([dir.path().join("missing").display().to_string()])).unwrap_err();
        assert_eq!(missing.errno, Some(2));
        let sub = dir.path().join("d").display().to_string();
        call("mkdir", json!([sub])).unwrap();
        assert_eq!(call("remove", json!([sub])).unwrap_err().errno, Some(nix::errno::Errno::EISDIR as i32));
        call("rmtree", json!([sub])).unwrap();
        assert_eq!(call("chown", json!([file, null, null])).unwrap_err().message, "user and/or group must be set");
    }

    #[test]
    fn commands_run_without_a_shell_and_give_their_stripped_output() {
        let ran = call("run", json!(["sh", ["-c", "echo ' out '; echo err >&2; exit 3"], {"X": "1"}, null, null]));
        assert_eq!(ran.unwrap().value, json!(["out", "err", 3]));
        let ran = call("run", json!(["sh", ["-c", "echo $X"], {"X": "given"}])).unwrap();
        assert_eq!(ran.value[0], json!("given"));
        assert_eq!(call("run", json!(["no-such-program-here"])).unwrap_err().errno, Some(2));
        let stopped = call("run", json!(["sleep", ["5"], null, null, 0.2])).unwrap_err();
        let expected = TimedOut { command: vec!["sleep".to_owned(), "5".to_owned()], seconds: 0.2 };
        assert_eq!(stopped.timed_out, Some(expected), "{stopped:?}");
    }
}
