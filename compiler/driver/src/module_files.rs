//! Reading the `files/` and `templates/` directories of the modules a compile loads, for the
//! std plugins that use them (`std::template`, `std::source`, `std::file`, `std::list_files`).

use std::collections::HashSet;

use std::path::PathBuf;

use crate::sources::collect_files;

/// Reads the `files/` and `templates/` directories of the given modules (in sorted order; a
/// directory is visited once even through symbolic links). A file whose real path is outside its
/// module is recorded as refused, with the reason, and not read.
pub fn module_files<'m>(
    module_roots: &[(String, PathBuf)],
    modules: impl IntoIterator<Item = &'m str>,
) -> modelc_exec::ModuleFiles {
    let mut out = modelc_exec::ModuleFiles::default();
    for module in modules {
        let Some((_, root)) = module_roots.iter().find(|(name, _)| name == module) else { continue };
        out.set_root(module, root.display().to_string());
        // What a module reads must be inside it once links are followed: a link in
        // `templates/` to `/etc/shadow` would otherwise print it. Links inside it are fine.
        let Ok(real_root) = root.canonicalize() else { continue };
        for (sub, dir) in
            [("files", modelc_stdlib::ModuleDir::Files), ("templates", modelc_stdlib::ModuleDir::Templates)]
        {
            let base = root.join(sub);
            let mut found = Vec::new();
            collect_files(&base, &|p| p.is_file(), &mut found, &mut HashSet::new(), false);
            found.sort();
            for path in found {
                let Ok(relative) = path.strip_prefix(&base) else { continue };
                let relative: Vec<&str> = relative.iter().filter_map(|c| c.to_str()).collect();
                match path.canonicalize() {
                    Ok(real) if !real.starts_with(&real_root) => {
                        let reason = format!(
                            "it leads to {}, outside the module's directory {} (a module's links may only point \
                             inside the module)",
                            real.display(),
                            real_root.display()
                        );
                        out.refuse(module, dir, &relative.join("/"), reason);
                        continue;
                    }
                    _ => {}
                }
                let text = std::fs::read(&path).ok().and_then(|bytes| String::from_utf8(bytes).ok());
                let file = modelc_exec::ModuleFile { text, path: path.display().to_string() };
                out.add(module, dir, &relative.join("/"), file);
            }
        }
    }
    out
}
