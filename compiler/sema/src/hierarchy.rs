//! The inheritance graph, answered without walking it: whether one entity is a subtype of
//! another, and whether an entity or an ancestor has a parent that did not resolve.
//!
//! Walking the ancestry for each question made checks of deep hierarchies polynomial (a chain of
//! 1,000 entities took minutes) and of diamonds worse. Here each entity gets a post-order number
//! in a spanning forest of the graph (its first parent is its tree parent) and the set of the
//! numbers of its descendants as a short list of disjoint intervals (its subtree's interval,
//! merged with those its other children bring; Agrawal, Borgida and Jagadish's "tree cover"), so
//! a subtype question is a binary search. For single inheritance each list is one interval, and
//! for diamonds (`E2 extends E1, E0` where `E1 extends E0`) the second parent's descendants lie
//! within the first's, so lists stay short.
//!
//! Entities on an inheritance cycle (an error reported by their file) have no numbers; questions
//! about them are answered `None` and the caller walks the graph instead.

/// Positions are those of `ModelIndex::entities`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Hierarchy {
    /// Each entity's post-order number, or `u32::MAX` when it is on or below a cycle.
    post: Vec<u32>,
    /// Each entity's descendants (itself included) as sorted, disjoint, inclusive intervals of
    /// post-order numbers.
    descendants: Vec<Vec<(u32, u32)>>,
    /// Each entity, or an ancestor, has a written parent that did not resolve (read only for
    /// numbered entities).
    incomplete: Vec<bool>,
}

const CYCLIC: u32 = u32::MAX;

impl Hierarchy {
    /// `parents[e]`: the positions of entity `e`'s parents, in declaration order; `incomplete[e]`:
    /// whether one of its own written parents did not resolve.
    pub(crate) fn new(parents: &[Vec<usize>], incomplete: &[bool]) -> Hierarchy {
        let count = parents.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); count];
        let mut waiting: Vec<usize> = parents.iter().map(Vec::len).collect();
        for (child, list) in parents.iter().enumerate() {
            for &parent in list {
                children[parent].push(child);
            }
        }
        // Kahn's order: every parent before its children. What is never reached is on or
        // below a cycle.
        let mut order: Vec<usize> = (0..count).filter(|&e| waiting[e] == 0).collect();
        let mut next = 0;
        while next < order.len() {
            let entity = order[next];
            next += 1;
            for &child in &children[entity] {
                waiting[child] -= 1;
                if waiting[child] == 0 {
                    order.push(child);
                }
            }
        }
        // The spanning forest: each entity under its first parent.
        let mut tree_children: Vec<Vec<usize>> = vec![Vec::new(); count];
        let mut roots = Vec::new();
        for &entity in &order {
            match parents[entity].first() {
                Some(&parent) => tree_children[parent].push(entity),
                None => roots.push(entity),
            }
        }
        // Post-order numbers and subtree sizes, without recursion (hierarchies may be deep).
        let mut post = vec![CYCLIC; count];
        let mut size = vec![1u32; count];
        let mut number = 0u32;
        for root in roots {
            let mut stack = vec![(root, 0usize)];
            while let Some((entity, child)) = stack.pop() {
                if let Some(&next_child) = tree_children[entity].get(child) {
                    stack.push((entity, child + 1));
                    stack.push((next_child, 0));
                } else {
                    post[entity] = number;
                    number += 1;
                    if let Some(&(parent, _)) = stack.last() {
                        size[parent] += size[entity];
                    }
                }
            }
        }
        // Descendant intervals, children first.
        let mut descendants: Vec<Vec<(u32, u32)>> = vec![Vec::new(); count];
        for &entity in order.iter().rev() {
            let own = (post[entity] + 1 - size[entity], post[entity]);
            let mut intervals = vec![own];
            for &child in &children[entity] {
                let outside = descendants[child].iter().filter(|&&(lo, hi)| lo < own.0 || hi > own.1);
                intervals.extend(outside);
            }
            descendants[entity] = merged(intervals);
        }
        // Incompleteness flows down from parents.
        let mut closed = incomplete.to_vec();
        closed.resize(count, false);
        for &entity in &order {
            if parents[entity].iter().any(|&p| closed[p]) {
                closed[entity] = true;
            }
        }
        Hierarchy { post, descendants, incomplete: closed }
    }

    fn numbered(&self, entity: usize) -> Option<u32> {
        self.post.get(entity).copied().filter(|&n| n != CYCLIC)
    }

    /// Whether `sub` is `sup` or one of its descendants; `None` when either is unknown here.
    pub(crate) fn is_subtype(&self, sub: usize, sup: usize) -> Option<bool> {
        let number = self.numbered(sub)?;
        self.numbered(sup)?;
        let intervals = &self.descendants[sup];
        let at = intervals.partition_point(|&(_, hi)| hi < number);
        Some(intervals.get(at).is_some_and(|&(lo, _)| lo <= number))
    }

    /// Whether the entity or an ancestor has a written parent that did not resolve; `None` when
    /// it is unknown here.
    pub(crate) fn is_incomplete(&self, entity: usize) -> Option<bool> {
        self.numbered(entity)?;
        Some(self.incomplete[entity])
    }
}

/// Sorted, disjoint intervals covering the same numbers (adjacent ones joined).
fn merged(mut intervals: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    intervals.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(intervals.len());
    for (lo, hi) in intervals {
        match out.last_mut() {
            Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every subtype answer equals the one a plain walk of the parents gives.
    fn check_against_walk(parents: &[Vec<usize>]) {
        let hierarchy = Hierarchy::new(parents, &vec![false; parents.len()]);
        for sub in 0..parents.len() {
            let mut seen = vec![false; parents.len()];
            let mut stack = vec![sub];
            while let Some(e) = stack.pop() {
                if !std::mem::replace(&mut seen[e], true) {
                    stack.extend(&parents[e]);
                }
            }
            for (sup, &expected) in seen.iter().enumerate() {
                assert_eq!(hierarchy.is_subtype(sub, sup), Some(expected), "{sub} <: {sup} in {parents:?}");
            }
        }
    }

    #[test]
    fn chains_trees_diamonds_and_lattices_agree_with_a_walk() {
        let chain: Vec<Vec<usize>> = (0..50).map(|i| if i == 0 { vec![] } else { vec![i - 1] }).collect();
        check_against_walk(&chain);
        let diamond: Vec<Vec<usize>> = (0..40)
            .map(|i| match i {
                0 => vec![],
                1 => vec![0],
                _ => vec![i - 1, i - 2],
            })
            .collect();
        check_against_walk(&diamond);
        // Second parents that are not ancestors of the first: lists of several intervals.
        let lattice: Vec<Vec<usize>> = vec![
            vec![],
            vec![0],
            vec![0],
            vec![1],
            vec![2, 1],
            vec![3, 2],
            vec![4, 3],
            vec![0],
            vec![7, 5],
            vec![8, 6, 2],
        ];
        check_against_walk(&lattice);
        // Deterministic pseudo-random DAGs: parents are always earlier entities.
        let mut seed = 0x2545_f491_u64;
        for _ in 0..30 {
            let mut dag: Vec<Vec<usize>> = vec![vec![]];
            for i in 1..60 {
                let mut list = Vec::new();
                for _ in 0..3 {
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    let p = (seed >> 33) as usize % i;
                    if !list.contains(&p) {
                        list.push(p);
                    }
                }
                dag.push(list);
            }
            check_against_walk(&dag);
        }
    }

    #[test]
    fn cycles_are_left_to_a_walk_and_incompleteness_is_inherited() {
        // 1 and 2 extend each other; 3 extends 2.
        let parents = vec![vec![], vec![0, 2], vec![1], vec![2], vec![0]];
        let hierarchy = Hierarchy::new(&parents, &[true, false, false, false, false]);
        assert_eq!(hierarchy.is_subtype(3, 0), None);
        assert_eq!(hierarchy.is_subtype(4, 0), Some(true));
        assert_eq!(hierarchy.is_incomplete(4), Some(true));
        assert_eq!(hierarchy.is_incomplete(1), None);
    }

    #[test]
    fn a_ten_thousand_level_chain_is_built_without_recursion() {
        let chain: Vec<Vec<usize>> = (0..10_000).map(|i| if i == 0 { vec![] } else { vec![i - 1] }).collect();
        let hierarchy = Hierarchy::new(&chain, &vec![false; chain.len()]);
        assert_eq!(hierarchy.is_subtype(9_999, 0), Some(true));
        assert_eq!(hierarchy.is_subtype(0, 9_999), Some(false));
        assert!(hierarchy.descendants.iter().all(|d| d.len() == 1));
    }
}
