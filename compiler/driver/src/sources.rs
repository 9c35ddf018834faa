//! Reading a target's source files, in a deterministic order.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use modelc_diagnostics::{Diagnostic, FileId, SourceFiles, Span, codes};

use crate::project::{LoadError, Target};

/// The files of a target and the diagnostics found while reading them.
#[derive(Debug, Default)]
pub struct Loaded {
    pub files: SourceFiles,
    /// The namespace each file defines (`__config__`, `std`, `web::sub`), for files that are
    /// part of a project; the first file found for a namespace wins.
    pub namespaces: Vec<(FileId, String)>,
    /// Where loading starts (`__config__`, or every namespace of a module checked on its own).
    pub roots: Vec<String>,
    /// Problems with the bytes of a file itself (invalid UTF-8).
    pub diagnostics: Vec<Diagnostic>,
    /// Each module read from disk and its directory (for its `files/` and `templates/`).
    pub module_roots: Vec<(String, PathBuf)>,
    /// Where each file read from disk is, as an absolute path (std's files are not on disk).
    pub paths: Vec<(FileId, PathBuf)>,
    /// The directory the model's files are named from in what it exports: the project's root,
    /// a lone file's directory, or the directory holding a module checked on its own.
    pub base: Option<PathBuf>,
    /// Where modules are looked up, in order (a lone file has none).
    pub module_paths: Vec<PathBuf>,
    /// The Python environment whose installed modules were read, and which runs plugins.
    pub python: Option<modelc_pyplugins::PythonEnv>,
    /// The Python of each module that has some (std's is built into modelc).
    pub module_python: Vec<modelc_pyplugins::ModulePython>,
    /// Modules' Python resource classes win over the shapes modelc ships for fs and exec
    /// (`--python-shapes`): to check that the two agree.
    pub python_shapes_first: bool,
}

impl Loaded {
    /// Each file read from disk named relative to [`Loaded::base`] (with `/`), for exports.
    pub fn model_file_names(&self) -> std::collections::HashMap<FileId, String> {
        let Some(base) = &self.base else { return std::collections::HashMap::new() };
        self.paths
            .iter()
            .filter_map(|(id, path)| {
                let relative = path.strip_prefix(base).ok()?;
                let parts: Vec<String> =
                    relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                Some((*id, parts.join("/")))
            })
            .collect()
    }
}

impl Loaded {
    fn add_namespace(&mut self, id: FileId, namespace: String) {
        if !self.namespaces.iter().any(|(_, ns)| *ns == namespace) {
            self.namespaces.push((id, namespace));
        }
    }
}

/// Reads every file the target consists of: the files themselves, or the project's `main.cf` and
/// every `.cf` file of each module found on its module path (`<dir>/<module>/model/**.cf`),
/// plus the std module built into modelc. Which of them a compile uses is decided later, from
/// the imports. Files are read in sorted order so that output never depends on directory
/// listing order.
pub fn load(target: &Target, cwd: &Path) -> Result<Loaded, LoadError> {
    load_in(target, cwd, None)
}

/// [`load`], with a Python environment: `python` (`--python`: an interpreter or an
/// environment's directory) when given, else project.yml's `python`, else the active virtual
/// environment, else `python3` on `PATH`. The v2 modules it has installed (its packages
/// `inmanta_plugins.<module>` with a `model/`) are modules too, found before the module path's,
/// as the reference finds them, and each module's Python is located (not read: only the
/// modules a compile loads have their plugins read).
pub fn load_with_python(target: &Target, cwd: &Path, python: Option<&Path>) -> Result<Loaded, LoadError> {
    let flag = python.map(|p| absolute(p, cwd));
    let env =
        modelc_pyplugins::PythonEnv::choose(flag.as_deref(), target.python_setting(), &|name| std::env::var(name).ok());
    load_in(target, cwd, env)
}

fn load_in(target: &Target, cwd: &Path, python: Option<modelc_pyplugins::PythonEnv>) -> Result<Loaded, LoadError> {
    let mut loaded = Loaded { python, ..Loaded::default() };
    read_target(&mut loaded, target, cwd)?;
    let env = loaded.python.as_ref();
    loaded.module_python = loaded
        .module_roots
        .iter()
        .filter(|(name, _)| name != "std")
        .filter_map(|(name, root)| modelc_pyplugins::module_python(name, Some(root), env))
        .collect();
    Ok(loaded)
}

fn read_target(loaded: &mut Loaded, target: &Target, cwd: &Path) -> Result<(), LoadError> {
    match target {
        Target::Files(paths) => {
            loaded.base = paths.first().and_then(|p| absolute(p, cwd).parent().map(Path::to_path_buf));
            for path in paths {
                let id = read_into(loaded, path, cwd)?;
                loaded.add_namespace(id, "__config__".to_owned());
            }
            loaded.roots.push("__config__".to_owned());
            read_installed_modules(loaded, cwd)?;
        }
        Target::Project(project) => {
            loaded.base = Some(absolute(&project.root, cwd));
            let id = read_into(loaded, &project.main, cwd)?;
            loaded.add_namespace(id, "__config__".to_owned());
            loaded.roots.push("__config__".to_owned());
            add_std(loaded);
            read_installed_modules(loaded, cwd)?;
            read_module_path(loaded, &project.module_paths, cwd)?;
            loaded.module_paths.clone_from(&project.module_paths);
            for warning in &project.warnings {
                loaded.diagnostics.push(Diagnostic::new(&codes::PROJECT_SETTING, warning.clone()).help(
                    "modules are found under the `modulepath` directories: module `m` is `<dir>/m/model/_init.cf`",
                ));
            }
        }
        Target::Module { name, root, module_paths } => {
            loaded.base = absolute(root, cwd).parent().map(Path::to_path_buf);
            add_std(loaded);
            read_module(loaded, name, root, cwd)?;
            loaded.roots =
                loaded.namespaces.iter().filter(|(_, ns)| is_in_module(ns, name)).map(|(_, ns)| ns.clone()).collect();
            read_installed_modules(loaded, cwd)?;
            read_module_path(loaded, module_paths, cwd)?;
            loaded.module_paths.clone_from(module_paths);
        }
    }
    Ok(())
}

/// The v2 modules the Python environment has installed: each package `inmanta_plugins.<m>`
/// with a `model/` directory (std excepted: modelc's own std always wins).
fn read_installed_modules(loaded: &mut Loaded, cwd: &Path) -> Result<(), LoadError> {
    let Some(env) = loaded.python.clone() else { return Ok(()) };
    for site in &env.site_packages {
        let Ok(entries) = std::fs::read_dir(site.join("inmanta_plugins")) else { continue };
        let mut packages: Vec<PathBuf> =
            entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.join("model").is_dir()).collect();
        packages.sort();
        for package in packages {
            let Some(name) = package.file_name().and_then(|n| n.to_str()).map(str::to_owned) else { continue };
            if name == "std" || loaded.namespaces.iter().any(|(_, ns)| *ns == name) {
                continue;
            }
            read_module(loaded, &name, &package, cwd)?;
        }
    }
    Ok(())
}

fn is_in_module(namespace: &str, module: &str) -> bool {
    namespace == module || namespace.strip_prefix(module).is_some_and(|rest| rest.starts_with("::"))
}

/// The std module ships inside modelc; a `std` directory on the module path is not used.
pub(crate) fn add_std(loaded: &mut Loaded) {
    if loaded.namespaces.iter().any(|(_, ns)| ns == "std") {
        return;
    }
    for file in modelc_stdlib::FILES {
        let id = loaded.files.add(file.display_name.to_owned(), file.text.to_owned());
        loaded.add_namespace(id, file.namespace.to_owned());
    }
}

fn read_module_path(loaded: &mut Loaded, module_paths: &[PathBuf], cwd: &Path) -> Result<(), LoadError> {
    for dir in module_paths {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut modules: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        modules.sort();
        for module in modules {
            let Some(name) = module.file_name().and_then(|n| n.to_str()).map(str::to_owned) else { continue };
            if name == "std" || loaded.namespaces.iter().any(|(_, ns)| *ns == name) {
                continue;
            }
            read_module(loaded, &name, &module, cwd)?;
        }
    }
    Ok(())
}

/// Reads the files of one module: `model/_init.cf` is the module's namespace, `model/x.cf` is
/// `module::x`, `model/d/_init.cf` is `module::d`.
fn read_module(loaded: &mut Loaded, name: &str, dir: &Path, cwd: &Path) -> Result<(), LoadError> {
    let root = if dir.is_absolute() { dir.to_path_buf() } else { cwd.join(dir) };
    loaded.module_roots.push((name.to_owned(), root));
    let model = dir.join("model");
    let mut files = Vec::new();
    collect_files(&model, &|p| p.extension().is_some_and(|e| e == "cf"), &mut files, &mut HashSet::new(), true);
    files.sort();
    for file in files {
        let Some(namespace) = namespace_of(name, &model, &file) else { continue };
        let id = read_into(loaded, &file, cwd)?;
        loaded.add_namespace(id, namespace);
    }
    Ok(())
}

fn namespace_of(module: &str, model: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(model).ok()?;
    let mut segments: Vec<String> = vec![module.to_owned()];
    let components: Vec<&str> = relative.iter().filter_map(|c| c.to_str()).collect();
    let (last, dirs) = components.split_last()?;
    segments.extend(dirs.iter().map(|d| (*d).to_owned()));
    let stem = last.strip_suffix(".cf")?;
    if stem != "_init" {
        segments.push(stem.to_owned());
    }
    Some(segments.join("::"))
}

/// Collects the files under `dir` that `wanted` accepts. Symbolic links are followed, but each
/// real directory is visited once (`seen` holds canonical paths), so a link loop cannot repeat
/// files; with `files_once`, each real file is taken once too (a `.cf` file linked twice is one
/// file), else each name of it is (a module's file linked under another name is read by both).
pub(crate) fn collect_files(
    dir: &Path,
    wanted: &dyn Fn(&Path) -> bool,
    out: &mut Vec<PathBuf>,
    seen: &mut HashSet<PathBuf>,
    files_once: bool,
) {
    let Ok(real) = dir.canonicalize() else { return };
    if !seen.insert(real) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            collect_files(&path, wanted, out, seen, files_once);
        } else if wanted(&path) {
            // A file that cannot be canonicalised is still read (and its error reported there).
            if !files_once || path.canonicalize().map_or(true, |real| seen.insert(real)) {
                out.push(path);
            }
        }
    }
}

/// `path` made absolute against `cwd`.
fn absolute(path: &Path, cwd: &Path) -> PathBuf {
    if path.is_absolute() { path.to_path_buf() } else { cwd.join(path) }
}

/// How much of a file is searched for a NUL byte to tell a binary file (as git does).
const BINARY_PROBE: usize = 8000;

/// Reads one file. Invalid UTF-8 is replaced and reported, so the rest can still be checked.
fn read_into(loaded: &mut Loaded, path: &Path, cwd: &Path) -> Result<FileId, LoadError> {
    let bytes = std::fs::read(path).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => LoadError::NotFound(path.to_owned()),
        _ => LoadError::Io { path: path.to_owned(), error },
    })?;
    if u32::try_from(bytes.len()).is_err() {
        return Err(LoadError::TooLarge(path.to_owned()));
    }
    let shown = path.strip_prefix(cwd).unwrap_or(path).display().to_string();
    let absolute = if path.is_absolute() { path.to_path_buf() } else { cwd.join(path) };
    let id = FileId(u32::try_from(loaded.files.len()).unwrap_or(u32::MAX));
    loaded.paths.push((id, absolute));
    // A NUL byte near the start (git's test) says the file is binary: reported once, and read
    // as empty, rather than parsed into thousands of errors.
    if bytes.iter().take(BINARY_PROBE).any(|b| *b == 0) {
        let id = loaded.files.add(shown.clone(), String::new());
        loaded.diagnostics.push(
            Diagnostic::new(&codes::BINARY_FILE, format!("`{shown}` is a binary file, not a model"))
                .note(format!("it holds NUL bytes in its first {BINARY_PROBE} bytes; it is read as empty"))
                .help("move it out of the model's directories, or give it another extension than `.cf`"),
        );
        return Ok(id);
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(loaded.files.add(shown, text)),
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
            Ok(id)
        }
    }
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
        collect_files(&model, &|p| p.extension().is_some_and(|e| e == "cf"), &mut files, &mut HashSet::new(), true);
        assert_eq!(files.len(), 2, "{files:?}");
    }
}
