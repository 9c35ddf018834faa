//! The result of execution as plain data: every instance, where it was constructed, and the
//! final value of each of its attributes (relations as lists of instance ids). Later phases
//! (resources, export) and snapshot tests read this, never the engine's cells.

use std::fmt::Write as _;

use indexmap::IndexMap;
use modelc_diagnostics::{FileId, Span};
use modelc_value::{InstanceId, Value};

use crate::engine::Engine;
use crate::store::CellKind;

/// Every instance of a compile, in construction order (`InstanceId` = position).
#[derive(Debug, Default, Clone)]
pub struct InstanceGraph {
    pub instances: Vec<InstanceNode>,
}

#[derive(Debug, Clone)]
pub struct InstanceNode {
    pub entity: String,
    pub file: FileId,
    pub span: Span,
    /// `main.cf:12`.
    pub location: String,
    /// Attribute values in the entity's attribute order: a relation is a list of instances
    /// (`[0:1]` and `[1]` ends hold the instance or null).
    pub attributes: IndexMap<String, Value>,
}

impl InstanceGraph {
    pub fn get(&self, id: InstanceId) -> &InstanceNode {
        &self.instances[id.0 as usize]
    }

    /// The instances of exactly `entity`.
    pub fn of_entity<'g>(&'g self, entity: &'g str) -> impl Iterator<Item = (InstanceId, &'g InstanceNode)> + 'g {
        self.instances
            .iter()
            .enumerate()
            .filter(move |(_, n)| n.entity == entity)
            .map(|(i, n)| (InstanceId(i as u32), n))
    }

    /// A stable text form for snapshots: one block per instance, `std` instances left out, and
    /// empty `requires`/`provides` (which every entity has) omitted.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (i, node) in self.instances.iter().enumerate() {
            if node.entity.starts_with("std::") {
                continue;
            }
            let _ = writeln!(out, "#{i} {} ({})", node.entity, node.location);
            for (name, value) in &node.attributes {
                if matches!(name.as_str(), "requires" | "provides") && matches!(value, Value::List(l) if l.is_empty()) {
                    continue;
                }
                let _ = writeln!(out, "    {name} = {}", modelc_value::py_repr(value, &|id| self.label(id)));
            }
        }
        out
    }

    fn label(&self, id: InstanceId) -> String {
        let node = self.get(id);
        format!("#{} {}", id.0, node.entity.strip_prefix("__config__::").unwrap_or(&node.entity))
    }
}

impl Engine<'_> {
    /// The instance graph as it stands (after the final checks: every value is known).
    pub(crate) fn graph(&self) -> InstanceGraph {
        let instances = self
            .instances
            .iter()
            .map(|instance| {
                let attributes = instance
                    .attributes
                    .iter()
                    .map(|(name, cell)| {
                        let c = self.cell(*cell);
                        let value = match &c.kind {
                            CellKind::List { .. } => Value::list(c.items.clone()),
                            _ => c.value.clone().unwrap_or(Value::Null),
                        };
                        (name.clone(), value)
                    })
                    .collect();
                InstanceNode {
                    entity: instance.entity.clone(),
                    file: instance.file,
                    span: instance.span,
                    location: format!("{}:{}", instance.file_name, instance.line),
                    attributes,
                }
            })
            .collect();
        InstanceGraph { instances }
    }
}
