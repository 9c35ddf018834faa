//! Per-entity plans, computed once per compile for every entity: the attribute layout with
//! each attribute's cell kind, the defaults, the indexes (own and inherited) and the `implement`
//! statements. Constructors read these instead of walking the type table each time, and cells
//! point at their plan's kind instead of holding a copy.

use rustc_hash::FxHashMap;

use modelc_sema::hir::EntityId;
use modelc_sema::index::{AttrDef, AttrKind};
use modelc_value::{InstanceId, Value};

use crate::cells::{CellId, CellKind};
use crate::engine::Engine;
use crate::program::{ImplementDef, Program};

pub(crate) struct EntityPlan<'a> {
    pub fqn: &'a str,
    /// Attribute names in slot order (spec §1.4: own, then parents depth-first).
    pub names: Vec<&'a str>,
    positions: FxHashMap<&'a str, u32>,
    pub kinds: Vec<CellKind<'a>>,
    /// Each attribute's declaration (relation ends: target, bounds, inverse).
    pub defs: Vec<&'a AttrDef>,
    /// Defaults (constant values) of the attributes that have one, by position.
    pub defaults: Vec<(u32, Value)>,
    /// Every index that applies: the entity that declares it, its attributes (sorted) and
    /// their positions.
    pub indexes: Vec<PlannedIndex<'a>>,
    /// By position: whether the attribute is part of some index (asked per argument).
    indexed: Vec<bool>,
    pub implements: Vec<&'a ImplementDef<'a>>,
    /// The position of `std::Entity.requires`, whose edges are recorded with their statement
    /// (`InstanceGraph::requires_sites`).
    pub requires_at: Option<u32>,
    /// Where each attribute is declared: a default's first value is set there.
    pub declared: Vec<Option<(modelc_diagnostics::FileId, modelc_diagnostics::Span)>>,
}

pub(crate) struct PlannedIndex<'a> {
    pub owner: &'a str,
    pub attributes: &'a [String],
    pub positions: Vec<u32>,
}

impl EntityPlan<'_> {
    /// Whether the attribute at `position` is part of one of the entity's indexes.
    pub(crate) fn is_indexed(&self, position: u32) -> bool {
        self.indexed.get(position as usize).copied().unwrap_or(false)
    }

    pub(crate) fn position(&self, name: &str) -> Option<u32> {
        self.positions.get(name).copied()
    }

    /// Whether the attribute at `position` is a float (index keys cast ints to floats).
    pub(crate) fn is_float(&self, position: u32) -> bool {
        matches!(self.kinds[position as usize], CellKind::Attribute(ty) if ty.base == modelc_sema::types::BaseType::Float)
    }
}

/// The plans of every entity of a program; an entity's id is its position.
pub(crate) struct Plans<'a> {
    pub plans: Vec<EntityPlan<'a>>,
    ids: FxHashMap<&'a str, u32>,
}

impl<'a> Plans<'a> {
    /// `None` when `cancelled` said so (looked at every few entities).
    pub(crate) fn new(program: &'a Program<'a>, cancelled: &dyn Fn() -> bool) -> Option<Plans<'a>> {
        // An entity's plan id is its `EntityId`: its position in the type table.
        let mut plans: Vec<EntityPlan<'a>> = Vec::with_capacity(program.index.entities.len());
        for (id, fqn) in program.index.entities.keys().enumerate() {
            if id % crate::program::GATHER_POLL == 0 && cancelled() {
                return None;
            }
            plans.push(plan(program, EntityId(id as u32), fqn));
        }
        let ids = plans.iter().enumerate().map(|(i, p)| (p.fqn, i as u32)).collect();
        Some(Plans { plans, ids })
    }

    pub(crate) fn get(&self, id: u32) -> &EntityPlan<'a> {
        &self.plans[id as usize]
    }

    pub(crate) fn id(&self, entity: &str) -> Option<u32> {
        self.ids.get(entity).copied()
    }
}

fn plan<'a>(program: &'a Program<'a>, id: EntityId, fqn: &'a str) -> EntityPlan<'a> {
    let index = program.index;
    let names: Vec<&'a str> = index.attribute_names(fqn).into_iter().collect();
    let ancestry = index.ancestry(fqn);
    let defs: Vec<&'a AttrDef> = names
        .iter()
        .map(|name| ancestry.iter().find_map(|d| d.attributes.get(*name)).expect("names come from the ancestry"))
        .collect();
    let kinds = defs
        .iter()
        .map(|def| match &def.kind {
            AttrKind::Value { ty, .. } => CellKind::Attribute(ty),
            AttrKind::Relation { target, bounds, .. } if bounds.is_optional() => CellKind::Optional { target },
            AttrKind::Relation { target, bounds, .. } if bounds.is_single() => CellKind::Single { target },
            AttrKind::Relation { target, bounds, .. } => CellKind::List {
                target,
                lower: u32::try_from(bounds.lower).unwrap_or(u32::MAX),
                upper: bounds.upper.map_or(u32::MAX, |u| u32::try_from(u).unwrap_or(u32::MAX)),
            },
        })
        .collect();
    let positions: FxHashMap<&'a str, u32> = names.iter().enumerate().map(|(i, n)| (*n, i as u32)).collect();
    let defaults =
        program.defaults_of(fqn).into_iter().filter_map(|(name, value)| Some((*positions.get(name)?, value))).collect();
    let indexes: Vec<PlannedIndex<'a>> = ancestry
        .iter()
        .flat_map(|def| def.indexes.iter().map(move |attrs| (def.fqn.as_str(), attrs.as_slice())))
        .filter_map(|(owner, attributes)| {
            let positions = attributes.iter().map(|a| positions.get(a.as_str()).copied()).collect::<Option<_>>()?;
            Some(PlannedIndex { owner, attributes, positions })
        })
        .collect();
    let mut indexed = vec![false; names.len()];
    for position in indexes.iter().flat_map(|index: &PlannedIndex<'_>| &index.positions) {
        indexed[*position as usize] = true;
    }
    let declared = defs.iter().map(|d| program.declarations.get(&(d.owner.clone(), d.name.clone())).copied()).collect();
    let requires_at = positions.get("requires").copied().filter(|at| defs[*at as usize].owner == "std::Entity");
    EntityPlan {
        fqn,
        names,
        positions,
        kinds,
        defs,
        defaults,
        indexes,
        indexed,
        implements: program.implements_of(id),
        requires_at,
        declared,
    }
}

impl<'a> Engine<'a> {
    /// The plan of an instance.
    pub(crate) fn plan_of_instance(&self, instance: InstanceId) -> &'a EntityPlan<'a> {
        self.plans.get(self.instances[instance.0 as usize].plan)
    }

    /// Whether `entity` is `ancestor` or inherits from it (answers cached per pair).
    pub(crate) fn is_subtype(&self, entity: &'a str, ancestor: &'a str) -> bool {
        if entity == ancestor {
            return true;
        }
        let key = (entity, ancestor);
        if let Some(answer) = self.subtypes.borrow().get(&key) {
            return *answer;
        }
        let answer = self.program.index.is_subtype(entity, ancestor);
        self.subtypes.borrow_mut().insert(key, answer);
        answer
    }

    /// The entity of an instance.
    pub(crate) fn entity_of(&self, instance: InstanceId) -> &'a str {
        self.plan_of_instance(instance).fqn
    }

    /// The cell of attribute `name` of an instance.
    pub(crate) fn attr_cell(&self, instance: InstanceId, name: &str) -> Option<CellId> {
        let i = &self.instances[instance.0 as usize];
        let position = self.plans.get(i.plan).position(name)?;
        Some(CellId(i.first.0 + position))
    }

    /// The declaration of attribute `name` of an instance.
    pub(crate) fn attr_def(&self, instance: InstanceId, name: &str) -> Option<&'a AttrDef> {
        let plan = self.plan_of_instance(instance);
        plan.position(name).map(|p| plan.defs[p as usize])
    }
}
