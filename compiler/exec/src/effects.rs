//! What changes the state: setting cells (single assignment, relations with their inverses and
//! bounds), constructing instances (defaults, indexes, implementations) and index lookups
//! (spec §4.3–4.7, execution §1.4–1.7).

use modelc_diagnostics::{Diagnostic, Span, codes};
use modelc_sema::index::AttrKind;
use modelc_sema::types::ValueType;
use modelc_syntax::ast::{Arg, Expr, TypeRef};
use modelc_value::{InstanceId, Value};

use crate::engine::{Engine, Eval, TaskKind};
use crate::validate::Misfit;

/// Cap on nested construction (an instance constructed in an implementation of, or a loop over,
/// an instance constructed the same way …): far beyond real models, it stops runaway recursion.
pub(crate) const MAX_CONSTRUCTION_DEPTH: u32 = 1000;

/// From this length on, a list cell keeps a membership set next to its values.
const LONG_LIST: usize = 16;
use crate::store::{CellId, CellKind, Instance, Owner, ScopeId, TaskId};

impl<'a> Engine<'a> {
    /// Assigns `value` to `cell`: once for single cells (an equal value again is fine), added
    /// to list relations.
    pub(crate) fn assign(&mut self, cell: CellId, value: Value, scope: ScopeId, span: Span) -> Eval<()> {
        let kind = self.cell(cell).kind;
        match kind {
            CellKind::Variable | CellKind::Lookup => self.set_once(cell, value, scope, span),
            CellKind::Attribute(ty) => {
                // An equal value again is a no-op, checked before the type (as the reference
                // does): index merges re-assign every attribute.
                if self.cell(cell).value.as_ref().is_some_and(|old| same_value(old, &value)) {
                    return Ok(());
                }
                self.validate(ty, &value, cell, scope, span)?;
                self.set_once(cell, value, scope, span)
            }
            CellKind::Single { target } => {
                if value.is_unknown() {
                    return self.set_once(cell, value, scope, span);
                }
                self.check_instance(&value, target, cell, scope, span)?;
                let new = self.cell(cell).value.is_none();
                self.set_once(cell, value.clone(), scope, span)?;
                if new {
                    self.set_inverse(cell, &value, scope, span)?;
                }
                Ok(())
            }
            CellKind::Optional { target } => {
                if let Some(old) = &self.cell(cell).value {
                    if old.py_eq(&value) {
                        return Ok(());
                    }
                    // Set to null, it was frozen empty: a value now comes too late.
                    if old.is_null() {
                        return Err(self.modified_after_freeze(cell, scope, span));
                    }
                    return Err(self.double_set(cell, &value, scope, span));
                }
                if self.cell(cell).frozen {
                    return Err(self.modified_after_freeze(cell, scope, span));
                }
                if !value.is_null() && !value.is_unknown() {
                    self.check_instance(&value, target, cell, scope, span)?;
                }
                let file = self.file_of(scope);
                let c = self.cell_mut(cell);
                c.value = Some(value.clone());
                c.set_at = Some((file, span));
                self.freeze(cell);
                if !value.is_null() {
                    self.set_inverse(cell, &value, scope, span)?;
                }
                Ok(())
            }
            CellKind::List { target, upper, .. } => {
                let items: Vec<Value> = match value {
                    Value::List(items) => items.iter().cloned().collect(),
                    Value::Null => {
                        if !self.cell(cell).items().is_empty() {
                            let owner = self.owner_text(cell);
                            return Err(self.fail(
                                scope,
                                span,
                                Diagnostic::new(
                                    &codes::TYPE_MISMATCH,
                                    format!("trying to set {owner} to null but it has values"),
                                ),
                                "null",
                            ));
                        }
                        self.cell_mut(cell).value = Some(Value::Null);
                        self.freeze(cell);
                        return Ok(());
                    }
                    other => vec![other],
                };
                for item in items {
                    // An unknown value is kept (it counts, and makes `std::len` unknown), but
                    // has no type to check and no inverse to set.
                    let unknown = item.is_unknown();
                    if !unknown {
                        self.check_instance(&item, target, cell, scope, span)?;
                        if self.list_contains(cell, &item) {
                            continue;
                        }
                    }
                    if self.cell(cell).frozen {
                        let at_upper = self.cell(cell).items().len() >= *upper as usize;
                        if at_upper {
                            let owner = self.owner_text(cell);
                            return Err(self.fail(
                                scope,
                                span,
                                Diagnostic::new(
                                    &codes::RELATION_ARITY_EXCEEDED,
                                    format!("exceeded relation arity on {owner}"),
                                ),
                                "one value too many",
                            ));
                        }
                        return Err(self.modified_after_freeze(cell, scope, span));
                    }
                    self.push_list_item(cell, item.clone());
                    self.maybe_queue(cell);
                    for k in 0..self.cell(cell).listeners().len() {
                        let listener = self.cell(cell).listeners()[k];
                        self.run_queue.push_back(listener);
                    }
                    if !unknown {
                        self.set_inverse(cell, &item, scope, span)?;
                    }
                    if self.cell(cell).items().len() >= *upper as usize {
                        self.freeze(cell);
                    }
                }
                Ok(())
            }
        }
    }

    /// Whether a list cell holds `item`. Relations hold instances, compared by identity; long
    /// lists (a shared resource's `provides`, a set of every host) keep a membership set, so
    /// that filling one stays linear.
    fn list_contains(&self, cell: CellId, item: &Value) -> bool {
        match (self.members.get(&cell), item) {
            (Some(members), Value::Instance(i)) => members.contains(i),
            _ => self.cell(cell).items().iter().any(|i| i.py_eq(item)),
        }
    }

    fn push_list_item(&mut self, cell: CellId, item: Value) {
        if let Some(members) = self.members.get_mut(&cell) {
            if let Value::Instance(i) = &item {
                members.insert(*i);
            }
        } else if self.cell(cell).items().len() == LONG_LIST && matches!(item, Value::Instance(_)) {
            let members = self.cell(cell).items().iter().chain([&item]).filter_map(|v| match v {
                Value::Instance(i) => Some(*i),
                _ => None,
            });
            let members = members.collect();
            self.members.insert(cell, members);
        }
        self.cell_mut(cell).push_item(item);
    }

    fn set_once(&mut self, cell: CellId, value: Value, scope: ScopeId, span: Span) -> Eval<()> {
        if let Some(old) = &self.cell(cell).value {
            if same_value(old, &value) {
                return Ok(());
            }
            return Err(self.double_set(cell, &value, scope, span));
        }
        let file = self.file_of(scope);
        let c = self.cell_mut(cell);
        c.value = Some(value);
        c.set_at = Some((file, span));
        self.wake(cell);
        Ok(())
    }

    fn double_set(&self, cell: CellId, new: &Value, scope: ScopeId, span: Span) -> crate::engine::Stop {
        let c = self.cell(cell);
        let old = c.value.clone().unwrap_or(Value::Null);
        let mut d = Diagnostic::new(
            &codes::DOUBLE_SET,
            format!(
                "{} is set twice: first to {}, then to {}",
                self.owner_text(cell),
                self.interpolate(&old),
                self.interpolate(new)
            ),
        )
        .note("variables and attributes are assigned once; assigning an equal value again is allowed");
        if let Some((file, at)) = c.set_at {
            d = d.secondary(file, at, "first set here");
        }
        if let Owner::Attribute { instance, .. } = &c.owner {
            let i = &self.instances[instance.0 as usize];
            if c.set_at != Some((i.file, i.span)) {
                d = d.secondary(i.file, i.span, "the instance is constructed here");
            }
        }
        self.fail(scope, span, d, "set again here")
    }

    fn modified_after_freeze(&self, cell: CellId, scope: ScopeId, span: Span) -> crate::engine::Stop {
        self.fail(
            scope,
            span,
            Diagnostic::new(
                &codes::MODIFIED_AFTER_FREEZE,
                format!("{} was modified after it was frozen (read as complete)", self.owner_text(cell)),
            )
            .note("the compiler had to decide that this relation was complete because code was waiting for all its values"),
            "added after the freeze",
        )
    }

    fn check_instance(&self, value: &Value, target: &'a str, cell: CellId, scope: ScopeId, span: Span) -> Eval<()> {
        let ok = match value {
            Value::Instance(i) => target.is_empty() || self.is_subtype(self.entity_of(*i), target),
            _ => false,
        };
        if ok {
            return Ok(());
        }
        let what = match value {
            Value::Instance(i) => format!("an instance of {}", self.entity_of(*i)),
            other => format!("'{}' ({})", self.interpolate(other), other.type_name()),
        };
        Err(self.fail(
            scope,
            span,
            Diagnostic::new(
                &codes::TYPE_MISMATCH,
                format!("could not set {}: {what} is not a {target}", self.owner_text(cell)),
            ),
            "wrong value",
        ))
    }

    /// Sets the other end of a bidirectional relation.
    fn set_inverse(&mut self, cell: CellId, value: &Value, scope: ScopeId, span: Span) -> Eval<()> {
        let (Owner::Attribute { instance, position }, Value::Instance(target)) = (self.cell(cell).owner, value) else {
            return Ok(());
        };
        let target = *target;
        let plan = self.plan_of_instance(instance);
        let Some(AttrKind::Relation { inverse: Some(inverse), .. }) = plan.defs.get(position as usize).map(|d| &d.kind)
        else {
            return Ok(());
        };
        let Some(other) = self.attr_cell(target, inverse) else { return Ok(()) };
        let me = Value::Instance(instance);
        let c = self.cell(other);
        if self.list_contains(other, &me) || c.value.as_ref().is_some_and(|v| v.py_eq(&me)) {
            return Ok(());
        }
        self.assign(other, me, scope, span)
    }

    /// Type validation of a plain attribute value (spec §3.2).
    fn validate(&mut self, ty: &ValueType, value: &Value, cell: CellId, scope: ScopeId, span: Span) -> Eval<()> {
        match self.check_type(ty, value) {
            Ok(()) => Ok(()),
            Err(Misfit::Invalid(message)) => Err(self.fail(
                scope,
                span,
                Diagnostic::new(&codes::TYPE_MISMATCH, format!("could not set {}: {message}", self.owner_text(cell))),
                "invalid value",
            )),
            Err(Misfit::Violated(message)) => Err(self.fail(
                scope,
                span,
                Diagnostic::new(
                    &codes::CONSTRAINT_VIOLATION,
                    format!("could not set {}: {message}", self.owner_text(cell)),
                ),
                "this value breaks the constraint",
            )),
            Err(Misfit::Failed(cause)) => {
                let mut d = Diagnostic::new(
                    &codes::CONSTRAINT_VIOLATION,
                    format!(
                        "could not set {}: its type's constraint could not be evaluated: {}",
                        self.owner_text(cell),
                        cause.message
                    ),
                )
                .note("a typedef constraint sees only `self`, the value being checked");
                if let Some(label) = cause.primary_label() {
                    d = d.secondary(label.file, label.span, "in this constraint");
                }
                Err(self.fail(scope, span, d, "the value is set here"))
            }
        }
    }

    /// Evaluates a constructor (memoised per task), with `lhs` the instance and relation the
    /// new instance is assigned to (its inverse may complete an index).
    pub(crate) fn construct(
        &mut self,
        task: TaskId,
        expr: &'a Expr,
        written: &'a TypeRef,
        args: &'a [Arg],
        scope: ScopeId,
        lhs: Option<(InstanceId, &'a str)>,
    ) -> Eval<Value> {
        let key = (expr as *const Expr, scope);
        if let Some(value) = self.tasks[task.0 as usize].memo(key) {
            return Ok(value.clone());
        }
        let plan_id = self.constructed_plan(scope, written)?;
        let plan = self.plans.get(plan_id);
        let entity = plan.fqn;
        // The attributes given, by position in the plan. Relations given as another relation
        // (`A(xs=b.ys)`) are copied gradually, once the instance exists.
        let mut given: Vec<(u32, Value)> = Vec::with_capacity(plan.names.len());
        let mut forwards: Vec<(u32, CellId)> = Vec::new();
        for arg in args {
            match arg {
                Arg::Keyword(name, value) => {
                    let Some(position) = plan.position(&name.name) else {
                        return Err(self.no_such_attribute(scope, written.span, &name.name, entity));
                    };
                    if matches!(plan.kinds[position as usize], CellKind::List { .. })
                        && let Some(from) = self.relation_source(task, value, scope)?
                    {
                        forwards.push((position, from));
                        continue;
                    }
                    let value = self.eval(task, value, scope)?;
                    given.push((position, value));
                }
                Arg::Splat(dict) => match self.eval(task, dict, scope)? {
                    Value::Dict(entries) => {
                        for (name, value) in entries.iter() {
                            let Some(position) = plan.position(name) else {
                                return Err(self.no_such_attribute(scope, written.span, name, entity));
                            };
                            if given.iter().any(|(p, _)| *p == position) {
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
                            given.push((position, value.clone()));
                        }
                    }
                    other => {
                        return Err(self.fail(
                            scope,
                            dict.span,
                            Diagnostic::new(&codes::INVALID_OPERAND, "the ** operator can only be applied to dicts"),
                            &format!("this is {}", other.type_name()),
                        ));
                    }
                },
                Arg::Positional(value) => {
                    self.eval(task, value, scope)?;
                }
            }
        }
        if let Some((owner, relation)) = lhs
            && let Some(AttrKind::Relation { inverse: Some(inverse), .. }) =
                self.attr_def(owner, relation).map(|d| &d.kind)
            && let Some(position) = plan.position(inverse)
            && !given.iter().any(|(p, _)| *p == position)
            && plan.indexes.iter().any(|index| index.positions.contains(&position))
        {
            given.push((position, Value::Instance(owner)));
        }
        // Defaults are assigned like constructor arguments.
        let given_count = given.len();
        for (position, value) in &plan.defaults {
            if !given[..given_count].iter().any(|(p, _)| p == position) {
                given.push((*position, value.clone()));
            }
        }
        // Index keys, for the entity's own and every ancestor's indexes.
        let mut keys: Vec<(&'a str, String)> = Vec::with_capacity(plan.indexes.len());
        for index in &plan.indexes {
            let mut key = String::new();
            for (attr, position) in index.attributes.iter().zip(&index.positions) {
                let Some((_, value)) = given.iter().find(|(p, _)| p == position) else {
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
            let Some(hit) = self.index.get(key).copied() else { continue };
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
                    .secondary(other.file, other.span, "the other instance is constructed here"),
                    "duplicate key in index",
                ));
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
        for (position, value) in given {
            self.assign(CellId(first + position), value, scope, expr.span)?;
        }
        for (position, from) in forwards {
            self.forward(from, CellId(first + position), scope, expr.span);
        }
        if found.is_none() {
            self.select_implementations(instance, plan);
        }
        let value = Value::Instance(instance);
        self.memoise(key, value.clone());
        Ok(value)
    }

    fn no_such_attribute(&self, scope: ScopeId, span: Span, name: &str, entity: &str) -> crate::engine::Stop {
        self.fail(
            scope,
            span,
            Diagnostic::new(&codes::UNKNOWN_ATTRIBUTE, format!("no attribute {name} on type {entity}")),
            "in this constructor",
        )
    }

    /// The plan of the entity a constructor names (resolved once per constructor).
    fn constructed_plan(&mut self, scope: ScopeId, written: &'a TypeRef) -> Eval<u32> {
        if let Some(plan) = self.constructors.get(&(written as *const TypeRef)) {
            return Ok(*plan);
        }
        let entity = self.resolve_entity(scope, &written.text(), written.span)?;
        let plan = self.plans.id(&entity).expect("every entity has a plan");
        self.constructors.insert(written as *const TypeRef, plan);
        Ok(plan)
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
            .secondary(a.file, a.span, "one index finds this instance")
            .secondary(b.file, b.span, "another index finds this one"),
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
            current = s.parent;
            if let Some(instance) = s.instance {
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
    fn write_key_value(&self, key: &mut String, float: bool, value: &Value) {
        use std::fmt::Write as _;
        match value {
            #[allow(clippy::cast_precision_loss, reason = "the reference casts float index values")]
            Value::Int(i) if float => modelc_value::write_repr(key, &Value::Float(*i as f64), &|_| String::new()),
            Value::Int(i) => {
                let _ = write!(key, "{i}");
            }
            Value::Instance(i) => {
                let _ = write!(key, "#{}", i.0);
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
            file: self.file_of(scope),
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
            self.index.insert(key, id);
        }
        id
    }

    /// Schedules the `implement` statements of a new instance (spec §4.7).
    fn select_implementations(&mut self, instance: InstanceId, plan: &crate::plans::EntityPlan<'a>) {
        for def in &plan.implements {
            match &def.statement.condition {
                None => self.apply(instance, &def.implementations),
                Some(condition) => {
                    let scope = self.instance_scope(instance, self.unit_scopes[def.unit], def.unit);
                    self.spawn(
                        TaskKind::Condition { instance, implementations: &def.implementations, condition },
                        scope,
                    );
                }
            }
        }
    }

    /// A scope in which an instance's attributes (and `self`) are visible, over a file's top level.
    pub(crate) fn instance_scope(&mut self, instance: InstanceId, parent: ScopeId, unit: usize) -> ScopeId {
        let id = ScopeId(self.scopes.len() as u32);
        self.scopes.push(crate::store::Scope {
            first_var: CellId(0),
            var_count: 0,
            parent: Some(parent),
            instance: Some(instance),
            unit,
            depth: self.instances[instance.0 as usize].depth,
        });
        id
    }

    /// Records that implementation number `position` runs for `instance`; false if it already
    /// did. The first 64 implementations of a program are bits of the instance, the rest a set.
    fn mark_applied(&mut self, instance: InstanceId, position: u32) -> bool {
        if position < 64 {
            let applied = &mut self.instances[instance.0 as usize].applied;
            let new = *applied & (1 << position) == 0;
            *applied |= 1 << position;
            new
        } else {
            self.applied_beyond_64.insert((instance, position))
        }
    }

    /// Runs implementations for an instance, each at most once.
    pub(crate) fn apply(&mut self, instance: InstanceId, implementations: &'a [String]) {
        // `implement B using parents` alone names no implementation: that selects nothing.
        if !implementations.is_empty() {
            self.instances[instance.0 as usize].implemented = true;
        }
        let program = self.program;
        for name in implementations {
            let Some((position, _, (unit, implementation))) = program.implementations.get_full(name) else { continue };
            if !self.mark_applied(instance, position as u32) {
                continue;
            }
            let scope = self.instance_scope(instance, self.unit_scopes[*unit], *unit);
            self.emit_block(&implementation.body, Some(scope), None, *unit, None);
        }
    }

    /// `E[k=v]`: the instance, or a wait until it is constructed.
    pub(crate) fn lookup(
        &mut self,
        entity: &str,
        mut keys: Vec<(std::borrow::Cow<'_, str>, Value)>,
        scope: ScopeId,
        span: Span,
    ) -> Eval<Value> {
        keys.sort_by(|a, b| a.0.cmp(&b.0));
        let Some(plan_id) = self.plans.id(entity) else {
            return Err(self.fail(
                scope,
                span,
                Diagnostic::new(&codes::UNKNOWN_TYPE, format!("could not find entity `{entity}`")),
                "not found",
            ));
        };
        let plan = self.plans.get(plan_id);
        let found = plan.indexes.iter().find(|index| {
            index.attributes.len() == keys.len() && index.attributes.iter().zip(&keys).all(|(a, (k, _))| a == k)
        });
        let Some(index) = found else {
            let names: Vec<&str> = keys.iter().map(|(n, _)| n.as_ref()).collect();
            return Err(self.fail(
                scope,
                span,
                Diagnostic::new(
                    &codes::NO_MATCHING_INDEX,
                    format!("no index defined on {entity} for this lookup: {names:?}"),
                ),
                "no such index",
            ));
        };
        let mut text = String::new();
        for (n, v) in &keys {
            if !text.is_empty() {
                text.push_str(", ");
            }
            text.push_str(n);
            text.push('=');
            self.write_key_value(&mut text, plan.position(n).is_some_and(|p| plan.is_float(p)), v);
        }
        let key = (index.owner, text);
        if let Some(instance) = self.index.get(&key).copied()
            && self.is_subtype(self.entity_of(instance), plan.fqn)
        {
            return Ok(Value::Instance(instance));
        }
        let cell = match self.parked.get(&key) {
            Some(cell) => *cell,
            None => {
                let owner =
                    crate::store::LookupOwner { entity: plan.fqn, key: key.1.clone(), file: self.file_of(scope), span };
                self.lookups.push(owner);
                let cell = self.new_cell(&CellKind::Lookup, Owner::Lookup(self.lookups.len() as u32 - 1));
                self.parked.insert(key, cell);
                cell
            }
        };
        Err(crate::engine::Stop::Wait(cell))
    }
}

/// Whether assigning `new` where `old` is set is the same assignment again. Two unknown values
/// count as the same: which unknown is which cannot be told apart here, and re-assigning the
/// variable that holds one (the common case) must not be a double set.
fn same_value(old: &Value, new: &Value) -> bool {
    old.py_eq(new) || (old.is_unknown() && new.is_unknown())
}
