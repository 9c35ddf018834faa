//! Selecting and running implementations (spec §4.7, execution §1.5): `implement … using …
//! when`, `using parents`, each implementation once per instance.

use modelc_sema::hir::ImplementationId;
use modelc_value::InstanceId;

use crate::cells::{CellId, ScopeId};
use crate::engine::{Engine, TaskKind};

impl<'a> Engine<'a> {
    /// Schedules the `implement` statements of a new instance (spec §4.7).
    pub(crate) fn select_implementations(&mut self, instance: InstanceId, plan: &crate::plans::EntityPlan<'a>) {
        for def in &plan.implements {
            match &def.statement.condition {
                None => self.apply(instance, &def.implementations),
                Some(_) => {
                    let scope = self.instance_scope(instance, self.unit_scopes[def.unit], def.unit);
                    self.spawn(TaskKind::Condition { instance, statement: def }, scope);
                }
            }
        }
    }

    /// A scope in which an instance's attributes (and `self`) are visible, over a file's top level.
    pub(crate) fn instance_scope(&mut self, instance: InstanceId, parent: ScopeId, unit: usize) -> ScopeId {
        let id = ScopeId(self.scopes.len() as u32);
        let depth = self.instances[instance.0 as usize].depth;
        self.scopes.push(crate::cells::Scope::new(CellId(0), 0, Some(parent), Some(instance), unit as u32, depth));
        id
    }

    /// Records that implementation number `position` runs for `instance`; false if it already
    /// did. The first 64 implementations of a program are bits of the instance, the rest a set.
    fn mark_applied(&mut self, instance: InstanceId, position: u32) -> bool {
        if position < 64 {
            let applied = &mut self.instances[instance.0 as usize].applied;
            let new = *applied & (1 << position) == 0;
            *applied |= 1 << position;
            new
        } else {
            self.applied_beyond_64.insert((instance, position))
        }
    }

    /// Runs implementations for an instance, each at most once.
    pub(crate) fn apply(&mut self, instance: InstanceId, implementations: &'a [ImplementationId]) {
        // `implement B using parents` alone names no implementation: that selects nothing.
        if !implementations.is_empty() {
            self.instances[instance.0 as usize].implemented = true;
        }
        let program = self.program;
        for id in implementations {
            let Some((unit, body)) = program.implementation(*id) else { continue };
            if !self.mark_applied(instance, id.0) {
                continue;
            }
            // The body's scope is also the instance's (`Scope::implementation`).
            self.emit_block(body, Some(self.unit_scopes[unit]), Some(instance), unit, None);
        }
    }
}
