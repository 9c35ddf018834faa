//! Resource sets (spec export §3.1): every instance of `std::ResourceSet` (or a subtype) names a
//! set; the exported resources in its `resources` belong to it. Sets with the same name are one
//! set (the index merges them). A resource in no set is shared. A set with no exported member is
//! kept, empty: a partial export then removes what it held.

use indexmap::IndexMap;
use modelc_diagnostics::{Diagnostic, codes};
use modelc_ir::{Ir, ResourceSet};
use modelc_value::{InstanceId, Value};

use crate::{Fate, Refinery};

/// The entity whose instances are resource sets.
pub(crate) const RESOURCE_SET: &str = "std::ResourceSet";

impl Refinery<'_> {
    /// `is_set[entity]`: whether the instance graph's entity is a resource set.
    pub(crate) fn sets(&mut self, ir: &mut Ir, is_set: &[bool]) {
        let graph = self.graph;
        // Set name → (its instance, member queue positions).
        // Names are borrowed from the graph: copied once per set, when the set is written.
        let mut sets: IndexMap<&str, (InstanceId, Vec<u32>)> = IndexMap::new();
        // Queue position → the set (index into `sets`) it was first added to; `NONE`: none.
        const NONE: u32 = u32::MAX;
        let mut owner: Vec<u32> = vec![NONE; ir.resources.len()];
        for i in 0..graph.instances.len() as u32 {
            let set = InstanceId(i);
            if !is_set[graph.get(set).entity as usize] {
                continue;
            }
            let Some(Value::Str(name)) = graph.attribute(set, "name") else { continue };
            let entry = sets.entry(name.as_str());
            let s = entry.index();
            entry.or_insert((set, Vec::new()));
            let Some(Value::List(members)) = graph.attribute(set, "resources") else { continue };
            for member in members.iter() {
                let Value::Instance(member) = member else { continue };
                match self.fates[member.0 as usize] {
                    Fate::Exported(q) => match owner[q as usize] {
                        NONE => {
                            owner[q as usize] = s as u32;
                            sets[s].1.push(q);
                        }
                        first if first as usize == s => {}
                        first => {
                            self.in_two_sets.insert(q);
                            if let Some((first_name, (first_set, _))) = sets.get_index(first as usize) {
                                let (first_name, first_set) = (*first_name, *first_set);
                                let id = ir.resources[q as usize].id.clone();
                                self.report_two_sets(*member, &id, (first_name, first_set), (name, set));
                            }
                        }
                    },
                    Fate::Dropped => self.report_not_exported(*member, name, set),
                    Fate::NotResource => {}
                }
            }
        }
        drop(owner);
        ir.sets.reserve(sets.len());
        self.set_instances.reserve(sets.len());
        for (name, (set, mut members)) in sets {
            let name = name.to_owned();
            members.sort_unstable();
            for q in &members {
                ir.resources[*q as usize].resource_set = Some(name.clone());
            }
            let resources = members.iter().map(|q| ir.resources[*q as usize].id.clone()).collect();
            ir.sets.push(ResourceSet { name, resources, source: self.source(set) });
            self.set_instances.push((set, members));
        }
    }

    fn report_two_sets(
        &mut self,
        resource: InstanceId,
        id: &str,
        first: (&str, InstanceId),
        second: (&str, InstanceId),
    ) {
        let node = self.graph.get(resource);
        let (a, b) = (self.graph.get(first.1), self.graph.get(second.1));
        let d = Diagnostic::new(
            &codes::RESOURCE_IN_TWO_SETS,
            format!(
                "resource `{id}` is in two resource sets: `{}` (created at {}) and `{}` (created at {})",
                first.0,
                self.graph.location(first.1),
                second.0,
                self.graph.location(second.1)
            ),
        )
        .primary(node.file, node.span, format!("this resource, created at {}", self.graph.location(resource)))
        .secondary(a.file, a.span, format!("set `{}`", first.0))
        .secondary(b.file, b.span, format!("set `{}`", second.0))
        .help("a resource belongs to one set at most; leave it out of every set to share it");
        self.diagnostics.push(d);
    }

    fn report_not_exported(&mut self, resource: InstanceId, set_name: &str, set: InstanceId) {
        let node = self.graph.get(resource);
        let s = self.graph.get(set);
        let d = Diagnostic::new(
            &codes::SET_MEMBER_NOT_EXPORTED,
            format!("{} is in resource set `{set_name}` but is not exported", self.describe(resource)),
        )
        .primary(node.file, node.span, "not exported (its export condition is false, or its id is unknown)")
        .secondary(s.file, s.span, format!("set `{set_name}`"));
        self.diagnostics.push(d);
    }
}
