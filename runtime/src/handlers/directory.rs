//! `fs::Directory`: a directory, optionally with permissions, owner and group. Its parent must
//! exist (the fs module orders a directory after the managed directories above it). `purged`
//! removes it with everything in it.

use std::fs;
use std::path::PathBuf;

use modelc_ir::Resource;

use super::posix::{self, Attributes};
use super::{absolute_path, flag};
use crate::handler::{Context, Done, Handler};
use crate::report::Change;

pub struct DirectoryHandler;

impl Handler for DirectoryHandler {
    /// `purged` removes the directory.
    fn purges(&self) -> bool {
        true
    }

    fn deploy(&self, resource: &Resource, context: &Context<'_>) -> Result<Done, String> {
        let path = absolute_path(resource, "path")?;
        let attributes = Attributes::of(resource)?;
        let current = posix::lstat(&path)?;
        if let Some(meta) = &current
            && !meta.is_dir()
        {
            let what = if meta.file_type().is_symlink() { "a symbolic link" } else { "a file" };
            return Err(format!("{} is {what}, not a directory", path.display()));
        }
        if flag(resource, "purged")? {
            // Removing `/` would remove the machine; no model means that.
            if path.components().all(|c| matches!(c, std::path::Component::RootDir | std::path::Component::CurDir)) {
                return Err("it purges the root directory `/`; modelc refuses to remove it".to_owned());
            }
            return posix::purge(&path, current.is_some(), context.dry_run, |p| fs::remove_dir_all(p));
        }
        attributes.validate()?;
        let mut changes = Vec::new();
        if current.is_none() {
            if context.dry_run {
                posix::parent_will_exist(&path, context)?;
            }
            changes.push(Change::new("purged", true, false));
        }
        changes.extend(attributes.changes(current.as_ref()));
        if changes.is_empty() || context.dry_run {
            return Ok(Done::changed(changes));
        }
        if current.is_none() {
            posix::existing_parent(&path)?;
            fs::create_dir(&path).map_err(|e| posix::io_message(&format!("cannot create {}", path.display()), &e))?;
        }
        attributes.apply(&path, &changes)?;
        Ok(Done::changed(changes))
    }

    fn predicts_after_requirements(&self) -> bool {
        true
    }

    fn creates_directory(&self, resource: &Resource) -> Option<PathBuf> {
        if flag(resource, "purged").unwrap_or(true) {
            return None;
        }
        absolute_path(resource, "path").ok()
    }
}
