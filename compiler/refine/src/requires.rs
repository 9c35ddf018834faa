//! Resource dependencies (spec export §2.4). `requires` and `provides` are one relation, so a
//! resource's `requires` list holds both directions. A required resource that is exported gives
//! an edge; one that is not exported (`export_if` false, unknown id) is dropped, as the reference
//! drops it. A required instance that is not a resource is looked through: its own `requires`
//! are followed, transitively, so `a requires group` and `group requires b` give `a → b`. (The
//! reference drops such edges and warns; following them keeps the order the model asked for.)
//! An edge found through such an entity is left out when the resource's other edges already
//! imply it: a wrapper that forwards its `requires` to the resource it wraps then gives exactly
//! the reference's edges.

use modelc_diagnostics::{Diagnostic, codes};
use modelc_exec::graph::InstanceGraph;
use modelc_ir::Ir;
use modelc_value::{InstanceId, Value};
use rustc_hash::FxHashSet;

use crate::{Fate, Refinery};

impl Refinery<'_> {
    pub(crate) fn requires(&mut self, ir: &mut Ir) {
        let required = Required::new(self.graph);
        let required = |instance: InstanceId| required.of(instance);
        // (target, found through an entity that is not a resource) per resource.
        let mut edges: Vec<Vec<(u32, bool)>> = vec![Vec::new(); ir.resources.len()];
        let mut stack: Vec<(InstanceId, bool)> = Vec::new();
        let mut looked_through: FxHashSet<InstanceId> = FxHashSet::default();
        let mut any_indirect = false;
        for (p, found) in edges.iter_mut().enumerate() {
            let instance = self.instances[p];
            let direct = required(instance);
            if direct.is_empty() {
                continue;
            }
            stack.extend(direct.iter().filter_map(as_instance).map(|i| (i, false)));
            looked_through.clear();
            while let Some((target, indirect)) = stack.pop() {
                match self.fates[target.0 as usize] {
                    Fate::Exported(q) => found.push((q, indirect)),
                    Fate::Dropped => {}
                    Fate::NotResource => {
                        if looked_through.insert(target) {
                            stack.extend(required(target).iter().filter_map(as_instance).map(|i| (i, true)));
                        }
                    }
                }
            }
            // A direct edge wins over the same edge found indirectly.
            found.sort_unstable();
            found.dedup_by_key(|(q, _)| *q);
            any_indirect |= found.iter().any(|(_, indirect)| *indirect);
            if found.is_empty() && !looked_through.is_empty() {
                self.report_lost_requirements(instance, looked_through.iter().copied());
            }
        }
        if any_indirect {
            drop_implied_indirect_edges(&mut edges);
        }
        for (p, found) in edges.iter().enumerate() {
            let ids: Vec<String> = found.iter().map(|(q, _)| ir.resources[*q as usize].id.clone()).collect();
            ir.resources[p].requires = ids;
        }
        self.requires = edges.into_iter().map(|found| found.into_iter().map(|(q, _)| q).collect()).collect();
    }

    fn report_lost_requirements(&mut self, instance: InstanceId, through: impl Iterator<Item = InstanceId>) {
        let node = self.graph.get(instance);
        let mut through: Vec<InstanceId> = through.collect();
        through.sort();
        let names: Vec<String> = through.iter().take(3).map(|i| self.describe(*i)).collect();
        let d = Diagnostic::new(
            &codes::REQUIREMENTS_LOST,
            format!("resource {} requires instances, but no exported resource through them", self.describe(instance)),
        )
        .primary(node.file, node.span, "this resource ends up with no dependencies")
        .note(format!("it requires {}, which lead to no exported resource", names.join(", ")));
        self.diagnostics.push(d);
    }
}

/// Removes each edge found through a non-resource that another edge of the same resource already
/// implies: its target is reachable from another of the resource's requirements. A resource that
/// requires itself keeps that edge: it is a cycle, reported later.
fn drop_implied_indirect_edges(edges: &mut [Vec<(u32, bool)>]) {
    let mut reached: FxHashSet<u32> = FxHashSet::default();
    let mut stack: Vec<u32> = Vec::new();
    for p in 0..edges.len() {
        let indirect: Vec<u32> = edges[p].iter().filter(|(q, i)| *i && *q as usize != p).map(|(q, _)| *q).collect();
        let mut implied: Vec<u32> = Vec::new();
        for target in indirect {
            reached.clear();
            stack.extend(edges[p].iter().map(|(q, _)| *q).filter(|q| *q != target));
            while let Some(at) = stack.pop() {
                if at == target {
                    implied.push(target);
                    stack.clear();
                    break;
                }
                if reached.insert(at) {
                    stack.extend(edges[at as usize].iter().map(|(r, _)| *r));
                }
            }
        }
        edges[p].retain(|(q, indirect)| !*indirect || !implied.contains(q));
    }
}

/// What each instance requires directly (its `requires` list, which holds `provides` too).
pub(crate) struct Required<'g> {
    graph: &'g InstanceGraph,
    /// Per entity, the position of its `requires` attribute.
    requires_at: Vec<Option<usize>>,
}

impl<'g> Required<'g> {
    pub(crate) fn new(graph: &'g InstanceGraph) -> Required<'g> {
        let requires_at = graph.entities.iter().map(|e| e.attributes.iter().position(|a| a == "requires")).collect();
        Required { graph, requires_at }
    }

    pub(crate) fn of(&self, instance: InstanceId) -> &'g [Value] {
        let entity = self.graph.get(instance).entity as usize;
        match self.requires_at[entity].map(|at| &self.graph.values(instance)[at]) {
            Some(Value::List(items)) => items.as_slice(),
            _ => &[],
        }
    }

    pub(crate) fn instances(&self, instance: InstanceId) -> impl Iterator<Item = InstanceId> + 'g {
        self.of(instance).iter().filter_map(as_instance)
    }
}

fn as_instance(value: &Value) -> Option<InstanceId> {
    match value {
        Value::Instance(id) => Some(*id),
        _ => None,
    }
}
