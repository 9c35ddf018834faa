//! `fs::File`: a regular file with content (by its sha1 `hash`, looked up in the content
//! source), and optionally permissions, owner and group. `purged` removes it.

use std::fs;
use std::path::Path;

use modelc_ir::Resource;

use super::posix::{self, Attributes};
use super::{absolute_path, flag, string};
use crate::handler::{Context, Done, Handler};
use crate::report::Change;

/// Files larger than this are not diffed in dry runs (the hashes are shown).
const DIFF_LIMIT: u64 = 1 << 20;

pub struct FileHandler;

impl Handler for FileHandler {
    /// `purged` removes the file.
    fn purges(&self) -> bool {
        true
    }

    fn deploy(&self, resource: &Resource, context: &Context<'_>) -> Result<Done, String> {
        deploy_file(resource, context, None)
    }

    fn predicts_after_requirements(&self) -> bool {
        true
    }

    /// Files in one directory: their contents are staged beside them, flushed to disk in one
    /// call, renamed into place, and the directory flushed once: two flushes for the group
    /// instead of two per file.
    fn group_key(&self, resource: &Resource) -> Option<String> {
        if flag(resource, "purged").unwrap_or(true) {
            return None;
        }
        let path = absolute_path(resource, "path").ok()?;
        Some(path.parent()?.to_string_lossy().into_owned())
    }

    fn deploy_group(&self, members: &[&Resource], contexts: &[Context<'_>]) -> Vec<Result<Done, String>> {
        let mut staged: Vec<Option<posix::Staged>> = members.iter().map(|_| None).collect();
        let mut results: Vec<Result<Done, String>> = members
            .iter()
            .zip(contexts)
            .zip(staged.iter_mut())
            .map(|((resource, context), slot)| deploy_file(resource, context, Some(slot)))
            .collect();
        let Some(directory) = staged.iter().flatten().find_map(|s| s.target().parent().map(Path::to_owned)) else {
            return results;
        };
        let flushed = match posix::sync_file_system(&directory) {
            Some(result) => result,
            None => staged.iter().flatten().try_for_each(posix::Staged::sync),
        };
        let mut committed = Vec::new();
        for (i, slot) in staged.into_iter().enumerate() {
            let Some(staged) = slot else { continue };
            // Dropping an uncommitted stage removes its temporary file.
            let outcome = flushed.clone().and_then(|()| staged.commit());
            match outcome {
                Ok(()) => committed.push(i),
                Err(error) => results[i] = Err(error),
            }
        }
        if let Err(error) = posix::sync_directory(&directory) {
            for i in committed {
                results[i] = Err(error.clone());
            }
        }
        results
    }
}

/// Deploys one file.
/// With `stage`, new content is staged there instead of written (the group puts it in place).
fn deploy_file(
    resource: &Resource,
    context: &Context<'_>,
    stage: Option<&mut Option<posix::Staged>>,
) -> Result<Done, String> {
    let path = absolute_path(resource, "path")?;
    let attributes = Attributes::of(resource)?;
    let current = posix::lstat(&path)?;
    if let Some(meta) = &current {
        if meta.is_dir() {
            return Err(format!("{} is a directory, not a file", path.display()));
        }
        if meta.file_type().is_symlink() {
            return Err(format!(
                "{} is a symbolic link; fs::File manages regular files (use fs::Symlink for links)",
                path.display()
            ));
        }
    }
    if flag(resource, "purged")? {
        return posix::purge(&path, current.is_some(), context.dry_run, |p| fs::remove_file(p));
    }
    attributes.validate()?;
    if current.is_none() && context.dry_run {
        posix::parent_will_exist(&path, context)?;
    }
    let hash = string(resource, "hash")?;
    let current_hash = current.as_ref().map(|_| posix::sha1_file(&path)).transpose()?;
    let mut changes = Vec::new();
    if current_hash.as_deref() != Some(hash) {
        let mut change = Change::new("hash", current_hash.clone(), hash);
        if context.dry_run {
            change.diff = content_diff(&path, current.as_ref().map(|m| m.len()), hash, context);
        }
        changes.push(change);
    }
    changes.extend(attributes.changes(current.as_ref()));
    if changes.is_empty() || context.dry_run {
        return Ok(Done::changed(changes));
    }
    if changes.iter().any(|c| c.field == "hash") {
        let content = desired_content(hash, context)?;
        // A new file gets the desired mode, or the default (0666 less the umask); an existing
        // one keeps its mode unless another is desired.
        let mode = match (attributes.permissions, &current) {
            (Some(p), _) => Some(posix::mode_of(p)?),
            (None, Some(meta)) => Some(std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o7777),
            (None, None) => None,
        };
        // The new content replaces the file: it keeps the file's owner and group unless
        // others are desired.
        let ownership = (attributes.owner.as_deref(), attributes.group.as_deref());
        let keep = current.as_ref();
        match stage {
            Some(slot) => *slot = Some(posix::stage(&path, &content, mode, ownership, keep)?),
            None => posix::write_atomically(&path, &content, mode, ownership, keep)?,
        }
    } else {
        attributes.apply(&path, &changes)?;
    }
    Ok(Done::changed(changes))
}

/// The content whose sha1 is `hash`, checked.
fn desired_content(hash: &str, context: &Context<'_>) -> Result<Vec<u8>, String> {
    let content = context
        .content
        .content(hash)
        .ok_or_else(|| format!("its content (sha1 {hash}) is not in the store or the IR; export the model again"))?;
    let actual = posix::sha1_bytes(&content);
    if actual != hash {
        return Err(format!("the stored content for sha1 {hash} has sha1 {actual}: the store is damaged"));
    }
    Ok(content)
}

/// A unified diff from what is at `path` to the desired content, when both are text of a
/// reasonable size.
fn content_diff(path: &Path, current_len: Option<u64>, hash: &str, context: &Context<'_>) -> Option<String> {
    let desired = context.content.content(hash)?;
    if current_len.unwrap_or(0) > DIFF_LIMIT || desired.len() as u64 > DIFF_LIMIT {
        return None;
    }
    let old = match current_len {
        Some(_) => String::from_utf8(fs::read(path).ok()?).ok()?,
        None => String::new(),
    };
    let new = String::from_utf8(desired).ok()?;
    let name = path.display().to_string();
    let old_name = if current_len.is_some() { name.clone() } else { "/dev/null".to_owned() };
    Some(modelc_ir::text_diff::unified(&old, &new, Some((&old_name, &name)), 3))
}
