//! Variables: what the declaration lowering resolved a name to holds (its one value, a loop's
//! element entity, an instance's attribute), names that did not resolve and why, and the
//! values a variable certainly holds (followed a few steps for inference and constants).

use super::*;

impl<'a> Checker<'a> {
    /// The scope a variable read `up` scopes out from scope `level` is in.
    fn scope_at(&self, level: usize, up: u32) -> Option<(usize, &Scope<'a>)> {
        let at = level.checked_sub(up as usize)?;
        Some((at, self.scopes.get(at)?))
    }

    /// What is known of a variable read at `span` in the innermost scope.
    pub(super) fn check_var(&mut self, var: &'a hir::Var, span: Span, depth: usize) -> Inferred {
        let here = self.here();
        match var {
            hir::Var::Local { up, slot } => match self.scope_at(here, *up) {
                Some((level, Scope::Block(vars))) => match vars.get_index(*slot as usize).map(|(_, v)| *v) {
                    Some(Var { element: Some(entity), .. }) => {
                        Inferred::maybe_unknown(StaticType::Instance(entity.to_owned()))
                    }
                    Some(Var { value: Some(value), .. }) if depth < INFER_DEPTH => {
                        self.infer_quietly(value, depth + 1, level)
                    }
                    _ => Inferred::any(),
                },
                _ => Inferred::any(),
            },
            hir::Var::SelfInstance { up } => match self.scope_at(here, *up) {
                Some((_, Scope::Instance(Some(entity)))) => Inferred::definite(StaticType::Instance(entity.clone())),
                _ => Inferred::any(),
            },
            hir::Var::Attribute { up, name, .. } => match self.scope_at(here, *up) {
                Some((_, Scope::Instance(Some(entity)))) => {
                    self.instance_member(&entity.clone(), name).unwrap_or_else(Inferred::any)
                }
                _ => Inferred::any(),
            },
            hir::Var::Global(_) => Inferred::any(),
            hir::Var::Undefined(written) if written.contains("::") => {
                self.report_undefined_global(written, span);
                Inferred::any()
            }
            hir::Var::Undefined(written) => {
                if self.in_typedef {
                    let d = Diagnostic::new(
                        &codes::UNDEFINED_VARIABLE,
                        format!("a typedef constraint can not use variable `{written}`"),
                    )
                    .primary(self.file, span, "only `self` is bound in a typedef constraint");
                    self.runtime(d);
                } else {
                    self.report_undefined(written, span);
                }
                Inferred::any()
            }
        }
    }

    /// `ns::x` that lowering found no variable for: the namespace is unknown or not imported,
    /// or it has no such top-level variable.
    fn report_undefined_global(&mut self, written: &str, span: Span) {
        let Some((prefix, name)) = written.rsplit_once("::") else { return };
        // The path is written without spaces in practice; the spans are counted from its ends.
        let name_span = Span { start: span.end.saturating_sub(name.len() as u32), end: span.end };
        let prefix_span = Span { start: span.start, end: span.start + prefix.len() as u32 };
        match self.scope.namespace_of(&self.index, prefix) {
            Ok(namespace) => {
                if !self.index.has_variable(&namespace, name) {
                    let d = Diagnostic::new(
                        &codes::UNDEFINED_VARIABLE,
                        format!("variable `{name}` not found in namespace `{namespace}`"),
                    )
                    .primary(
                        self.file,
                        name_span,
                        "not defined at the top level of that namespace",
                    );
                    self.runtime(d);
                }
            }
            Err(ResolveError::NotFound { .. }) => {}
            Err(error) => {
                let d = self.resolve_error(&error, prefix_span, "namespace");
                self.error(d);
            }
        }
    }

    /// `self` or an attribute of the instance an implementation runs for.
    pub(super) fn instance_member(&self, entity: &str, name: &str) -> Option<Inferred> {
        if name == "self" {
            return Some(Inferred::definite(StaticType::Instance(entity.to_owned())));
        }
        if let Some(def) = self.index.attribute(entity, name) {
            return Some(attribute_type(def));
        }
        // An attribute of a subtype the implementation may run for.
        self.index.attribute_in_family(entity, name).then(Inferred::any)
    }

    pub(super) fn report_undefined(&mut self, name: &str, span: Span) {
        let mut visible: Vec<&str> = self
            .scopes
            .iter()
            .flat_map(|scope| match scope {
                Scope::Block(vars) => vars.keys().copied().collect(),
                Scope::Instance(_) => Vec::new(),
            })
            .collect();
        let attribute_names: Vec<String> = match self.instance() {
            Some(entity) => self.index.attribute_names(entity).map(str::to_owned).collect(),
            None => Vec::new(),
        };
        visible.extend(attribute_names.iter().map(String::as_str));
        let mut d = if name == "self" {
            Diagnostic::new(&codes::UNDEFINED_VARIABLE, "`self` is not defined here").primary(
                self.file,
                span,
                "`self` only exists inside implementations",
            )
        } else {
            Diagnostic::new(&codes::UNDEFINED_VARIABLE, format!("variable `{name}` not found")).primary(
                self.file,
                span,
                "not defined in this scope",
            )
        };
        d = crate::suggest::suggest(d, self.file, span, &crate::suggest::similar(name, visible.into_iter()));
        if name.contains('-') {
            d = d.note("`-` is part of a name when there are no spaces around it: write `y - 1` to subtract");
        }
        if let Some((_, assigned)) = self.closed_vars.iter().find(|(var, at)| *var == name && at.start < span.start) {
            d = d.secondary(self.file, *assigned, "assigned here, inside a nested block").note(
                "a variable assigned in an `if` branch or a `for` body exists only inside that block; assign it before the block, or use a conditional expression (`x = c ? a : b`)",
            );
        }
        self.runtime(d);
    }

    /// Infers the type of a variable's value without reporting (it is checked where written).
    /// The value was written in scope `level`: its variables are counted out from there, not
    /// from where the variable is used.
    pub(super) fn infer_quietly(&mut self, value: &'a Expr, depth: usize, level: usize) -> Inferred {
        match &value.kind {
            ExprKind::Int(_) | ExprKind::IntOutOfRange => Inferred::definite(StaticType::Int),
            ExprKind::Float(_) => Inferred::definite(StaticType::Float),
            ExprKind::Bool(_) => Inferred::definite(StaticType::Bool),
            ExprKind::Null => Inferred::definite(StaticType::Null),
            ExprKind::Str(parts) => Inferred { ty: StaticType::Str, definite: !has_interpolation(parts) },
            ExprKind::List(_) | ExprKind::ListComp { .. } => Inferred::definite(StaticType::List),
            ExprKind::Dict(_) => Inferred::definite(StaticType::Dict),
            ExprKind::Construct { entity, .. } => {
                Inferred::definite(StaticType::Instance(self.hir.entity_name(*entity).to_owned()))
            }
            ExprKind::Var(hir::Var::Local { up, slot }) if depth < INFER_DEPTH => match self.scope_at(level, *up) {
                Some((found_at, Scope::Block(vars))) => match vars.get_index(*slot as usize).map(|(_, v)| v.value) {
                    Some(Some(next)) if !std::ptr::eq(next, value) => self.infer_quietly(next, depth + 1, found_at),
                    _ => Inferred::any(),
                },
                _ => Inferred::any(),
            },
            _ => Inferred::any(),
        }
    }

    /// The constant value of an expression written in scope `level`, following variables
    /// assigned exactly once (each counted out from the scope it is written in).
    pub(super) fn constant_value(&self, expr: &Expr, depth: usize, level: usize) -> Option<modelc_value::Value> {
        if depth >= INFER_DEPTH {
            return None;
        }
        consteval::eval_with(expr, &|var: &hir::Var| {
            let hir::Var::Local { up, slot } = var else { return None };
            let (found_at, Scope::Block(vars)) = self.scope_at(level, *up)? else { return None };
            let value = vars.get_index(*slot as usize)?.1.value?;
            self.constant_value(value, depth + 1, found_at)
        })
    }
}
