//! Variables: which declaration a name refers to in the enclosing blocks, undefined names, and
//! the values a variable certainly holds (followed a few steps for inference and constants).

use super::*;

impl<'a> Checker<'a> {
    pub(super) fn check_var(&mut self, path: &'a Path, depth: usize) -> Inferred {
        self.check_var_named(path, depth)
    }

    pub(super) fn check_var_named(&mut self, path: &Path, depth: usize) -> Inferred {
        if path.segments.len() > 1 {
            let (name, prefix) = path.segments.split_last().unwrap_or((&path.segments[0], &[]));
            let prefix_text: Vec<&str> = prefix.iter().map(|s| s.name.as_str()).collect();
            let prefix_text = prefix_text.join("::");
            let prefix_span = prefix.first().map_or(path.span, |f| f.span.to(prefix.last().map_or(f.span, |l| l.span)));
            match self.scope.namespace_of(&self.index, &prefix_text) {
                Ok(namespace) => {
                    if !self.index.has_variable(&namespace, &name.name) {
                        let d = Diagnostic::new(
                            &codes::UNDEFINED_VARIABLE,
                            format!("variable `{}` not found in namespace `{namespace}`", name.name),
                        )
                        .primary(
                            self.file,
                            name.span,
                            "not defined at the top level of that namespace",
                        );
                        self.runtime(d);
                    }
                }
                Err(error) => {
                    let error = match error {
                        ResolveError::NotFound { .. } => return Inferred::any(),
                        other => other,
                    };
                    let d = self.resolve_error(&error, prefix_span, "namespace");
                    self.error(d);
                }
            }
            return Inferred::any();
        }
        let name = &path.segments[0];
        self.lookup_var(name, depth)
    }

    /// Resolves an unqualified variable: blocks inside out (the implementation body first),
    /// then the instance, then the file's top level.
    pub(super) fn lookup_var(&mut self, name: &Ident, depth: usize) -> Inferred {
        if self.in_typedef {
            let local = self.blocks.iter().skip(self.typedef_depth).any(|b| b.vars.contains_key(name.name.as_str()));
            if name.name == "self" || local {
                return Inferred::any();
            }
            let d = Diagnostic::new(
                &codes::UNDEFINED_VARIABLE,
                format!("a typedef constraint can not use variable `{}`", name.name),
            )
            .primary(self.file, name.span, "only `self` is bound in a typedef constraint");
            self.runtime(d);
            return Inferred::any();
        }
        let found = self
            .blocks
            .iter()
            .enumerate()
            .rev()
            .find_map(|(level, block)| block.vars.get(name.name.as_str()).map(|var| (level, *var)));
        match found {
            Some((level, var)) if level >= self.impl_depth || self.instance.is_none() || level == 0 => {
                // Inside an implementation, instance attributes come before the top level.
                if level == 0
                    && self.impl_depth > 0
                    && let Some(entity) = self.instance.clone()
                    && let Some(found) = self.instance_member(&entity, &name.name)
                {
                    return found;
                }
                match (var.value, var.element) {
                    (_, Some(entity)) => Inferred::maybe_unknown(StaticType::Instance(entity.to_owned())),
                    (Some(value), None) if depth < INFER_DEPTH => self.infer_quietly(value, depth + 1, level),
                    _ => Inferred::any(),
                }
            }
            _ => {
                if let Some(entity) = self.instance.clone()
                    && let Some(found) = self.instance_member(&entity, &name.name)
                {
                    return found;
                }
                if self.instance.is_none() && self.impl_depth > 0 && self.blocks.len() > self.impl_depth {
                    // Inside an implementation of an unknown entity: anything may be an attribute.
                    return Inferred::any();
                }
                self.report_undefined(name);
                Inferred::any()
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

    pub(super) fn report_undefined(&mut self, name: &Ident) {
        let mut visible: Vec<&str> = self.blocks.iter().flat_map(|b| b.vars.keys().copied()).collect();
        let attribute_names: Vec<String> = match &self.instance {
            Some(entity) => self.index.attribute_names(entity).map(str::to_owned).collect(),
            None => Vec::new(),
        };
        visible.extend(attribute_names.iter().map(String::as_str));
        let mut d = if name.name == "self" {
            Diagnostic::new(&codes::UNDEFINED_VARIABLE, "`self` is not defined here").primary(
                self.file,
                name.span,
                "`self` only exists inside implementations",
            )
        } else {
            Diagnostic::new(&codes::UNDEFINED_VARIABLE, format!("variable `{}` not found", name.name)).primary(
                self.file,
                name.span,
                "not defined in this scope",
            )
        };
        d = crate::suggest::suggest(d, self.file, name.span, &crate::suggest::similar(&name.name, visible.into_iter()));
        if name.name.contains('-') {
            d = d.note("`-` is part of a name when there are no spaces around it: write `y - 1` to subtract");
        }
        if let Some((_, assigned)) =
            self.closed_vars.iter().find(|(var, at)| *var == name.name && at.start < name.span.start)
        {
            d = d.secondary(self.file, *assigned, "assigned here, inside a nested block").note(
                "a variable assigned in an `if` branch or a `for` body exists only inside that block; assign it before the block, or use a conditional expression (`x = c ? a : b`)",
            );
        }
        self.runtime(d);
    }

    /// Infers the type of a variable's value without reporting (it is checked where written).
    /// The value was written in block `level`: names in it resolve from there, not from where
    /// the variable is used (an inner block may shadow them).
    pub(super) fn infer_quietly(&mut self, value: &Expr, depth: usize, level: usize) -> Inferred {
        match &value.kind {
            ExprKind::Int(_) => Inferred::definite(StaticType::Int),
            ExprKind::Float(_) => Inferred::definite(StaticType::Float),
            ExprKind::Bool(_) => Inferred::definite(StaticType::Bool),
            ExprKind::Null => Inferred::definite(StaticType::Null),
            ExprKind::Str(s) => Inferred { ty: StaticType::Str, definite: !s.has_interpolation() },
            ExprKind::List(_) | ExprKind::ListComp { .. } => Inferred::definite(StaticType::List),
            ExprKind::Dict(_) => Inferred::definite(StaticType::Dict),
            ExprKind::Construct { entity, .. } => match self.scope.resolve_type(&self.index, &entity.text()) {
                Ok(Resolved { fqn, kind: TypeKind::Entity }) => Inferred::definite(StaticType::Instance(fqn)),
                _ => Inferred::any(),
            },
            ExprKind::Var(path) if path.segments.len() == 1 && depth < INFER_DEPTH => {
                match self.visible_var(&path.segments[0].name, level) {
                    Some((found_at, Some(next))) if !std::ptr::eq(next, value) => {
                        self.infer_quietly(next, depth + 1, found_at)
                    }
                    _ => Inferred::any(),
                }
            }
            _ => Inferred::any(),
        }
    }

    /// The constant value of an expression written in block `level`, following variables
    /// assigned exactly once (each resolved from the block it is written in).
    pub(super) fn constant_value(&self, expr: &Expr, depth: usize, level: usize) -> Option<modelc_value::Value> {
        if depth >= INFER_DEPTH {
            return None;
        }
        consteval::eval_with(expr, &|name| {
            let (found_at, value) = self.visible_var(name, level)?;
            self.constant_value(value?, depth + 1, found_at)
        })
    }

    /// The variable `name` as seen from block `level`: the block declaring it and its value.
    pub(super) fn visible_var(&self, name: &str, level: usize) -> Option<(usize, Option<&'a Expr>)> {
        self.blocks.get(..=level)?.iter().enumerate().rev().find_map(|(i, b)| b.vars.get(name).map(|v| (i, v.value)))
    }
}
