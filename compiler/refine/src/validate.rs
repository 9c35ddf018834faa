//! Checks of the grouped resources (spec export §3): no dependency from one resource set into
//! another (a partial export replaces one set without the other), and no dependency cycle.
//! Duplicate ids and a resource in two sets are caught while the queue and the sets are built.

use modelc_diagnostics::{Diagnostic, codes};
use modelc_ir::Ir;
use modelc_ir::graph::DependencyGraph;

use crate::Refinery;

impl Refinery<'_> {
    pub(crate) fn validate(&mut self, ir: &Ir) {
        let requires = std::mem::take(&mut self.requires);
        for (p, resource) in ir.resources.iter().enumerate() {
            let Some(set) = &resource.resource_set else { continue };
            for q in &requires[p] {
                let q = *q as usize;
                if let Some(other) = &ir.resources[q].resource_set
                    && other != set
                {
                    self.report_cross_set(ir, p, q);
                }
            }
        }
        if requires.iter().all(Vec::is_empty) {
            return;
        }
        let edges = requires.iter().enumerate().flat_map(|(p, found)| found.iter().map(move |q| (p, *q as usize)));
        let graph = DependencyGraph::from_positions(ir.resources.len(), edges);
        for cycle in graph.cycles() {
            self.report_cycle(ir, &cycle);
        }
    }

    fn report_cross_set(&mut self, ir: &Ir, from: usize, to: usize) {
        let (a, b) = (self.instances[from], self.instances[to]);
        let (na, nb) = (self.graph.get(a), self.graph.get(b));
        let set_a = ir.resources[from].resource_set.as_deref().unwrap_or_default();
        let set_b = ir.resources[to].resource_set.as_deref().unwrap_or_default();
        let d = Diagnostic::new(
            &codes::CROSS_SET_DEPENDENCY,
            format!(
                "resource `{}` in set `{set_a}` requires `{}` in set `{set_b}`",
                ir.resources[from].id, ir.resources[to].id
            ),
        )
        .primary(na.file, na.span, format!("in set `{set_a}`, created at {}", self.graph.location(a)))
        .secondary(nb.file, nb.span, format!("in set `{set_b}`, created at {}", self.graph.location(b)))
        .note("a resource in a set may require resources of its own set and shared resources only")
        .help("put both in the same set, or take the required resource out of its set to share it");
        self.diagnostics.push(d);
    }

    fn report_cycle(&mut self, ir: &Ir, cycle: &[usize]) {
        let mut path: Vec<&str> = cycle.iter().map(|p| ir.resources[*p].id.as_str()).collect();
        path.push(path[0]);
        let first = self.graph.get(self.instances[cycle[0]]);
        let mut d = Diagnostic::new(&codes::DEPENDENCY_CYCLE, format!("dependency cycle: {}", path.join(" → ")))
            .primary(first.file, first.span, "this resource requires itself through the cycle");
        for (k, p) in cycle.iter().enumerate().skip(1) {
            let node = self.graph.get(self.instances[*p]);
            d = d.secondary(node.file, node.span, format!("step {} of the cycle", k + 1));
        }
        self.diagnostics.push(d.help("remove one of these requires (or provides) edges"));
    }
}
