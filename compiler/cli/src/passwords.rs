//! The passwords `std::generate_password` generates, kept with the project in
//! `.modelc/passwords.json` (mode 0600; the `.modelc` directory ignores itself in git), so each
//! id keeps its password across compiles, as the reference keeps its password file. Only
//! `compile`, `export` and `deploy` generate and keep passwords; other commands read the kept
//! ones and use a placeholder for the rest, writing nothing.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;

const FILE: &str = ".modelc/passwords.json";

/// The alphabet of generated passwords (as the reference's: letters and digits).
const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// The project directory whose `.modelc/` keeps what modelc stores for a target.
pub(crate) fn project_dir(target: &modelc_driver::Target, cwd: &Path) -> PathBuf {
    match target {
        modelc_driver::Target::Project(project) => project.root.clone(),
        modelc_driver::Target::Module { root, .. } => root.clone(),
        modelc_driver::Target::Files(files) => {
            files.first().and_then(|f| f.parent()).map_or_else(|| cwd.to_owned(), Path::to_owned)
        }
    }
}

/// The passwords kept for the project in `dir`, and whether new ones are generated (and kept
/// by [`keep`]) or replaced by a placeholder.
pub(crate) fn load(dir: &Path, generate: bool) -> Result<modelc_exec::Passwords, String> {
    let path = dir.join(FILE);
    let stored = match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{} is damaged: {e}", path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => IndexMap::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    Ok(modelc_exec::Passwords { stored, random: generate.then_some(random_alphanumeric as fn(usize) -> String) })
}

/// Adds the passwords a compile generated to the project's file (written beside it and renamed
/// over it, readable by the owner only).
pub(crate) fn keep(dir: &Path, new: &IndexMap<String, String>) -> Result<(), String> {
    if new.is_empty() {
        return Ok(());
    }
    let path = dir.join(FILE);
    let mut all = load(dir, false)?.stored;
    all.extend(new.iter().map(|(k, v)| (k.clone(), v.clone())));
    let store_dir = dir.join(".modelc");
    std::fs::create_dir_all(&store_dir).map_err(|e| format!("cannot create {}: {e}", store_dir.display()))?;
    let ignore = store_dir.join(".gitignore");
    if !ignore.exists() {
        std::fs::write(&ignore, "# modelc's own state: never committed\n*\n")
            .map_err(|e| format!("cannot write {}: {e}", ignore.display()))?;
    }
    let text = serde_json::to_string_pretty(&all).map_err(|e| e.to_string())?;
    let temporary = path.with_extension(format!("json.{}", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temporary)
        .and_then(|mut f| f.write_all(text.as_bytes()).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&temporary, &path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        format!("cannot write {}: {e}", path.display())
    })
}

/// `length` random letters and digits from the operating system's random source.
fn random_alphanumeric(length: usize) -> String {
    let mut out = String::with_capacity(length);
    let mut buffer = [0u8; 64];
    while out.len() < length {
        if getrandom::fill(&mut buffer).is_err() {
            // No random source: fail loudly rather than hand out a predictable password.
            panic!("the operating system's random source is not available");
        }
        // Rejection sampling: bytes below 248 (4 × 62) map evenly onto the alphabet.
        for byte in buffer.iter().filter(|b| **b < 248) {
            if out.len() == length {
                break;
            }
            out.push(char::from(ALPHABET[usize::from(*byte) % ALPHABET.len()]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_passwords_are_random_letters_and_digits() {
        let (a, b) = (random_alphanumeric(32), random_alphanumeric(32));
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(a, b);
    }
}
