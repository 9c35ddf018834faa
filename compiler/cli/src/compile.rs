//! `modelc compile [PATH] [-o FILE]` and `modelc graph [PATH]`: check, execute, refine into
//! resources and validate; then summarise, write the resources, or draw their graph.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use modelc_ir::Ir;

use crate::output::Reporter;
use crate::place::Place;
use crate::{EXIT_MODEL_ERRORS, Format, Io};

/// How many resource sets the terminal summary lists by name.
const SUMMARY_SETS: usize = 10;

pub(crate) struct Options {
    pub dump_instances: bool,
    pub output: Option<PathBuf>,
    pub partial: bool,
    pub format: Format,
    pub color: bool,
    /// The store whose facts `std::getfact` reads (`--store`); default the project's own.
    pub store: Option<modelc_store::Locator>,
}

pub(crate) fn run(path: Option<&Path>, options: &Options, io: &mut Io<'_>) -> u8 {
    let started = Instant::now();
    let (mut loaded, dir, place) = match load_project(path, options.store.as_ref(), io) {
        Ok(loaded) => loaded,
        Err(status) => return status,
    };
    let refine = modelc_refine::Options { partial: options.partial };
    let (compiled, mut diagnostics) = match compile_loaded(&mut loaded, &dir, &place, refine, Passwords::Keep, io) {
        Ok(compiled) => compiled,
        Err(status) => return status,
    };
    let elapsed = started.elapsed();
    let format = options.format;
    if let Some(model) = &compiled.model {
        // Printed lines are the model's own output: stdout, unless stdout carries JSON.
        let to_stderr = format.json_diagnostics() || (format == Format::Reference && options.output.is_none());
        let out: &mut dyn Write = if to_stderr { &mut *io.stderr } else { &mut *io.stdout };
        for line in &model.printed {
            let _ = writeln!(out, "{line}");
        }
        if options.dump_instances && format == Format::Human {
            let _ = write!(io.stdout, "{}", model.graph.render());
        }
    }
    let mut status = Reporter { files: &loaded.files, format, color: options.color, file_count: compiled.files }
        .finish(io, &mut diagnostics, "compiled");
    if let (Some(ir), 0) = (&compiled.resources, status) {
        let text = || match format {
            Format::Reference => modelc_ir::reference::export_list(ir),
            _ => ir.to_json(),
        };
        match &options.output {
            Some(file) => {
                let file = if file.is_absolute() { file.clone() } else { io.cwd.join(file) };
                if let Err(error) = write_atomically(&file, &text()) {
                    let _ = writeln!(io.stderr, "error: cannot write {}: {error}", file.display());
                    status = EXIT_MODEL_ERRORS;
                }
            }
            None if format == Format::Reference => {
                let _ = writeln!(io.stdout, "{}", text());
            }
            None => {}
        }
    }
    if let (Some(model), Format::Human, 0, true) = (&compiled.model, format, status, crate::chatty()) {
        let total: usize = model.instances_by_entity.values().sum();
        let instances = modelc_diagnostics::count(total as u64, "instance");
        let _ = writeln!(io.stderr, "{instances} in {:.1} ms", elapsed.as_secs_f64() * 1000.0);
        let width = model.instances_by_entity.values().max().map_or(1, |n| n.to_string().len());
        for (entity, count) in &model.instances_by_entity {
            let _ = writeln!(io.stderr, "  {count:>width$} {entity}");
        }
        if let Some(ir) = compiled.resources.as_ref().filter(|ir| !ir.resources.is_empty() || !ir.sets.is_empty()) {
            let _ = write!(io.stderr, "{}", modelc_ir::draw::summary(ir, SUMMARY_SETS));
        }
    }
    // The process ends after this command: freeing a large model's graph value by value would
    // only delay the exit.
    std::mem::forget(compiled.model);
    std::mem::forget(compiled.resources);
    status
}

/// `modelc graph`: the resource graph as DOT or Mermaid on stdout.
pub(crate) fn graph(
    path: Option<&Path>,
    store: Option<&modelc_store::Locator>,
    autoedges: bool,
    format: Format,
    color: bool,
    io: &mut Io<'_>,
) -> u8 {
    let (mut loaded, dir, place) = match load_project(path, store, io) {
        Ok(loaded) => loaded,
        Err(status) => return status,
    };
    // Drawing keeps no password: kept ones are used, others get a placeholder.
    let refine = modelc_refine::Options::default();
    let (compiled, mut diagnostics) = match compile_loaded(&mut loaded, &dir, &place, refine, Passwords::Draw, io) {
        Ok(compiled) => compiled,
        Err(status) => return status,
    };
    let reporter = Reporter { files: &loaded.files, format, color, file_count: compiled.files };
    let valid = !diagnostics.iter().any(modelc_diagnostics::Diagnostic::is_error);
    let ir = compiled.resources.as_ref().filter(|_| valid);
    let implied = match ir {
        Some(ir) if autoedges => implied_edges(ir),
        _ => Vec::new(),
    };
    if format.json_diagnostics() {
        // One document: the diagnostics and the graph (null when the model has errors).
        let graph = ir.map_or(serde_json::Value::Null, |ir| graph_json(ir, &implied));
        let result = serde_json::Map::from_iter([("graph".to_owned(), graph)]);
        return reporter.finish_object(io, &mut diagnostics, "compiled", result);
    }
    let status = reporter.finish(io, &mut diagnostics, "compiled");
    if let (Some(ir), 0) = (ir, status) {
        let _ = write!(io.stdout, "{}", draw(ir, format, &implied));
    }
    status
}

/// The resource graph as JSON: each resource with its set, and the edges (`requires`, and the
/// implied ones `--autoedges` adds), by resource id.
fn graph_json(ir: &Ir, implied: &[(usize, usize)]) -> serde_json::Value {
    let resources: Vec<serde_json::Value> =
        ir.resources.iter().map(|r| serde_json::json!({"id": r.id, "resource_set": r.resource_set})).collect();
    let mut edges: Vec<serde_json::Value> = ir
        .resources
        .iter()
        .flat_map(|r| r.requires.iter().map(move |to| serde_json::json!({"from": r.id, "to": to, "implied": false})))
        .collect();
    edges.extend(implied.iter().map(
        |&(from, to)| serde_json::json!({"from": ir.resources[from].id, "to": ir.resources[to].id, "implied": true}),
    ));
    serde_json::json!({"resources": resources, "edges": edges})
}

/// The edges `modelc deploy` would add because the resources imply them.
fn implied_edges(ir: &Ir) -> Vec<(usize, usize)> {
    let positions: std::collections::HashMap<&str, usize> =
        ir.resources.iter().enumerate().map(|(i, r)| (r.id.as_str(), i)).collect();
    let requires: Vec<Vec<usize>> = ir
        .resources
        .iter()
        .map(|r| r.requires.iter().filter_map(|id| positions.get(id.as_str()).copied()).collect())
        .collect();
    modelc_runtime::autoedge::implied(&ir.resources, &requires)
}

fn draw(ir: &Ir, format: Format, implied: &[(usize, usize)]) -> String {
    match format {
        Format::Mermaid => modelc_ir::draw::mermaid_with(ir, implied),
        _ => modelc_ir::draw::dot_with(ir, implied),
    }
}

/// Writes `text` to `file` through a temporary file in the same directory and a rename, so that
/// a failure leaves the old file as it was.
fn write_atomically(file: &Path, text: &str) -> std::io::Result<()> {
    let name = file.file_name().ok_or_else(|| std::io::Error::other("not a file name"))?;
    let mut temporary = file.to_path_buf();
    temporary.set_file_name(format!(".{}.{}.tmp", name.to_string_lossy(), std::process::id()));
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, file).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}

/// What the model may read from outside: the process environment, the clock, the project's
/// passwords and the facts deploys learnt.
/// Whether a compile keeps the passwords its model generates (`compile`, `export`), or only
/// uses kept ones and draws placeholders for the others (`graph`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Passwords {
    Keep,
    Draw,
}

/// The compile every command makes of a loaded model (`compile`, `graph`, `export`): the
/// project's passwords, the facts `place` keeps, modules' Python attached, the compile with its
/// progress line, what the Python host ran, the profile when asked, and the new passwords kept.
/// Its diagnostics are the loading's and the compile's, in that order; a usage error (an
/// unreadable or unwritable password file) is reported and its exit status returned.
pub(crate) fn compile_loaded(
    loaded: &mut modelc_driver::Loaded,
    dir: &Path,
    place: &Place,
    refine: modelc_refine::Options,
    passwords: Passwords,
    io: &mut Io<'_>,
) -> Result<(modelc_driver::Compiled, Vec<modelc_diagnostics::Diagnostic>), u8> {
    let keep = passwords == Passwords::Keep;
    let known = crate::passwords::load(dir, keep).map_err(|message| crate::usage_error(io, &message))?;
    let progress = crate::progress::Progress::start("compiling", io.stderr_is_terminal);
    let facts = place.facts(&mut *io.stderr);
    let mut world = world(known, facts);
    let host = crate::python::attach(&mut world, loaded);
    let mut compiled = modelc_driver::compile_resources(loaded, world, refine);
    drop(progress);
    crate::python::report_run(host.as_ref(), io);
    print_profile(&compiled, io);
    if keep && let Some(model) = &compiled.model {
        crate::passwords::keep(dir, &model.new_passwords).map_err(|message| crate::usage_error(io, &message))?;
    }
    let mut diagnostics = loaded.diagnostics.clone();
    diagnostics.extend(std::mem::take(&mut compiled.diagnostics));
    Ok((compiled, diagnostics))
}

fn world(passwords: modelc_exec::Passwords, facts: std::sync::Arc<modelc_exec::KnownFacts>) -> modelc_exec::World {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0));
    // The modules' files are filled in by the driver, which knows where the modules are.
    // `--verbose` (or `MODELC_EXEC_STATS=1`): the executor's counts and phase times, printed
    // after the compile.
    let asked = std::env::var_os("MODELC_EXEC_STATS").is_some() || crate::verbose();
    let profile = asked.then_some(modelc_exec::Probe {
        clock: Instant::now,
        resident: resident_bytes,
        peak: peak_resident_bytes,
    });
    modelc_exec::World { env: std::env::vars().collect(), now, passwords, facts, profile, ..Default::default() }
}

/// `--verbose` (or `MODELC_EXEC_STATS=1`): the executor's counts and phase times, and refine's.
fn print_profile(compiled: &modelc_driver::Compiled, io: &mut Io<'_>) {
    if let Some(profile) = compiled.model.as_ref().and_then(|m| m.profile.as_ref()) {
        let refine = compiled.refine_time.map_or(0.0, |t| t.as_secs_f64() * 1e3);
        let resident = resident_bytes().unwrap_or(0) >> 20;
        let peak = peak_resident_bytes().unwrap_or(0) >> 20;
        let _ =
            writeln!(io.stderr, "{profile}\n  refine        took {refine:>14.1} ms ({resident} MiB, peak {peak} MiB)");
    }
}

/// The process's resident memory (Linux: `/proc/self/statm`, in pages of 4 KiB).
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// The most the process has held resident so far (Linux: `VmHWM` in `/proc/self/status`).
fn peak_resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Finds and reads what PATH names, with the project directory its `.modelc/` belongs to and
/// the store whose facts `std::getfact` reads (`store`, else the project's own).
fn load_project(
    path: Option<&Path>,
    store: Option<&modelc_store::Locator>,
    io: &mut Io<'_>,
) -> Result<(modelc_driver::Loaded, PathBuf, Place), u8> {
    let target = modelc_driver::locate(path, &io.cwd).map_err(|e| crate::usage_error(io, &e.to_string()))?;
    let dir = crate::passwords::project_dir(&target, &io.cwd);
    let loaded = crate::python::load(&target, io).map_err(|e| crate::usage_error(io, &e.to_string()))?;
    let store = crate::export::store_locator(store, Some(&target), &io.cwd);
    Ok((loaded, dir, Place::Store(store)))
}
