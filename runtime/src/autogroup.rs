//! Autogroup: resources of one type that their handler can apply together (its
//! [`Handler::group_key`](crate::handler::Handler::group_key), e.g. files in one directory) are
//! grouped into one apply.
//!
//! Only resources whose meta parameters are equal, semaphores apart, are grouped (mgmt groups
//! whatever its kinds say and then honours one member's noop or retries for all); the group holds
//! the union of its members' semaphores. A group never joins two resources when one requires
//! the other, directly or through others (grouped ones included): one apply cannot be both
//! before and after something. Resources with `autogroup` off, with `before` notifications, or
//! not deployed in this run stay alone.

use std::collections::HashMap;

use modelc_ir::{Meta, Timing};

use crate::handler::Handlers;
use crate::plan::{Disposition, Plan};

impl Plan {
    /// Groups what can be applied together; returns how many groups (of two or more) it made.
    pub fn add_autogroups(&mut self, handlers: &Handlers) -> usize {
        let mut buckets: indexmap::IndexMap<(String, String, String), Vec<usize>> = indexmap::IndexMap::new();
        for (i, resource) in self.resources.iter().enumerate() {
            let alone = self.dispositions[i] != Disposition::Deploy
                || !resource.meta.autogroup
                || self.receivers(i, Timing::Before).next().is_some();
            if alone {
                continue;
            }
            let Some(key) = handlers.group_key(resource) else { continue };
            let meta =
                serde_json::to_string(&Meta { sema: Vec::new(), ..(*resource.meta).clone() }).unwrap_or_default();
            buckets.entry((resource.entity_type.clone(), key, meta)).or_default().push(i);
        }
        let mut group_of: Vec<Option<usize>> = vec![None; self.len()];
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for candidates in buckets.into_values().filter(|c| c.len() > 1) {
            let mut members = vec![candidates[0]];
            let g = groups.len();
            group_of[candidates[0]] = Some(g);
            groups.push(Vec::new());
            for &c in &candidates[1..] {
                // Joining `c` must not put the group on both sides of a path.
                if self.unit_reaches(&group_of, &groups, &members, c, Some(g))
                    || self.unit_reaches(&group_of, &groups, &[c], members[0], None)
                {
                    continue;
                }
                group_of[c] = Some(g);
                members.push(c);
            }
            groups[g] = members;
        }
        // Groups of one are no groups.
        let mut renumbered = HashMap::new();
        self.groups = Vec::new();
        for (g, members) in groups.into_iter().enumerate() {
            if members.len() > 1 {
                renumbered.insert(g, self.groups.len());
                self.groups.push(members);
            }
        }
        self.group_of = group_of.into_iter().map(|g| g.and_then(|g| renumbered.get(&g).copied())).collect();
        self.groups.len()
    }

    /// Whether, with the grouping so far (a group is one node), anything `from` requires leads
    /// to `to` or its group. `from_group`: the group `from` belongs to, whose members' own
    /// requirements count as its own.
    fn unit_reaches(
        &self,
        group_of: &[Option<usize>],
        groups: &[Vec<usize>],
        from: &[usize],
        to: usize,
        from_group: Option<usize>,
    ) -> bool {
        let target_group = group_of[to];
        let mut seen = vec![false; self.len()];
        let mut stack: Vec<usize> = from.iter().flat_map(|&f| self.requires[f].iter().copied()).collect();
        while let Some(n) = stack.pop() {
            if std::mem::replace(&mut seen[n], true) {
                continue;
            }
            if n == to || (target_group.is_some() && group_of[n] == target_group) {
                return true;
            }
            stack.extend(self.requires[n].iter().copied());
            // Reaching a member of a group reaches all it requires, through the group's one apply.
            if let Some(g) = group_of[n]
                && Some(g) != from_group
            {
                for &m in groups.get(g).map(Vec::as_slice).unwrap_or(&[]) {
                    stack.extend(self.requires[m].iter().copied());
                }
            }
        }
        false
    }
}
