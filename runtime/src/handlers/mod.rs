//! The handlers this runtime ships, one module per resource type, and what they share: typed
//! access to a resource's attributes.

pub mod directory;
pub mod file;
pub mod null;
pub mod posix;
pub mod process;
pub mod run;
pub mod symlink;

use std::path::PathBuf;

use modelc_ir::Resource;
use serde_json::Value;

/// A string attribute that must be there.
pub(crate) fn string<'r>(resource: &'r Resource, name: &str) -> Result<&'r str, String> {
    match resource.attributes.get(name) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!("its `{name}` is {other}, not a string")),
        None => Err(format!("it has no `{name}` attribute")),
    }
}

/// A string attribute that may be null, missing or empty (all three mean "not set").
pub(crate) fn optional_string<'r>(resource: &'r Resource, name: &str) -> Result<Option<&'r str>, String> {
    match resource.attributes.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!("its `{name}` is {other}, not a string")),
    }
}

/// An integer attribute that may be null or missing.
pub(crate) fn optional_int(resource: &Resource, name: &str) -> Result<Option<i64>, String> {
    match resource.attributes.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n.as_i64().map(Some).ok_or_else(|| format!("its `{name}` is {n}, not an integer")),
        Some(other) => Err(format!("its `{name}` is {other}, not an integer")),
    }
}

/// A boolean attribute; missing or null is false.
pub(crate) fn flag(resource: &Resource, name: &str) -> Result<bool, String> {
    match resource.attributes.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(format!("its `{name}` is {other}, not a boolean")),
    }
}

/// A path attribute that must be absolute: a relative path would depend on where the runtime
/// happens to run.
pub(crate) fn absolute_path(resource: &Resource, name: &str) -> Result<PathBuf, String> {
    let text = string(resource, name)?;
    let path = PathBuf::from(text);
    if !path.is_absolute() {
        return Err(format!("its `{name}` `{text}` is a relative path; give an absolute path"));
    }
    Ok(path)
}

/// How many times the file handlers flushed a file or a directory to disk in this process
/// (for benchmarks and tests: what grouping saves).
pub fn disk_syncs() -> u64 {
    posix::disk_syncs()
}
