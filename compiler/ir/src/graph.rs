//! The resource graph: one node per resource of the queue (node index = queue position), an
//! edge from each resource to every resource it requires.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::Ir;

/// The requires edges of an IR as a petgraph graph.
#[derive(Debug, Clone)]
pub struct DependencyGraph {
    /// Node weights are queue positions; an edge `a → b` means `a` requires `b`.
    pub graph: DiGraph<usize, ()>,
}

/// A `requires` entry naming no resource of the IR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DanglingRequire {
    pub resource: String,
    pub missing: String,
}

impl DependencyGraph {
    /// Builds the graph; every `requires` must name a resource of the queue.
    pub fn new(ir: &Ir) -> Result<DependencyGraph, DanglingRequire> {
        let position: HashMap<&str, usize> = ir.resources.iter().enumerate().map(|(i, r)| (r.id.as_str(), i)).collect();
        let mut edges = Vec::new();
        for (i, resource) in ir.resources.iter().enumerate() {
            for required in &resource.requires {
                let Some(&j) = position.get(required.as_str()) else {
                    return Err(DanglingRequire { resource: resource.id.clone(), missing: required.clone() });
                };
                edges.push((i, j));
            }
        }
        Ok(DependencyGraph::from_positions(ir.resources.len(), edges))
    }

    /// The graph of `count` resources with `requires` edges given as queue positions (what
    /// refinement knows before it writes ids).
    pub fn from_positions(count: usize, edges: impl IntoIterator<Item = (usize, usize)>) -> DependencyGraph {
        let edges = edges.into_iter();
        let mut graph = DiGraph::with_capacity(count, edges.size_hint().0);
        for i in 0..count {
            graph.add_node(i);
        }
        for (i, j) in edges {
            graph.add_edge(NodeIndex::new(i), NodeIndex::new(j), ());
        }
        DependencyGraph { graph }
    }

    /// The order a deployment follows: every resource after the resources it requires, ties in
    /// queue order. `Err` holds one dependency cycle (queue positions, each requiring the next,
    /// the last requiring the first).
    pub fn deploy_order(&self) -> Result<Vec<usize>, Vec<usize>> {
        let count = self.graph.node_count();
        let mut waiting: Vec<usize> =
            (0..count).map(|i| self.graph.neighbors_directed(NodeIndex::new(i), Direction::Outgoing).count()).collect();
        let mut ready: BinaryHeap<Reverse<usize>> = (0..count).filter(|i| waiting[*i] == 0).map(Reverse).collect();
        let mut order = Vec::with_capacity(count);
        while let Some(Reverse(next)) = ready.pop() {
            order.push(next);
            for dependent in self.graph.neighbors_directed(NodeIndex::new(next), Direction::Incoming) {
                let d = dependent.index();
                waiting[d] -= 1;
                if waiting[d] == 0 {
                    ready.push(Reverse(d));
                }
            }
        }
        if order.len() == count { Ok(order) } else { Err(self.find_cycle(&waiting)) }
    }

    /// Every cycle of the graph, one per strongly connected component, in queue order of their
    /// first resource.
    pub fn cycles(&self) -> Vec<Vec<usize>> {
        let mut cycles = Vec::new();
        // Components are visited, not collected: most resources are a component of their own.
        let mut tarjan = petgraph::algo::TarjanScc::new();
        tarjan.run(&self.graph, |component| {
            let first = component.iter().map(|n| n.index()).min().unwrap_or(0);
            let looped = component.len() > 1 || self.graph.contains_edge(component[0], component[0]);
            if looped {
                let mut inside = vec![false; self.graph.node_count()];
                for n in component {
                    inside[n.index()] = true;
                }
                cycles.push(self.cycle_from(first, &inside));
            }
        });
        cycles.sort_by_key(|c| c[0]);
        cycles
    }

    /// A cycle among the resources still `waiting` after a topological sort.
    fn find_cycle(&self, waiting: &[usize]) -> Vec<usize> {
        let inside: Vec<bool> = waiting.iter().map(|w| *w > 0).collect();
        let start = inside.iter().position(|w| *w).unwrap_or(0);
        self.cycle_from(start, &inside)
    }

    /// Walks requires edges inside `inside` from `start` until a resource repeats; the repeated
    /// stretch is a cycle. Every node inside has an edge to another node inside.
    fn cycle_from(&self, start: usize, inside: &[bool]) -> Vec<usize> {
        let mut seen_at: HashMap<usize, usize> = HashMap::new();
        let mut path = Vec::new();
        let mut at = start;
        loop {
            if let Some(&from) = seen_at.get(&at) {
                let mut cycle = path.split_off(from);
                // Start at the earliest resource, so the message is stable.
                let earliest = (0..cycle.len()).min_by_key(|i| cycle[*i]).unwrap_or(0);
                cycle.rotate_left(earliest);
                return cycle;
            }
            seen_at.insert(at, path.len());
            path.push(at);
            let mut next: Vec<usize> = self
                .graph
                .neighbors_directed(NodeIndex::new(at), Direction::Outgoing)
                .map(|n| n.index())
                .filter(|n| inside[*n])
                .collect();
            next.sort_unstable();
            match next.first() {
                Some(n) => at = *n,
                None => return path,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deploy_order_puts_requirements_first_and_keeps_queue_order_otherwise() {
        let mut ir = crate::tests::sample();
        // c requires b requires a; add a resource-less tie: reverse queue positions.
        ir.resources.swap(0, 2);
        let graph = DependencyGraph::new(&ir).unwrap();
        let order: Vec<&str> = graph.deploy_order().unwrap().iter().map(|i| ir.resources[*i].id.as_str()).collect();
        assert_eq!(order, ["test::R[internal,name=a]", "test::R[internal,name=b]", "test::R[internal,name=c]"]);
        assert!(graph.cycles().is_empty());
    }

    #[test]
    fn cycles_are_reported_from_their_earliest_resource() {
        let mut ir = crate::tests::sample();
        ir.resources[0].requires.push("test::R[internal,name=c]".into());
        let graph = DependencyGraph::new(&ir).unwrap();
        assert_eq!(graph.deploy_order(), Err(vec![0, 2, 1]));
        assert_eq!(graph.cycles(), vec![vec![0, 2, 1]]);
    }

    #[test]
    fn dangling_requires_are_refused() {
        let mut ir = crate::tests::sample();
        ir.resources[2].requires.push("test::R[internal,name=gone]".into());
        let error = DependencyGraph::new(&ir).unwrap_err();
        assert_eq!(error.missing, "test::R[internal,name=gone]");
    }
}
