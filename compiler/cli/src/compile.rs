//! `modelc compile [PATH]`: check, execute, and summarise the instances a model produces.

use std::io::Write;
use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::output::Reporter;
use crate::{Format, Io, load_target};

pub(crate) fn run(path: Option<&Path>, dump_instances: bool, format: Format, color: bool, io: &mut Io<'_>) -> u8 {
    let started = Instant::now();
    let mut loaded = match load_target(path, io) {
        Ok(loaded) => loaded,
        Err(status) => return status,
    };
    let compiled = modelc_driver::compile(&mut loaded, world());
    let elapsed = started.elapsed();
    let mut diagnostics = loaded.diagnostics.clone();
    diagnostics.extend(compiled.diagnostics);
    if let Some(model) = &compiled.model {
        // Printed lines are the model's own output: stdout, unless stdout carries JSON.
        let out: &mut dyn Write = if format == Format::Json { &mut *io.stderr } else { &mut *io.stdout };
        for line in &model.printed {
            let _ = writeln!(out, "{line}");
        }
        if dump_instances && format == Format::Human {
            let _ = write!(io.stdout, "{}", model.graph.render());
        }
    }
    let status = Reporter { files: &loaded.files, format, color, file_count: compiled.files }.finish(
        io,
        &mut diagnostics,
        "compiled",
    );
    if let (Some(model), Format::Human, 0) = (&compiled.model, format, status) {
        let total: usize = model.instances_by_entity.values().sum();
        let _ = writeln!(io.stderr, "{total} instances in {:.1} ms", elapsed.as_secs_f64() * 1000.0);
        let width = model.instances_by_entity.values().max().map_or(1, |n| n.to_string().len());
        for (entity, count) in &model.instances_by_entity {
            let _ = writeln!(io.stderr, "  {count:>width$} {entity}");
        }
    }
    // The process ends after this command: freeing a large model's graph value by value would
    // only delay the exit.
    std::mem::forget(compiled.model);
    status
}

/// What the model may read from outside: the process environment and the clock.
fn world() -> modelc_exec::World {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0));
    // The modules' files are filled in by the driver, which knows where the modules are.
    modelc_exec::World { env: std::env::vars().collect(), now, ..Default::default() }
}
