//! `--python` and `--plugin-timeout`: which Python environment runs the modules' plugins, and
//! saying which one did.

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use modelc_driver::{LoadError, Loaded, Target};
use modelc_pyhost::PythonHost;

use crate::Io;

/// The command line's Python settings.
#[derive(Debug, Clone)]
pub(crate) struct PythonOptions {
    pub(crate) flag: Option<PathBuf>,
    pub(crate) timeout: Duration,
    pub(crate) python_shapes: bool,
}

thread_local! {
    static OPTIONS: RefCell<PythonOptions> =
        const { RefCell::new(PythonOptions {
        flag: None,
        timeout: modelc_pyhost::DEFAULT_TIMEOUT,
        python_shapes: false,
    }) };
}

pub(crate) fn set(options: PythonOptions) {
    OPTIONS.with(|o| *o.borrow_mut() = options);
}

/// `--python`, as given.
pub(crate) fn flag() -> Option<PathBuf> {
    options().flag
}

fn options() -> PythonOptions {
    OPTIONS.with(|o| o.borrow().clone())
}

/// Reads the target with the Python environment chosen: `--python`, else project.yml's
/// `python`, else the active virtual environment, else `python3` on `PATH`.
pub(crate) fn load(target: &Target, io: &Io<'_>) -> Result<Loaded, LoadError> {
    let options = options();
    let mut loaded = modelc_driver::load_with_python(target, &io.cwd, options.flag.as_deref())?;
    loaded.python_shapes_first = options.python_shapes;
    Ok(loaded)
}

/// Gives the compile a host for the loaded modules' Python plugins (started only if one is
/// called).
pub(crate) fn attach(world: &mut modelc_exec::World, loaded: &Loaded) -> Option<Arc<PythonHost>> {
    modelc_driver::python_host(loaded, world, options().timeout)
}

/// After a compile: which interpreter ran plugins, if one did.
pub(crate) fn report_run(host: Option<&Arc<PythonHost>>, io: &mut Io<'_>) {
    if let Some(ran) = host.and_then(|h| h.ran())
        && crate::chatty()
    {
        let _ = writeln!(io.stderr, "python: plugins ran in {ran}");
    }
}

/// After a check, with `--verbose`: whose Python plugins were read, and which environment
/// would run them (a check runs none).
pub(crate) fn report_check(modules: &[String], loaded: &Loaded, io: &mut Io<'_>) {
    if modules.is_empty() || !crate::verbose() {
        return;
    }
    let runs = match &loaded.python {
        Some(env) => format!("they run in {}", env.describe()),
        None => "no Python environment was found to run them".to_owned(),
    };
    let _ = writeln!(io.stderr, "python: read the plugins of {}; {runs}", modules.join(", "));
}
