//! What an agent keeps in its state directory: per name, the desired state it enforces (the
//! last version it was given, so it keeps enforcing it while the server is away, and after a
//! restart), and, shared by the names, the file contents by hash. Files are written whole
//! (a temporary file, synced, renamed) and readable only by the agent's user.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use modelc_api::Foreign;
use modelc_ir::Resource;
use serde::{Deserialize, Serialize};

/// The version an agent enforces: its own resources, and the other agents' they require.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Desired {
    pub(crate) version: u64,
    pub(crate) resources: Vec<Resource>,
    pub(crate) foreign: Vec<Foreign>,
}

const DESIRED: &str = "desired.json";

impl Desired {
    /// The desired state kept in `dir`, if any (a damaged one is as none: the server gives it
    /// again).
    pub(crate) fn load(dir: &Path) -> Option<Desired> {
        let text = std::fs::read(dir.join(DESIRED)).ok()?;
        serde_json::from_slice(&text).ok()
    }

    pub(crate) fn save(&self, dir: &Path) -> Result<(), String> {
        let bytes = serde_json::to_vec(self).map_err(|e| format!("cannot encode the desired state: {e}"))?;
        write_atomic(&dir.join(DESIRED), &bytes)
    }
}

/// The file contents, by sha1, shared by the agents of a state directory.
pub(crate) struct Contents {
    dir: PathBuf,
}

impl Contents {
    pub(crate) fn open(state_dir: &Path) -> Result<Contents, String> {
        let dir = state_dir.join("contents");
        private_dir(&dir)?;
        Ok(Contents { dir })
    }

    fn path(&self, hash: &str) -> Option<PathBuf> {
        // A hash names a file here: only hex digits.
        (!hash.is_empty() && hash.len() <= 128 && hash.chars().all(|c| c.is_ascii_hexdigit()))
            .then(|| self.dir.join(hash))
    }

    pub(crate) fn get(&self, hash: &str) -> Option<Vec<u8>> {
        std::fs::read(self.path(hash)?).ok()
    }

    pub(crate) fn put(&self, hash: &str, bytes: &[u8]) -> Result<(), String> {
        let Some(path) = self.path(hash) else { return Err(format!("`{hash}` is not a content hash")) };
        write_atomic(&path, bytes)
    }
}

/// Makes `dir` (and its parents) private to this user if it is not there.
pub(crate) fn private_dir(dir: &Path) -> Result<(), String> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// Writes `bytes` to `path` whole: a temporary file beside it, synced, then renamed over it, and
/// the directory synced, so a crash leaves the old file or the new one.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temporary)
        .map_err(fail)?;
    file.write_all(bytes).map_err(fail)?;
    file.sync_all().map_err(fail)?;
    drop(file);
    std::fs::rename(&temporary, path).map_err(fail)?;
    sync_dir(dir)
}

pub(crate) fn sync_dir(dir: &Path) -> Result<(), String> {
    std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| format!("cannot sync {}: {e}", dir.display()))
}
