//! Modules' own handlers in a deploy: for the resource types modelc has no handler of, the
//! `@provider`s of the modules' Python, run by a handler host (`modelc_pyhost::handlers`).
//!
//! The Python comes from where the compile found it (a module's directory, else the package the
//! environment has installed); a deploy of an IR file or a stored version finds the installed
//! packages of the environment `--python` (or the active virtual environment, or `python3`)
//! names.

use std::collections::BTreeSet;
use std::sync::Arc;

use modelc_ir::Resource;
use modelc_pyhost::handlers::{Operator, PythonHandlers};
use modelc_pyplugins::{ModulePython, PythonEnv};
use modelc_runtime::Handlers;
use modelc_runtime::operations::{Answer, Failure};
use modelc_runtime::remote::Hosts;
use serde_json::Value;

use crate::Io;

/// Where modules' Python is for a deploy.
#[derive(Debug, Clone, Default)]
pub(crate) struct ModuleCode {
    pub(crate) env: Option<PythonEnv>,
    pub(crate) modules: Vec<ModulePython>,
}

impl ModuleCode {
    /// For resources that did not come from a compile: the environment's installed modules.
    pub(crate) fn installed(io: &Io<'_>) -> ModuleCode {
        let flag = crate::python::flag().map(|p| if p.is_absolute() { p } else { io.cwd.join(p) });
        let env = PythonEnv::choose(flag.as_deref(), None, &|name| std::env::var(name).ok());
        ModuleCode { env, modules: Vec::new() }
    }

    /// The Python of `module`: as the compile found it, else installed in the environment.
    fn module(&self, module: &str) -> Option<ModulePython> {
        self.modules
            .iter()
            .find(|m| m.module == module)
            .cloned()
            .or_else(|| modelc_pyplugins::module_python(module, None, self.env.as_ref()))
    }
}

/// Operations on the targets of modules' handlers: this machine, or through the deploy's
/// connections.
struct HostsOperator(Arc<Hosts>);

impl Operator for HostsOperator {
    fn operate(&self, via: &Value, op: &str, args: &[Value], data: Option<&[u8]>) -> Result<Answer, Failure> {
        self.0.operate(via, op, args, data)
    }
}

/// `handlers` with modules' handlers for the types of `resources` it has none of. A module
/// whose Python cannot be imported, or no Python at all, is a warning: its resources are then
/// `no-handler`.
pub(crate) fn with_module_handlers(
    handlers: Handlers,
    hosts: &Arc<Hosts>,
    code: &ModuleCode,
    resources: &[Resource],
    io: &mut Io<'_>,
) -> Handlers {
    let wanted: BTreeSet<&str> =
        resources.iter().map(|r| r.entity_type.as_str()).filter(|t| handlers.get(t).is_none()).collect();
    let module_names: BTreeSet<&str> = wanted.iter().filter_map(|t| t.split("::").next()).collect();
    let modules: Vec<ModulePython> = module_names.iter().filter_map(|m| code.module(m)).collect();
    if modules.is_empty() {
        return handlers;
    }
    let Some(env) = code.env.clone() else {
        let names: Vec<&str> = modules.iter().map(|m| m.module.as_str()).collect();
        let _ = writeln!(
            io.stderr,
            "warning: no Python environment was found to run the handlers of {}; their resources have no handler \
             (choose one with --python)",
            names.join(", ")
        );
        return handlers;
    };
    match PythonHandlers::start(env, modules, Box::new(HostsOperator(Arc::clone(hosts)))) {
        Ok(python) => {
            for (module, trace) in python.failed_modules() {
                let _ = writeln!(io.stderr, "warning: the Python of module `{module}` could not be imported:\n{trace}");
            }
            let types: Vec<String> = python.types().iter().filter(|t| wanted.contains(t.as_str())).cloned().collect();
            handlers.with_module_handlers(types, python)
        }
        Err(message) => {
            let _ = writeln!(io.stderr, "warning: {message}; resources of modules' handlers have no handler");
            handlers
        }
    }
}
