//! Running one task: a statement, an `implement … when` condition, or a step of a `for` loop
//! over a relation (spec §4.2, §4.7, §4.8, execution §1.5–1.6).

use modelc_diagnostics::{Diagnostic, codes};
use modelc_sema::hir::{Block, EagerTarget, Expr, ExprKind, Stmt, Target};
use modelc_value::Value;

use crate::cells::{CellId, CellKind, ScopeId, TaskId};
use crate::engine::{Engine, Eval, Stop, TaskKind};

impl<'a> Engine<'a> {
    pub(crate) fn execute(&mut self, id: TaskId) -> Eval<()> {
        let scope = self.tasks[id.0 as usize].scope;
        match &self.tasks[id.0 as usize].kind {
            TaskKind::Stmt(stmt) => {
                let stmt: &'a Stmt = stmt;
                self.execute_stmt(id, stmt, scope)
            }
            TaskKind::Condition { instance, statement } => {
                let (instance, def): (_, &'a crate::program::ImplementDef<'a>) = (*instance, statement);
                let implementations = &def.implementations;
                let Some(condition) = &def.statement.condition else { return Ok(()) };
                match self.eval(id, condition, scope)? {
                    // An unknown condition selects the implementation (spec §4.7).
                    Value::Bool(true) | Value::Unknown => self.apply(instance, implementations),
                    Value::Bool(false) => {}
                    other => {
                        return Err(self.non_boolean(scope, condition.span, "a conditional implementation", &other));
                    }
                }
                Ok(())
            }
            TaskKind::Constraint => Ok(()),
            TaskKind::EagerPromise { owner, target } => {
                let (owner, target): (TaskId, &'a EagerTarget) = (*owner, target);
                self.run_eager_promise(id, owner, target, scope)
            }
            TaskKind::Forward { from, to, seen, span } => {
                let (from, to, seen, span) = (*from, *to, *seen, *span);
                let items = self.list_snapshot(from);
                for item in items.iter().skip(seen as usize) {
                    self.assign(to, item.clone(), scope, span)?;
                }
                if let TaskKind::Forward { seen, .. } = &mut self.tasks[id.0 as usize].kind {
                    *seen = items.len() as u32;
                }
                self.listen_until_frozen(id, from)
            }
            TaskKind::SetLater(later) => {
                let (instance, position, value, span): (_, u32, &'a Expr, modelc_diagnostics::Span) =
                    (later.instance, later.position, later.value, later.span);
                let relation = self.plan_of_instance(instance).names[position as usize];
                let built = self.eval_with_lhs(id, value, scope, Some((instance, relation)))?;
                let first = self.instances[instance.0 as usize].first.0;
                self.assign(crate::cells::CellId(first + position), built, scope, span)
            }
            TaskKind::Annotation(expr) => {
                let expr: &'a Expr = expr;
                if self.eval(id, expr, scope)?.is_unknown() {
                    self.unknown_annotations.push((scope, expr));
                }
                Ok(())
            }
            TaskKind::ForEach { cell, var, body, seen } => {
                let (cell, var, body, seen): (_, u32, &'a Block, u32) = (*cell, *var, body, *seen);
                let items = self.list_snapshot(cell);
                for item in items.iter().skip(seen as usize) {
                    if !item.is_unknown() {
                        self.emit_block(body, Some(scope), None, self.unit_of(scope), Some((var, item.clone())));
                    }
                }
                if let TaskKind::ForEach { seen, .. } = &mut self.tasks[id.0 as usize].kind {
                    *seen = items.len() as u32;
                }
                self.listen_until_frozen(id, cell)
            }
        }
    }

    fn execute_stmt(&mut self, id: TaskId, stmt: &'a Stmt, scope: ScopeId) -> Eval<()> {
        match stmt {
            Stmt::Assign(assign) => self.execute_assign(id, &assign.target, assign.extend, &assign.value, scope),
            Stmt::Expr(expr) => self.eval(id, expr, scope).map(|_| ()),
            Stmt::If(if_) => {
                self.take_eager_promises(id, &if_.eager, scope)?;
                for (condition, body) in &if_.branches {
                    match self.eval(id, condition, scope)? {
                        Value::Bool(true) => {
                            self.emit_block(body, Some(scope), None, self.unit_of(scope), None);
                            return Ok(());
                        }
                        Value::Bool(false) => {}
                        // An unknown condition runs no branch.
                        Value::Unknown => return Ok(()),
                        other => {
                            return Err(self.non_boolean(scope, condition.span, "an if statement", &other));
                        }
                    }
                }
                if let Some(body) = &if_.else_body {
                    self.emit_block(body, Some(scope), None, self.unit_of(scope), None);
                }
                Ok(())
            }
            Stmt::For(for_) => {
                self.take_eager_promises(id, &for_.eager, scope)?;
                // A loop over a relation runs its body for each value as it arrives.
                if let ExprKind::Attr { object, attr } = &for_.iterable.kind {
                    let object = self.eval(id, object, scope)?;
                    if let Some(cell) = self.attribute_cell(&object, attr, scope)?
                        && matches!(self.cell(cell).kind, CellKind::List { .. })
                    {
                        let listener = self
                            .create_task(TaskKind::ForEach { cell, var: for_.var, body: &for_.body, seen: 0 }, scope);
                        // The loop's promises stay open until the relation is complete.
                        self.transfer_promises(id, listener);
                        // Its first step runs now: the bodies for the values already there are
                        // emitted in statement order, as the reference does.
                        match self.execute(listener) {
                            Ok(()) => self.finish_task(listener),
                            Err(Stop::Listen) => {}
                            Err(stop) => return Err(stop),
                        }
                        return Ok(());
                    }
                }
                match self.eval(id, &for_.iterable, scope)? {
                    Value::List(items) => {
                        for item in items.iter() {
                            if !item.is_unknown() {
                                self.emit_block(
                                    &for_.body,
                                    Some(scope),
                                    None,
                                    self.unit_of(scope),
                                    Some((for_.var, item.clone())),
                                );
                            }
                        }
                        Ok(())
                    }
                    Value::Unknown => Ok(()),
                    other => Err(self.fail(
                        scope,
                        for_.iterable.span,
                        Diagnostic::new(
                            &codes::NOT_ITERABLE,
                            format!("a for loop can only be applied to lists and relations, not {}", other.type_name()),
                        ),
                        "not a list",
                    )),
                }
            }
        }
    }

    fn execute_assign(
        &mut self,
        id: TaskId,
        target: &'a Target,
        extend: bool,
        value: &'a Expr,
        scope: ScopeId,
    ) -> Eval<()> {
        match target {
            Target::Local { slot, span } => {
                let cell = CellId(self.scope(scope).first_var.0 + slot);
                let value = self.eval(id, value, scope)?;
                self.assign(cell, value, scope, *span)
            }
            Target::Undefined { name, span } => Err(self.undefined_variable(scope, *span, name)),
            Target::Qualified { written, span } => Err(self.fail(
                scope,
                *span,
                Diagnostic::new(&codes::ASSIGN_TO_QUALIFIED_NAME, format!("variable {written} not found")),
                "only variables of this file can be assigned",
            )),
            Target::Attribute { object, attr, span } => {
                let span = *span;
                let object_value = self.eval(id, object, scope)?;
                let Some(cell) = self.attribute_cell(&object_value, attr, scope)? else { return Ok(()) };
                let multi = self.cell(cell).is_multi();
                if extend && !multi {
                    return Err(self.fail(
                        scope,
                        span,
                        Diagnostic::new(
                            &codes::EXTEND_SINGLE_VALUED,
                            "can not use += on relations with multiplicity 1",
                        ),
                        "holds a single value",
                    ));
                }
                if self.cell(cell).is_delayed() {
                    self.promise(id, cell);
                }
                if multi && let Some(from) = self.relation_source(id, value, scope)? {
                    return self.forward(from, cell, scope, span);
                }
                let lhs = match &object_value {
                    Value::Instance(i) => Some((*i, attr.text.as_str())),
                    _ => None,
                };
                if multi && let ExprKind::List(items) = &value.kind {
                    // `a.xs = [b.ys, c]`: relations in the list are copied gradually too.
                    let mut values = Vec::new();
                    for item in items {
                        let key = (item as *const Expr, scope);
                        if self.memo(id, key).is_some() {
                            continue;
                        }
                        if let Some(from) = self.relation_source(id, item, scope)? {
                            self.forward(from, cell, scope, span)?;
                            self.memoise(key, Value::Null);
                            continue;
                        }
                        match self.eval_with_lhs(id, item, scope, lhs)? {
                            Value::List(inner) => values.extend(inner.iter().cloned()),
                            other => values.push(other),
                        }
                    }
                    return self.assign(cell, Value::list(values), scope, span);
                }
                let value = self.eval_with_lhs(id, value, scope, lhs)?;
                self.assign(cell, value, scope, span)
            }
            Target::Other => Ok(()),
        }
    }

    /// A shared handle on the values of a list cell, for a gradual listener: it only schedules
    /// work with them, nothing is added to the relation while it holds the handle.
    fn list_snapshot(&self, cell: CellId) -> std::sync::Arc<Vec<Value>> {
        match &self.cell(cell).value {
            Some(Value::List(items)) => std::sync::Arc::clone(items),
            _ => std::sync::Arc::default(),
        }
    }

    /// A gradual listener that has seen every value so far: done if the relation is complete,
    /// else listening for more.
    fn listen_until_frozen(&mut self, id: TaskId, cell: CellId) -> Eval<()> {
        if self.cell(cell).frozen() {
            return Ok(());
        }
        if !self.listeners(cell).contains(&id) {
            self.pin(id);
            self.waits_mut(cell).listeners.push(id);
        }
        Err(Stop::Listen)
    }

    /// The list relation cell an expression reads (`b.ys`), if it is one: copying it into
    /// another relation is gradual, it does not wait for the freeze.
    pub(crate) fn relation_source(&mut self, id: TaskId, value: &'a Expr, scope: ScopeId) -> Eval<Option<CellId>> {
        let ExprKind::Attr { object, attr } = &value.kind else { return Ok(None) };
        let object = self.eval(id, object, scope)?;
        Ok(self.attribute_cell(&object, attr, scope)?.filter(|c| self.cell(*c).is_multi()))
    }

    /// Starts copying relation `from` into relation `to`, value by value.
    /// The values already there are copied now, in statement order, as the reference does;
    /// a listener copies the rest as they arrive, holding a promise on the target until the
    /// source is complete.
    pub(crate) fn forward(
        &mut self,
        from: CellId,
        to: CellId,
        scope: ScopeId,
        span: modelc_diagnostics::Span,
    ) -> Eval<()> {
        let items = self.list_snapshot(from);
        for item in items.iter() {
            self.assign(to, item.clone(), scope, span)?;
        }
        if self.cell(from).frozen() {
            return Ok(());
        }
        let task = self.create_task(TaskKind::Forward { from, to, seen: items.len() as u32, span }, scope);
        self.hold_promise(task, to);
        self.pin(task);
        self.waits_mut(from).listeners.push(task);
        // Copying can add to the source itself (through inverse relations): those values are
        // copied on the listener's first run.
        if self.cell(from).items().len() > items.len() {
            self.run_queue.push_back(task);
        }
        Ok(())
    }

    /// A value assigned to a relation: constructors in it learn the relation (its inverse may
    /// complete their index).
    pub(crate) fn eval_with_lhs(
        &mut self,
        id: TaskId,
        value: &'a Expr,
        scope: ScopeId,
        lhs: Option<(modelc_value::InstanceId, &'a str)>,
    ) -> Eval<Value> {
        match &value.kind {
            ExprKind::Construct { entity, entity_span, args } => {
                self.construct(id, value, *entity, *entity_span, args, scope, lhs)
            }
            ExprKind::List(items) if lhs.is_some() => {
                let mut out = Vec::new();
                for item in items {
                    match self.eval_with_lhs(id, item, scope, lhs)? {
                        Value::List(inner) => out.extend(inner.iter().cloned()),
                        other => out.push(other),
                    }
                }
                Ok(Value::list(out))
            }
            ExprKind::ListComp { element, fors, guards } if lhs.is_some() => {
                self.eval_comprehension(id, element, fors, guards, scope, lhs)
            }
            ExprKind::Conditional { condition, then, otherwise } if lhs.is_some() => {
                self.eval_conditional(id, condition, then, otherwise, scope, lhs)
            }
            _ => self.eval(id, value, scope),
        }
    }

    /// `if` and `for` promise the relations their blocks add to (`v.attr = …` and
    /// `v.a.b += …`, with `v` from outside the blocks), so that those are not frozen before the
    /// blocks are emitted (spec §1.6). A target whose object is not known yet gets a hook that
    /// takes the promise when it is. Promising an attribute the instance does not have is an
    /// error, as in the reference, even when the block that assigns it never runs.
    fn take_eager_promises(&mut self, id: TaskId, targets: &'a [EagerTarget], scope: ScopeId) -> Eval<()> {
        if std::mem::replace(&mut self.tasks[id.0 as usize].eager_taken, true) {
            return Ok(());
        }
        for target in targets {
            match self.peek(&target.object, scope) {
                Some(object @ Value::Instance(_)) => {
                    if let Some(cell) = self.attribute_cell(&object, &target.attr, scope)?
                        && self.cell(cell).is_delayed()
                    {
                        self.promise(id, cell);
                    }
                }
                Some(_) => {}
                None => {
                    self.pin(id);
                    self.spawn(TaskKind::EagerPromise { owner: id, target }, scope);
                }
            }
        }
        Ok(())
    }

    /// The value of a variable or attribute chain if every step of it is known now.
    fn peek(&self, expr: &'a Expr, scope: ScopeId) -> Option<Value> {
        match &expr.kind {
            ExprKind::Var(var) => match self.resolve_var(var, scope)? {
                crate::eval::Named::Instance(i) => Some(Value::Instance(i)),
                crate::eval::Named::Cell(cell) => {
                    let c = self.cell(cell);
                    if c.is_ready() && !c.is_multi() { c.value.clone() } else { None }
                }
            },
            ExprKind::Attr { object, attr } => match self.peek(object, scope)? {
                Value::Instance(i) => {
                    let c = self.cell(self.attr_cell(i, &attr.text)?);
                    if c.is_ready() && !c.is_multi() { c.value.clone() } else { None }
                }
                _ => Some(Value::Unknown),
            },
            _ => Some(Value::Unknown),
        }
    }

    /// Runs an eager-promise hook: once the target's object is known, the statement that
    /// owns the hook (or the loop it handed its promises to) promises the target relation.
    pub(crate) fn run_eager_promise(
        &mut self,
        id: TaskId,
        owner: TaskId,
        target: &'a EagerTarget,
        scope: ScopeId,
    ) -> Eval<()> {
        let (object, attr) = (&target.object, &target.attr);
        // A chain that fails to evaluate takes no promise: the assignment itself reports it.
        let object = match self.eval(id, object, scope) {
            Ok(object) => object,
            Err(Stop::Fail(_)) => return Ok(()),
            Err(stop) => return Err(stop),
        };
        // An instance without the attribute is an error here, the assignment may never run.
        let cell = match self.attribute_cell(&object, attr, scope) {
            Ok(Some(cell)) => cell,
            Err(stop) if matches!(object, Value::Instance(_)) => return Err(stop),
            _ => return Ok(()),
        };
        if !self.cell(cell).is_delayed() {
            return Ok(());
        }
        let mut holder = owner;
        while self.tasks[holder.0 as usize].done {
            match self.heirs.get(&holder) {
                Some(heir) => holder = *heir,
                None => return Ok(()),
            }
        }
        self.hold_promise(holder, cell);
        Ok(())
    }
}
