//! Which Python environment a compile uses, and where its installed packages are — found on
//! the file system, without starting the interpreter (a model that runs no Python plugin must
//! never start Python).

use std::path::{Path, PathBuf};

/// How the environment was chosen, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvSource {
    /// `--python` on the command line.
    Flag,
    /// `python:` in project.yml.
    Project,
    /// The active virtual environment (`VIRTUAL_ENV`).
    VirtualEnv,
    /// `python3` found on `PATH`.
    Path,
}

impl EnvSource {
    pub fn describe(self) -> &'static str {
        match self {
            EnvSource::Flag => "from --python",
            EnvSource::Project => "from project.yml",
            EnvSource::VirtualEnv => "the active virtual environment",
            EnvSource::Path => "python3 on PATH",
        }
    }
}

/// A Python environment: its interpreter and the directories its packages are installed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonEnv {
    pub interpreter: PathBuf,
    pub source: EnvSource,
    /// `site-packages` (and Debian's `dist-packages`) directories, in Python's order.
    pub site_packages: Vec<PathBuf>,
}

impl PythonEnv {
    /// The environment a compile uses: `flag`, else the project's setting, else the active
    /// virtual environment, else `python3` on `PATH`; `None` when there is none. A path may
    /// name an interpreter or an environment's directory. `var` reads the process environment.
    pub fn choose(
        flag: Option<&Path>,
        project: Option<&Path>,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Option<PythonEnv> {
        let chosen = flag
            .map(|p| (interpreter_of(p), EnvSource::Flag))
            .or_else(|| project.map(|p| (interpreter_of(p), EnvSource::Project)))
            .or_else(|| {
                var("VIRTUAL_ENV")
                    .filter(|v| !v.is_empty())
                    .map(|v| (interpreter_of(Path::new(&v)), EnvSource::VirtualEnv))
            })
            .or_else(|| on_path("python3", var("PATH").as_deref()?).map(|p| (p, EnvSource::Path)))?;
        let (interpreter, source) = chosen;
        let site_packages = site_packages(&interpreter, var);
        Some(PythonEnv { interpreter, source, site_packages })
    }

    /// How a user reads it: `/venv/bin/python (from --python)`.
    pub fn describe(&self) -> String {
        format!("{} ({})", self.interpreter.display(), self.source.describe())
    }

    /// The directory of installed package `inmanta_plugins.<module>`, if there is one.
    pub fn installed_module(&self, module: &str) -> Option<PathBuf> {
        self.site_packages.iter().map(|site| site.join("inmanta_plugins").join(module)).find(|dir| dir.is_dir())
    }
}

/// An environment's directory stands for its `bin/python`.
fn interpreter_of(path: &Path) -> PathBuf {
    if path.is_dir() {
        for name in ["bin/python3", "bin/python"] {
            if path.join(name).exists() {
                return path.join(name);
            }
        }
    }
    path.to_path_buf()
}

fn on_path(name: &str, path: &str) -> Option<PathBuf> {
    std::env::split_paths(path).map(|dir| dir.join(name)).find(|candidate| candidate.is_file())
}

/// The package directories of the environment `interpreter` belongs to. A virtual environment
/// says where it is in `pyvenv.cfg` (its Python version, and whether the base's packages are
/// seen too); a plain installation keeps them under its prefix; a pyenv shim stands for the
/// version pyenv selects. Only the interpreter's own version's directories count, where it is
/// known.
fn site_packages(interpreter: &Path, var: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let interpreter = pyenv_target(interpreter, var).unwrap_or_else(|| interpreter.to_path_buf());
    let Some(bin) = interpreter.parent() else { return Vec::new() };
    let Some(env) = bin.parent() else { return Vec::new() };
    // A venv's interpreter is a link to the base one: look for pyvenv.cfg before following it.
    if let Ok(config) = std::fs::read_to_string(env.join("pyvenv.cfg")) {
        let setting = |key: &str| {
            config.lines().find_map(|line| {
                let (k, v) = line.split_once('=')?;
                (k.trim() == key).then(|| v.trim().to_owned())
            })
        };
        let version = setting("version").or_else(|| setting("version_info")).and_then(|v| minor_version(&v));
        let mut dirs = prefix_packages(env, version.as_deref());
        if setting("include-system-site-packages").as_deref() == Some("true")
            && let Some(home) = setting("home")
            && let Some(base) = Path::new(&home).parent()
        {
            dirs.extend(prefix_packages(base, version.as_deref()));
        }
        return dirs;
    }
    let real = interpreter.canonicalize().unwrap_or(interpreter.clone());
    // `python3.11` says its version; `python3` does not.
    let version = real
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("python"))
        .filter(|v| v.contains('.'))
        .and_then(minor_version)
        .or_else(|| env.file_name().and_then(|n| n.to_str()).and_then(minor_version));
    match real.parent().and_then(Path::parent) {
        Some(prefix) => {
            let mut dirs = prefix_packages(prefix, version.as_deref());
            // Debian's own installs go under /usr/local.
            dirs.extend(prefix_packages(&prefix.join("local"), version.as_deref()));
            dirs
        }
        None => Vec::new(),
    }
}

/// `3.11` of `3.11.7` (or of a pyenv directory named `3.11.7`).
fn minor_version(version: &str) -> Option<String> {
    let mut parts = version.split('.');
    let (major, minor) = (parts.next()?, parts.next()?);
    (major.chars().all(|c| c.is_ascii_digit()) && !minor.is_empty() && minor.chars().all(|c| c.is_ascii_digit()))
        .then(|| format!("{major}.{minor}"))
}

/// `<prefix>/lib/python3.X/site-packages`, and Debian's `dist-packages` directories, of
/// `version` when it is known, else of every `python3.*` there.
fn prefix_packages(prefix: &Path, version: Option<&str>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut versions: Vec<PathBuf> = std::fs::read_dir(prefix.join("lib"))
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            match version {
                Some(v) => name == format!("python{v}") || name == "python3",
                None => name.starts_with("python3"),
            }
        })
        .collect();
    versions.sort();
    for version in versions {
        for leaf in ["site-packages", "dist-packages"] {
            if version.join(leaf).is_dir() {
                dirs.push(version.join(leaf));
            }
        }
    }
    dirs
}

/// The interpreter a pyenv shim runs: the version `PYENV_VERSION` names, else the nearest
/// `.python-version` from the working directory up (the shim runs in modelc's), else pyenv's
/// global `version` file. `None` when `interpreter` is not a shim.
fn pyenv_target(interpreter: &Path, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let shims = interpreter.parent()?;
    if shims.file_name()? != "shims" {
        return None;
    }
    let root = shims.parent()?;
    let first_line = |file: &Path| {
        let text = std::fs::read_to_string(file).ok()?;
        text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_owned)
    };
    let local = || {
        let cwd = std::env::current_dir().ok()?;
        cwd.ancestors().find_map(|dir| first_line(&dir.join(".python-version")))
    };
    let version = var("PYENV_VERSION").or_else(local).or_else(|| first_line(&root.join("version")))?;
    let version = version.split([':', ' ']).next()?.to_owned();
    Some(root.join("versions").join(version).join("bin").join(interpreter.file_name()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("modelc-pyenv-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("mkdir");
        dir
    }

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, "").expect("write");
    }

    #[test]
    fn the_flag_wins_then_the_project_then_the_virtual_env_then_path() {
        let root = temp("choose");
        for env in ["flag", "project", "venv", "path"] {
            touch(&root.join(env).join("bin/python3"));
        }
        let venv = root.join("venv").display().to_string();
        let path = root.join("path/bin").display().to_string();
        let vars = |name: &str| match name {
            "VIRTUAL_ENV" => Some(venv.clone()),
            "PATH" => Some(path.clone()),
            _ => None,
        };
        let flag = root.join("flag");
        let project = root.join("project");
        let chosen = |f: Option<&Path>, p: Option<&Path>, v: &dyn Fn(&str) -> Option<String>| {
            PythonEnv::choose(f, p, v).map(|e| (e.interpreter, e.source))
        };
        assert_eq!(chosen(Some(&flag), Some(&project), &vars), Some((flag.join("bin/python3"), EnvSource::Flag)));
        assert_eq!(chosen(None, Some(&project), &vars), Some((project.join("bin/python3"), EnvSource::Project)));
        assert_eq!(chosen(None, None, &vars), Some((root.join("venv/bin/python3"), EnvSource::VirtualEnv)));
        let no_venv = |name: &str| (name == "PATH").then(|| path.clone());
        assert_eq!(chosen(None, None, &no_venv), Some((root.join("path/bin/python3"), EnvSource::Path)));
        assert_eq!(chosen(None, None, &|_| None), None);
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn a_virtual_env_finds_its_site_packages_and_installed_modules() {
        let root = temp("site");
        let venv = root.join("venv");
        touch(&venv.join("bin/python"));
        touch(&venv.join("lib/python3.11/site-packages/inmanta_plugins/exec/__init__.py"));
        // Another version's packages: not this interpreter's.
        touch(&venv.join("lib/python3.9/site-packages/inmanta_plugins/ip/__init__.py"));
        std::fs::write(
            venv.join("pyvenv.cfg"),
            "home = /nowhere/bin\ninclude-system-site-packages = false\nversion = 3.11.7\n",
        )
        .expect("write");
        let env = PythonEnv::choose(Some(&venv), None, &|_| None).expect("an env");
        assert_eq!(env.site_packages, vec![venv.join("lib/python3.11/site-packages")]);
        assert_eq!(env.installed_module("exec"), Some(venv.join("lib/python3.11/site-packages/inmanta_plugins/exec")));
        assert_eq!(env.installed_module("ip"), None);
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn a_pyenv_shim_stands_for_the_selected_version() {
        let root = temp("pyenv");
        touch(&root.join("shims/python3"));
        touch(&root.join("versions/3.11.7/bin/python3"));
        std::fs::create_dir_all(root.join("versions/3.11.7/lib/python3.11/site-packages")).expect("mkdir");
        std::fs::write(root.join("version"), "3.11.7\n").expect("write");
        let env = PythonEnv::choose(Some(&root.join("shims/python3")), None, &|_| None).expect("an env");
        assert_eq!(env.site_packages, vec![root.join("versions/3.11.7/lib/python3.11/site-packages")]);
        let _ = std::fs::remove_dir_all(root);
    }
}
