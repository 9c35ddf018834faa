//! Where a dependency between two resources comes from: the statement that added its first step
//! (`a.requires += b`, `requires=[b]` in a constructor, or `b.provides += a`). A dependency
//! found through instances that are not resources is traced back to the step that left the
//! requiring resource. Only errors ask, so the table is built when one is found.

use modelc_diagnostics::{FileId, Span};
use modelc_exec::graph::InstanceGraph;
use modelc_value::InstanceId;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::Fate;
use crate::requires::Required;

/// The statement that added a dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Added {
    pub file: FileId,
    pub span: Span,
    /// The first instance on the way, when it is not the required resource itself.
    pub through: Option<InstanceId>,
}

pub(crate) struct EdgeSites<'g> {
    required: Required<'g>,
    /// The first statement that added each instance-to-instance edge.
    sites: FxHashMap<(InstanceId, InstanceId), (FileId, Span)>,
}

impl<'g> EdgeSites<'g> {
    pub(crate) fn new(graph: &'g InstanceGraph) -> EdgeSites<'g> {
        let mut sites = FxHashMap::default();
        for s in &graph.requires_sites {
            sites.entry((s.from, s.to)).or_insert((s.file, s.span));
        }
        EdgeSites { required: Required::new(graph), sites }
    }

    /// The statement that made `from` require `to`, and the first instance on the way when
    /// the dependency goes through instances that are not resources.
    pub(crate) fn site(&self, fates: &[Fate], from: InstanceId, to: InstanceId) -> Option<Added> {
        let step = self.required.instances(from).find(|step| *step == to || self.reaches(fates, *step, to))?;
        let (file, span) = *self.sites.get(&(from, step))?;
        Some(Added { file, span, through: (step != to).then_some(step) })
    }

    /// Whether `to` is required from `start`, a non-resource, through non-resources only.
    fn reaches(&self, fates: &[Fate], start: InstanceId, to: InstanceId) -> bool {
        let mut seen = FxHashSet::default();
        let mut stack = vec![start];
        while let Some(at) = stack.pop() {
            if !matches!(fates[at.0 as usize], Fate::NotResource) || !seen.insert(at) {
                continue;
            }
            for next in self.required.instances(at) {
                if next == to {
                    return true;
                }
                stack.push(next);
            }
        }
        false
    }
}
