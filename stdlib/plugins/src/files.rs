//! The plugins that read a module's `files/` directory: `source` (the text), `file` (a marker
//! naming the file for the exporter) and `list_files`. Paths are `module/relative/path`.

use modelc_value::Value;

use super::bind::BoundArgs;
use super::context::{ModuleDir, PluginContext};
use super::error::PluginError;

type Result<T> = std::result::Result<T, PluginError>;

/// `module/rest` → (`module`, `rest`), as std finds a module's file: `./rest` is in the module
/// of the file that makes the call, and `/rest` (an empty module name) is the project's own.
/// Python's unpacking error without a slash.
pub(crate) fn split_module_path(path: &str, ctx: &dyn PluginContext) -> Result<(String, String)> {
    if let Some(rest) = path.strip_prefix("./") {
        let caller = ctx.caller_namespace().unwrap_or_default();
        let module = caller.split("::").next().unwrap_or_default();
        if module.is_empty() || module == "__config__" {
            return Err(external(format!("Unable to determine current module for path {path}, called from {caller}")));
        }
        return Ok((module.to_owned(), rest.to_owned()));
    }
    path.split_once('/')
        .map(|(module, rest)| (module.to_owned(), rest.to_owned()))
        .ok_or_else(|| PluginError::external("ValueError", "not enough values to unpack (expected 2, got 1)"))
}

fn external(message: String) -> PluginError {
    PluginError::external("Exception", message)
}

/// The text of a file in a module's `files/` directory.
pub(crate) fn source(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    let (module, rel) = split_module_path(args.str_arg("path")?, ctx)?;
    ctx.read_module_file(&module, ModuleDir::Files, &rel).map(Value::from).map_err(external)
}

/// `imp-module-source:file://<absolute path>` for a file in a module's `files/` directory.
pub(crate) fn file(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    let (module, rel) = split_module_path(args.str_arg("path")?, ctx)?;
    let abs = ctx.module_file_path(&module, ModuleDir::Files, &rel).map_err(external)?;
    Ok(Value::from(format!("imp-module-source:file://{abs}")))
}

/// The names of the files in a directory of a module's `files/` directory, sorted. A bare
/// module name lists the top of `files/`.
pub(crate) fn list_files(args: &BoundArgs, ctx: &mut dyn PluginContext) -> Result<Value> {
    let path = args.str_arg("path")?;
    let (module, rel) = path.split_once('/').unwrap_or((path, ""));
    let mut names = ctx.list_module_dir(module, ModuleDir::Files, rel).map_err(external)?;
    names.sort();
    Ok(Value::list(names.into_iter().map(Value::from).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_context::TestContext;

    fn ctx() -> TestContext {
        let mut ctx = TestContext::new();
        ctx.file("mod", ModuleDir::Files, "conf/b.txt", "B");
        ctx.file("mod", ModuleDir::Files, "conf/a.txt", "A\n");
        ctx.file("mod", ModuleDir::Files, "top.txt", "T");
        ctx
    }

    fn path(p: &str) -> BoundArgs {
        BoundArgs::new().with("path", p)
    }

    #[test]
    fn source_reads_the_file() {
        let mut ctx = ctx();
        assert_eq!(source(&path("mod/conf/a.txt"), &mut ctx).unwrap().as_str(), Some("A\n"));
        assert_eq!(
            source(&path("mod/nope"), &mut ctx).unwrap_err().to_string(),
            "Exception: file nope not found in module mod"
        );
        assert_eq!(
            source(&path("nomodule"), &mut ctx).unwrap_err().to_string(),
            "ValueError: not enough values to unpack (expected 2, got 1)"
        );
    }

    #[test]
    fn file_names_the_absolute_path() {
        let mut ctx = ctx();
        assert_eq!(
            file(&path("mod/top.txt"), &mut ctx).unwrap().as_str(),
            Some("imp-module-source:file:///project/libs/mod/files/top.txt")
        );
        assert!(file(&path("mod/none.txt"), &mut ctx).is_err());
    }

    #[test]
    fn list_files_is_sorted() {
        let mut ctx = ctx();
        let names = list_files(&path("mod/conf"), &mut ctx).unwrap();
        let names: Vec<&str> = names.as_list().unwrap_or_default().iter().filter_map(Value::as_str).collect();
        assert_eq!(names, ["a.txt", "b.txt"]);
        let top = list_files(&path("mod"), &mut ctx).unwrap();
        assert_eq!(top.as_list().map(<[Value]>::len), Some(1));
    }
}
