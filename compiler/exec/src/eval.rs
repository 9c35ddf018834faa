//! Evaluating expressions (spec §4.8–4.10): values, variables, attributes, operators, calls,
//! constructors and lookups. A missing value stops evaluation with `Stop::Wait`; the task runs
//! again later, and memoised effects (constructors, plugin calls) are not repeated.

use std::borrow::Cow;

use indexmap::IndexMap;
use modelc_diagnostics::{Diagnostic, Span, codes};
use modelc_sema::hir::{Arg, Chain, CompFor, Expr, ExprKind, FStrPart, Name, StrPart, Var};
use modelc_value::{InstanceId, Value};

use crate::cells::{CellId, CellKind, ScopeId, TaskId};
use crate::engine::{Engine, Eval, Stop};

/// What a name refers to.
pub(crate) enum Named {
    Cell(CellId),
    /// `self` in an implementation.
    Instance(InstanceId),
}

impl<'a> Engine<'a> {
    pub(crate) fn eval(&mut self, task: TaskId, expr: &'a Expr, scope: ScopeId) -> Eval<Value> {
        modelc_sema::hir::deep(|| self.eval_level(task, expr, scope))
    }

    fn eval_level(&mut self, task: TaskId, expr: &'a Expr, scope: ScopeId) -> Eval<Value> {
        Ok(match &expr.kind {
            ExprKind::Int(i) => Value::Int(*i),
            ExprKind::IntOutOfRange => {
                return Err(self.fail(
                    scope,
                    expr.span,
                    Diagnostic::new(&codes::INVALID_OPERAND, "integer out of range"),
                    "integers are 64-bit in modelc",
                ));
            }
            ExprKind::Float(f) => Value::Float(*f),
            ExprKind::Bool(b) => Value::Bool(*b),
            ExprKind::Null => Value::Null,
            ExprKind::Str(parts) => {
                let mut out = String::new();
                for part in parts {
                    match part {
                        StrPart::Text(t) => out.push_str(t),
                        StrPart::Interpolation(chain) => {
                            let value = self.eval_chain(task, chain, scope)?;
                            if value.is_unknown() {
                                return Ok(Value::Unknown);
                            }
                            out.push_str(&self.interpolate(&value));
                        }
                    }
                }
                Value::str(out)
            }
            ExprKind::FStr(parts) => match self.eval_fstring(task, parts, scope)? {
                Some(s) => Value::str(s),
                None => Value::Unknown,
            },
            ExprKind::Regex { pattern, subject } => {
                let subject = self.read_var(subject, expr.span, scope)?;
                match subject {
                    Value::Str(s) => Value::Bool(python_match(pattern, &s)),
                    Value::Unknown => Value::Unknown,
                    other => {
                        return Err(self.fail(
                            scope,
                            expr.span,
                            Diagnostic::new(&codes::INVALID_OPERAND, "a regex can only match strings"),
                            &format!("`self` is {}", other.type_name()),
                        ));
                    }
                }
            }
            ExprKind::Var(var) => self.read_var(var, expr.span, scope)?,
            ExprKind::Attr { .. } => self.eval_attribute_chain(task, expr, scope)?,
            ExprKind::Call { callee, written, args, .. } => {
                self.eval_call(task, expr, *callee, written, args, scope)?
            }
            ExprKind::Construct { entity, entity_span, args } => {
                self.construct(task, expr, *entity, *entity_span, args, scope, None)?
            }
            ExprKind::IndexLookup { entity, entity_span, args } => {
                let keys = self.eval_keywords(task, args, scope)?;
                let entity = self.program.units[self.unit_of(scope)].hir.entity_name(*entity);
                self.lookup(entity, keys, scope, *entity_span)?
            }
            ExprKind::UnknownEntity { written, entity_span, .. } => {
                return Err(self.fail(
                    scope,
                    *entity_span,
                    Diagnostic::new(&codes::UNKNOWN_TYPE, format!("could not find entity `{written}`")),
                    "not found",
                ));
            }
            ExprKind::RelationLookup { object, relation, args } => {
                let object = self.eval(task, object, scope)?;
                let instance = match object {
                    Value::Instance(instance) => instance,
                    Value::Unknown => return Ok(Value::Unknown),
                    other => {
                        return Err(self.fail(
                            scope,
                            relation.span,
                            Diagnostic::new(
                                &codes::INVALID_OPERAND,
                                format!(
                                    "a relation lookup is only possible on instances, not on {}",
                                    if other.is_null() { "null" } else { other.type_name() }
                                ),
                            ),
                            "not an instance",
                        ));
                    }
                };
                let def = self.attr_def(instance, &relation.text);
                let Some(modelc_sema::index::AttrDef {
                    kind: modelc_sema::index::AttrKind::Relation { target, inverse: Some(inverse), .. },
                    ..
                }) = def
                else {
                    return Err(self.fail(
                        scope,
                        relation.span,
                        Diagnostic::new(&codes::NO_MATCHING_INDEX, "a relation lookup needs a bidirectional relation"),
                        "not a bidirectional relation",
                    ));
                };
                let mut keys = self.eval_keywords(task, args, scope)?;
                keys.push((Cow::Owned(inverse.clone()), Value::Instance(instance)));
                self.lookup(target, keys, scope, relation.span)?
            }
            ExprKind::MapLookup { object, key } => {
                let container = self.eval(task, object, scope)?;
                let key = self.eval(task, key, scope)?;
                match (&container, &key) {
                    (Value::Unknown, _) | (_, Value::Unknown) => Value::Unknown,
                    (Value::Dict(d), Value::Str(k)) => match d.get(&**k) {
                        Some(v) => v.clone(),
                        None => {
                            let options: Vec<&str> = d.keys().map(String::as_str).collect();
                            return Err(self.fail(
                                scope,
                                expr.span,
                                Diagnostic::new(
                                    &codes::MISSING_DICT_KEY,
                                    format!("key {k} not found in dict, options are [{}]", options.join(", ")),
                                ),
                                "no such key",
                            ));
                        }
                    },
                    (Value::Dict(_), other) => {
                        return Err(self.fail(
                            scope,
                            expr.span,
                            Diagnostic::new(&codes::INVALID_DICT_LOOKUP, "dict keys must be strings"),
                            &format!("the key is {}", other.type_name()),
                        ));
                    }
                    (other, _) => {
                        return Err(self.fail(
                            scope,
                            expr.span,
                            Diagnostic::new(&codes::INVALID_DICT_LOOKUP, "dict lookup is only possible on dicts"),
                            &format!("this is {}", other.type_name()),
                        ));
                    }
                }
            }
            ExprKind::List(items) => {
                let mut out = Vec::new();
                for item in items {
                    match self.eval(task, item, scope)? {
                        // List literals flatten one level.
                        Value::List(inner) => out.extend(inner.iter().cloned()),
                        other => out.push(other),
                    }
                }
                Value::list(out)
            }
            ExprKind::ListComp { element, fors, guards } => {
                self.eval_comprehension(task, element, fors, guards, scope, None)?
            }
            ExprKind::Dict(entries) => {
                let mut out = IndexMap::new();
                for (key, value) in entries {
                    let value = self.eval(task, value, scope)?;
                    out.insert(key.clone(), value);
                }
                Value::dict(out)
            }
            ExprKind::Binary { op, lhs, rhs } => self.eval_binary(task, *op, lhs, rhs, expr.span, scope)?,
            ExprKind::Not(inner) => match self.eval(task, inner, scope)? {
                Value::Bool(b) => Value::Bool(!b),
                Value::Unknown => Value::Unknown,
                other => {
                    return Err(self.fail(
                        scope,
                        inner.span,
                        Diagnostic::new(&codes::INVALID_OPERAND, "`not` can only be applied to a boolean"),
                        &format!("this is {}", other.type_name()),
                    ));
                }
            },
            ExprKind::Conditional { condition, then, otherwise } => {
                self.eval_conditional(task, condition, then, otherwise, scope, None)?
            }
            ExprKind::IsDefined(inner) => self.eval_is_defined(task, inner, scope)?,
            ExprKind::Error => Value::Unknown,
        })
    }

    /// `a.b.c` in an interpolation.
    fn eval_chain(&mut self, _task: TaskId, chain: &'a Chain, scope: ScopeId) -> Eval<Value> {
        let mut value = self.read_var(&chain.root, chain.root_span, scope)?;
        for attr in &chain.attrs {
            value = self.read_attribute(value, attr, scope)?;
        }
        Ok(value)
    }

    fn eval_fstring(&mut self, task: TaskId, parts: &'a [FStrPart], scope: ScopeId) -> Eval<Option<String>> {
        let mut out = String::new();
        for part in parts {
            match part {
                FStrPart::Text(t) => out.push_str(t),
                FStrPart::Field(field) => {
                    let Some(chain) = &field.chain else {
                        return Err(self.fail(
                            scope,
                            field.span,
                            Diagnostic::new(
                                &codes::INVALID_FSTRING,
                                "f-strings do not support positional substitutions via '{}'",
                            )
                            .help("name a variable or attribute between the braces, e.g. `{name}`"),
                            "positional field",
                        ));
                    };
                    let mut value = self.eval_chain(task, chain, scope)?;
                    if value.is_unknown() {
                        return Ok(None);
                    }
                    // A whole float is formatted as the int it equals (spec §1.5): `3.0` with
                    // `:d` is `3`, with `:>4` is `   3`, with `!r` is `3`.
                    if let Value::Float(f) = value
                        && f.is_finite()
                        && f.fract() == 0.0
                        && f.abs() < 9.0e15
                    {
                        #[allow(clippy::cast_possible_truncation, reason = "whole and within i64")]
                        let whole = f as i64;
                        value = Value::Int(whole);
                    }
                    // `!s` formats the `str()` of the value, `!r` and `!a` its `repr()`.
                    match field.conversion {
                        Some('s') => value = Value::str(self.interpolate(&value)),
                        Some('r') => value = Value::str(modelc_value::py_repr(&value, &|i| self.describe(i))),
                        Some('a') => value = Value::str(ascii(&modelc_value::py_repr(&value, &|i| self.describe(i)))),
                        _ => {}
                    }
                    let Some(spec) = self.eval_fstring(task, &field.spec, scope)? else { return Ok(None) };
                    let text = if spec.is_empty() {
                        self.interpolate(&value)
                    } else {
                        let name = |i: InstanceId| self.describe(i);
                        modelc_value::format_spec::format_value(&value, &spec, &name).map_err(|e| {
                            self.fail(
                                scope,
                                field.span,
                                Diagnostic::new(&codes::INVALID_OPERAND, e.to_string()),
                                "invalid format",
                            )
                        })?
                    };
                    out.push_str(&text);
                }
            }
        }
        Ok(Some(out))
    }

    pub(crate) fn interpolate(&self, value: &Value) -> String {
        modelc_value::interpolate(value, &|i| self.describe(i))
    }

    /// Where a variable is, from a scope: `None` when it is undefined.
    pub(crate) fn resolve_var(&self, var: &Var, scope: ScopeId) -> Option<Named> {
        match var {
            Var::Local { up, slot } => {
                let s = self.scope(self.scope_out(scope, *up)?);
                Some(Named::Cell(CellId(s.first_var.0 + slot)))
            }
            Var::SelfInstance { up } => Some(Named::Instance(self.scope(self.scope_out(scope, *up)?).instance()?)),
            Var::Attribute { up, name, otherwise } => {
                let instance = self.scope(self.scope_out(scope, *up)?).instance()?;
                match self.attr_cell(instance, name) {
                    Some(cell) => Some(Named::Cell(cell)),
                    None => self.resolve_var(otherwise.as_deref()?, scope),
                }
            }
            Var::Global(id) => {
                let (unit, slot) = self.program.global(self.unit_of(scope), *id)?;
                let s = self.scope(self.unit_scopes[unit as usize]);
                Some(Named::Cell(CellId(s.first_var.0 + slot)))
            }
            Var::Undefined(_) => None,
        }
    }

    /// The scope `up` levels out from `scope` (code runs at a scope's inner level; a double
    /// scope is two levels, see `Scope`).
    fn scope_out(&self, mut scope: ScopeId, up: u32) -> Option<ScopeId> {
        let mut inner = true;
        for _ in 0..up {
            if inner && self.scope(scope).is_double() {
                inner = false;
            } else {
                scope = self.scope(scope).parent()?;
                inner = true;
            }
        }
        Some(scope)
    }

    /// The value of a variable, or a wait for it.
    pub(crate) fn read_var(&mut self, var: &Var, span: Span, scope: ScopeId) -> Eval<Value> {
        match self.resolve_var(var, scope) {
            Some(Named::Instance(i)) => Ok(Value::Instance(i)),
            Some(Named::Cell(cell)) => self.read_cell(cell, scope, span),
            None => Err(self.undefined_variable(scope, span, &var_text(var))),
        }
    }

    /// Resolves a name at run time, for templates: blocks, then the instance
    /// (implementations), then the file's top level.
    pub(crate) fn lookup_name(&self, name: &str, scope: ScopeId) -> Option<Named> {
        let mut current = Some(scope);
        while let Some(id) = current {
            let s = self.scope(id);
            if let Some(cell) = self.scope_var(id, name) {
                return Some(Named::Cell(cell));
            }
            if let Some(instance) = s.instance() {
                if name == "self" {
                    return Some(Named::Instance(instance));
                }
                if let Some(cell) = self.attr_cell(instance, name) {
                    return Some(Named::Cell(cell));
                }
            }
            current = s.parent();
        }
        None
    }

    /// The error for a condition that is not a boolean: `what` says whose condition.
    pub(crate) fn non_boolean(&self, scope: ScopeId, span: Span, what: &str, value: &Value) -> Stop {
        self.fail(
            scope,
            span,
            Diagnostic::new(
                &codes::NON_BOOLEAN_CONDITION,
                format!(
                    "invalid value `{}`: the condition of {what} can only be a boolean expression",
                    self.interpolate(value)
                ),
            ),
            &format!("this is {}", value.type_name()),
        )
    }

    /// The error for `**value` where the value is not a dict.
    pub(crate) fn not_a_dict(&self, scope: ScopeId, span: Span, value: &Value) -> Stop {
        self.fail(
            scope,
            span,
            Diagnostic::new(&codes::INVALID_OPERAND, "the ** operator can only be applied to dicts"),
            &format!("this is {}", value.type_name()),
        )
    }

    /// The error for a name that is no variable here.
    pub(crate) fn undefined_variable(&self, scope: ScopeId, span: Span, name: &str) -> Stop {
        self.fail(
            scope,
            span,
            Diagnostic::new(&codes::UNDEFINED_VARIABLE, format!("variable {name} not found")),
            "not defined here",
        )
    }

    /// The complete value of a cell, or a wait for it.
    pub(crate) fn read_cell(&mut self, cell: CellId, scope: ScopeId, span: Span) -> Eval<Value> {
        let c = self.cell(cell);
        if !c.is_ready() {
            return Err(Stop::Wait(cell));
        }
        match &c.kind {
            CellKind::List { .. } => Ok(match &c.value {
                Some(items @ Value::List(_)) => items.clone(),
                _ => Value::list(Vec::new()),
            }),
            // Never set, or set to `null`: either way there is no value to read.
            CellKind::Optional { .. } if c.value.as_ref().is_none_or(Value::is_null) => {
                let owner = self.owner_text(cell);
                Err(self.fail(
                    scope,
                    span,
                    Diagnostic::new(
                        &codes::MISSING_OPTIONAL_VALUE,
                        format!("optional variable accessed that has no value ({owner})"),
                    ),
                    "this optional relation has no value",
                ))
            }
            _ => Ok(c.value.clone().unwrap_or(Value::Null)),
        }
    }

    /// The name of the attribute `cell` holds, when it holds one.
    pub(crate) fn attribute_name(&self, cell: CellId) -> Option<&'a str> {
        match self.owner_of(cell) {
            crate::cells::Owner::Attribute { instance, position } => {
                Some(self.plan_of_instance(instance).names[position as usize])
            }
            _ => None,
        }
    }

    pub(crate) fn owner_text(&self, cell: CellId) -> String {
        match self.owner_of(cell) {
            crate::cells::Owner::Variable(name) => {
                format!("variable `{}`", name.map_or("self", |n| n.text.as_str()))
            }
            crate::cells::Owner::Attribute { instance, position } => {
                let name = self.plan_of_instance(instance).names[position as usize];
                format!("attribute `{name}` of `{}`", self.describe(instance))
            }
            crate::cells::Owner::Lookup(n) => {
                let lookup = &self.lookups[n as usize];
                format!("lookup {}[{}]", lookup.entity, lookup.key)
            }
        }
    }

    /// The cell of attribute `attr` of `object`.
    pub(crate) fn attribute_cell(&self, object: &Value, attr: &Name, scope: ScopeId) -> Eval<Option<CellId>> {
        match object {
            Value::Instance(i) => match self.attr_cell(*i, &attr.text) {
                Some(cell) => Ok(Some(cell)),
                None => Err(self.fail(
                    scope,
                    attr.span,
                    Diagnostic::new(
                        &codes::UNKNOWN_ATTRIBUTE,
                        format!("could not find attribute with name: {} in type {}", attr.text, self.entity_of(*i)),
                    ),
                    "no such attribute",
                )),
            },
            Value::Unknown => Ok(None),
            Value::List(_) => Err(self.fail(
                scope,
                attr.span,
                Diagnostic::new(
                    &codes::INVALID_OPERAND,
                    format!("can not get attribute {}: the value is not an entity but a list", attr.text),
                ),
                "attribute of a list",
            )),
            other => Err(self.fail(
                scope,
                attr.span,
                Diagnostic::new(
                    &codes::INVALID_OPERAND,
                    format!("can not get attribute {}: {} is not an entity", attr.text, other.type_name()),
                ),
                "attribute of a non-entity",
            )),
        }
    }

    /// `a.b.c…`, link by link from the root outwards: a chain is long, not deep.
    fn eval_attribute_chain(&mut self, task: TaskId, expr: &'a Expr, scope: ScopeId) -> Eval<Value> {
        let mut links = Vec::new();
        let mut root = expr;
        while let ExprKind::Attr { object, attr } = &root.kind {
            links.push(attr);
            root = object;
        }
        let mut value = self.eval(task, root, scope)?;
        for attr in links.into_iter().rev() {
            value = self.read_attribute(value, attr, scope)?;
        }
        Ok(value)
    }

    fn read_attribute(&mut self, object: Value, attr: &Name, scope: ScopeId) -> Eval<Value> {
        match self.attribute_cell(&object, attr, scope)? {
            Some(cell) => self.read_cell(cell, scope, attr.span),
            None => Ok(Value::Unknown),
        }
    }

    fn eval_is_defined(&mut self, task: TaskId, inner: &'a Expr, scope: ScopeId) -> Eval<Value> {
        let cell = match &inner.kind {
            ExprKind::Attr { object, attr } => {
                let object = self.eval(task, object, scope)?;
                self.attribute_cell(&object, attr, scope)?
            }
            ExprKind::Var(var) if !matches!(var, Var::Global(_)) => match self.resolve_var(var, scope) {
                Some(Named::Cell(cell)) => Some(cell),
                Some(Named::Instance(_)) => return Ok(Value::Bool(true)),
                None => return Err(self.undefined_variable(scope, inner.span, &var_text(var))),
            },
            ExprKind::MapLookup { object, key } => {
                let container = self.eval(task, object, scope)?;
                let key = self.eval(task, key, scope)?;
                return Ok(match (container, key) {
                    (Value::Dict(d), Value::Str(k)) => Value::Bool(
                        d.get(&*k).is_some_and(|v| !v.is_null() && !matches!(v, Value::List(l) if l.is_empty())),
                    ),
                    (Value::Unknown, _) | (_, Value::Unknown) => Value::Unknown,
                    _ => Value::Bool(false),
                });
            }
            _ => {
                let value = self.eval(task, inner, scope)?;
                return Ok(defined(&value));
            }
        };
        let Some(cell) = cell else { return Ok(Value::Unknown) };
        let c = self.cell(cell);
        // A relation is defined as soon as it has a known value; "not defined" needs the
        // freeze.
        if c.is_multi() && c.items().iter().any(|i| !i.is_unknown()) {
            return Ok(Value::Bool(true));
        }
        if c.is_multi() && !c.items().is_empty() {
            return Ok(Value::Unknown);
        }
        if !c.is_ready() {
            return Err(Stop::Wait(cell));
        }
        let value = match &c.kind {
            CellKind::List { .. } => Value::list(c.items().to_vec()),
            _ => c.value.clone().unwrap_or(Value::Null),
        };
        Ok(defined(&value))
    }

    /// `c ? a : b`; `lhs` is the relation the value is assigned to, when it is a constructor's
    /// argument (constructors in the branch taken get its inverse end).
    pub(crate) fn eval_conditional(
        &mut self,
        task: TaskId,
        condition: &'a Expr,
        then: &'a Expr,
        otherwise: &'a Expr,
        scope: ScopeId,
        lhs: Option<(modelc_value::InstanceId, &'a str)>,
    ) -> Eval<Value> {
        match self.eval(task, condition, scope)? {
            Value::Bool(true) => self.eval_with_lhs(task, then, scope, lhs),
            Value::Bool(false) => self.eval_with_lhs(task, otherwise, scope, lhs),
            Value::Unknown => Ok(Value::Unknown),
            other => Err(self.non_boolean(scope, condition.span, "a conditional expression", &other)),
        }
    }

    /// `[element for … in … if …]`; `lhs` as for [`Self::eval_conditional`]: each element's
    /// constructors get the inverse end of the relation the list is assigned to.
    pub(crate) fn eval_comprehension(
        &mut self,
        task: TaskId,
        element: &'a Expr,
        fors: &'a [CompFor],
        guards: &'a [Expr],
        scope: ScopeId,
        lhs: Option<(modelc_value::InstanceId, &'a str)>,
    ) -> Eval<Value> {
        // Every combination of the loop variables, each in its own scope; `None` stands for an
        // element that is unknown, which gives an unknown element of the result.
        let mut scopes = vec![Some(scope)];
        for comp in fors {
            let mut next = Vec::new();
            for s in scopes {
                let Some(s) = s else {
                    next.push(None);
                    continue;
                };
                let iterable = self.eval(task, &comp.iterable, s)?;
                let items = match iterable {
                    Value::List(items) => items,
                    Value::Unknown => continue,
                    other => {
                        return Err(self.fail(
                            s,
                            comp.iterable.span,
                            Diagnostic::new(
                                &codes::NOT_ITERABLE,
                                format!(
                                    "a list comprehension can only be applied to lists and relations, got {}",
                                    other.type_name()
                                ),
                            ),
                            "not a list",
                        ));
                    }
                };
                for (n, item) in items.iter().enumerate() {
                    if item.is_unknown() {
                        next.push(None);
                        continue;
                    }
                    let key = (comp as *const CompFor, s, n);
                    let bound = match self.binding(task, &key) {
                        Some(bound) => bound,
                        None => {
                            let bound = self.bind_scope(s, &comp.var, item.clone());
                            self.task_state(task).effects().bindings.insert(key, bound);
                            bound
                        }
                    };
                    next.push(Some(bound));
                }
            }
            scopes = next;
        }
        let mut out = Vec::new();
        'elements: for s in scopes {
            let Some(s) = s else {
                out.push(Value::Unknown);
                continue;
            };
            for guard in guards {
                match self.eval(task, guard, s)? {
                    Value::Bool(true) => {}
                    Value::Bool(false) => continue 'elements,
                    Value::Unknown => {
                        out.push(Value::Unknown);
                        continue 'elements;
                    }
                    other => {
                        return Err(self.non_boolean(s, guard.span, "a list comprehension", &other));
                    }
                }
            }
            match self.eval_with_lhs(task, element, s, lhs)? {
                Value::List(inner) => out.extend(inner.iter().cloned()),
                other => out.push(other),
            }
        }
        Ok(Value::list(out))
    }

    /// A scope with one variable bound, for a comprehension or loop iteration.
    pub(crate) fn bind_scope(&mut self, parent: ScopeId, var: &'a Name, value: Value) -> ScopeId {
        let cell = self.new_cell(&CellKind::Variable, crate::cells::Owner::Variable(Some(var)));
        self.cell_mut(cell).value = Some(value);
        let unit = self.unit_of(parent);
        let id = crate::cells::ScopeId(self.scopes.len() as u32);
        let depth = self.scope(parent).depth;
        self.scopes.push(crate::cells::Scope::new(cell, 1, Some(parent), None, unit as u32, depth));
        id
    }

    /// Keyword arguments of an index lookup, `**dict` expanded.
    pub(crate) fn eval_keywords(
        &mut self,
        task: TaskId,
        args: &'a [Arg],
        scope: ScopeId,
    ) -> Eval<Vec<(Cow<'a, str>, Value)>> {
        let mut out: Vec<(Cow<'a, str>, Value)> = Vec::with_capacity(args.len());
        for arg in args {
            match arg {
                Arg::Keyword(name, value) => {
                    let value = self.eval(task, value, scope)?;
                    out.push((Cow::Borrowed(&name.text), value));
                }
                Arg::Splat(expr) => match self.eval(task, expr, scope)? {
                    Value::Dict(d) => {
                        for (k, v) in d.iter() {
                            if out.iter().any(|(n, _)| n == k) {
                                return Err(self.fail(
                                    scope,
                                    expr.span,
                                    Diagnostic::new(
                                        &codes::DUPLICATE_KEYWORD_ARGUMENT,
                                        format!("the attribute {k} is set twice"),
                                    ),
                                    "`**` sets it again",
                                ));
                            }
                            out.push((Cow::Owned(k.clone()), v.clone()));
                        }
                    }
                    other => return Err(self.not_a_dict(scope, expr.span, &other)),
                },
                Arg::Positional(value) => {
                    self.eval(task, value, scope)?;
                }
            }
        }
        Ok(out)
    }
}

/// How a message names a variable.
fn var_text(var: &Var) -> String {
    match var {
        Var::Undefined(written) => written.clone(),
        Var::SelfInstance { .. } => "self".to_owned(),
        Var::Attribute { name, .. } => name.clone(),
        Var::Local { .. } | Var::Global(_) => "variable".to_owned(),
    }
}

/// `is defined` on a value: not null and not an empty list.
fn defined(value: &Value) -> Value {
    match value {
        Value::Unknown => Value::Unknown,
        Value::Null => Value::Bool(false),
        Value::List(l) => Value::Bool(!l.is_empty()),
        _ => Value::Bool(true),
    }
}

/// Python's `re.match`: anchored at the start only.
pub(crate) fn python_match(pattern: &str, text: &str) -> bool {
    modelc_sema::consteval::regex_match(pattern, text).unwrap_or(false)
}

/// Python's `ascii()` of a `repr()`: non-ASCII characters escaped.
fn ascii(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match u32::from(c) {
            0..=0x7f => out.push(c),
            n @ 0x80..=0xff => out.push_str(&format!("\\x{n:02x}")),
            n @ 0x100..=0xffff => out.push_str(&format!("\\u{n:04x}")),
            n => out.push_str(&format!("\\U{n:08x}")),
        }
    }
    out
}
