//! The machine-wide deploy lock: two deploys on one machine never interleave.

use super::*;

/// Where the machine-wide deploy lock is, unless `MODELC_DEPLOY_LOCK` names another file.
pub(super) fn lock_path() -> PathBuf {
    std::env::var_os("MODELC_DEPLOY_LOCK")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("modelc-deploy.lock"))
}

/// Takes the machine-wide deploy lock; a second deploy waits for the first and says so.
pub(super) fn lock(io: &mut Io<'_>) -> Result<Flock<File>, String> {
    let path = lock_path();
    let open = || OpenOptions::new().read(true).write(true).create(true).truncate(false).mode(0o666).open(&path);
    let file = open()
        .or_else(|_| File::open(&path))
        .map_err(|e| format!("cannot open the deploy lock {}: {e}", path.display()))?;
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => Ok(lock),
        Err((file, nix::errno::Errno::EWOULDBLOCK)) => {
            let _ =
                writeln!(io.stderr, "waiting for another deploy on this machine to finish (lock {})…", path.display());
            Flock::lock(file, FlockArg::LockExclusive)
                .map_err(|(_, e)| format!("cannot take the deploy lock {}: {e}", path.display()))
        }
        Err((_, e)) => Err(format!("cannot take the deploy lock {}: {e}", path.display())),
    }
}
