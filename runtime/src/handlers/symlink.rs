//! `fs::Symlink`: a symbolic link at `dst` pointing to `src`. A link pointing elsewhere is
//! replaced atomically (a new link beside it, renamed over it); `purged` removes it. Something
//! other than a link at `dst` is an error, never overwritten.

use std::fs;
use std::path::Path;

use modelc_ir::Resource;

use super::posix;
use super::{absolute_path, flag, string};
use crate::handler::{Context, Done, Handler};
use crate::report::Change;

pub struct SymlinkHandler;

impl Handler for SymlinkHandler {
    /// `purged` removes the link.
    fn purges(&self) -> bool {
        true
    }

    fn deploy(&self, resource: &Resource, context: &Context<'_>) -> Result<Done, String> {
        let dst = absolute_path(resource, "dst")?;
        let src = string(resource, "src")?;
        let current = posix::lstat(&dst)?;
        let target = match &current {
            Some(meta) if meta.file_type().is_symlink() => Some(
                fs::read_link(&dst)
                    .map_err(|e| posix::io_message(&format!("cannot read the link {}", dst.display()), &e))?,
            ),
            Some(_) => {
                return Err(format!("{} already exists and is not a symbolic link; it is left alone", dst.display()));
            }
            None => None,
        };
        if flag(resource, "purged")? {
            return posix::purge(&dst, target.is_some(), context.dry_run, |p| fs::remove_file(p));
        }
        if target.as_deref() == Some(Path::new(src)) {
            return Ok(Done::unchanged());
        }
        if target.is_none() && context.dry_run {
            posix::parent_will_exist(&dst, context)?;
        }
        let old = target.map(|t| t.display().to_string());
        if !context.dry_run {
            posix::existing_parent(&dst)?;
            let temporary = posix::temporary_beside(&dst);
            std::os::unix::fs::symlink(src, &temporary)
                .map_err(|e| posix::io_message(&format!("cannot create a link beside {}", dst.display()), &e))?;
            if let Err(e) = fs::rename(&temporary, &dst) {
                let _ = fs::remove_file(&temporary);
                return Err(posix::io_message(&format!("cannot replace {}", dst.display()), &e));
            }
        }
        Ok(Done::changed(vec![Change::new("src", old, src)]))
    }

    fn predicts_after_requirements(&self) -> bool {
        true
    }
}
