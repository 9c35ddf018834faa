//! The `files/` and `templates/` directories of the loaded modules, as data: the driver reads
//! them (it is the only layer that touches the file system) and the std plugins `std::template`,
//! `std::source`, `std::file` and `std::list_files` read them from here.

use std::collections::BTreeMap;

use modelc_stdlib::ModuleDir;

/// Every file under `files/` and `templates/` of the modules a compile loads.
#[derive(Debug, Clone, Default)]
pub struct ModuleFiles {
    /// `(module, directory, relative /-separated path)` → the file.
    files: BTreeMap<(String, Dir, String), ModuleFile>,
    /// Each module's directory, for messages about files that are not there.
    roots: BTreeMap<String, String>,
    /// Files that are there but refused (a link that leads out of the module), and why.
    refused: BTreeMap<(String, Dir, String), String>,
}

#[derive(Debug, Clone)]
pub struct ModuleFile {
    /// The text, or `None` for a file that is not UTF-8.
    pub text: Option<String>,
    /// The file's absolute path (what `std::file` refers to).
    pub path: String,
}

/// `ModuleDir` with an order, for the map's keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Dir {
    Files,
    Templates,
}

impl From<ModuleDir> for Dir {
    fn from(dir: ModuleDir) -> Dir {
        match dir {
            ModuleDir::Files => Dir::Files,
            ModuleDir::Templates => Dir::Templates,
        }
    }
}

impl ModuleFiles {
    /// Adds a file found in `dir` of `module` at `relative` (`/`-separated).
    pub fn add(&mut self, module: &str, dir: ModuleDir, relative: &str, file: ModuleFile) {
        self.files.insert((module.to_owned(), dir.into(), relative.to_owned()), file);
    }

    /// Records that the file at `relative` exists but may not be read, and why.
    pub fn refuse(&mut self, module: &str, dir: ModuleDir, relative: &str, reason: String) {
        self.refused.insert((module.to_owned(), dir.into(), relative.to_owned()), reason);
    }

    /// Why the file at `relative` was refused, if it was.
    pub fn refusal(&self, module: &str, dir: ModuleDir, relative: &str) -> Option<&str> {
        let key = (module.to_owned(), dir.into(), relative.trim_start_matches('/').to_owned());
        self.refused.get(&key).map(String::as_str)
    }

    pub fn get(&self, module: &str, dir: ModuleDir, relative: &str) -> Option<&ModuleFile> {
        self.files.get(&(module.to_owned(), dir.into(), relative.trim_start_matches('/').to_owned()))
    }

    /// The names directly inside directory `relative` of `dir` of `module` (files and
    /// sub-directories), sorted; `None` when there is no such directory.
    pub fn list(&self, module: &str, dir: ModuleDir, relative: &str) -> Option<Vec<String>> {
        let prefix = match relative.trim_matches('/') {
            "" => String::new(),
            path => format!("{path}/"),
        };
        let dir: Dir = dir.into();
        let mut names: Vec<String> = self
            .files
            .keys()
            .filter(|(m, d, path)| m == module && *d == dir && path.starts_with(&prefix))
            .filter_map(|(_, _, path)| path[prefix.len()..].split('/').next().map(str::to_owned))
            .collect();
        names.dedup();
        (!names.is_empty()).then_some(names)
    }

    /// Records where `module` is (its directory, holding `model/`, `files/`, `templates/`).
    pub fn set_root(&mut self, module: &str, root: String) {
        self.roots.insert(module.to_owned(), root);
    }

    /// Where `module` is, if it was read from disk.
    pub fn root(&self, module: &str) -> Option<&str> {
        self.roots.get(module).map(String::as_str)
    }

    pub fn has_module(&self, module: &str) -> bool {
        self.files.keys().any(|(m, _, _)| m == module)
    }
}

#[cfg(test)]
mod tests {
    use super::{ModuleFile, ModuleFiles};
    use modelc_stdlib::ModuleDir;

    fn file(text: &str) -> ModuleFile {
        ModuleFile { text: Some(text.to_owned()), path: format!("/m/{text}") }
    }

    #[test]
    fn files_are_found_and_directories_listed() {
        let mut files = ModuleFiles::default();
        files.add("web", ModuleDir::Files, "a.conf", file("a"));
        files.add("web", ModuleDir::Files, "sub/b.conf", file("b"));
        files.add("web", ModuleDir::Templates, "t.j2", file("t"));
        assert_eq!(files.get("web", ModuleDir::Files, "sub/b.conf").unwrap().text.as_deref(), Some("b"));
        assert!(files.get("web", ModuleDir::Templates, "a.conf").is_none());
        assert_eq!(files.list("web", ModuleDir::Files, "").unwrap(), ["a.conf", "sub"]);
        assert_eq!(files.list("web", ModuleDir::Files, "sub").unwrap(), ["b.conf"]);
        assert!(files.list("web", ModuleDir::Files, "nope").is_none());
    }
}
