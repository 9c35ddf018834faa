//! The modules' Python: the signatures of the plugins of the modules a compile loads, and the
//! host that runs them.

use std::sync::Arc;
use std::time::Duration;

use modelc_db::{AgentSummary, FieldSourceSummary, PythonOrigin, ResourceSummary};
use modelc_diagnostics::{Diagnostic, codes};
use modelc_stdlib::PluginSignature;

use crate::Loaded;

/// What reading the loaded modules' Python found.
#[derive(Debug, Default)]
pub(crate) struct ModuleSignatures {
    pub(crate) signatures: Vec<(String, &'static [PluginSignature])>,
    /// W0107 for each file that is not valid Python (W0108 added by the caller).
    pub(crate) diagnostics: Vec<ModuleDiagnostic>,
    /// The modules whose plugins were read, in load order.
    pub(crate) modules: Vec<String>,
    /// The resource shapes their `@resource` classes declare.
    pub(crate) resources: Vec<ResourceSummary>,
    /// Their `@dependency_manager` functions, in load order.
    pub(crate) dependency_managers: Vec<modelc_exec::DependencyManager>,
}

/// The plugins of the `modules` a compile loads (top-level names), read from their Python
/// files (each file's signatures are kept by its hash for the process's life).
pub(crate) fn read_module_signatures(loaded: &Loaded, modules: &[String]) -> ModuleSignatures {
    let mut found = ModuleSignatures::default();
    // Every file's classes, for the resource shapes (their bases may be in other modules).
    let mut classes: Vec<(&str, String, String, Arc<modelc_pyplugins::PyFile>)> = Vec::new();
    for module in loaded.module_python.iter().filter(|m| modules.contains(&m.module)) {
        found.modules.push(module.module.clone());
        for (namespace, path) in &module.files {
            // Named as the project names it, so messages read the same on every machine.
            let relative = loaded.base.as_deref().and_then(|base| path.strip_prefix(base).ok());
            let shown = relative.unwrap_or(path).display().to_string();
            let read = std::fs::read_to_string(path).map_err(|e| e.to_string());
            let dotted = format!("inmanta_plugins.{}", namespace.replace("::", "."));
            let package = path.file_name().is_some_and(|name| name == "__init__.py");
            if let Ok(source) = &read
                && let Ok(file) = modelc_pyplugins::classes(&dotted, package, source, &shown)
            {
                found.dependency_managers.extend(file.dependency_managers.iter().map(|(function, line)| {
                    modelc_exec::DependencyManager {
                        module: module.module.clone(),
                        function: function.clone(),
                        file: shown.clone(),
                        line: *line,
                    }
                }));
                classes.push((&module.module, dotted, shown.clone(), file));
            }
            match read.and_then(|source| modelc_pyplugins::signatures(namespace, &source, &shown)) {
                Ok([]) => {}
                Ok(signatures) => found.signatures.push((namespace.clone(), signatures)),
                Err(why) => found.diagnostics.push(ModuleDiagnostic::new(
                    &module.module,
                    Diagnostic::new(
                        &codes::UNREADABLE_PYTHON,
                        format!("the plugins in `{shown}` (module `{}`) could not be read", module.module),
                    )
                    .note(why)
                    .help("calls to the plugins this file defines are reported as unavailable (E0109)"),
                )),
            }
        }
    }
    let files: Vec<modelc_pyplugins::ReadFile<'_>> = classes
        .iter()
        .map(|(module, dotted, shown, file)| modelc_pyplugins::ReadFile { module, dotted: dotted.clone(), shown, file })
        .collect();
    for resolved in modelc_pyplugins::resolve_resources(&files) {
        match resolved {
            Ok(resource) => found.resources.push(resource_summary(resource)),
            Err(error) => match error.entity.clone() {
                Some(entity) => found.resources.push(ResourceSummary {
                    entity,
                    python: Some(PythonOrigin {
                        module: error.module,
                        class: error.class,
                        file: error.file,
                        line: error.line,
                        id_mapped: false,
                        reads: Vec::new(),
                        unusable: Some(error.cause),
                    }),
                    ..ResourceSummary::default()
                }),
                None => found.diagnostics.push(ModuleDiagnostic::new(
                    &error.module,
                    Diagnostic::new(
                        &codes::UNREADABLE_PYTHON,
                        format!(
                            "the resource class `{}` ({}:{}) could not be read",
                            error.class, error.file, error.line
                        ),
                    )
                    .note(error.cause)
                    .help("its entity's resources are exported as if it had no class"),
                )),
            },
        }
    }
    found
}

/// The dependency managers an export runs: all those of the loaded modules but the ones whose
/// rule modelc applies itself, with the shapes it ships for their modules: fs's
/// `dir_before_file` (modelc's directory ordering), and std's (for std's resources of old,
/// which std no longer declares).
pub(crate) fn dependency_managers_to_run(
    mut managers: Vec<modelc_exec::DependencyManager>,
    python_shapes_first: bool,
) -> Vec<modelc_exec::DependencyManager> {
    managers.retain(|m| match m.module.as_str() {
        "std" => false,
        "fs" => python_shapes_first,
        _ => true,
    });
    managers
}

/// A module's resource class as the type table keeps resource declarations: the id attribute,
/// the agent path, each field with where its value comes from. inmanta-core's `managed` field
/// drops an unmanaged resource, as `export_if` does.
fn resource_summary(resource: modelc_pyplugins::PyResource) -> ResourceSummary {
    use modelc_pyplugins::FieldSource;
    let managed = resource.fields.iter().any(|(_, source)| *source == FieldSource::Managed);
    let fields = resource
        .fields
        .into_iter()
        .map(|(name, source)| {
            let source = match source {
                FieldSource::Mapped => FieldSourceSummary::Python,
                FieldSource::Attribute | FieldSource::SendEvent | FieldSource::ReceiveEvents | FieldSource::Managed => {
                    FieldSourceSummary::Same
                }
            };
            (name, source)
        })
        .collect();
    ResourceSummary {
        entity: resource.entity,
        id: Some(resource.id_attribute),
        agent: Some(AgentSummary::Path(resource.agent.split('.').map(str::to_owned).collect())),
        fields: Some(fields),
        export_if: managed.then(|| "managed".to_owned()),
        directory: None,
        paths: None,
        python: Some(PythonOrigin {
            module: resource.module,
            class: resource.class,
            file: resource.file,
            line: resource.line,
            id_mapped: resource.id_mapped,
            reads: resource.reads,
            unusable: None,
        }),
    }
}

/// W0108 for each module the compile loads from the Python environment while the module path
/// has one of the same name too: the installed one is used, as in the reference, which warns
/// the same way.
pub(crate) fn shadowed_modules(loaded: &Loaded, modules: &[String]) -> Vec<ModuleDiagnostic> {
    let installed = loaded.module_python.iter().filter(|m| m.layout == modelc_pyplugins::Layout::V2Installed);
    installed
        .filter(|m| modules.contains(&m.module))
        // The installed `.cf` files are the ones read (a module checked on its own is read from
        // where it is, only its Python comes from the environment).
        .filter(|m| {
            loaded.module_roots.iter().find(|(name, _)| *name == m.module).is_some_and(|(_, root)| *root == m.package)
        })
        .filter_map(|m| {
            let ignored = loaded
                .module_paths
                .iter()
                .map(|dir| dir.join(&m.module))
                .find(|dir| dir.join("model/_init.cf").is_file())?;
            let shown = loaded.base.as_deref().and_then(|base| ignored.strip_prefix(base).ok()).unwrap_or(&ignored);
            Some(ModuleDiagnostic::new(
                &m.module,
                Diagnostic::new(
                    &codes::SHADOWED_MODULE,
                    format!(
                        "module `{}` is installed in the Python environment and on the module path: `{}` is not used",
                        m.module,
                        shown.display()
                    ),
                )
                .note(format!("the installed one is used: {}", m.package.display()))
                .help(format!(
                    "uninstall the package (`pip uninstall inmanta-module-{}`), or remove the module path's copy",
                    m.module.replace('_', "-")
                )),
            ))
        })
        .collect()
}

/// The host that runs the loaded modules' Python plugins, when there is a Python environment
/// and some module has Python; `world` gets it. It starts no interpreter until a plugin is
/// called. Plugins see the environment id the reference reads (`World::environment_id`).
pub fn python_host(
    loaded: &Loaded,
    world: &mut modelc_exec::World,
    timeout: Duration,
) -> Option<Arc<modelc_pyhost::PythonHost>> {
    let env = loaded.python.clone()?;
    if loaded.module_python.is_empty() {
        return None;
    }
    let base = loaded.base.clone().unwrap_or_default();
    let environment = world.environment_id();
    let host = modelc_pyhost::PythonHost::new(env, loaded.module_python.clone(), base, timeout)
        .with_environment(environment)
        .with_module_roots(loaded.module_roots.clone());
    let host = Arc::new(host);
    world.foreign = Some(host.clone() as Arc<dyn modelc_exec::ForeignPlugins>);
    Some(host)
}

/// The plugins of every module of `loaded` that has Python (the language server's view: it
/// checks modules nothing imports yet too), with W0107 for files that could not be read and
/// W0108 for modules the environment shadows, as `check` reports them.
pub fn python_signatures(loaded: &Loaded) -> PythonDeclarations {
    let modules: Vec<String> = loaded.module_python.iter().map(|m| m.module.clone()).collect();
    let mut found = read_module_signatures(loaded, &modules);
    found.diagnostics.extend(shadowed_modules(loaded, &modules));
    PythonDeclarations { plugins: found.signatures, resources: found.resources, diagnostics: found.diagnostics }
}

/// A diagnostic about a module as a whole (its Python, where it is loaded from): it has no
/// place in the model's text. `check` prints it without one; the language server shows it on
/// the `import` statements of the module.
#[derive(Debug, Clone)]
pub struct ModuleDiagnostic {
    /// The module's top-level name.
    pub module: String,
    pub diagnostic: Diagnostic,
}

impl ModuleDiagnostic {
    fn new(module: &str, diagnostic: Diagnostic) -> ModuleDiagnostic {
        let top = module.split("::").next().unwrap_or(module);
        ModuleDiagnostic { module: top.to_owned(), diagnostic }
    }
}

/// What the modules' Python declares, read from the source.
#[derive(Debug, Default)]
pub struct PythonDeclarations {
    pub plugins: Vec<(String, &'static [PluginSignature])>,
    pub resources: Vec<ResourceSummary>,
    /// W0107 for each file (or resource class) that could not be read, W0108 for each
    /// shadowed module.
    pub diagnostics: Vec<ModuleDiagnostic>,
}
