//! The ownership rule of partial compiles (spec origins §1): a partial compile holds only the
//! services it changes, so each resource set must be complete and unique on its own. The set's
//! **service** is the instance whose implementation constructed the `std::ResourceSet`. Each
//! member must belong to that service: every constructor call that made (or, through an index,
//! returned) the member runs inside the service's refinement, or else the member's identity
//! derives from the service: one of its index attributes is the service or something the
//! service made (`index Host(network, id)` for a network's hosts). A member that another
//! service or the top level can also make would be shared between sets that a partial export
//! replaces one at a time.
//!
//! Sets constructed at the top level have the whole model as their service and are not checked.

use modelc_diagnostics::{Diagnostic, codes};
use modelc_exec::graph::Construction;
use modelc_ir::Ir;
use modelc_value::{InstanceId, Value};
use rustc_hash::FxHashMap;

use crate::Refinery;
use crate::shapes::Shapes;

impl Refinery<'_> {
    pub(crate) fn ownership(&mut self, ir: &Ir, shapes: &Shapes<'_>) {
        let graph = self.graph;
        let mut merges: FxHashMap<InstanceId, Vec<&Construction>> = FxHashMap::default();
        for merge in &graph.merges {
            merges.entry(merge.instance).or_default().push(merge);
        }
        let creators = |instance: InstanceId| -> Vec<(Option<InstanceId>, Option<&Construction>)> {
            let mut out = vec![(graph.get(instance).creator, None)];
            out.extend(merges.get(&instance).into_iter().flatten().map(|m| (m.creator, Some(*m))));
            out
        };
        let set_instances = std::mem::take(&mut self.set_instances);
        for (s, (set, members)) in set_instances.iter().enumerate() {
            let owners: Vec<InstanceId> = match creators(*set).iter().map(|(c, _)| *c).collect::<Option<Vec<_>>>() {
                Some(owners) => owners,
                // Made at the top level: the whole model is its service.
                None => continue,
            };
            for q in members {
                let member = self.instances[*q as usize];
                if self.derives_from(member, &owners, shapes) {
                    continue;
                }
                let outside = creators(member).into_iter().find(|(c, _)| !self.within(*c, &owners));
                if let Some((creator, construction)) = outside {
                    self.report_not_owned(ir, s, *set, owners[0], member, creator, construction);
                }
            }
        }
        self.set_instances = set_instances;
    }

    /// Whether code run for `creator` runs inside the refinement of one of `owners`.
    fn within(&self, creator: Option<InstanceId>, owners: &[InstanceId]) -> bool {
        let mut current = creator;
        let mut steps = 0;
        while let Some(at) = current {
            if owners.contains(&at) {
                return true;
            }
            current = self.graph.get(at).creator;
            steps += 1;
            if steps > 10_000 {
                break;
            }
        }
        false
    }

    /// Whether an index attribute of `member` is one of `owners` or made inside one.
    fn derives_from(&self, member: InstanceId, owners: &[InstanceId], shapes: &Shapes<'_>) -> bool {
        let entity = &self.graph.entity_of(member).fqn;
        let Some(index) = shapes.first_index(entity) else { return false };
        index.iter().any(|attribute| match self.graph.attribute(member, attribute) {
            Some(Value::Instance(related)) => owners.contains(related) || self.within(Some(*related), owners),
            _ => false,
        })
    }

    #[allow(clippy::too_many_arguments, reason = "one message with everything it names")]
    fn report_not_owned(
        &mut self,
        ir: &Ir,
        set_index: usize,
        set: InstanceId,
        owner: InstanceId,
        member: InstanceId,
        creator: Option<InstanceId>,
        construction: Option<&Construction>,
    ) {
        let set_name = &ir.sets[set_index].name;
        let id = &ir.resources[self.fates_position(member)].id;
        let node = self.graph.get(member);
        let (file, span) = construction.map_or((node.file, node.span), |c| (c.file, c.span));
        let by = match creator {
            Some(other) => format!("by the implementation of {}", self.describe(other)),
            None => "at the top level".to_owned(),
        };
        let s = self.graph.get(set);
        let d = Diagnostic::new(
            &codes::SET_MEMBER_NOT_OWNED,
            format!(
                "resource `{id}` in set `{set_name}` does not belong to the set's service {}",
                self.describe(owner)
            ),
        )
        .primary(file, span, format!("also constructed here, {by}"))
        .secondary(s.file, s.span, format!("set `{set_name}`, made by the service"))
        .note("a partial export replaces a set without looking at the others: its members must be made by its service only, or be identified through it")
        .help("construct the resource only in the service's implementation, give it an index on the service, or leave it out of the set to share it");
        self.diagnostics.push(d);
    }

    fn fates_position(&self, member: InstanceId) -> usize {
        match self.fates[member.0 as usize] {
            crate::Fate::Exported(q) => q as usize,
            _ => 0,
        }
    }
}
