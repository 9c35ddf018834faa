//! Setting cells (spec §4.3–4.4, execution §1.2): single assignment with the equal-value rule,
//! relations that gather values up to their bound and set their inverse end, type checks.

use modelc_diagnostics::{Diagnostic, Span, codes};
use modelc_sema::index::AttrKind;
use modelc_sema::types::ValueType;
use modelc_value::Value;

use crate::cells::{CellId, CellKind, Owner, ScopeId};
use crate::engine::{Engine, Eval};
use modelc_sema::validate::Misfit;

/// From this length on, a list cell keeps a membership set next to its values.
const LONG_LIST: usize = 16;

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
                if self.cell(cell).frozen() {
                    return Err(self.modified_after_freeze(cell, scope, span));
                }
                if !value.is_null() && !value.is_unknown() {
                    self.check_instance(&value, target, cell, scope, span)?;
                }
                let file = self.file_of(scope);
                self.cell_mut(cell).value = Some(value.clone());
                self.set_site(cell, file, span);
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
                    if self.cell(cell).frozen() {
                        let at_upper = self.cell(cell).items().len() >= *upper as usize;
                        if at_upper {
                            let owner = self.owner_text(cell);
                            let mut d = Diagnostic::new(
                                &codes::RELATION_ARITY_EXCEEDED,
                                format!("exceeded relation arity on {owner}"),
                            );
                            // Where the instance that holds too many is made (the reference's
                            // location for this error).
                            if let crate::cells::Owner::Attribute { instance, .. } = self.owner_of(cell) {
                                let holder = &self.instances[instance.0 as usize];
                                d = d.secondary(
                                    self.instance_file(holder),
                                    holder.span,
                                    "the instance is constructed here",
                                );
                            }
                            return Err(self.fail(scope, span, d, "one value too many"));
                        }
                        return Err(self.modified_after_freeze(cell, scope, span));
                    }
                    self.push_list_item(cell, item.clone());
                    self.maybe_queue(cell);
                    for k in 0..self.listeners(cell).len() {
                        let listener = self.listeners(cell)[k];
                        self.run_queue.push_back(listener);
                    }
                    if !unknown {
                        self.record_requires(cell, &item, scope, span);
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

    /// Keeps the statement that added a `requires` edge (a `provides` edge sets its inverse
    /// `requires` with the same statement), so that validation can point at it.
    fn record_requires(&mut self, cell: CellId, item: &Value, scope: ScopeId, span: Span) {
        let (Owner::Attribute { instance, position }, Value::Instance(target)) = (self.owner_of(cell), item) else {
            return;
        };
        if self.plan_of_instance(instance).requires_at == Some(position) {
            let file = self.file_of(scope);
            self.requires_sites.push(crate::graph::RequiresSite { from: instance, to: *target, file, span });
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
        self.cell_mut(cell).value = Some(value);
        self.set_site(cell, file, span);
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
                self.shown(&old),
                self.shown(new)
            ),
        )
        .note("variables and attributes are assigned once; assigning an equal value again is allowed");
        let site = self.site_of(cell);
        // A default is assigned at the whole constructor (an argument at its own span): the
        // first value came from the default when the site is the constructor and there is one.
        let default = match self.owner_of(cell) {
            Owner::Attribute { instance, position } => {
                let i = &self.instances[instance.0 as usize];
                let plan = self.plan_of_instance(instance);
                let defaulted =
                    site == Some((self.instance_file(i), i.span)) && plan.defaults.iter().any(|(p, _)| *p == position);
                plan.declared[position as usize].filter(|_| defaulted)
            }
            _ => None,
        };
        if let Some((file, at)) = default {
            d = d.secondary(file, at, "its default is its first value").help(
                "a default counts as the attribute's one assignment: to set it elsewhere, leave the default out and set it in every constructor, or pass the value to the constructor",
            );
        } else if let Some((file, at)) = site {
            d = d.secondary(file, at, "first set here");
        }
        if let Owner::Attribute { instance, .. } = self.owner_of(cell) {
            let i = &self.instances[instance.0 as usize];
            let file = self.instance_file(i);
            if default.is_some() || site != Some((file, i.span)) {
                d = d.secondary(file, i.span, "the instance is constructed here");
            }
        }
        self.fail(scope, span, d, "set again here")
    }

    /// A value as a message shows it: its `repr`, shortened to one line.
    fn shown(&self, value: &Value) -> String {
        let text = self.show(value);
        match text.char_indices().nth(60) {
            Some((end, _)) => format!("{}…", &text[..end]),
            None => text,
        }
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
        let (Owner::Attribute { instance, position }, Value::Instance(target)) = (self.owner_of(cell), value) else {
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
            Err(Misfit::Invalid(message)) => {
                // The checker's wording for the same mistake (`type_mismatch`), where the value
                // is an attribute's; the owner says which instance.
                let Some(attribute) = self.attribute_name(cell) else {
                    let d = Diagnostic::new(
                        &codes::TYPE_MISMATCH,
                        format!("could not set {}: {message}", self.owner_text(cell)),
                    );
                    return Err(self.fail(scope, span, d, "invalid value"));
                };
                let shown = self.show(value);
                let index = self.program.index;
                let mismatch = modelc_sema::type_mismatch::type_mismatch(index, attribute, ty, value, &shown);
                let mut d = Diagnostic::new(&codes::TYPE_MISMATCH, mismatch.message)
                    .note(format!("while setting {}", self.owner_text(cell)));
                // A computed value: the fix is where it is computed, not here.
                if let Some(conversion) = mismatch.conversion {
                    d = d.help(format!(
                        "as a `{ty}` it would be `{}`: convert the value where it is computed",
                        conversion.replacement
                    ));
                }
                Err(self.fail(scope, span, d, &mismatch.label))
            }
            Err(Misfit::Violated { typedef, value, .. })
                if let Some(kind) = modelc_ir::meta_params::Kind::of_typedef(&typedef) =>
            {
                let problem = kind.explain(&value);
                let d = Diagnostic::new(&codes::INVALID_META_PARAMETER, problem.message).help(problem.help);
                Err(self.fail(scope, span, d, &problem.label))
            }
            Err(Misfit::Violated { message, .. }) => Err(self.fail(
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
}

/// Whether assigning `new` where `old` is set is the same assignment again. Two unknown values
/// count as the same: which unknown is which cannot be told apart here, and re-assigning the
/// variable that holds one (the common case) must not be a double set.
fn same_value(old: &Value, new: &Value) -> bool {
    old.py_eq(new) || (old.is_unknown() && new.is_unknown())
}
