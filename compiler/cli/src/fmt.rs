//! `modelc fmt [PATH…] [--check]`: the canonical layout (`modelc-fmt`) applied to files, each
//! replaced atomically, or, with `--check`, the files that would change with a diff of each.

use std::path::{Path, PathBuf};

use crate::{EXIT_MODEL_ERRORS, EXIT_OK, Io};

pub(crate) fn fmt(paths: &[PathBuf], check: bool, json: bool, io: &mut Io<'_>) -> u8 {
    let roots: Vec<PathBuf> = if paths.is_empty() { vec![io.cwd.clone()] } else { paths.to_vec() };
    let mut files = Vec::new();
    for root in roots {
        let path = if root.is_absolute() { root } else { io.cwd.join(root) };
        if path.is_dir() {
            cf_files(&path, &mut files);
        } else if path.is_file() {
            files.push(path);
        } else {
            return crate::usage_error(io, &format!("{} does not exist", path.display()));
        }
    }
    let (mut changed, mut failed) = (0, 0);
    // The files changed (or that would change) and those left alone, for `--format json`.
    let (mut changed_files, mut failed_files): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    for file in &files {
        let shown = file.strip_prefix(&io.cwd).unwrap_or(file).display().to_string();
        let source = match std::fs::read_to_string(file) {
            Ok(source) => source,
            Err(error) => {
                let _ = writeln!(io.stderr, "error: {shown}: {error}");
                failed += 1;
                failed_files.push(shown);
                continue;
            }
        };
        match modelc_fmt::format(&source) {
            Ok(formatted) if formatted == source => {}
            Ok(formatted) => {
                changed += 1;
                if check {
                    // The file, and what formatting would change in it (as `rustfmt --check`
                    // shows it).
                    if !json {
                        let _ = writeln!(io.stdout, "{shown}");
                        let names = (format!("{shown} (as it is)"), format!("{shown} (formatted)"));
                        let diff = modelc_ir::text_diff::unified(&source, &formatted, Some((&names.0, &names.1)), 3);
                        let _ = write!(io.stdout, "{diff}");
                    }
                    changed_files.push(shown);
                } else if let Err(error) = replace(file, &formatted) {
                    let _ = writeln!(io.stderr, "error: {shown}: {error}");
                    failed += 1;
                    failed_files.push(shown);
                } else {
                    changed_files.push(shown);
                }
            }
            Err(error) => {
                let _ = writeln!(io.stderr, "error: {shown}: {error}");
                failed += 1;
                failed_files.push(shown);
            }
        }
    }
    if json {
        let document = serde_json::json!({
            "check": check,
            "files": files.len(),
            "changed": changed_files,
            "left_alone": failed_files,
        });
        let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(&document).unwrap_or_default());
    }
    let verb = if check { "would change" } else { "formatted" };
    let _ = writeln!(
        io.stderr,
        "{verb} {changed} of {}{}",
        modelc_diagnostics::count(files.len() as u64, "file"),
        if failed > 0 { format!("; {failed} left alone") } else { String::new() }
    );
    if failed > 0 || (check && changed > 0) { EXIT_MODEL_ERRORS } else { EXIT_OK }
}

/// The `.cf` files under `dir`, sorted; hidden directories, build output and dependencies are
/// skipped.
fn cf_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if path.is_dir() {
            if !name.starts_with('.') && !matches!(name, "target" | "node_modules") {
                cf_files(&path, out);
            }
        } else if name.ends_with(".cf") {
            out.push(path);
        }
    }
}

/// Writes `text` beside `file`, then renames it over: a reader sees the old or the new file.
fn replace(file: &Path, text: &str) -> std::io::Result<()> {
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let temporary = file.with_file_name(format!(".{name}.modelc-fmt.{}", std::process::id()));
    std::fs::write(&temporary, text)?;
    if let Ok(metadata) = std::fs::metadata(file) {
        let _ = std::fs::set_permissions(&temporary, metadata.permissions());
    }
    std::fs::rename(&temporary, file).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}
