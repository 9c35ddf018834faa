//! `modelc doc [MODULE] [PATH]`: a module's reference, as Markdown or JSON.

use std::path::Path;

use crate::cli::Format;
use crate::{EXIT_OK, Io, load_target, usage_error};

pub(crate) fn doc(module: &str, path: Option<&Path>, format: Format, io: &mut Io<'_>) -> u8 {
    let is_std = module == "std" || module.starts_with("std::");
    // std needs no project: every model has it.
    let mut loaded = if is_std && path.is_none() {
        modelc_driver::Loaded::default()
    } else {
        match load_target(path, io) {
            Ok(loaded) => loaded,
            Err(status) => return status,
        }
    };
    let Some(reference) = modelc_driver::reference(&mut loaded, module) else {
        let mut modules: Vec<&str> =
            loaded.namespaces.iter().map(|(_, ns)| ns.as_str()).filter(|ns| !ns.contains("::")).collect();
        modules.sort_unstable();
        modules.dedup();
        return usage_error(io, &format!("there is no module `{module}` here; the project has {}", modules.join(", ")));
    };
    let text = if format.json_diagnostics() {
        serde_json::to_string_pretty(&reference).unwrap_or_default() + "\n"
    } else {
        modelc_doc::markdown(&reference)
    };
    let _ = io.stdout.write_all(text.as_bytes());
    EXIT_OK
}
