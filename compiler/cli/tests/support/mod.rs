//! What the CLI's process tests share: scratch directories, the shared module corpus, ssh
//! contexts to the test server, and file trees to compare.
#![allow(dead_code, reason = "each test file uses part of it")]

use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

/// A fresh, empty directory for test `name` of suite `suite`, unique to this process.
pub(crate) fn scratch(suite: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("modelc-test-{}-{suite}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The corpus of public modules in the shared reference material, when it is there (and
/// required when `MODELC_SHARED` names the material explicitly).
pub(crate) fn modules() -> Option<PathBuf> {
    let explicit = std::env::var_os("MODELC_SHARED");
    let shared = explicit
        .clone()
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    let modules = shared.join("corpus/inmanta-modules");
    if modules.join("fs").is_dir() {
        return Some(modules);
    }
    // Told where the material is, the suite must run, not skip.
    assert!(explicit.is_none(), "MODELC_SHARED names no module corpus at {}", modules.display());
    eprintln!("no module corpus at {}", modules.display());
    modelc_test_skip::skip(modelc_test_skip::NO_REFERENCE_MATERIAL);
    None
}
pub(crate) mod fleet;

/// A `mitogen::Ssh` to `server`, with its key and known_hosts, reading no ssh configuration of
/// the machine's; `via` another context (a jump host).
pub(crate) fn ssh_context(server: &modelc_test_sshd::Sshd, name: &str, via: Option<&str>) -> String {
    format!(
        "mitogen::Ssh(name=\"{name}\", hostname=\"127.0.0.1\", port={port}, username=\"{user}\", \
         identity_file=\"{key}\", ssh_args=[\"-F\", \"/dev/null\", \"-o\", \"UserKnownHostsFile={known}\"], \
         compression=false{via})",
        port = server.port(),
        user = server.user(),
        key = server.identity_file().display(),
        known = server.known_hosts().display(),
        via = via.map(|v| format!(", via={v}")).unwrap_or_default(),
    )
}

/// Every path under `dir` with its type, mode, owner and content (`$T` for `dir` in link
/// targets): equal trees, equal lists.
pub(crate) fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        for entry in std::fs::read_dir(&path).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let detail = if meta.file_type().is_symlink() {
                format!("-> {}", std::fs::read_link(&path).unwrap().display()).replace(dir.to_str().unwrap(), "$T")
            } else if meta.is_dir() {
                stack.push(path.clone());
                "dir".to_owned()
            } else {
                std::fs::read_to_string(&path).unwrap_or_default()
            };
            let relative = path.strip_prefix(dir).unwrap().display().to_string();
            out.push(format!("{relative} {:o} {}:{} {detail}", meta.permissions().mode(), meta.uid(), meta.gid()));
        }
    }
    out.sort();
    out
}
