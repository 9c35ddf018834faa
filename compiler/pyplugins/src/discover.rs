//! Where a module's Python is, as the reference finds it, and the signatures of its plugins.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use modelc_stdlib::{Param, PluginSignature};

use crate::classes::{PyFile, read_classes};
use crate::env::PythonEnv;
use crate::signature::read_plugins;

/// How a module ships its Python.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// A v1 module: `plugins/` beside `model/`.
    V1,
    /// A v2 module's source tree: `inmanta_plugins/<module>/` beside `model/`.
    V2Source,
    /// A v2 module installed in the Python environment: the package `inmanta_plugins.<module>`.
    V2Installed,
}

/// A module's Python package: the directory that is `inmanta_plugins.<module>`, and its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModulePython {
    pub module: String,
    pub layout: Layout,
    pub package: PathBuf,
    /// Each Python file and the namespace its plugins are in (`exec`, `files::json`), sorted.
    pub files: Vec<(String, PathBuf)>,
}

/// The Python of `module`, whose `.cf` files are under `root` (when it was found on disk): its
/// own `plugins/` (v1) or `inmanta_plugins/<module>/` (a v2 source tree), else the package the
/// environment has installed. `None` when it has none.
pub fn module_python(module: &str, root: Option<&Path>, env: Option<&PythonEnv>) -> Option<ModulePython> {
    let (layout, package) = root
        .and_then(|root| {
            // A package: its `__init__.py` is what `inmanta_plugins.<module>` imports.
            let v1 = root.join("plugins");
            let v2 = root.join("inmanta_plugins").join(module);
            if v1.join("__init__.py").is_file() {
                Some((Layout::V1, v1))
            } else if v2.join("__init__.py").is_file() {
                Some((Layout::V2Source, v2))
            } else {
                None
            }
        })
        .or_else(|| env?.installed_module(module).map(|dir| (Layout::V2Installed, dir)))?;
    let mut files = Vec::new();
    collect_python(&package, module, &mut files, 0);
    files.sort();
    Some(ModulePython { module: module.to_owned(), layout, package, files })
}

/// Python files under `dir`, with the namespace of each. A v2 package keeps its model, files and
/// templates inside it: those are not Python.
fn collect_python(dir: &Path, namespace: &str, out: &mut Vec<(String, PathBuf)>, depth: usize) {
    // Deep enough for any real package; a link loop stops here.
    if depth > 16 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else { continue };
        if path.is_dir() {
            let skipped = ["model", "files", "templates", "__pycache__"];
            if (depth == 0 && skipped.contains(&name.as_str())) || name == "__pycache__" || name.starts_with('.') {
                continue;
            }
            if path.join("__init__.py").is_file() {
                collect_python(&path, &format!("{namespace}::{name}"), out, depth + 1);
            }
        } else if let Some(stem) = name.strip_suffix(".py") {
            let ns = if stem == "__init__" { namespace.to_owned() } else { format!("{namespace}::{stem}") };
            out.push((ns, path));
        }
    }
}

/// Signatures by (namespace, the file's text): a changed file is read again.
type SignatureCache = HashMap<(String, String), &'static [PluginSignature]>;

/// The plugins of one Python file as the checker and the executor use them, or the parser's
/// message. Signatures live as long as the process: they are kept by the file's text, so a file
/// read again (the language server rereads its project when files change) costs a lookup, and
/// only a changed file adds new ones.
pub fn signatures(namespace: &str, source: &str, file_name: &str) -> Result<&'static [PluginSignature], String> {
    static CACHE: OnceLock<Mutex<SignatureCache>> = OnceLock::new();
    let key = (namespace.to_owned(), source.to_owned());
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(found) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(found);
    }
    let plugins = read_plugins(source, file_name)?;
    let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
    let namespace_static = leak(namespace);
    let signatures: Vec<PluginSignature> = plugins
        .iter()
        .map(|plugin| {
            let params: Vec<Param> = plugin
                .params
                .iter()
                .map(|p| Param {
                    name: leak(&p.name),
                    ty: leak(&p.ty),
                    kind: p.kind,
                    default: p.default.as_deref().map(leak),
                })
                .collect();
            PluginSignature {
                namespace: namespace_static,
                name: leak(&plugin.name),
                params: Box::leak(params.into_boxed_slice()),
                returns: leak(&plugin.returns),
                allows_unknown: plugin.allows_unknown,
                deprecated: plugin.deprecated,
                doc: plugin.doc.as_deref().map(leak),
            }
        })
        .collect();
    let signatures: &'static [PluginSignature] = Box::leak(signatures.into_boxed_slice());
    cache.lock().unwrap_or_else(|e| e.into_inner()).insert(key, signatures);
    Ok(signatures)
}

/// Classes by (dotted module name, the file's text).
type ClassCache = HashMap<(String, String), std::sync::Arc<PyFile>>;

/// The classes of one Python file (see [`read_classes`]), kept by the file's text as
/// [`signatures`] are. `dotted` is the file's module name (`inmanta_plugins.files.base`),
/// `package` whether it is a package's `__init__.py`.
pub fn classes(dotted: &str, package: bool, source: &str, file_name: &str) -> Result<std::sync::Arc<PyFile>, String> {
    static CACHE: OnceLock<Mutex<ClassCache>> = OnceLock::new();
    let key = (dotted.to_owned(), source.to_owned());
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(found) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(found.clone());
    }
    let file = std::sync::Arc::new(read_classes(source, file_name, dotted, package)?);
    cache.lock().unwrap_or_else(|e| e.into_inner()).insert(key, file.clone());
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_plugins_beside_the_model_name_their_namespaces_by_file() {
        let root = std::env::temp_dir().join(format!("modelc-discover-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for file in ["plugins/__init__.py", "plugins/sub.py", "plugins/pkg/__init__.py", "plugins/pkg/deep.py"] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, "").expect("write");
        }
        std::fs::create_dir_all(root.join("plugins/__pycache__")).expect("mkdir");
        let found = module_python("m", Some(&root), None).expect("plugins");
        assert_eq!(found.layout, Layout::V1);
        let namespaces: Vec<&str> = found.files.iter().map(|(ns, _)| ns.as_str()).collect();
        assert_eq!(namespaces, ["m", "m::pkg", "m::pkg::deep", "m::sub"]);
        assert_eq!(module_python("m", Some(&root.join("nowhere")), None), None);
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn signatures_are_kept_by_content() {
        let source = "from inmanta.plugins import plugin\n@plugin\ndef f(x: str) -> int:\n    return 1\n";
        let first = signatures("m", source, "m.py").expect("valid");
        let again = signatures("m", source, "m.py").expect("valid");
        assert!(std::ptr::eq(first, again), "the same source is read once");
        assert_eq!(first[0].written(), "m::f(string x) -> int");
        let other = signatures("m", &source.replace("int", "str"), "m.py").expect("valid");
        assert_eq!(other[0].written(), "m::f(string x) -> string");
    }
}
