//! The deploy lock: two deploys by one user on one machine never interleave.
//!
//! It lives in a directory only the deploying user can write: `/run/modelc` for root,
//! `$XDG_RUNTIME_DIR/modelc` for others, else `/tmp/modelc-$UID`, made 0700 and checked (a
//! directory of this user's, not a link, writable by no one else) before it is used. The file is
//! opened without following a link. A lock file in a world-writable place (`/tmp`, as before)
//! let any local user hold it and make every deploy wait for ever. Deploys of different users
//! therefore do not exclude each other. A lock held by another user (possible only through a
//! shared `MODELC_DEPLOY_LOCK`) is reported with that user's name and pid, not waited on; one
//! held by another deploy of the same user is waited for, saying which process holds it.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};

use modelc_runtime::handlers::posix::owner_name;

use super::*;

/// Where the deploy lock is, unless `MODELC_DEPLOY_LOCK` (`Io::deploy_lock`) names a file.
pub(super) fn lock_path(io: &Io<'_>) -> Result<PathBuf, String> {
    if let Some(path) = &io.deploy_lock {
        return Ok(path.clone());
    }
    let uid = nix::unistd::geteuid();
    let dir = if uid.is_root() {
        PathBuf::from("/run/modelc")
    } else if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        PathBuf::from(runtime).join("modelc")
    } else {
        PathBuf::from(format!("/tmp/modelc-{uid}"))
    };
    private_directory(&dir)?;
    Ok(dir.join("deploy.lock"))
}

/// Makes `dir` (0700) if it is not there, and checks that it is a directory of this user's
/// that no one else can write.
fn private_directory(dir: &Path) -> Result<(), String> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create the deploy lock's directory {}: {e}", dir.display())),
    }
    let meta = std::fs::symlink_metadata(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let uid = nix::unistd::geteuid().as_raw();
    let refuse = |why: String| {
        Err(format!(
            "the deploy lock's directory {} {why}: another user could hold the lock or replace it; \
             remove it (modelc makes it again), or name a lock file with MODELC_DEPLOY_LOCK",
            dir.display()
        ))
    };
    if !meta.file_type().is_dir() {
        return refuse("is not a directory".to_owned());
    }
    if meta.uid() != uid {
        return refuse(format!("belongs to `{}`, not to you", owner_name(&meta)));
    }
    if meta.permissions().mode() & 0o022 != 0 {
        return refuse(format!("can be written by others (mode {:o})", meta.permissions().mode() & 0o7777));
    }
    Ok(())
}

/// Takes the deploy lock; a second deploy of the same user waits for the first and says so.
pub(super) fn lock(io: &mut Io<'_>) -> Result<Flock<File>, String> {
    let path = lock_path(io)?;
    let nofollow = nix::fcntl::OFlag::O_NOFOLLOW.bits();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(nofollow)
        .open(&path)
        .or_else(|_| OpenOptions::new().read(true).custom_flags(nofollow).open(&path))
        .map_err(|e| format!("cannot open the deploy lock {}: {e}", path.display()))?;
    let inode = file.metadata().map(|m| m.ino()).ok();
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => Ok(lock),
        Err((file, nix::errno::Errno::EWOULDBLOCK)) => {
            let holder = inode.and_then(holder_of);
            let me = nix::unistd::geteuid().as_raw();
            match holder {
                Some((pid, process)) if process.uid() != me => Err(format!(
                    "the deploy lock {} is held by user `{}` (pid {pid}); modelc does not wait for another user's \
                     deploy: ask them, or stop that process",
                    path.display(),
                    owner_name(&process)
                )),
                _ => {
                    let by = holder.map_or(String::new(), |(pid, _)| format!(", held by pid {pid}"));
                    let _ = writeln!(
                        io.stderr,
                        "waiting for another deploy on this machine to finish (lock {}{by})…",
                        path.display()
                    );
                    Flock::lock(file, FlockArg::LockExclusive)
                        .map_err(|(_, e)| format!("cannot take the deploy lock {}: {e}", path.display()))
                }
            }
        }
        Err((_, e)) => Err(format!("cannot take the deploy lock {}: {e}", path.display())),
    }
}

/// The process holding a `flock` on the file with inode `inode`, and its `/proc` entry (whose
/// owner is the process's user), from `/proc/locks` (Linux). `None` where that cannot be read.
fn holder_of(inode: u64) -> Option<(u32, std::fs::Metadata)> {
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    locks.lines().find_map(|line| {
        // `1: FLOCK  ADVISORY  WRITE 12345 00:2a:1234 0 EOF`
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (kind, pid, device_inode) = (fields.get(1)?, fields.get(4)?, fields.get(5)?);
        if *kind != "FLOCK" || device_inode.rsplit(':').next()?.parse::<u64>().ok()? != inode {
            return None;
        }
        let pid: u32 = pid.parse().ok()?;
        Some((pid, std::fs::metadata(format!("/proc/{pid}")).ok()?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::unwrap_used, reason = "test code")]
    fn the_lock_directory_is_made_private_and_a_shared_one_refused() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("modelc");
        private_directory(&dir).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        private_directory(&dir).unwrap();
        // Writable by others.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let refused = private_directory(&dir).unwrap_err();
        assert!(refused.contains("can be written by others (mode 1777)"), "{refused}");
        // A link to a directory, even a private one, is not used.
        let link = root.path().join("link");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        assert!(private_directory(&link).unwrap_err().contains("is not a directory"));
        // Another user's.
        if nix::unistd::geteuid().is_root() {
            let theirs = root.path().join("theirs");
            std::fs::create_dir(&theirs).unwrap();
            std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
            nix::unistd::chown(&theirs, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
            let refused = private_directory(&theirs).unwrap_err();
            assert!(refused.contains("belongs to `nobody`, not to you"), "{refused}");
        }
    }
}
