//! Constructors (spec §4.5, execution §1.4): arguments and defaults by attribute position,
//! index keys, merging into the instance an index already holds, creating instances with a
//! cell per attribute, and the cap on runaway construction.

use modelc_diagnostics::{Diagnostic, Span, codes};
use modelc_sema::hir::{ConstructArg, EntityRef, Expr, ExprKind};
use modelc_sema::index::AttrKind;
use modelc_value::{InstanceId, Value};

use crate::cells::{CellId, CellKind, Instance, Owner, ScopeId, TaskId};
use crate::engine::{Engine, Eval};
use crate::plans::EntityPlan;

/// Cap on nested construction (an instance constructed in an implementation of, or a loop over,
/// an instance constructed the same way …): far beyond real models, it stops runaway recursion.
pub(crate) const MAX_CONSTRUCTION_DEPTH: u32 = 1000;

impl<'a> Engine<'a> {
    /// Evaluates a constructor (memoised per task), with `lhs` the instance and relation the
    /// new instance is assigned to (its inverse may complete an index).
    #[allow(clippy::too_many_arguments, reason = "a constructor's parts, as lowered")]
    pub(crate) fn construct(
        &mut self,
        task: TaskId,
        expr: &'a Expr,
        entity: EntityRef,
        entity_span: Span,
        args: &'a [ConstructArg],
        scope: ScopeId,
        lhs: Option<(InstanceId, &'a str)>,
    ) -> Eval<Value> {
        let key = (expr as *const Expr, scope);
        // An entity's plan id is its `EntityId`.
        let plan_id = self.program.entity(self.unit_of(scope), entity).0;
        let plan = self.plans.get(plan_id);
        if let Some(value) = self.memo(task, key) {
            let value = value.clone();
            // Created on an earlier run that stopped in its nested constructors: finish them
            // (those that finished return their memoised instances, a no-op to assign again).
            if let Value::Instance(instance) = value {
                self.construct_nested(task, plan, args, instance, scope, expr.span)?;
            }
            return Ok(value);
        }
        let entity = plan.fqn;
        // The attributes given, by position in the plan. Relations given as another relation
        // (`A(xs=b.ys)`) are copied gradually, once the instance exists.
        // Each with the span that gave it: the keyword argument, else the whole constructor.
        let mut given: Vec<(u32, Value, Span)> = Vec::with_capacity(plan.names.len());
        let mut forwards: Vec<(u32, CellId)> = Vec::new();
        // Whether some argument is a constructor that needs this instance (see
        // `builds_inverse`): it runs once this instance exists.
        let mut nested = false;
        // Arguments whose value is not known yet and that no index needs: the instance is made
        // without them and each is assigned when its value comes (`TaskKind::SetLater`), as the
        // reference does, so a constructor may read its own target or one built after it.
        let mut later: Vec<(u32, &'a Expr)> = Vec::new();
        for arg in args {
            match arg {
                ConstructArg::Keyword { name, position, value } => {
                    let Some(position) = *position else {
                        return Err(self.no_such_attribute(scope, entity_span, &name.text, entity));
                    };
                    if self.builds_inverse(plan, position, value, scope) {
                        nested = true;
                        continue;
                    }
                    if matches!(plan.kinds[position as usize], CellKind::List { .. })
                        && let Some(from) = self.relation_source(task, value, scope)?
                    {
                        forwards.push((position, from));
                        continue;
                    }
                    match self.eval(task, value, scope) {
                        Ok(found) => given.push((position, found, name.span.to(value.span))),
                        Err(crate::engine::Stop::Wait(_)) if !plan.is_indexed(position) => {
                            later.push((position, value))
                        }
                        Err(stop) => return Err(stop),
                    }
                }
                ConstructArg::Splat(dict) => match self.eval(task, dict, scope)? {
                    Value::Dict(entries) => {
                        for (name, value) in entries.iter() {
                            let Some(position) = plan.position(name) else {
                                return Err(self.no_such_attribute(scope, entity_span, name, entity));
                            };
                            if given.iter().any(|(p, ..)| *p == position) {
                                return Err(self.fail(
                                    scope,
                                    dict.span,
                                    Diagnostic::new(
                                        &codes::DUPLICATE_KEYWORD_ARGUMENT,
                                        format!("the attribute {name} is set twice"),
                                    ),
                                    "`**` sets it again",
                                ));
                            }
                            given.push((position, value.clone(), expr.span));
                        }
                    }
                    other => return Err(self.not_a_dict(scope, dict.span, &other)),
                },
                ConstructArg::Positional(value) => {
                    self.eval(task, value, scope)?;
                }
            }
        }
        if let Some((owner, relation)) = lhs
            && let Some(AttrKind::Relation { inverse: Some(inverse), .. }) =
                self.attr_def(owner, relation).map(|d| &d.kind)
            && let Some(position) = plan.position(inverse)
            && !given.iter().any(|(p, ..)| *p == position)
            && plan.is_indexed(position)
        {
            given.push((position, Value::Instance(owner), expr.span));
        }
        // Where each position's given value is, for the defaults and the index keys: an entity
        // may have tens of thousands of attributes and indexes, so no search per lookup.
        let mut given_at: Vec<Option<usize>> = vec![None; plan.names.len()];
        for (slot, (position, ..)) in given.iter().enumerate() {
            given_at[*position as usize].get_or_insert(slot);
        }
        let mut set_later = vec![false; plan.names.len()];
        for (position, _) in &later {
            set_later[*position as usize] = true;
        }
        // Defaults are assigned like constructor arguments.
        for (position, value) in &plan.defaults {
            if given_at[*position as usize].is_none() && !set_later[*position as usize] {
                given_at[*position as usize] = Some(given.len());
                given.push((*position, value.clone(), expr.span));
            }
        }
        // Index keys, for the entity's own and every ancestor's indexes.
        let mut keys: Vec<(&'a str, String)> = Vec::with_capacity(plan.indexes.len());
        for index in &plan.indexes {
            let mut key = String::new();
            for (attr, position) in index.attributes.iter().zip(&index.positions) {
                let Some((_, value, _)) = given_at[*position as usize].map(|slot| &given[slot]) else {
                    return Err(self.fail(
                        scope,
                        expr.span,
                        Diagnostic::new(
                            &codes::MISSING_INDEX_ATTRIBUTE,
                            format!("missing attribute '{attr}': {entity}.{attr} is part of an index"),
                        ),
                        "in this constructor",
                    ));
                };
                if !key.is_empty() {
                    key.push_str(", ");
                }
                key.push_str(attr);
                key.push('=');
                self.write_key_value(&mut key, plan.is_float(*position), value);
            }
            keys.push((index.owner, key));
        }
        let mut found: Option<InstanceId> = None;
        for key in &keys {
            let Some(hit) = self.index.get(key.0, &key.1) else { continue };
            match found {
                None => found = Some(hit),
                Some(first) if first != hit => {
                    return Err(self.inconsistent_indexes(scope, expr.span, entity, first, hit));
                }
                Some(_) => {}
            }
        }
        let instance = if let Some(first) = found {
            if self.instances[first.0 as usize].plan != plan_id {
                let other = &self.instances[first.0 as usize];
                return Err(self.fail(
                    scope,
                    expr.span,
                    Diagnostic::new(
                        &codes::INDEX_CONFLICT,
                        format!("an instance of {} has the same index key as this {entity}", self.entity_of(first)),
                    )
                    .secondary(
                        self.instance_file(other),
                        other.span,
                        "the other instance is constructed here",
                    ),
                    "duplicate key in index",
                ));
            }
            if self.world.record_merges {
                self.merges.push((first, scope, expr.span));
            }
            first
        } else {
            let depth = self.construction_depth(scope) + 1;
            if depth > MAX_CONSTRUCTION_DEPTH {
                return Err(self.runaway_construction(scope, expr.span));
            }
            let instance = self.create(plan_id, scope, expr.span, keys);
            self.instances[instance.0 as usize].depth = depth;
            instance
        };
        let first = self.instances[instance.0 as usize].first.0;
        for (position, value, span) in given {
            self.assign(CellId(first + position), value, scope, span)?;
        }
        for (position, from) in forwards {
            self.forward(from, CellId(first + position), scope, expr.span)?;
        }
        if found.is_none() {
            self.select_implementations(instance, plan);
        }
        let value = Value::Instance(instance);
        self.memoise(key, value.clone());
        for (position, later_value) in later {
            let setter = self.spawn(
                crate::engine::TaskKind::SetLater(Box::new(crate::engine::SetLater {
                    instance,
                    position,
                    value: later_value,
                    span: expr.span,
                })),
                scope,
            );
            self.hold_promise(setter, CellId(first + position));
            // What evaluating the argument built before it had to wait is not built again.
            self.hand_over_effects(task, setter);
        }
        if nested {
            self.construct_nested(task, plan, args, instance, scope, expr.span)?;
        }
        Ok(value)
    }

    /// Whether the argument for relation `position` is a constructor (or a list of them) of an
    /// entity whose index holds the relation's inverse end: `A(b=B())` with `index B(a)`. The
    /// reference sets that inverse end on the new `B` before checking its index, so `B` is
    /// built after this instance, with this instance as its `a`.
    fn builds_inverse(&self, plan: &EntityPlan<'a>, position: u32, value: &Expr, scope: ScopeId) -> bool {
        let Some(AttrKind::Relation { inverse: Some(inverse), .. }) = plan.defs.get(position as usize).map(|d| &d.kind)
        else {
            return false;
        };
        // A relation in this entity's own index must be known before this instance exists.
        if plan.is_indexed(position) {
            return false;
        }
        self.constructs_indexed_on(value, inverse.as_str(), self.unit_of(scope))
    }

    fn constructs_indexed_on(&self, value: &Expr, inverse: &str, unit: usize) -> bool {
        match &value.kind {
            ExprKind::Construct { entity, .. } => {
                let inner = self.plans.get(self.program.entity(unit, *entity).0);
                inner.position(inverse).is_some_and(|p| inner.is_indexed(p))
            }
            ExprKind::List(items) => items.iter().any(|item| self.constructs_indexed_on(item, inverse, unit)),
            ExprKind::ListComp { element, .. } => self.constructs_indexed_on(element, inverse, unit),
            ExprKind::Conditional { then, otherwise, .. } => {
                self.constructs_indexed_on(then, inverse, unit) || self.constructs_indexed_on(otherwise, inverse, unit)
            }
            _ => false,
        }
    }

    /// Builds the constructors `builds_inverse` put off, now that `instance` exists, each
    /// knowing the relation it is assigned to, and assigns them.
    fn construct_nested(
        &mut self,
        task: TaskId,
        plan: &'a EntityPlan<'a>,
        args: &'a [ConstructArg],
        instance: InstanceId,
        scope: ScopeId,
        span: Span,
    ) -> Eval<()> {
        let first = self.instances[instance.0 as usize].first.0;
        for arg in args {
            let ConstructArg::Keyword { position: Some(position), value, .. } = arg else { continue };
            if !self.builds_inverse(plan, *position, value, scope) {
                continue;
            }
            let relation = plan.names[*position as usize];
            match self.eval_with_lhs(task, value, scope, Some((instance, relation))) {
                Ok(built) => self.assign(CellId(first + position), built, scope, span)?,
                // It reads what is not known yet (the variable this instance is being assigned
                // to, say): assigned when it is, as the reference does, and this constructor
                // returns its instance meanwhile.
                Err(crate::engine::Stop::Wait(_)) => {
                    let setter = self.spawn(
                        crate::engine::TaskKind::SetLater(Box::new(crate::engine::SetLater {
                            instance,
                            position: *position,
                            value,
                            span,
                        })),
                        scope,
                    );
                    self.hold_promise(setter, CellId(first + position));
                    self.hand_over_effects(task, setter);
                }
                Err(stop) => return Err(stop),
            }
        }
        Ok(())
    }

    fn no_such_attribute(&self, scope: ScopeId, span: Span, name: &str, entity: &str) -> crate::engine::Stop {
        self.fail(
            scope,
            span,
            Diagnostic::new(&codes::UNKNOWN_ATTRIBUTE, format!("no attribute {name} on type {entity}")),
            "in this constructor",
        )
    }

    fn inconsistent_indexes(
        &self,
        scope: ScopeId,
        span: Span,
        entity: &str,
        first: InstanceId,
        second: InstanceId,
    ) -> crate::engine::Stop {
        let [a, b] = [first, second].map(|i| &self.instances[i.0 as usize]);
        self.fail(
            scope,
            span,
            Diagnostic::new(
                &codes::INDEX_CONFLICT,
                format!("inconsistent indexes: this {entity} matches two different instances"),
            )
            .secondary(self.instance_file(a), a.span, "one index finds this instance")
            .secondary(self.instance_file(b), b.span, "another index finds this one"),
            "matches both",
        )
    }

    /// How deep in implementations code runs: 0 at the top level, and one more than the
    /// instance whose implementation (or `when` condition) it is in.
    fn construction_depth(&self, scope: ScopeId) -> u32 {
        self.scope(scope).depth
    }

    /// The error for a constructor nested too deep: the chain of entities that led to it.
    fn runaway_construction(&self, scope: ScopeId, span: Span) -> crate::engine::Stop {
        let mut chain = Vec::new();
        let mut current = Some(scope);
        while let Some(id) = current {
            let s = self.scope(id);
            current = s.parent();
            if let Some(instance) = s.instance() {
                let here = format!("{} ({})", self.entity_of(instance), self.constructed_at(instance));
                if chain.len() < 4 && chain.last() != Some(&here) {
                    chain.push(here);
                }
                current = Some(self.instances[instance.0 as usize].origin);
            }
        }
        self.fail(
            scope,
            span,
            Diagnostic::new(
                &codes::INCOMPLETE_EXECUTION,
                format!(
                    "construction nested {MAX_CONSTRUCTION_DEPTH} levels deep: the construction never ends"
                ),
            )
            .note(if chain.is_empty() {
                "a loop over a relation keeps adding new instances to the relation it iterates over".to_owned()
            } else if chain.len() == 1 {
                format!("each {} is constructed by code that runs for the one before", chain[0])
            } else {
                format!("the innermost constructions: {}", chain.join(", inside "))
            })
            .help("an implementation (or a loop over a relation) constructs a new instance for which the same code runs again; stop the chain with a `when` condition, or with an index that returns the existing instance"),
            "constructed here, again",
        )
    }

    /// Writes a value the way an index key holds it: Python `repr`, floats for float
    /// attributes, instances by identity.
    pub(crate) fn write_key_value(&self, key: &mut String, float: bool, value: &Value) {
        use std::fmt::Write as _;
        match value {
            #[allow(clippy::cast_precision_loss, reason = "the reference casts float index values")]
            Value::Int(i) if float => modelc_value::write_repr(key, &Value::Float(*i as f64), &|_| String::new()),
            Value::Int(i) => key.push_str(itoa::Buffer::new().format(*i)),
            Value::Instance(i) => {
                key.push('#');
                key.push_str(itoa::Buffer::new().format(i.0));
            }
            // Each unknown value is different from every other (as in the reference, where
            // each has its own identity): instances with unknown keys are never merged, and a
            // lookup with an unknown key matches nothing.
            Value::Unknown => {
                let n = self.unknown_keys.get();
                self.unknown_keys.set(n + 1);
                let _ = write!(key, "<unknown #{n}>");
            }
            other => modelc_value::write_repr(key, other, &|i| format!("#{}", i.0)),
        }
    }

    /// A new instance with a cell for every attribute, entered in its indexes.
    fn create(&mut self, plan_id: u32, scope: ScopeId, span: Span, keys: Vec<(&'a str, String)>) -> InstanceId {
        let id = InstanceId(self.instances.len() as u32);
        let plan = self.plans.get(plan_id);
        let first = CellId(self.cells.len() as u32);
        self.instances.push(Instance {
            plan: plan_id,
            first,
            span,
            unit: self.unit_of(scope) as u32,
            applied: 0,
            implemented: false,
            depth: 0,
            origin: scope,
        });
        for (position, (name, kind)) in plan.names.iter().zip(&plan.kinds).enumerate() {
            let cell = self.new_cell(kind, Owner::Attribute { instance: id, position: position as u32 });
            if *name == "self" {
                // `self` is the instance itself in its implementations: an attribute of that
                // name already holds it, and setting it is a double set (as in the reference).
                self.cell_mut(cell).value = Some(Value::Instance(id));
            }
        }
        for key in keys {
            if let Some(cell) = self.parked.swap_remove(&key) {
                self.cell_mut(cell).value = Some(Value::Instance(id));
                self.wake(cell);
            }
            self.index.insert(key.0, &key.1, id);
        }
        id
    }
}
