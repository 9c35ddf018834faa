//! The files the server knows and the salsa database over them.
//!
//! A workspace with a `project.yml` at its root is one project: `main.cf` and every module on
//! its module path, loaded from disk as `modelc check` loads them. The text of an open document
//! replaces the file's text on disk while it is open. Any other open `.cf` file is checked on
//! its own, as `modelc check file.cf` would. Edits set one file's text in the database, so
//! checking again recomputes only what depends on that file (see `compiler/sema`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use modelc_db::{FileInput, ProjectInput};
use modelc_diagnostics::{Diagnostic, FileId};
use modelc_driver::{RootDatabase, Target};
use salsa::Setter as _;

/// A document the editor has open: its text as the editor has it.
#[derive(Debug)]
pub struct Document {
    pub text: String,
    pub version: i32,
}

struct KnownFile {
    /// Where it is on disk; `None` for std's files, which ship inside modelc.
    path: Option<PathBuf>,
    input: FileInput,
    /// The text on disk when last read (what the file goes back to when its document closes).
    disk_text: Arc<str>,
}

/// The project of a workspace with a `project.yml`.
struct Project {
    root: PathBuf,
    target: Target,
    input: ProjectInput,
    /// Each loaded file's namespace.
    namespaces: Vec<(String, FileId)>,
    /// Where modules are looked for, and what they are shown relative to (the note of an
    /// unknown module names them).
    module_paths: Vec<PathBuf>,
    base: Option<PathBuf>,
    /// What loading the project found (W0106 for `project.yml`, a binary or non-UTF-8 file),
    /// each placed in a file of the workspace: where it points, else at the start of `main.cf`.
    load_diagnostics: Vec<LoadDiagnostic>,
}

/// A diagnostic of loading, placed in a file of the workspace.
struct LoadDiagnostic {
    diagnostic: Diagnostic,
    /// It points into the file's text as read from disk (invalid UTF-8): it holds only while
    /// the file has that text, not once the editor's differs.
    about_disk_text: bool,
}

/// Which project a file is checked in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Owner {
    Project,
    Loose(FileId),
}

pub struct Workspace {
    pub db: RootDatabase,
    files: Vec<KnownFile>,
    by_path: HashMap<PathBuf, FileId>,
    std: Vec<(String, FileId)>,
    project: Option<Project>,
    /// Open files outside the project, each checked on its own.
    loose: HashMap<FileId, ProjectInput>,
    /// The project made for each file ever opened outside the project, kept for the next opening.
    loose_projects: HashMap<FileId, ProjectInput>,
    pub documents: HashMap<FileId, Document>,
    /// Problems loading the project (no `main.cf`, an unreadable file), shown to the user once.
    pub load_error: Option<String>,
    /// The modules' `files/` and `templates/`, for execution (std's template plugins).
    pub module_files: modelc_exec::ModuleFiles,
    /// What reading the project's modules found that has no place in their text (W0107,
    /// W0108): shown on the imports of each module.
    module_diagnostics: Vec<modelc_driver::ModuleDiagnostic>,
}

impl Workspace {
    /// A workspace over `root` (a project when it has a `project.yml`).
    pub fn new(root: Option<&Path>) -> Workspace {
        let mut workspace = Workspace {
            db: RootDatabase::default(),
            files: Vec::new(),
            by_path: HashMap::new(),
            std: Vec::new(),
            project: None,
            loose: HashMap::new(),
            loose_projects: HashMap::new(),
            documents: HashMap::new(),
            load_error: None,
            module_files: modelc_exec::ModuleFiles::default(),
            module_diagnostics: Vec::new(),
        };
        for file in modelc_stdlib::FILES {
            let id = workspace.add_file(None, file.display_name.to_owned(), Arc::from(file.text));
            workspace.std.push((file.namespace.to_owned(), id));
        }
        if let Some(root) = root
            && root.join("project.yml").is_file()
        {
            match modelc_driver::locate(Some(root), root) {
                Ok(target @ Target::Project(_)) => {
                    workspace.load_project(root.to_path_buf(), target);
                }
                Ok(_) => {}
                Err(error) => workspace.load_error = Some(error.to_string()),
            }
        }
        workspace
    }

    fn add_file(&mut self, path: Option<PathBuf>, name: String, text: Arc<str>) -> FileId {
        let id = FileId(u32::try_from(self.files.len()).unwrap_or(u32::MAX));
        let input = FileInput::new(&self.db, name, Arc::clone(&text), id);
        if let Some(path) = &path {
            self.by_path.insert(path.clone(), id);
        }
        self.files.push(KnownFile { path, input, disk_text: text });
        id
    }

    /// The file at `path`, added with `text` if it is new. A known file that is not open
    /// takes `text` as its new content.
    fn file_with_text(&mut self, path: &Path, text: Arc<str>) -> FileId {
        match self.by_path.get(path).copied() {
            Some(id) => {
                if !self.documents.contains_key(&id) && **self.files[id.0 as usize].input.text(&self.db) != *text {
                    let input = self.files[id.0 as usize].input;
                    input.set_text(&mut self.db).to(Arc::clone(&text));
                }
                self.files[id.0 as usize].disk_text = text;
                id
            }
            None => {
                let name = path.display().to_string();
                self.add_file(Some(path.to_path_buf()), name, text)
            }
        }
    }

    /// (Re)reads the project from disk: every file of `main.cf` and the module path.
    fn load_project(&mut self, root: PathBuf, target: Target) {
        // The Python environment as `modelc check` chooses it without `--python`.
        let loaded = match modelc_driver::load_with_python(&target, &root, None) {
            Ok(loaded) => loaded,
            Err(error) => {
                self.load_error = Some(error.to_string());
                return;
            }
        };
        self.load_error = None;
        let top_levels = loaded.namespaces.iter().map(|(_, ns)| ns.as_str()).filter(|ns| !ns.contains("::"));
        self.module_files = modelc_driver::module_files(&loaded.module_roots, top_levels);
        let mut ids: HashMap<FileId, FileId> = HashMap::new();
        for (local, path) in &loaded.paths {
            let text = Arc::clone(&loaded.files.get(*local).text);
            ids.insert(*local, self.file_with_text(path, text));
        }
        let mut namespaces = Vec::new();
        for (local, namespace) in &loaded.namespaces {
            let id = match ids.get(local) {
                Some(id) => *id,
                // std's files: ours.
                None => match self.std.iter().find(|(ns, _)| ns == namespace) {
                    Some((_, id)) => *id,
                    None => continue,
                },
            };
            namespaces.push((namespace.clone(), id));
        }
        let modules: Vec<(String, FileInput)> =
            namespaces.iter().map(|(ns, id)| (ns.clone(), self.files[id.0 as usize].input)).collect();
        let input = match self.project.take() {
            Some(project) => {
                project.input.set_modules(&mut self.db).to(modules);
                project.input
            }
            None => ProjectInput::new(&self.db, modules, vec!["__config__".to_owned()]),
        };
        let python = modelc_driver::python_signatures(&loaded);
        modelc_driver::give_python(&mut self.db, input, python.plugins, python.resources);
        self.module_diagnostics = python.diagnostics;
        let main = namespaces.iter().find(|(ns, _)| ns == "__config__").map(|(_, id)| *id);
        let load_diagnostics = loaded.diagnostics.iter().filter_map(|d| placed(d, &ids, main)).collect();
        let (module_paths, base) = (loaded.module_paths, loaded.base);
        self.project = Some(Project { root, target, input, namespaces, module_paths, base, load_diagnostics });
        self.update_roots();
        // Files that left the project but are open are checked on their own now.
        let mut open: Vec<FileId> = self.documents.keys().copied().collect();
        open.sort();
        for id in open {
            self.place(id);
        }
    }

    /// Loading starts from `main.cf` and from every open file of the project, so that a
    /// module nothing imports yet is checked while it is being written.
    fn update_roots(&mut self) {
        let Some(project) = &self.project else { return };
        let mut roots = vec!["__config__".to_owned()];
        for (namespace, id) in &project.namespaces {
            if self.documents.contains_key(id) && !roots.contains(namespace) {
                roots.push(namespace.clone());
            }
        }
        if *project.input.roots(&self.db) != roots {
            let input = project.input;
            input.set_roots(&mut self.db).to(roots);
        }
    }

    /// Makes an open file part of the project, or gives it a project of its own.
    fn place(&mut self, id: FileId) {
        let in_project = self.project.as_ref().is_some_and(|p| p.namespaces.iter().any(|(_, f)| *f == id));
        if in_project {
            self.loose.remove(&id);
        } else if !self.loose.contains_key(&id) {
            // One project per file for the server's life: salsa keeps every input, and all that
            // was computed from it, as long as the database, so a new one at each opening of
            // the file grew the server by a standard library's analysis every time.
            let mut modules = vec![("__config__".to_owned(), self.files[id.0 as usize].input)];
            modules.extend(self.std.iter().map(|(ns, f)| (ns.clone(), self.files[f.0 as usize].input)));
            let input = match self.loose_projects.get(&id).copied() {
                Some(input) => {
                    if *input.modules(&self.db) != modules {
                        input.set_modules(&mut self.db).to(modules);
                    }
                    input
                }
                None => {
                    let input = ProjectInput::new(&self.db, modules, vec!["__config__".to_owned()]);
                    self.loose_projects.insert(id, input);
                    input
                }
            };
            self.loose.insert(id, input);
        }
    }

    pub fn open(&mut self, path: &Path, text: String, version: i32) -> FileId {
        let id = match self.by_path.get(path).copied() {
            Some(id) => id,
            None => {
                let on_disk: Arc<str> = Arc::from(std::fs::read_to_string(path).unwrap_or_default());
                self.add_file(Some(path.to_path_buf()), path.display().to_string(), on_disk)
            }
        };
        self.documents.insert(id, Document { text, version });
        self.sync_text(id);
        self.place(id);
        self.update_roots();
        id
    }

    /// Replaces an open document's text (the caller applied the edits).
    pub fn set_document(&mut self, id: FileId, text: String, version: i32) {
        self.documents.insert(id, Document { text, version });
        self.sync_text(id);
    }

    pub fn close(&mut self, id: FileId) {
        self.documents.remove(&id);
        self.loose.remove(&id);
        self.sync_text(id);
        self.update_roots();
    }

    /// Gives the database the file's current text: the open document's, else the disk's.
    fn sync_text(&mut self, id: FileId) {
        let file = &self.files[id.0 as usize];
        let text: Arc<str> = match self.documents.get(&id) {
            Some(document) => Arc::from(document.text.as_str()),
            None => Arc::clone(&file.disk_text),
        };
        if **file.input.text(&self.db) != *text {
            let input = file.input;
            input.set_text(&mut self.db).to(text);
        }
    }

    /// Files changed on disk (created, changed, deleted): the project is read again; files
    /// that are open keep the editor's text.
    pub fn disk_changed(&mut self) {
        if let Some(project) = self.project.take() {
            let (root, target) = (project.root.clone(), project.target.clone());
            self.project = Some(project);
            self.load_project(root, target);
        }
    }

    pub fn file_id(&self, path: &Path) -> Option<FileId> {
        self.by_path.get(path).copied()
    }

    pub fn path(&self, id: FileId) -> Option<&Path> {
        self.files.get(id.0 as usize)?.path.as_deref()
    }

    /// The file's text as checked (the open document's, else the disk's).
    pub fn text(&self, id: FileId) -> Arc<str> {
        match self.files.get(id.0 as usize) {
            Some(file) => Arc::clone(file.input.text(&self.db)),
            None => Arc::from(""),
        }
    }

    /// Which project an open file is checked in, and that project's input.
    pub fn owner(&self, id: FileId) -> Option<(Owner, ProjectInput)> {
        if let Some(input) = self.loose.get(&id) {
            return Some((Owner::Loose(id), *input));
        }
        let project = self.project.as_ref()?;
        project.namespaces.iter().any(|(_, f)| *f == id).then_some((Owner::Project, project.input))
    }

    /// The input of a file, for queries.
    pub fn input(&self, id: FileId) -> Option<FileInput> {
        Some(self.files.get(id.0 as usize)?.input)
    }

    /// The projects of the open documents, each once, in a stable order.
    pub fn open_projects(&self) -> Vec<ProjectInput> {
        let mut open: Vec<FileId> = self.documents.keys().copied().collect();
        open.sort();
        let mut out: Vec<(Owner, ProjectInput)> = Vec::new();
        for id in open {
            if let Some((owner, input)) = self.owner(id)
                && !out.iter().any(|(o, _)| *o == owner)
            {
                out.push((owner, input));
            }
        }
        out.into_iter().map(|(_, input)| input).collect()
    }

    /// The open documents, `first` (the one edited last) first, the others in a stable order:
    /// the order their diagnostics are published in.
    pub fn documents_in_order(&self, first: Option<FileId>) -> Vec<FileId> {
        let mut open: Vec<FileId> = self.documents.keys().copied().collect();
        open.sort_by_key(|id| (Some(*id) != first, *id));
        open
    }

    /// Every syntax and `check` diagnostic of an open document, as `modelc check` reports them
    /// for its file: what loading the project found there first, an unknown module's note
    /// included, and the project's diagnostics about the modules it imports (W0107, W0108) on
    /// its `import` statements. Only the document's own file is checked (and what it reads of
    /// the project's declarations): no other file's check is waited for.
    pub fn document_diagnostics(&self, id: FileId) -> Vec<Diagnostic> {
        let (Some((owner, project)), Some(input)) = (self.owner(id), self.input(id)) else { return Vec::new() };
        if !modelc_sema::loaded_modules(&self.db, project).files.values().any(|file| *file == input) {
            return Vec::new();
        }
        let in_this_file = |d: &Diagnostic| d.primary_label().is_some_and(|label| label.file == id);
        let checked = modelc_sema::checked_file(&self.db, project, input).iter().filter(|d| in_this_file(d)).cloned();
        let Some(loaded) = self.project.as_ref().filter(|_| owner == Owner::Project) else {
            let mut out: Vec<Diagnostic> = checked.collect();
            modelc_driver::explain_unknown_modules(&[], None, &mut out);
            return out;
        };
        let as_on_disk = *self.text(id) == *self.files[id.0 as usize].disk_text;
        let mut out: Vec<Diagnostic> = loaded
            .load_diagnostics
            .iter()
            .filter(|l| in_this_file(&l.diagnostic) && (as_on_disk || !l.about_disk_text))
            .map(|l| l.diagnostic.clone())
            .collect();
        out.extend(checked);
        modelc_driver::explain_unknown_modules(&loaded.module_paths, loaded.base.as_deref(), &mut out);
        out.extend(self.on_imports(id, input));
        out
    }

    /// The module diagnostics of the modules `id` imports, each placed on its `import`.
    fn on_imports(&self, id: FileId, input: FileInput) -> Vec<Diagnostic> {
        if self.module_diagnostics.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for item in &modelc_db::parse(&self.db, input).file.items {
            let modelc_syntax::ast::Item::Import(import) = item else { continue };
            let module = import.module.text();
            let top = module.split("::").next().unwrap_or_default();
            for found in self.module_diagnostics.iter().filter(|m| m.module == top) {
                out.push(found.diagnostic.clone().primary(id, import.span, format!("module `{top}` is imported here")));
            }
        }
        out
    }
}

/// A diagnostic of loading, its labels moved from the loaded files' ids to the workspace's
/// (`ids`); one without a place goes at the start of `main.cf`. `None` when it cannot be placed.
fn placed(diagnostic: &Diagnostic, ids: &HashMap<FileId, FileId>, main: Option<FileId>) -> Option<LoadDiagnostic> {
    let mut diagnostic = diagnostic.clone();
    if diagnostic.labels.is_empty() {
        let at = modelc_diagnostics::Span::new(0, 0);
        let diagnostic = diagnostic.primary(main?, at, "found while loading the project");
        return Some(LoadDiagnostic { diagnostic, about_disk_text: false });
    }
    for label in &mut diagnostic.labels {
        label.file = *ids.get(&label.file)?;
    }
    Some(LoadDiagnostic { diagnostic, about_disk_text: true })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_opened_again_outside_any_project_keeps_its_project() {
        // A new salsa input at each opening is never freed, nor is what was computed from it.
        let mut workspace = Workspace::new(None);
        let path = std::env::temp_dir().join(format!("modelc-loose-{}.cf", std::process::id()));
        let mut projects = Vec::new();
        for version in 0..3 {
            let id = workspace.open(&path, format!("x = {version}\n"), version);
            projects.extend(workspace.loose.get(&id).copied());
            workspace.close(id);
        }
        assert_eq!(projects.len(), 3);
        assert!(projects.iter().all(|p| *p == projects[0]), "{projects:?}");
    }
}
