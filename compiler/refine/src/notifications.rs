//! Notifications with a timing: a resource's `notify_immediately`, `notify_delayed` and
//! `notify_before` relations become its `notify` list in the IR, by receiver id. A receiver that
//! is not exported (`export_if` false) is left out, as `requires` leaves it out.

use modelc_ir::{Ir, Notify, Timing};
use modelc_value::Value;

use crate::{Fate, Refinery};

const RELATIONS: [(&str, Timing); 3] = [
    ("notify_immediately", Timing::Immediately),
    ("notify_delayed", Timing::Delayed),
    ("notify_before", Timing::Before),
];

impl Refinery<'_> {
    pub(crate) fn notifications(&self, ir: &mut Ir) {
        let graph = self.graph;
        // Per entity, where each relation is (computed once per entity, not per resource).
        let positions: Vec<[Option<usize>; 3]> = graph
            .entities
            .iter()
            .map(|e| RELATIONS.map(|(name, _)| e.attributes.iter().position(|a| a == name)))
            .collect();
        for (p, &instance) in self.instances.iter().enumerate() {
            let entity = graph.get(instance).entity as usize;
            let mut notify = Vec::new();
            for (at, (_, timing)) in positions[entity].iter().zip(RELATIONS) {
                let Some(Value::List(receivers)) = at.map(|at| &graph.values(instance)[at]) else { continue };
                for receiver in receivers.iter() {
                    let Value::Instance(receiver) = receiver else { continue };
                    if let Fate::Exported(q) = self.fates[receiver.0 as usize] {
                        let target = ir.resources[q as usize].id.clone();
                        if !notify.iter().any(|n: &Notify| n.target == target && n.timing == timing) {
                            notify.push(Notify { target, timing });
                        }
                    }
                }
            }
            ir.resources[p].notify = notify;
        }
    }
}
