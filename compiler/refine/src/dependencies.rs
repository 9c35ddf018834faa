//! The modules' dependency managers (`@dependency_manager` functions in their Python): run over
//! the exported resources once their `requires` are known, as the reference's exporter runs
//! them after it maps resources. What they leave in a resource's `requires` is what it requires:
//! they may add edges, or take some away. fs's `dir_before_file` is not among them when modelc
//! shapes fs itself: [`crate::directories`] is that rule, and the driver leaves it out.

use modelc_diagnostics::{Diagnostic, codes};
use modelc_exec::{DependBatch, DependResource, Program};
use modelc_ir::Ir;
use rustc_hash::FxHashMap;

use crate::mappers::ExportContext;
use crate::{ModulePython, Refinery};

impl Refinery<'_> {
    pub(crate) fn dependency_managers(&mut self, ir: &mut Ir, program: &Program<'_>, python: ModulePython<'_>) {
        if python.dependency_managers.is_empty() || ir.resources.is_empty() {
            return;
        }
        let resources = ir
            .resources
            .iter()
            .zip(&self.instances)
            .map(|(resource, instance)| DependResource {
                id: &resource.id,
                instance: *instance,
                fields: resource.attributes.iter().collect(),
                requires: &resource.requires,
            })
            .collect();
        let batch = DependBatch { managers: python.dependency_managers, resources };
        let mut context = ExportContext { program, graph: self.graph, warnings: Vec::new() };
        let answer = match python.foreign {
            Some(foreign) => foreign.run_dependency_managers(&batch, &mut context),
            None => Err(modelc_exec::MapFailure {
                message: "this compile has no Python environment to run them".to_owned(),
                detail: None,
            }),
        };
        drop(batch);
        for warning in context.warnings {
            self.diagnostics.push(Diagnostic::new(&codes::PLUGIN_WARNING, warning));
        }
        let answer = match answer {
            Ok(answer) => answer,
            Err(failure) => {
                let names: Vec<String> = python
                    .dependency_managers
                    .iter()
                    .map(|m| format!("`{}` ({}:{})", m.function, m.file, m.line))
                    .collect();
                let mut diagnostic = Diagnostic::new(
                    &codes::DEPENDENCY_MANAGER_FAILED,
                    format!("the modules' dependency managers could not run: {}", failure.message),
                )
                .note(format!("the dependency managers: {}", names.join(", ")));
                if let Some(detail) = failure.detail {
                    diagnostic = diagnostic.note(detail);
                }
                self.diagnostics.push(diagnostic);
                return;
            }
        };
        let position: FxHashMap<&str, u32> =
            ir.resources.iter().enumerate().map(|(p, r)| (r.id.as_str(), p as u32)).collect();
        let mut changed = Vec::with_capacity(answer.changed.len());
        for (p, ids) in answer.changed {
            let Some(resource) = ir.resources.get(p) else { continue };
            match ids.iter().map(|id| position.get(id.as_str()).copied().ok_or(id)).collect::<Result<Vec<u32>, _>>() {
                Ok(mut required) => {
                    // Requires stay in queue order.
                    required.sort_unstable();
                    required.dedup();
                    changed.push((p, required));
                }
                Err(id) => self.diagnostics.push(Diagnostic::new(
                    &codes::DEPENDENCY_MANAGER_FAILED,
                    format!(
                        "a dependency manager made `{}` require `{id}`, which is not an exported resource",
                        resource.id
                    ),
                )),
            }
        }
        for (p, required) in changed {
            ir.resources[p].requires = required.iter().map(|q| ir.resources[*q as usize].id.clone()).collect();
            self.requires[p] = required;
        }
    }
}
