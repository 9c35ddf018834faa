//! End-of-compile validation (execution §1.9): lookups that never matched, instances without an
//! implementation, attributes never set, relations below their lower bound, and statements
//! that never ran. All are collected and reported together.

use modelc_diagnostics::{Diagnostic, codes};

use crate::cells::{CellId, CellKind, Owner};
use crate::engine::{Engine, TaskKind};
use modelc_value::InstanceId;

impl Engine<'_> {
    pub(crate) fn final_checks(&mut self) -> Vec<Diagnostic> {
        let mut errors = Vec::new();
        // Attributes whose setter never ran because what it reads never completed: their report
        // follows from another error, and is given only when there is none.
        let mut follow_ons = Vec::new();
        for cell in self.parked.values() {
            if let Owner::Lookup(n) = self.owner_of(*cell) {
                let lookup = &self.lookups[n as usize];
                errors.push(
                    Diagnostic::new(
                        &codes::UNMATCHED_INDEX_LOOKUP,
                        format!("no match in index on type {} with key {}", lookup.entity, lookup.key),
                    )
                    .primary(lookup.file, lookup.span, "no instance with this key was constructed")
                    .help("a lookup waits until an instance with exactly this key exists; check the key's value and that a constructor makes it"),
                );
            }
        }
        for (scope, annotation) in &self.unknown_annotations {
            errors.push(
                Diagnostic::new(&codes::TYPE_MISMATCH, "the value of a relation annotation is unknown")
                    .primary(self.file_of(*scope), annotation.span, "unknown at compile time")
                    .note("annotations are exported with the model, so their value must be known"),
            );
        }
        for (n, instance) in self.instances.iter().enumerate() {
            let id = InstanceId(n as u32);
            let entity = self.entity_of(id);
            let file = self.instance_file(instance);
            let here = |d: Diagnostic| d.primary(file, instance.span, "constructed here");
            if !instance.implemented {
                errors.push(here(
                    Diagnostic::new(
                        &codes::NO_IMPLEMENTATION,
                        format!("unable to select implementation for entity {entity}"),
                    )
                    .help(format!("add `implement {} using std::none` if it needs no implementation", short(entity))),
                ));
            }
            let plan = self.plans.get(instance.plan);
            for (k, name) in plan.names.iter().enumerate() {
                let c = self.cell(CellId(instance.first.0 + k as u32));
                let problem = match &c.kind {
                    CellKind::Attribute(ty) if c.value.is_none() => Some((
                        format!("attribute `{name}` is not set"),
                        if ty.nullable {
                            format!("an optional attribute must be set too, possibly to null: `{name}=null`")
                        } else {
                            format!(
                                "set it in the constructor (`{name}=…`), in an implementation, or give it a default"
                            )
                        },
                    )),
                    CellKind::Single { .. } if c.value.is_none() => Some((
                        format!("relation `{name}` is not set"),
                        format!(
                            "a `[1]` relation needs exactly one value: set `{name}` in the constructor or an implementation"
                        ),
                    )),
                    CellKind::List { lower, upper, .. } if !c.lower_met() => Some((
                        format!(
                            "attribute `{name}` requires {}{} but only {} {} set",
                            if upper > lower { "at least " } else { "" },
                            modelc_diagnostics::count(*lower as u64, "value"),
                            c.items().len(),
                            modelc_diagnostics::is_are(c.items().len() as u64)
                        ),
                        format!("add values to `{name}`, or lower the relation's multiplicity"),
                    )),
                    _ => None,
                };
                if let Some((message, help)) = problem {
                    let cell = CellId(instance.first.0 + k as u32);
                    if let Some((setter_file, setter)) = self.waiting_setter(cell) {
                        follow_ons.push(
                            Diagnostic::new(
                                &codes::UNSET_ATTRIBUTE,
                                format!("the object `{}` is not complete: {message}", self.describe(id)),
                            )
                            .primary(setter_file, setter, "this sets it, but waits for a value that never came")
                            .help("what it reads never completes: look for values defined in terms of each other"),
                        );
                        continue;
                    }
                    let mut d = here(
                        Diagnostic::new(
                            &codes::UNSET_ATTRIBUTE,
                            format!("the object `{}` is not complete: {message}", self.describe(id)),
                        )
                        .help(help),
                    );
                    let owner = &plan.defs[k].owner;
                    if let Some((file, span)) = self.program.declarations.get(&(owner.clone(), (*name).to_owned())) {
                        d = d.secondary(*file, *span, "declared here");
                    }
                    errors.push(d);
                }
            }
        }
        if errors.is_empty() {
            errors = follow_ons;
            let stuck = self.tasks.iter().filter(|t| !t.done && matches!(t.kind, TaskKind::Stmt(_))).count();
            if stuck > 0 {
                // The first made: slots are reused, so their order is not the creation order.
                let first = (0..self.tasks.len() as u32)
                    .map(crate::cells::TaskId)
                    .filter(|id| {
                        let t = &self.tasks[id.0 as usize];
                        !t.done && matches!(t.kind, TaskKind::Stmt(_))
                    })
                    .min_by_key(|id| self.task_order(*id))
                    .map(|id| &self.tasks[id.0 as usize]);
                let mut d = Diagnostic::new(
                    &codes::INCOMPLETE_EXECUTION,
                    format!("not all statements executed: {stuck} wait for values that never come"),
                )
                .help("look for variables defined in terms of each other, such as `a = b` and `b = a`");
                if let Some(task) = first
                    && let TaskKind::Stmt(stmt) = task.kind
                {
                    d = d.primary(self.file_of(task.scope), stmt.span(), "this statement never ran");
                }
                errors.push(d);
            }
        }
        errors
    }
}

impl Engine<'_> {
    /// The statement (or constructor argument) that promised a value to `cell` and never ran.
    fn waiting_setter(&self, cell: CellId) -> Option<(modelc_diagnostics::FileId, modelc_diagnostics::Span)> {
        if !self.providers.contains_key(&cell) {
            return None;
        }
        let (id, _) =
            self.task_states.iter().filter(|(_, state)| state.promises.contains(&cell)).min_by_key(|(id, _)| id.0)?;
        let task = &self.tasks[id.0 as usize];
        let span = match &task.kind {
            TaskKind::SetLater(later) => later.value.span,
            TaskKind::Stmt(stmt) => stmt.span(),
            _ => return None,
        };
        Some((self.file_of(task.scope), span))
    }
}

fn short(entity: &str) -> &str {
    entity.strip_prefix("__config__::").unwrap_or(entity)
}
