//! Execution of a checked model (spec: language §4, execution-and-export §1).
//!
//! * [`program`]: the source tables execution reads (implement statements, defaults);
//! * `cells`: single-assignment cells, instances, scopes;
//! * `engine`: the scheduler: tasks, waits, the run queue, freezing of relations;
//! * `stmts`, `eval`, `ops`, `calls`: statements, expressions, operators and casts, plugins;
//! * `assign`, `construct`, `implement`, `lookup`: setting cells (relations and their inverses),
//!   constructors and indexes, implementations, index lookups;
//! * `validate`: type checks of values and typedef constraints;
//! * `finish`: the end-of-compile checks.
//!
//! A task evaluates a statement; when a value is missing it parks on the value's cell and runs
//! again when the cell completes, with the effects it already had (constructors, plugin calls)
//! remembered, so the cost grows with the model, not with the number of passes.

mod assign;
mod calls;
mod cells;
mod chunked;
mod construct;
mod engine;
mod eval;
mod facts;
mod finish;
mod foreign;
mod foreign_types;
pub mod graph;
mod implement;
mod index;
mod lookup;
pub mod module_files;
mod ops;
mod plans;
pub mod program;
mod stmts;
mod validate;

use modelc_diagnostics::Diagnostic;

use crate::engine::Engine;

pub use calls::entity_type;
pub use engine::{Passwords, Probe, World};
pub use facts::KnownFacts;
pub use foreign::{
    DependAnswer, DependBatch, DependResource, DependencyManager, ForeignError, ForeignPlugins, MapAnswer, MapBatch,
    MapFailure, Mapped, NotRun,
};
pub use graph::{InstanceGraph, InstanceNode};
pub use module_files::{ModuleFile, ModuleFiles};
pub use program::{Program, Unit};

/// What a compile produced.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Instances by entity, in construction order of the first of each.
    pub instances_by_entity: indexmap::IndexMap<String, usize>,
    /// What `std::print` printed, in order.
    pub printed: Vec<String>,
    /// Every instance with its attribute values (empty when the compile failed).
    pub graph: InstanceGraph,
    pub diagnostics: Vec<Diagnostic>,
    /// Passwords `std::generate_password` generated in this compile, to be kept with the
    /// project (only when `World::passwords` has a random source).
    pub new_passwords: indexmap::IndexMap<String, String>,
    /// The executor's counts and the time of each phase, when `World::profile` asked for them.
    pub profile: Option<String>,
    /// `World::cancel` stopped the run: nothing in this outcome is final.
    pub cancelled: bool,
}

/// Executes a program to the end and validates the result.
pub fn execute(program: &Program<'_>, world: World) -> Outcome {
    // Profiling reads the clock the caller hands in (`World::profile`), never its own.
    let probe = world.profile;
    let started = probe.map(|probe| (probe.clock)());
    let mut phases = Vec::new();
    let mut phase = |name: &'static str| {
        if let (Some(probe), Some(started)) = (probe, started) {
            phases.push((name, (probe.clock)().duration_since(started), (probe.resident)(), (probe.peak)()));
        }
    };
    let Some(plans) = plans::Plans::new(program, &|| world.is_cancelled()) else {
        return Outcome { cancelled: true, ..Outcome::default() };
    };
    let mut engine = Engine::new(program, &plans, world);
    let mut outcome = Outcome::default();
    let mut counts = String::new();
    match engine.run() {
        Ok(()) => {
            phase("run");
            outcome.diagnostics = engine.final_checks();
            phase("final checks");
            counts = engine.counts();
            // Only a complete model has a graph: every attribute holds its final value.
            if !outcome.diagnostics.iter().any(Diagnostic::is_error) {
                outcome.graph = engine.graph();
                phase("graph");
            }
        }
        Err(engine::Halt::Error(diagnostic)) => outcome.diagnostics.push(*diagnostic),
        Err(engine::Halt::Cancelled) => outcome.cancelled = true,
    }
    for instance in engine.instances.iter() {
        let entity = engine.plans.get(instance.plan).fqn;
        *outcome.instances_by_entity.entry(entity.to_owned()).or_default() += 1;
    }
    outcome.printed = std::mem::take(&mut engine.printed);
    outcome.new_passwords = std::mem::take(&mut engine.new_passwords);
    outcome.diagnostics.append(&mut engine.warnings);
    if probe.is_some() {
        // Kept for profiling large models: `MODELC_EXEC_STATS=1 modelc compile …`.
        drop(engine);
        phase("drop");
        let times: Vec<String> = phases
            .iter()
            .map(|(name, at, resident, peak)| {
                let memory = match (resident, peak) {
                    (Some(now), Some(peak)) => format!(" ({} MiB, peak {} MiB)", now >> 20, peak >> 20),
                    (Some(now), None) => format!(" ({} MiB)", now >> 20),
                    _ => String::new(),
                };
                format!("  {name:<13} done after {:>8.1} ms{memory}", at.as_secs_f64() * 1e3)
            })
            .collect();
        outcome.profile = Some(format!("{counts}\n{}", times.join("\n")));
    }
    outcome
}
