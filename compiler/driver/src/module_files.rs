//! Reading the `files/` and `templates/` directories of the modules a compile loads, for the
//! std plugins that use them (`std::template`, `std::source`, `std::file`, `std::list_files`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::Loaded;

/// Reads the `files/` and `templates/` directories of the given modules (in sorted order; a
/// directory is visited once even through symbolic links).
pub(crate) fn module_files<'m>(
    loaded: &Loaded,
    modules: impl IntoIterator<Item = &'m str>,
) -> modelc_exec::ModuleFiles {
    let mut out = modelc_exec::ModuleFiles::default();
    for module in modules {
        let Some((_, root)) = loaded.module_roots.iter().find(|(name, _)| name == module) else { continue };
        for (sub, dir) in [
            ("files", modelc_stdlib::plugins::ModuleDir::Files),
            ("templates", modelc_stdlib::plugins::ModuleDir::Templates),
        ] {
            let base = root.join(sub);
            let mut found = Vec::new();
            collect_files(&base, &mut found, &mut HashSet::new());
            found.sort();
            for path in found {
                let Ok(relative) = path.strip_prefix(&base) else { continue };
                let relative: Vec<&str> = relative.iter().filter_map(|c| c.to_str()).collect();
                let text = std::fs::read(&path).ok().and_then(|bytes| String::from_utf8(bytes).ok());
                let file = modelc_exec::ModuleFile { text, path: path.display().to_string() };
                out.add(module, dir, &relative.join("/"), file);
            }
        }
    }
    out
}

/// Every file under `dir`, following symbolic links once per real directory.
fn collect_files(dir: &Path, out: &mut Vec<PathBuf>, seen: &mut HashSet<PathBuf>) {
    let Ok(real) = dir.canonicalize() else { return };
    if !seen.insert(real) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            collect_files(&path, out, seen);
        } else if path.is_file() {
            out.push(path);
        }
    }
}
