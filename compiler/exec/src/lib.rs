//! Execution of a checked model (spec: language §4, execution-and-export §1).
//!
//! * [`program`]: the source tables execution reads (implement statements, defaults);
//! * `store`: single-assignment cells, instances, scopes;
//! * `engine`: the scheduler: tasks, waits, the run queue, freezing of relations;
//! * `stmts`, `eval`, `ops`, `calls`: statements, expressions, operators and casts, plugins;
//! * `effects`: assignments, relations and their inverses, constructors, indexes, lookups;
//! * `validate`: type checks of values and typedef constraints;
//! * `finish`: the end-of-compile checks.
//!
//! A task evaluates a statement; when a value is missing it parks on the value's cell and runs
//! again when the cell completes, with the effects it already had (constructors, plugin calls)
//! remembered, so the cost grows with the model, not with the number of passes.

mod calls;
mod effects;
pub mod engine;
mod eval;
mod finish;
pub mod graph;
mod ops;
pub mod program;
mod stmts;
mod store;
mod validate;

use modelc_diagnostics::Diagnostic;

pub use engine::{Engine, World};
pub use graph::{InstanceGraph, InstanceNode};
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
}

/// Executes a program to the end and validates the result.
pub fn execute(program: &Program<'_>, world: World) -> Outcome {
    let mut engine = Engine::new(program, world);
    let mut outcome = Outcome::default();
    match engine.run() {
        Ok(()) => {
            outcome.diagnostics = engine.final_checks();
            // Only a complete model has a graph: every attribute holds its final value.
            if outcome.diagnostics.is_empty() {
                outcome.graph = engine.graph();
            }
        }
        Err(diagnostic) => outcome.diagnostics.push(diagnostic),
    }
    for instance in &engine.instances {
        *outcome.instances_by_entity.entry(instance.entity.clone()).or_default() += 1;
    }
    outcome.printed = std::mem::take(&mut engine.printed);
    outcome
}
