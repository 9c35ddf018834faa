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

/// Cap on nested construction (an instance constructed in an implementation of an instance
/// constructed in an implementation …): far beyond real models, it stops runaway recursion.
pub(crate) const MAX_CONSTRUCTION_DEPTH: u32 = 1000;
use crate::store::{CellId, CellKind, Instance, Owner, ScopeId, TaskId};

impl<'a> Engine<'a> {
    /// Assigns `value` to `cell`: once for single cells (an equal value again is fine), added
    /// to list relations.
    pub(crate) fn assign(&mut self, cell: CellId, value: Value, scope: ScopeId, span: Span) -> Eval<()> {
        let kind = self.cell(cell).kind.clone();
        match kind {
            CellKind::Variable | CellKind::Lookup => self.set_once(cell, value, scope, span),
            CellKind::Attribute(ty) => {
                self.validate(&ty, &value, cell, scope, span)?;
                self.set_once(cell, value, scope, span)
            }
            CellKind::Single { target } => {
                if value.is_unknown() {
                    return self.set_once(cell, value, scope, span);
                }
                self.check_instance(&value, &target, cell, scope, span)?;
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
                    return Err(self.double_set(cell, &value, scope, span));
                }
                if self.cell(cell).frozen {
                    return Err(self.modified_after_freeze(cell, scope, span));
                }
                if !value.is_null() && !value.is_unknown() {
                    self.check_instance(&value, &target, cell, scope, span)?;
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
                        if !self.cell(cell).items.is_empty() {
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
                    if item.is_unknown() {
                        continue;
                    }
                    self.check_instance(&item, &target, cell, scope, span)?;
                    if self.cell(cell).items.iter().any(|i| i.py_eq(&item)) {
                        continue;
                    }
                    if self.cell(cell).frozen {
                        let at_upper = upper.is_some_and(|u| self.cell(cell).items.len() as u64 >= u);
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
                    self.cell_mut(cell).items.push(item.clone());
                    let listeners = self.cell(cell).listeners.clone();
                    self.run_queue.extend(listeners);
                    self.set_inverse(cell, &item, scope, span)?;
                    if upper.is_some_and(|u| self.cell(cell).items.len() as u64 >= u) {
                        self.freeze(cell);
                    }
                }
                Ok(())
            }
        }
    }

    fn set_once(&mut self, cell: CellId, value: Value, scope: ScopeId, span: Span) -> Eval<()> {
        if let Some(old) = &self.cell(cell).value {
            if old.py_eq(&value) {
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

    fn check_instance(&self, value: &Value, target: &str, cell: CellId, scope: ScopeId, span: Span) -> Eval<()> {
        let ok = match value {
            Value::Instance(i) => {
                target.is_empty() || self.program.index.is_subtype(&self.instances[i.0 as usize].entity, target)
            }
            _ => false,
        };
        if ok {
            return Ok(());
        }
        let what = match value {
            Value::Instance(i) => format!("an instance of {}", self.instances[i.0 as usize].entity),
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
        let (Owner::Attribute { instance, name }, Value::Instance(target)) = (self.cell(cell).owner.clone(), value)
        else {
            return Ok(());
        };
        let entity = self.instances[instance.0 as usize].entity.clone();
        let Some(AttrKind::Relation { inverse: Some(inverse), .. }) =
            self.program.index.attribute(&entity, &name).map(|d| d.kind.clone())
        else {
            return Ok(());
        };
        let Some(other) = self.instances[target.0 as usize].attributes.get(&inverse).copied() else { return Ok(()) };
        let me = Value::Instance(instance);
        let c = self.cell(other);
        if c.items.iter().any(|i| i.py_eq(&me)) || c.value.as_ref().is_some_and(|v| v.py_eq(&me)) {
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
        lhs: Option<(InstanceId, String)>,
    ) -> Eval<Value> {
        let key = (expr as *const Expr, scope);
        if let Some(value) = self.tasks[task.0 as usize].memo.get(&key) {
            return Ok(value.clone());
        }
        let entity = self.resolve_entity(scope, &written.text(), written.span)?;
        let mut given = self.eval_keywords(task, args, scope)?;
        for (name, _) in &given {
            if self.program.index.attribute(&entity, name).is_none() {
                return Err(self.fail(
                    scope,
                    written.span,
                    Diagnostic::new(&codes::UNKNOWN_ATTRIBUTE, format!("no attribute {name} on type {entity}")),
                    "in this constructor",
                ));
            }
        }
        if let Some((owner, relation)) = &lhs {
            let owner_entity = self.instances[owner.0 as usize].entity.clone();
            if let Some(AttrKind::Relation { inverse: Some(inverse), .. }) =
                self.program.index.attribute(&owner_entity, relation).map(|d| d.kind.clone())
                && !given.iter().any(|(n, _)| *n == inverse)
                && self.program.index.indexes(&entity).iter().any(|i| i.contains(&inverse))
            {
                given.push((inverse, Value::Instance(*owner)));
            }
        }
        // Defaults are assigned like constructor arguments.
        let mut defaults = Vec::new();
        for (name, default, unit) in self.program.defaults_of(&entity) {
            if given.iter().any(|(n, _)| *n == name) {
                continue;
            }
            let value = crate::validate::constant(default).unwrap_or(Value::Null);
            let _ = unit;
            defaults.push((name, value));
        }
        let all: Vec<(String, Value)> = given.iter().cloned().chain(defaults.iter().cloned()).collect();
        // Index keys, for the entity and every ancestor's indexes.
        let mut keys: Vec<(String, String)> = Vec::new();
        for owner in self.program.index.ancestry(&entity) {
            for index in &owner.indexes {
                let mut parts = Vec::new();
                for attr in index {
                    match all.iter().find(|(n, _)| n == attr) {
                        Some((_, value)) => parts.push(format!("{attr}={}", self.key_repr(&entity, attr, value))),
                        None => {
                            return Err(self.fail(
                                scope,
                                expr.span,
                                Diagnostic::new(
                                    &codes::MISSING_INDEX_ATTRIBUTE,
                                    format!("missing attribute '{attr}': {entity}.{attr} is part of an index"),
                                ),
                                "in this constructor",
                            ));
                        }
                    }
                }
                keys.push((owner.fqn.clone(), parts.join(", ")));
            }
        }
        let found: Vec<InstanceId> = keys.iter().filter_map(|k| self.index.get(k).copied()).collect();
        let instance = if let Some(first) = found.first().copied() {
            if let Some(second) = found.iter().copied().find(|f| *f != first) {
                let [a, b] = [first, second].map(|i| &self.instances[i.0 as usize]);
                return Err(self.fail(
                    scope,
                    expr.span,
                    Diagnostic::new(
                        &codes::INDEX_CONFLICT,
                        format!("inconsistent indexes: this {entity} matches two different instances"),
                    )
                    .secondary(a.file, a.span, "one index finds this instance")
                    .secondary(b.file, b.span, "another index finds this one"),
                    "matches both",
                ));
            }
            if self.instances[first.0 as usize].entity != entity {
                let other = &self.instances[first.0 as usize];
                return Err(self.fail(
                    scope,
                    expr.span,
                    Diagnostic::new(
                        &codes::INDEX_CONFLICT,
                        format!("an instance of {} has the same index key as this {entity}", other.entity),
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
            let instance = self.create(&entity, scope, expr.span, &keys);
            self.instances[instance.0 as usize].depth = depth;
            instance
        };
        for (name, value) in all {
            let cell = self.instances[instance.0 as usize].attributes[&name];
            self.assign(cell, value, scope, expr.span)?;
        }
        if found.is_empty() {
            self.select_implementations(instance);
        }
        let value = Value::Instance(instance);
        self.tasks[task.0 as usize].memo.insert(key, value.clone());
        Ok(value)
    }

    /// How a value is written in an index key (Python `repr`; floats for float attributes).
    fn key_repr(&self, entity: &str, attr: &str, value: &Value) -> String {
        let float = matches!(
            self.program.index.attribute(entity, attr).map(|d| &d.kind),
            Some(AttrKind::Value { ty, .. }) if ty.base == modelc_sema::types::BaseType::Float
        );
        let value = match value {
            #[allow(clippy::cast_precision_loss, reason = "the reference casts float index values")]
            Value::Int(i) if float => Value::Float(*i as f64),
            other => other.clone(),
        };
        modelc_value::py_repr(&value, &|i| format!("#{}", i.0))
    }

    /// How deep in implementations code runs: 0 at the top level, and one more than the
    /// instance whose implementation (or `when` condition) it is in.
    fn construction_depth(&self, scope: ScopeId) -> u32 {
        let mut current = Some(scope);
        while let Some(id) = current {
            let s = self.scope(id);
            if let Some(instance) = s.instance {
                return self.instances[instance.0 as usize].depth;
            }
            current = s.parent;
        }
        0
    }

    /// The error for a constructor nested too deep: the chain of entities that led to it.
    fn runaway_construction(&self, scope: ScopeId, span: Span) -> crate::engine::Stop {
        let mut chain = Vec::new();
        let mut current = Some(scope);
        while let Some(id) = current {
            let s = self.scope(id);
            current = s.parent;
            if let Some(instance) = s.instance {
                let i = &self.instances[instance.0 as usize];
                let here = format!("{} ({}:{})", i.entity, i.file_name, i.line);
                if chain.len() < 4 && chain.last() != Some(&here) {
                    chain.push(here);
                }
                current = Some(i.origin);
            }
        }
        self.fail(
            scope,
            span,
            Diagnostic::new(
                &codes::INCOMPLETE_EXECUTION,
                format!("instances are constructed {MAX_CONSTRUCTION_DEPTH} implementations deep: the construction never ends"),
            )
            .note(if chain.len() == 1 {
                format!("each {} is constructed by the implementation of the one before", chain[0])
            } else {
                format!("the innermost constructions: {}", chain.join(", inside "))
            })
            .help("an implementation constructs a new instance whose implementation constructs another; stop the chain with a `when` condition or an index that returns the existing instance"),
            "constructed here, again",
        )
    }

    /// A new instance with a cell for every attribute, entered in its indexes.
    fn create(&mut self, entity: &str, scope: ScopeId, span: Span, keys: &[(String, String)]) -> InstanceId {
        let id = InstanceId(self.instances.len() as u32);
        let file = self.file_of(scope);
        let unit = self.unit_of(scope);
        let (file_name, line) = self.location(unit, span);
        self.instances.push(Instance {
            entity: entity.to_owned(),
            attributes: indexmap::IndexMap::new(),
            file,
            span,
            line,
            file_name,
            applied: Vec::new(),
            implemented: false,
            depth: 0,
            origin: scope,
        });
        let names: Vec<String> = self.program.index.attribute_names(entity).into_iter().map(str::to_owned).collect();
        for name in names {
            let Some(def) = self.program.index.attribute(entity, &name) else { continue };
            let kind = match &def.kind {
                AttrKind::Value { ty, .. } => CellKind::Attribute(ty.clone()),
                AttrKind::Relation { target, bounds, .. } if bounds.is_optional() => {
                    CellKind::Optional { target: target.clone() }
                }
                AttrKind::Relation { target, bounds, .. } if bounds.is_single() => {
                    CellKind::Single { target: target.clone() }
                }
                AttrKind::Relation { target, bounds, .. } => {
                    CellKind::List { target: target.clone(), lower: bounds.lower, upper: bounds.upper }
                }
            };
            let cell = self.new_cell(kind, Owner::Attribute { instance: id, name: name.clone() });
            if name == "self" {
                // `self` is the instance itself in its implementations: an attribute of that
                // name already holds it, and setting it is a double set (as in the reference).
                self.cell_mut(cell).value = Some(Value::Instance(id));
            }
            self.instances[id.0 as usize].attributes.insert(name, cell);
        }
        for key in keys {
            self.index.insert(key.clone(), id);
            if let Some(cell) = self.parked.swap_remove(key) {
                self.cell_mut(cell).value = Some(Value::Instance(id));
                self.wake(cell);
            }
        }
        id
    }

    /// Schedules the `implement` statements of a new instance (spec §4.7).
    fn select_implementations(&mut self, instance: InstanceId) {
        let entity = self.instances[instance.0 as usize].entity.clone();
        let program = self.program;
        for def in program.implements_of(&entity) {
            let unit_scope = self.unit_scopes[def.unit];
            let scope = self.instance_scope(instance, unit_scope, def.unit);
            match &def.statement.condition {
                None => self.apply(instance, &def.implementations),
                Some(condition) => {
                    self.spawn(
                        TaskKind::Condition { instance, implementations: def.implementations.clone(), condition },
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
            vars: indexmap::IndexMap::new(),
            parent: Some(parent),
            instance: Some(instance),
            unit,
        });
        id
    }

    /// Runs implementations for an instance, each at most once.
    pub(crate) fn apply(&mut self, instance: InstanceId, implementations: &[String]) {
        self.instances[instance.0 as usize].implemented = true;
        let program = self.program;
        for name in implementations {
            if self.instances[instance.0 as usize].applied.contains(name) {
                continue;
            }
            self.instances[instance.0 as usize].applied.push(name.clone());
            let Some((unit, implementation)) = program.implementations.get(name) else { continue };
            let scope = self.instance_scope(instance, self.unit_scopes[*unit], *unit);
            self.emit_block(&implementation.body, Some(scope), None, *unit, None);
        }
    }

    /// `E[k=v]`: the instance, or a wait until it is constructed.
    pub(crate) fn lookup(
        &mut self,
        entity: &str,
        mut keys: Vec<(String, Value)>,
        scope: ScopeId,
        span: Span,
    ) -> Eval<Value> {
        if keys.iter().any(|(_, v)| v.is_unknown()) {
            return Ok(Value::Unknown);
        }
        keys.sort_by(|a, b| a.0.cmp(&b.0));
        let names: Vec<String> = keys.iter().map(|(n, _)| n.clone()).collect();
        let owner =
            self.program.index.ancestry(entity).into_iter().find(|d| d.indexes.contains(&names)).map(|d| d.fqn.clone());
        let Some(owner) = owner else {
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
        let parts: Vec<String> = keys.iter().map(|(n, v)| format!("{n}={}", self.key_repr(entity, n, v))).collect();
        let key = (owner, parts.join(", "));
        if let Some(instance) = self.index.get(&key) {
            let instance = *instance;
            if self.program.index.is_subtype(&self.instances[instance.0 as usize].entity, entity) {
                return Ok(Value::Instance(instance));
            }
        }
        let cell = match self.parked.get(&key) {
            Some(cell) => *cell,
            None => {
                let file = self.file_of(scope);
                let cell = self.new_cell(
                    CellKind::Lookup,
                    Owner::Lookup { entity: entity.to_owned(), key: key.1.clone(), file, span },
                );
                self.parked.insert(key, cell);
                cell
            }
        };
        Err(crate::engine::Stop::Wait(cell))
    }

    /// File name and 1-based line of a span in a unit.
    pub(crate) fn location(&self, unit: usize, span: Span) -> (String, usize) {
        let u = &self.program.units[unit];
        (u.display_name.clone(), u.line_of(span.start))
    }
}
