//! Which namespaces a compile loads: the roots, then everything they import, transitively
//! (spec §4.11). `std` is always loaded. Importing `m::x` also loads `m`.

use indexmap::{IndexMap, IndexSet};
use modelc_db::{Db, FileInput, ProjectInput, imports};

/// The loaded namespaces in load order, with the import edges that close a cycle.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LoadedModules {
    /// Namespace name and its file, in the order they were reached (`std` first).
    pub files: IndexMap<String, FileInput>,
    /// `(importer, imported)` for imports that lead back to a namespace the importer was
    /// (transitively) loaded from.
    pub cycles: Vec<(String, String)>,
}

impl LoadedModules {
    pub fn file(&self, namespace: &str) -> Option<FileInput> {
        self.files.get(namespace).copied()
    }
}

/// The namespaces a project loads. Depends only on the `imports` of the files it reaches, so
/// edits that leave imports alone never recompute it.
#[salsa::tracked(returns(ref))]
pub fn loaded_modules(db: &dyn Db, project: ProjectInput) -> LoadedModules {
    let available: IndexMap<&str, FileInput> = project.modules(db).iter().map(|(n, f)| (n.as_str(), *f)).collect();
    let mut loaded = LoadedModules::default();
    let mut pending: Vec<String> = Vec::new();
    for root in std::iter::once("std").chain(project.roots(db).iter().map(String::as_str)) {
        pending.push(root.to_owned());
    }
    // Depth-first, so that the path from a root to the current namespace is known for cycles.
    let mut on_path: Vec<String> = Vec::new();
    let mut done: IndexSet<String> = IndexSet::new();
    for root in pending {
        visit(db, &available, &root, &mut loaded, &mut on_path, &mut done);
    }
    loaded
}

fn visit(
    db: &dyn Db,
    available: &IndexMap<&str, FileInput>,
    namespace: &str,
    loaded: &mut LoadedModules,
    on_path: &mut Vec<String>,
    done: &mut IndexSet<String>,
) {
    let mut queue = vec![namespace.to_owned()];
    // `m::x` loads `m` first.
    let mut prefix = String::new();
    for (i, segment) in namespace.split("::").enumerate() {
        if i > 0 {
            prefix.push_str("::");
            prefix.push_str(segment);
        } else {
            prefix.push_str(segment);
        }
        if prefix != namespace {
            queue.insert(queue.len() - 1, prefix.clone());
        }
    }
    for name in queue {
        if !done.insert(name.clone()) {
            continue;
        }
        let Some(&file) = available.get(name.as_str()) else { continue };
        loaded.files.insert(name.clone(), file);
        on_path.push(name.clone());
        for import in imports(db, file) {
            // A submodule importing its own module is the usual way to reach its parent's
            // names qualified; only cycles between different modules are worth a warning.
            let edge = (name.clone(), import.module.clone());
            if on_path.contains(&import.module)
                && top_module(&name) != top_module(&import.module)
                && !loaded.cycles.contains(&edge)
            {
                loaded.cycles.push(edge);
            }
            visit(db, available, &import.module, loaded, on_path, done);
        }
        on_path.pop();
    }
}

fn top_module(namespace: &str) -> &str {
    namespace.split("::").next().unwrap_or(namespace)
}
