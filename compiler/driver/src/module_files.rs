//! Reading the `files/` and `templates/` directories of the modules a compile loads, for the
//! std plugins that use them (`std::template`, `std::source`, `std::file`, `std::list_files`).

use std::collections::HashSet;

use std::path::PathBuf;

use crate::sources::collect_files;

/// Reads the `files/` and `templates/` directories of the given modules (in sorted order; a
/// directory is visited once even through symbolic links).
pub fn module_files<'m>(
    module_roots: &[(String, PathBuf)],
    modules: impl IntoIterator<Item = &'m str>,
) -> modelc_exec::ModuleFiles {
    let mut out = modelc_exec::ModuleFiles::default();
    for module in modules {
        let Some((_, root)) = module_roots.iter().find(|(name, _)| name == module) else { continue };
        out.set_root(module, root.display().to_string());
        for (sub, dir) in
            [("files", modelc_stdlib::ModuleDir::Files), ("templates", modelc_stdlib::ModuleDir::Templates)]
        {
            let base = root.join(sub);
            let mut found = Vec::new();
            collect_files(&base, &|p| p.is_file(), &mut found, &mut HashSet::new());
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
