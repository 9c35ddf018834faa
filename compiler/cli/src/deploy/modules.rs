//! Modules' own handlers in a deploy (`modelc_pyhost::handlers`): where their Python is.
//!
//! The Python comes from where the compile found it (a module's directory, else the package the
//! environment has installed); a deploy of an IR file or a stored version finds the installed
//! packages of the environment `--python` (or the active virtual environment, or `python3`)
//! names.

pub(crate) use modelc_pyhost::handlers::ModuleCode;
use modelc_pyplugins::PythonEnv;

use crate::Io;

/// For resources that did not come from a compile: the environment's installed modules.
pub(crate) fn installed(io: &Io<'_>) -> ModuleCode {
    let flag = crate::python::flag().map(|p| if p.is_absolute() { p } else { io.cwd.join(p) });
    let env = PythonEnv::choose(flag.as_deref(), None, &|name| std::env::var(name).ok());
    ModuleCode { env, modules: Vec::new() }
}
