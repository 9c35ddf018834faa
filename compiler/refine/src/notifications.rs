//! Notifications with a timing: every `std::Notify(sender=…, receiver=…, timing=…)` becomes an
//! entry of its sender's `notify` list in the IR, by receiver id, in creation order. A sender or
//! receiver that is not exported (`export_if` false) drops the notification, as `requires`
//! drops such an edge. The relations point from the notification to the resources only, so a
//! resource that sends none carries nothing for them.

use modelc_ir::{Ir, Notify, Timing};
use modelc_value::Value;

use crate::{Fate, Refinery};

/// The entity whose instances are notifications.
const NOTIFY: &str = "std::Notify";

impl Refinery<'_> {
    pub(crate) fn notifications(&self, ir: &mut Ir) {
        let graph = self.graph;
        let Some(entity) = graph.entities.iter().position(|e| e.fqn == NOTIFY) else { return };
        let shape = &graph.entities[entity];
        let at = |name: &str| shape.attributes.iter().position(|a| a == name);
        let (Some(sender_at), Some(receiver_at), Some(timing_at)) = (at("sender"), at("receiver"), at("timing")) else {
            return;
        };
        for index in 0..graph.instances.len() {
            let instance = modelc_value::InstanceId(index as u32);
            if graph.get(instance).entity as usize != entity {
                continue;
            }
            let values = graph.values(instance);
            let exported = |value: &Value| match value {
                Value::Instance(i) => match self.fates[i.0 as usize] {
                    Fate::Exported(q) => Some(q as usize),
                    _ => None,
                },
                _ => None,
            };
            let (Some(sender), Some(receiver)) = (exported(&values[sender_at]), exported(&values[receiver_at])) else {
                continue;
            };
            let timing = match &values[timing_at] {
                Value::Str(s) if &**s == "immediately" => Timing::Immediately,
                Value::Str(s) if &**s == "before" => Timing::Before,
                _ => Timing::Delayed,
            };
            let target = ir.resources[receiver].id.clone();
            let list = &mut ir.resources[sender].notify;
            if sender != receiver && !list.iter().any(|n| n.target == target && n.timing == timing) {
                list.push(Notify { target, timing });
            }
        }
    }
}
