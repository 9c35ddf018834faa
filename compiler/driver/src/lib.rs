//! The driver: the only compiler crate that touches the file system.
//!
//! It finds what the user asked to compile (a `.cf` file or a project directory with a
//! `project.yml`), reads every source file into a [`SourceFiles`] collection, and runs the
//! phases over them. Phases below it are pure functions of text.
#![allow(clippy::disallowed_methods, reason = "the driver reads the project from disk")]

mod database;
mod merge;
mod module_files;
mod project;
mod python;
mod sources;

pub use database::RootDatabase;
pub use module_files::module_files;
pub use project::{LoadError, Project, Target, locate};
pub use python::{ModuleDiagnostic, PythonDeclarations, python_host, python_signatures};
pub use sources::{Loaded, load, load_with_python};

use modelc_diagnostics::{Diagnostic, SourceFiles};
use modelc_syntax::Parse;

/// The fields a hand-written graph may give each resource type, from the `resource`
/// declarations compiled resources are shaped by.
pub use modelc_sema::writable::writable_shapes;

/// Checks a loaded target: syntax and semantics of every file the compile loads (the roots
/// and what they import), in load order.
/// The std module is added if the target did not bring it.
pub fn check(loaded: &mut Loaded) -> Checked {
    sources::add_std(loaded);
    let roots = loaded.roots.clone();
    let (db, project, python) = database(loaded, roots);
    let mut diagnostics: Vec<Diagnostic> = python.diagnostics.into_iter().map(|m| m.diagnostic).collect();
    diagnostics.extend(modelc_sema::check_project(&db, project));
    explain_unknown_modules(&loaded.module_paths, loaded.base.as_deref(), &mut diagnostics);
    let files = modelc_sema::loaded_modules(&db, project).files.len();
    Checked { diagnostics, files, python_modules: python.modules }
}

/// The loaded files in a query database, loading starts at `roots`; the Python plugins of the
/// modules it loads are read and given to it.
fn database(loaded: &Loaded, roots: Vec<String>) -> (RootDatabase, modelc_db::ProjectInput, python::ModuleSignatures) {
    let mut db = RootDatabase::default();
    let inputs = db.add_files(&loaded.files);
    let modules = loaded.namespaces.iter().map(|(id, ns)| (ns.clone(), inputs[id.0 as usize])).collect();
    let project = modelc_db::ProjectInput::new(&db, modules, roots);
    if loaded.module_python.is_empty() {
        return (db, project, python::ModuleSignatures::default());
    }
    // Which modules load depends on the imports only, not on the plugins.
    let mut top_levels: Vec<String> = Vec::new();
    for namespace in modelc_sema::loaded_modules(&db, project).files.keys() {
        let top = namespace.split("::").next().unwrap_or_default().to_owned();
        if !top_levels.contains(&top) {
            top_levels.push(top);
        }
    }
    let mut python = python::read_module_signatures(loaded, &top_levels);
    python.diagnostics.extend(python::shadowed_modules(loaded, &top_levels));
    let plugins = std::mem::take(&mut python.signatures);
    let resources = std::mem::take(&mut python.resources);
    give_python(&mut db, project, plugins, resources);
    if loaded.python_shapes_first {
        use salsa::Setter;
        project.set_python_shapes_first(&mut db).to(true);
    }
    (db, project, python)
}

/// Gives a project what its modules' Python declares: the plugins' signatures and the
/// resource classes' shapes. A value equal to the one the project has is not set again, so
/// reading the modules again (the language server does, on every change on disk) invalidates
/// nothing that did not change.
pub fn give_python(
    db: &mut RootDatabase,
    project: modelc_db::ProjectInput,
    plugins: Vec<(String, &'static [modelc_stdlib::PluginSignature])>,
    resources: Vec<modelc_db::ResourceSummary>,
) {
    use salsa::Setter;
    if *project.python_plugins(db) != plugins {
        project.set_python_plugins(db).to(plugins);
    }
    if *project.python_resources(db) != resources {
        project.set_python_resources(db).to(resources);
    }
}

/// The reference of `module` (`std`, or a module of the loaded project) and its submodules;
/// `None` when no file defines it. The module is loaded whether or not the model imports it.
pub fn reference(loaded: &mut Loaded, module: &str) -> Option<modelc_doc::Reference> {
    sources::add_std(loaded);
    let in_module = |ns: &str| ns == module || ns.strip_prefix(module).is_some_and(|rest| rest.starts_with("::"));
    let roots: Vec<String> = loaded.namespaces.iter().map(|(_, ns)| ns).filter(|ns| in_module(ns)).cloned().collect();
    let (db, project, _) = database(loaded, roots);
    modelc_doc::collect(&db, project, module)
}

/// Each unknown module (E0101) gets a note saying where modelc looked for it: the module path
/// (shown relative to `base`, the project's root) and the Python environment.
pub fn explain_unknown_modules(
    module_paths: &[std::path::PathBuf],
    base: Option<&std::path::Path>,
    diagnostics: &mut [Diagnostic],
) {
    let note = if module_paths.is_empty() {
        "modelc looked only among the packages installed in the Python environment: there is no module path \
         (modules are also found in the directories of a project.yml's `modulepath`)"
            .to_owned()
    } else {
        let dirs: Vec<String> = module_paths
            .iter()
            .map(|dir| {
                // As project.yml writes it: relative to the project.
                let relative = base.and_then(|base| dir.strip_prefix(base).ok());
                let shown = format!("`{}`", relative.unwrap_or(dir).display());
                if dir.is_dir() { shown } else { format!("{shown} (does not exist)") }
            })
            .collect();
        // Modules installed as Python packages are found in the Python environment
        // (`--python`, project.yml's `python:`, the active virtual environment, or python3 on
        // PATH). It is not named by its path, so that the message reads the same everywhere.
        format!(
            "modelc looked in the `modulepath` of project.yml: {}, and among the packages installed in the \
             Python environment",
            dirs.join(", ")
        )
    };
    for d in diagnostics.iter_mut().filter(|d| d.code == &modelc_diagnostics::codes::UNKNOWN_MODULE) {
        d.notes.push(note.clone());
    }
}

/// What `check` found.
#[derive(Debug)]
pub struct Checked {
    pub diagnostics: Vec<Diagnostic>,
    /// How many files were loaded and checked (std included).
    pub files: usize,
    /// The modules whose Python plugins were read, in load order.
    pub python_modules: Vec<String>,
}

/// Parses every loaded file through the query database, in file order, shows each result to
/// `visit` (to print its tree, say) and returns all syntax diagnostics.
pub fn parse_all(files: &SourceFiles, mut visit: impl FnMut(&Parse)) -> Vec<Diagnostic> {
    let db = RootDatabase::default();
    let mut diagnostics = Vec::new();
    for file in db.add_files(files) {
        let parse = modelc_db::parse(&db, file);
        visit(parse);
        diagnostics.extend(parse.diagnostics.iter().cloned());
    }
    diagnostics
}

/// Checks a loaded target and, when it has no errors, executes it (spec execution §1): every
/// instance with its attributes, what `std::print` printed, and every diagnostic.
pub fn compile(loaded: &mut Loaded, world: modelc_exec::World) -> Compiled {
    run(loaded, world, None)
}

/// [`compile`], then, when execution found no error, refines the model into resources grouped
/// in resource sets and validates them (spec export §2–3): `Compiled::resources`.
pub fn compile_resources(loaded: &mut Loaded, world: modelc_exec::World, options: modelc_refine::Options) -> Compiled {
    run(loaded, world, Some(options))
}

fn run(loaded: &mut Loaded, mut world: modelc_exec::World, refine: Option<modelc_refine::Options>) -> Compiled {
    sources::add_std(loaded);
    let roots = loaded.roots.clone();
    let (db, project, python) = database(loaded, roots);
    if let Some(foreign) = &world.foreign
        && refine.is_some()
    {
        // The interpreter starts and loads the modules while the model is checked and runs.
        let modules = modules_with_mappers(project.python_resources(&db));
        if !modules.is_empty() {
            foreign.prepare(&modules);
        }
    }
    let mut diagnostics: Vec<Diagnostic> = python.diagnostics.into_iter().map(|m| m.diagnostic).collect();
    diagnostics.extend(modelc_sema::check_project(&db, project));
    explain_unknown_modules(&loaded.module_paths, loaded.base.as_deref(), &mut diagnostics);
    let modules = modelc_sema::loaded_modules(&db, project);
    let files = modules.files.len();
    if diagnostics.iter().any(Diagnostic::is_error) || loaded.diagnostics.iter().any(Diagnostic::is_error) {
        return Compiled { diagnostics, files, model: None, resources: None, refine_time: None };
    }
    let index = modelc_sema::model_index(&db, project);
    let units = units(&db, project);
    let program = modelc_exec::Program::new(units, index);
    // The files of the loaded modules (their top-level namespaces), for std::template & co.
    let top_levels: Vec<&str> = modules.files.keys().filter(|ns| !ns.contains("::")).map(String::as_str).collect();
    // The project's own `files/` and `templates/` are the module with no name (`std::source("/x")`),
    // as the reference reads them.
    let mut roots = loaded.module_roots.clone();
    if let Some(base) = loaded.base.as_ref().filter(|base| base.join("project.yml").is_file()) {
        roots.push((String::new(), base.clone()));
    }
    let top_levels = top_levels.into_iter().chain(std::iter::once(""));
    world.module_files = module_files::module_files(&roots, top_levels);
    world.record_merges = refine.is_some_and(|options| options.partial);
    let foreign = world.foreign.clone();
    let mut outcome = modelc_exec::execute(&program, world);
    merge::merge_run(&mut diagnostics, std::mem::take(&mut outcome.diagnostics));
    let (mut resources, mut refine_time) = (None, None);
    if let Some(options) = refine
        && !diagnostics.iter().any(Diagnostic::is_error)
    {
        let started = std::time::Instant::now();
        outcome.graph.model_file_names = loaded.model_file_names();
        let managers = python::dependency_managers_to_run(python.dependency_managers, loaded.python_shapes_first);
        let module_python = modelc_refine::ModulePython { foreign: foreign.as_deref(), dependency_managers: &managers };
        let mut refined = modelc_refine::refine(&program, &outcome.graph, options, module_python);
        refine_time = Some(started.elapsed());
        // `check` already warned of the resource types without identity it could see.
        refined.diagnostics.retain(|d| {
            d.code != &modelc_diagnostics::codes::RESOURCE_WITHOUT_IDENTITY
                || !diagnostics.iter().any(|s| s.code == d.code && s.message == d.message)
        });
        diagnostics.append(&mut refined.diagnostics);
        resources = Some(refined.ir);
    }
    Compiled { diagnostics, files, model: Some(outcome), resources, refine_time }
}

/// The modules whose resource classes compute fields in Python.
fn modules_with_mappers(resources: &[modelc_db::ResourceSummary]) -> Vec<String> {
    let mut modules: Vec<String> = Vec::new();
    for declaration in resources.iter().filter(|d| d.runs_python()) {
        let Some(origin) = &declaration.python else { continue };
        if !modules.contains(&origin.module) {
            modules.push(origin.module.clone());
        }
    }
    modules
}

/// The loaded files of a checked project, lowered, for execution.
fn units(db: &dyn modelc_db::Db, project: modelc_db::ProjectInput) -> Vec<modelc_exec::Unit<'_>> {
    lowered_units(db, project, &|| false).unwrap_or_default()
}

/// Each loaded file, lowered, in load order; `None` when `cancelled` says so between two
/// files (lowering a whole project after a declaration edit takes a while).
fn lowered_units<'db>(
    db: &'db dyn modelc_db::Db,
    project: modelc_db::ProjectInput,
    cancelled: &dyn Fn() -> bool,
) -> Option<Vec<modelc_exec::Unit<'db>>> {
    let mut units = Vec::new();
    for (namespace, file) in &modelc_sema::loaded_modules(db, project).files {
        if cancelled() {
            return None;
        }
        units.push(modelc_exec::Unit {
            namespace: namespace.clone(),
            file_id: file.id(db),
            display_name: file.name(db).clone(),
            text: file.text(db),
            hir: modelc_sema::hir::file_hir(db, project, *file),
        });
    }
    Some(units)
}

/// Executes a project held in a database (the language server's), which `check` found free of
/// errors: the diagnostics only execution finds. `world` decides what it may read; nothing is
/// written. `World::cancel` is polled from the start: between files while they are lowered,
/// while the program and the entities' plans are gathered, then while the model runs.
pub fn execute(
    db: &dyn modelc_db::Db,
    project: modelc_db::ProjectInput,
    world: modelc_exec::World,
) -> modelc_exec::Outcome {
    let cancelled = || world.is_cancelled();
    let index = modelc_sema::model_index(db, project);
    let program = lowered_units(db, project, &cancelled)
        .and_then(|units| modelc_exec::Program::unless_cancelled(units, index, &cancelled));
    match program {
        Some(program) => modelc_exec::execute(&program, world),
        None => modelc_exec::Outcome { cancelled: true, ..modelc_exec::Outcome::default() },
    }
}

/// What `compile` produced.
#[derive(Debug)]
pub struct Compiled {
    pub diagnostics: Vec<Diagnostic>,
    /// How many files were loaded (std included).
    pub files: usize,
    /// The executed model; `None` when checking found errors and nothing ran.
    pub model: Option<modelc_exec::Outcome>,
    /// The resources (with `compile_resources`, when execution succeeded); not to be exported
    /// when `diagnostics` holds an error.
    pub resources: Option<modelc_ir::Ir>,
    /// How long refinement took (benchmarks report it apart from execution).
    pub refine_time: Option<std::time::Duration>,
}
