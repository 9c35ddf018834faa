//! Notifications with a timing (`Resource::notify`, docs/runtime.md): the order each one
//! implies, added to a plan, and who notifies whom.
//!
//! * `immediately`: the receiver runs after the sender (an edge, as `requires` gives), and
//!   whatever else requires the sender waits for the receiver too (an ordering-only edge: a
//!   failed receiver does not block it), so the receiver's refresh comes right after the change;
//! * `before`: the sender runs after the receiver; the engine checks the sender first and
//!   refreshes the receiver only when the sender would change;
//! * `delayed`: no order; the engine refreshes the receiver once, after everything else.
//!
//! An order that contradicts the graph (the receiver of an immediate notification is required
//! by the sender) cannot be honoured: the sender is not deployed, with the reason.

use modelc_ir::Timing;

use crate::autoedge::reaches;
use crate::plan::{Disposition, Plan};

impl Plan {
    /// Resolves every resource's notifications to positions and adds the order they imply.
    /// Notifications to resources this run does not deploy are dropped: they are refreshed by
    /// whichever run deploys them.
    pub(crate) fn add_notifications(&mut self) {
        let position: std::collections::HashMap<&str, usize> =
            self.resources.iter().enumerate().map(|(i, r)| (r.id.as_str(), i)).collect();
        let mut notify: Vec<Vec<(usize, Timing)>> = vec![Vec::new(); self.len()];
        for (sender, resource) in self.resources.iter().enumerate() {
            for n in &resource.notify {
                if let Some(&receiver) = position.get(n.target.as_str())
                    && receiver != sender
                    && self.dispositions[receiver] == Disposition::Deploy
                {
                    notify[sender].push((receiver, n.timing));
                }
            }
        }
        for (sender, receivers) in notify.iter().enumerate() {
            if self.dispositions[sender] != Disposition::Deploy {
                continue;
            }
            for &(receiver, timing) in receivers {
                let contradiction = match timing {
                    Timing::Immediately => self.order(receiver, sender, false),
                    Timing::Before => self.order(sender, receiver, false),
                    Timing::Delayed => Ok(()),
                };
                if let Err(()) = contradiction {
                    let (word, relation) = match timing {
                        Timing::Before => ("before", "the receiver requires it"),
                        _ => ("immediately", "it requires the receiver"),
                    };
                    self.dispositions[sender] = Disposition::Undeployable(format!(
                        "it notifies `{}` {word}, but {relation}: that order cannot be kept",
                        self.resources[receiver].id
                    ));
                    continue;
                }
                if timing == Timing::Immediately {
                    let others: Vec<usize> =
                        self.dependents[sender].iter().copied().filter(|&d| d != receiver).collect();
                    for other in others {
                        // Best effort: an ordering edge that would close a cycle is left out.
                        let _ = self.order(other, receiver, true);
                    }
                }
            }
        }
        self.notify = notify;
    }

    /// Adds the edge "`after` runs after `before`" unless the graph already states it; `Err`
    /// when it would close a cycle. A soft edge only orders: a failure before it blocks nothing.
    fn order(&mut self, after: usize, before: usize, soft: bool) -> Result<(), ()> {
        if self.requires[after].contains(&before) {
            return Ok(());
        }
        if reaches(&self.requires, before, after) {
            return Err(());
        }
        self.requires[after].push(before);
        self.dependents[before].push(after);
        if soft {
            self.soft.insert((after, before));
        }
        Ok(())
    }

    /// Whether `after` waits for `before` only for the order (a failure of `before` does not
    /// block it).
    pub fn is_soft(&self, after: usize, before: usize) -> bool {
        self.soft.contains(&(after, before))
    }

    /// The receivers `sender` notifies with `timing`.
    pub fn receivers(&self, sender: usize, timing: Timing) -> impl Iterator<Item = usize> + '_ {
        self.notify[sender].iter().filter(move |(_, t)| *t == timing).map(|(r, _)| *r)
    }
}
