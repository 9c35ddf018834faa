//! Checks of the grouped resources (spec export §3): no dependency from one resource set into
//! another (a partial export replaces one set without the other), and no dependency cycle.
//! Duplicate ids and a resource in two sets are caught while the queue and the sets are built.

use indexmap::IndexMap;
use modelc_diagnostics::{Diagnostic, codes};
use modelc_ir::Ir;
use modelc_ir::graph::DependencyGraph;

use crate::Refinery;
use crate::edge_sites::{Added, EdgeSites};

/// Where an instance was created, or a statement is: file and span.
type Site = (modelc_diagnostics::FileId, u32, u32);

/// A cross-set dependency's pattern: where its two ends are created and, when known, the
/// statement that adds it.
type Pattern = (Site, Site, Option<Added>);

impl Refinery<'_> {
    pub(crate) fn validate(&mut self, ir: &Ir) {
        let requires = std::mem::take(&mut self.requires);
        // Cross-set edges, grouped by the statements that create their two ends and the one that
        // adds the dependency: a pattern an implementation repeats for every instance is one
        // mistake, reported once.
        let mut patterns: IndexMap<Pattern, Vec<(usize, usize)>> = IndexMap::new();
        let mut sites: Option<EdgeSites> = None;
        for (p, resource) in ir.resources.iter().enumerate() {
            let Some(set) = &resource.resource_set else { continue };
            for q in &requires[p] {
                let q = *q as usize;
                let in_two_sets = self.in_two_sets.contains(&(p as u32)) || self.in_two_sets.contains(&(q as u32));
                if let Some(other) = &ir.resources[q].resource_set
                    && other != set
                    && !in_two_sets
                {
                    let site = |at: usize| {
                        let node = self.graph.get(self.instances[at]);
                        (node.file, node.span.start, node.span.end)
                    };
                    let sites = sites.get_or_insert_with(|| EdgeSites::new(self.graph));
                    let added = sites.site(&self.fates, self.instances[p], self.instances[q]);
                    patterns.entry((site(p), site(q), added)).or_default().push((p, q));
                }
            }
        }
        for ((_, _, added), edges) in patterns {
            self.report_cross_set(ir, &edges, added);
        }
        if requires.iter().all(Vec::is_empty) {
            return;
        }
        let edges = requires.iter().enumerate().flat_map(|(p, found)| found.iter().map(move |q| (p, *q as usize)));
        let graph = DependencyGraph::from_positions(ir.resources.len(), edges);
        for cycle in graph.cycles() {
            let sites = sites.get_or_insert_with(|| EdgeSites::new(self.graph));
            self.report_cycle(ir, &cycle, sites);
        }
    }

    /// One diagnostic for the cross-set edges of one pattern: the first in full, the others
    /// listed (a few of them, then how many more).
    fn report_cross_set(&mut self, ir: &Ir, edges: &[(usize, usize)], added: Option<Added>) {
        let Some(&(from, to)) = edges.first() else { return };
        let (a, b) = (self.instances[from], self.instances[to]);
        let (na, nb) = (self.graph.get(a), self.graph.get(b));
        let set_a = ir.resources[from].resource_set.as_deref().unwrap_or_default();
        let set_b = ir.resources[to].resource_set.as_deref().unwrap_or_default();
        let mut d = Diagnostic::new(
            &codes::CROSS_SET_DEPENDENCY,
            format!(
                "resource `{}` in set `{set_a}` requires `{}` in set `{set_b}`",
                ir.resources[from].id, ir.resources[to].id
            ),
        )
        .secondary(nb.file, nb.span, format!("in set `{set_b}`, created at {}", self.graph.location(b)));
        // The statement that added the dependency is the cause; where it is unknown (an edge
        // modelc adds itself, such as a file's parent directory), the requiring resource is.
        let requiring = format!("in set `{set_a}`, created at {}", self.graph.location(a));
        d = match added {
            Some(added) => {
                let d = d
                    .primary(added.file, added.span, "this adds the dependency")
                    .secondary(na.file, na.span, requiring);
                match added.through {
                    Some(step) => d.note(format!(
                        "it goes through {}, which is not a resource: its own requirements lead to `{}`",
                        self.describe(step),
                        ir.resources[to].id
                    )),
                    None => d,
                }
            }
            None => d.primary(na.file, na.span, requiring),
        };
        if edges.len() > 1 {
            const LISTED: usize = 5;
            let others: Vec<String> = edges[1..]
                .iter()
                .take(LISTED)
                .map(|&(p, q)| format!("`{}` → `{}`", ir.resources[p].id, ir.resources[q].id))
                .collect();
            let more = edges.len() - 1 - others.len();
            let tail = if more > 0 { format!(", and {more} more") } else { String::new() };
            d = d.note(format!(
                "the same statements make {} like it: {}{tail}",
                modelc_diagnostics::count((edges.len() - 1) as u64, "other dependency"),
                others.join(", ")
            ));
        }
        let d = d
            .note("a resource in a set may require resources of its own set and shared resources only")
            .help("put both in the same set, or take the required resource out of its set to share it");
        self.diagnostics.push(d);
    }

    fn report_cycle(&mut self, ir: &Ir, cycle: &[usize], sites: &EdgeSites) {
        let mut path: Vec<&str> = cycle.iter().map(|p| ir.resources[*p].id.as_str()).collect();
        path.push(path[0]);
        let first = self.graph.get(self.instances[cycle[0]]);
        let mut d = Diagnostic::new(&codes::DEPENDENCY_CYCLE, format!("dependency cycle: {}", path.join(" → ")))
            .primary(first.file, first.span, "step 1: this resource requires itself through the cycle");
        for (k, p) in cycle.iter().enumerate().skip(1) {
            let node = self.graph.get(self.instances[*p]);
            d = d.secondary(node.file, node.span, format!("step {} of the cycle", k + 1));
        }
        // The statements that add the edges: where the cycle can be broken.
        for (k, p) in cycle.iter().enumerate() {
            let next = cycle[(k + 1) % cycle.len()];
            if let Some(added) = sites.site(&self.fates, self.instances[*p], self.instances[next]) {
                let label = format!("step {} requires step {} here", k + 1, (k + 1) % cycle.len() + 1);
                d = d.secondary(added.file, added.span, label);
            }
        }
        self.diagnostics.push(d.help("remove one of these requires (or provides) edges"));
    }
}
