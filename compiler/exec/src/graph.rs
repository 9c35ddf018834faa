//! The result of execution as plain data: every instance, where it was constructed, and the
//! final value of each of its attributes (relations as lists of instance ids). Later phases
//! (resources, export) and snapshot tests read this, never the engine's cells.

use std::collections::HashMap;
use std::fmt::Write as _;

use modelc_diagnostics::{FileId, Span};
use modelc_value::{InstanceId, Value};

use crate::cells::{CellKind, ScopeId};
use crate::chunked::Chunked;
use crate::engine::Engine;

/// Every instance of a compile, in construction order (`InstanceId` = position).
#[derive(Debug, Default, Clone)]
pub struct InstanceGraph {
    /// The entities that have instances: name and attribute names, shared by their instances.
    pub entities: Vec<EntityShape>,
    pub instances: Vec<InstanceNode>,
    /// The attribute values of every instance, one after the other (see `InstanceNode::first`).
    pub values: Vec<Value>,
    /// How each file is named in messages.
    pub file_names: HashMap<FileId, String>,
    /// How each file is named in what the model exports (resource sources): relative to the
    /// project, so that the same model gives the same output from any directory. Set by the
    /// caller, which knows the project; files not in it are named as in messages.
    pub model_file_names: HashMap<FileId, String>,
    /// Constructor calls that returned an instance that already existed (an index match), in
    /// the order they ran, each once; recorded when `World::record_merges` asks for them.
    pub merges: Vec<Construction>,
    /// Every `requires` edge between instances, in the order the statements added them, with
    /// the statement (a `provides` edge is recorded as the `requires` edge it implies).
    pub requires_sites: Vec<RequiresSite>,
}

/// Where a `requires` edge was added: `from` requires `to` because of the statement at `span`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequiresSite {
    pub from: InstanceId,
    pub to: InstanceId,
    pub file: FileId,
    pub span: Span,
}

/// One constructor call of an instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Construction {
    pub instance: InstanceId,
    /// The instance whose implementation ran the constructor; `None` at the top level.
    pub creator: Option<InstanceId>,
    pub file: FileId,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct EntityShape {
    pub fqn: String,
    /// Attribute names in the entity's attribute order.
    pub attributes: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct InstanceNode {
    /// Index into [`InstanceGraph::entities`].
    pub entity: u32,
    pub file: FileId,
    pub span: Span,
    /// The 1-based line of `span`.
    pub line: u32,
    /// The instance whose implementation constructed it; `None` at the top level.
    pub creator: Option<InstanceId>,
    /// Where its values start in [`InstanceGraph::values`]: one per attribute of the entity, in
    /// its order. A relation is a list of instances (`[0:1]` and `[1]` ends hold the instance
    /// or null).
    pub first: u32,
}

impl InstanceGraph {
    pub fn get(&self, id: InstanceId) -> &InstanceNode {
        &self.instances[id.0 as usize]
    }

    pub fn entity_of(&self, id: InstanceId) -> &EntityShape {
        &self.entities[self.get(id).entity as usize]
    }

    /// The attribute values of an instance, in its entity's attribute order.
    pub fn values(&self, id: InstanceId) -> &[Value] {
        let first = self.get(id).first as usize;
        &self.values[first..first + self.entity_of(id).attributes.len()]
    }

    /// The value of attribute `name` of an instance.
    pub fn attribute(&self, id: InstanceId, name: &str) -> Option<&Value> {
        let position = self.entity_of(id).attributes.iter().position(|a| a == name)?;
        self.values(id).get(position)
    }

    /// `main.cf:12`: where an instance was constructed.
    pub fn location(&self, id: InstanceId) -> String {
        let node = self.get(id);
        format!("{}:{}", self.file_names.get(&node.file).map_or("?", String::as_str), node.line)
    }

    /// The instances of exactly `entity`.
    pub fn of_entity<'g>(&'g self, entity: &'g str) -> impl Iterator<Item = InstanceId> + 'g {
        (0..self.instances.len() as u32).map(InstanceId).filter(move |i| self.entity_of(*i).fqn == entity)
    }

    /// A stable text form for snapshots: one block per instance, `std` instances left out, and
    /// empty `requires`/`provides` (which every entity has) omitted.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for i in 0..self.instances.len() as u32 {
            let id = InstanceId(i);
            let shape = self.entity_of(id);
            if shape.fqn.starts_with("std::") {
                continue;
            }
            let _ = writeln!(out, "#{i} {} ({})", shape.fqn, self.location(id));
            for (name, value) in shape.attributes.iter().zip(self.values(id)) {
                if matches!(name.as_str(), "requires" | "provides") && matches!(value, Value::List(l) if l.is_empty()) {
                    continue;
                }
                let _ = writeln!(out, "    {name} = {}", modelc_value::py_repr(value, &|id| self.label(id)));
            }
        }
        out
    }

    fn label(&self, id: InstanceId) -> String {
        let fqn = &self.entity_of(id).fqn;
        format!("#{} {}", id.0, fqn.strip_prefix("__config__::").unwrap_or(fqn))
    }
}

impl Engine<'_> {
    /// The instance graph, with the values moved out of the cells (after the final checks:
    /// every value is known). It takes the engine apart as it goes, so that the graph and the
    /// engine's tables are not both held in full: the engine is not used afterwards, but for
    /// its instances.
    pub(crate) fn graph(&mut self) -> InstanceGraph {
        let entities = self
            .plans
            .plans
            .iter()
            .map(|plan| EntityShape {
                fqn: plan.fqn.to_owned(),
                attributes: plan.names.iter().map(|n| (*n).to_owned()).collect(),
            })
            .collect();
        let creators: Vec<Option<InstanceId>> = self.instances.iter().map(|i| self.creator_of(i.origin)).collect();
        let file_names = self.program.units.iter().map(|u| (u.file_id, u.display_name.clone())).collect();
        let mut merges: Vec<Construction> = Vec::with_capacity(self.merges.len());
        let mut seen = rustc_hash::FxHashSet::default();
        for (instance, scope, span) in std::mem::take(&mut self.merges) {
            let creator = self.creator_of(scope);
            if seen.insert((instance, creator, span.start)) {
                merges.push(Construction { instance, creator, file: self.file_of(scope), span });
            }
        }
        self.release_run_state();
        let empty = Value::list(Vec::new());
        let counts: Vec<u32> = self.instances.iter().map(|i| self.plans.get(i.plan).names.len() as u32).collect();
        let mut instances = Vec::with_capacity(self.instances.len());
        let mut values = Vec::with_capacity(counts.iter().map(|n| *n as usize).sum());
        for (n, instance) in self.instances.iter().enumerate() {
            let first = values.len() as u32;
            // Instances own ascending runs of cells: everything below this one is read.
            self.cells.release_below(instance.first.0 as usize);
            for k in 0..counts[n] {
                let c = &mut self.cells[(instance.first.0 + k) as usize];
                values.push(match (c.kind, c.value.take()) {
                    (CellKind::List { .. }, Some(items @ Value::List(_))) => items,
                    (CellKind::List { .. }, _) => empty.clone(),
                    (_, value) => value.unwrap_or(Value::Null),
                });
            }
            let line = self.program.line_of(instance.unit as usize, instance.span.start) as u32;
            instances.push(InstanceNode {
                entity: instance.plan,
                file: self.instance_file(instance),
                span: instance.span,
                line,
                first,
                creator: creators[n],
            });
        }
        self.cells = Chunked::default();
        let requires_sites = std::mem::take(&mut self.requires_sites);
        InstanceGraph {
            entities,
            instances,
            values,
            file_names,
            model_file_names: HashMap::new(),
            merges,
            requires_sites,
        }
    }

    /// The instance whose implementation code in `scope` belongs to (`None`: the top level).
    fn creator_of(&self, scope: ScopeId) -> Option<InstanceId> {
        let mut current = Some(scope);
        while let Some(id) = current {
            let s = self.scope(id);
            if s.instance().is_some() {
                return s.instance();
            }
            current = s.parent();
        }
        None
    }
}
