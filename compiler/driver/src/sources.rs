//! Reading a target's source files, in a deterministic order.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use modelc_diagnostics::{Diagnostic, FileId, SourceFiles, Span, codes};

use crate::project::{LoadError, Target};

/// The files of a target and the diagnostics found while reading them.
#[derive(Debug, Default)]
pub struct Loaded {
    pub files: SourceFiles,
    /// Problems with the bytes of a file itself (invalid UTF-8).
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads every file the target consists of: the files themselves, or the project's `main.cf` and
/// every `.cf` file of each module found on its module path (`<dir>/<module>/model/**.cf`).
/// Files are read in sorted order so that output never depends on directory listing order.
pub fn load(target: &Target, cwd: &Path) -> Result<Loaded, LoadError> {
    let mut loaded = Loaded::default();
    match target {
        Target::Files(paths) => {
            for path in paths {
                read_into(&mut loaded, path, cwd)?;
            }
        }
        Target::Project(project) => {
            read_into(&mut loaded, &project.main, cwd)?;
            for dir in &project.module_paths {
                let Ok(entries) = std::fs::read_dir(dir) else { continue };
                let mut modules: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
                modules.sort();
                for module in modules {
                    let mut files = Vec::new();
                    collect_cf_files(&module.join("model"), &mut files, &mut HashSet::new());
                    files.sort();
                    for file in files {
                        read_into(&mut loaded, &file, cwd)?;
                    }
                }
            }
        }
    }
    Ok(loaded)
}

/// Collects the `.cf` files under `dir`. Symbolic links are followed, but each real directory
/// and file is visited once (`seen` holds canonical paths), so a link loop cannot repeat files.
fn collect_cf_files(dir: &Path, out: &mut Vec<PathBuf>, seen: &mut HashSet<PathBuf>) {
    let Ok(real) = dir.canonicalize() else { return };
    if !seen.insert(real) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            collect_cf_files(&path, out, seen);
        } else if path.extension().is_some_and(|e| e == "cf") {
            // A file that cannot be canonicalised is still read (and its error reported there).
            if path.canonicalize().map_or(true, |real| seen.insert(real)) {
                out.push(path);
            }
        }
    }
}

/// Reads one file. Invalid UTF-8 is replaced and reported, so the rest can still be checked.
fn read_into(loaded: &mut Loaded, path: &Path, cwd: &Path) -> Result<(), LoadError> {
    let bytes = std::fs::read(path).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => LoadError::NotFound(path.to_owned()),
        _ => LoadError::Io { path: path.to_owned(), error },
    })?;
    if u32::try_from(bytes.len()).is_err() {
        return Err(LoadError::TooLarge(path.to_owned()));
    }
    let shown = path.strip_prefix(cwd).unwrap_or(path).display().to_string();
    match String::from_utf8(bytes) {
        Ok(text) => {
            loaded.files.add(shown, text);
        }
        Err(error) => {
            let valid_up_to = error.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(error.as_bytes()).into_owned();
            // The replacement character is 3 bytes where the invalid bytes were.
            let id: FileId = loaded.files.add(shown, text);
            loaded.diagnostics.push(
                Diagnostic::new(&codes::INVALID_UTF8, "this file is not valid UTF-8")
                    .primary(id, Span::new(valid_up_to, valid_up_to + 3), "invalid bytes start here")
                    .help("save the file as UTF-8"),
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn symlink_loops_do_not_repeat_files() {
        let root = std::env::temp_dir().join(format!("modelc-sources-loop-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let model = root.join("libs/m/model");
        std::fs::create_dir_all(model.join("sub")).expect("mkdir");
        std::fs::write(model.join("_init.cf"), "x = 1\n").expect("write");
        std::fs::write(model.join("sub/a.cf"), "y = 1\n").expect("write");
        std::os::unix::fs::symlink("..", model.join("sub/back")).expect("symlink");
        std::os::unix::fs::symlink("a.cf", model.join("sub/alias.cf")).expect("symlink");
        let mut files = Vec::new();
        collect_cf_files(&model, &mut files, &mut HashSet::new());
        assert_eq!(files.len(), 2, "{files:?}");
    }
}
