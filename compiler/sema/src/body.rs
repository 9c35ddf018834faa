//! Checks of statement blocks: variables and their scopes, attribute access, constructors,
//! index lookups, plugin calls and operators, with the static types of expressions where they
//! are certain (spec §3.5, §4.2, §4.5, §4.8, §4.9).

use modelc_diagnostics::{Diagnostic, Span, codes};
use modelc_syntax::ast::{
    Arg, AssignOp, BinOp, Constraint, Expr, ExprKind, FStrPart, Ident, Implement, Implementation, Path, Stmt, StrPart,
    Typedef,
};

use crate::check::{Block, Checker, Var};
use crate::consteval::{self, Violation};
use crate::index::{AttrDef, AttrKind, TypeKind};
use crate::resolve::{ResolveError, Resolved};
use crate::types::{BaseType, CASTS, Inferred, StaticType, ValueType};

/// What the context expects of an expression's value: the attribute it is assigned to.
#[derive(Clone, Copy)]
pub(crate) struct Hint<'h> {
    /// The attribute, when it is known; `None` for `x.attr = …` where `x`'s type is not.
    pub attribute: Option<&'h AttrDef>,
    /// The expression is directly the value (not through a variable): the reference checks
    /// constructor types statically then.
    pub direct: bool,
}

const IMPLEMENTATION_RUNS: &str = "this code runs only for instances that use this implementation";
const CONDITION_RUNS: &str = "this condition is evaluated only when an instance of the entity is constructed";

/// How deep variable values are followed when inferring types (`a = b`, `b = c`, ...).
const INFER_DEPTH: usize = 8;

impl<'a> Checker<'a> {
    /// The variables a block declares: names assigned in it and (for loop bodies) its variable.
    pub(crate) fn declare_block(&self, stmts: impl Iterator<Item = &'a Stmt>) -> Block<'a> {
        let mut block = Block::default();
        for stmt in stmts {
            let Stmt::Assign(assign) = stmt else { continue };
            let ExprKind::Var(path) = &assign.target.kind else { continue };
            let [name] = path.segments.as_slice() else { continue };
            block
                .vars
                .entry(&name.name)
                // Assigned more than once: the value is not known statically.
                .and_modify(|v| v.value = None)
                .or_insert(Var { value: Some(&assign.value), declared_at: name.span });
        }
        block
    }

    fn check_block(&mut self, stmts: &'a [Stmt], extra: Option<(&'a Ident, Option<&'a Expr>)>) {
        let mut block = self.declare_block(stmts.iter());
        if let Some((var, value)) = extra {
            block.vars.insert(&var.name, Var { value, declared_at: var.span });
        }
        self.warn_shadowing(&block);
        self.blocks.push(block);
        for stmt in stmts {
            self.check_stmt(stmt);
        }
        self.blocks.pop();
    }

    /// A variable of a nested block with the name of one in an enclosing block is a new
    /// variable: assigning it does not change the outer one, which surprises.
    fn warn_shadowing(&mut self, block: &Block<'a>) {
        // An implementation body starts a new scope chain (instance, then the file's top level).
        let enclosing = if self.impl_depth > 0 && self.blocks.len() == self.impl_depth {
            return;
        } else if self.impl_depth > 0 {
            &self.blocks[self.impl_depth..]
        } else {
            &self.blocks[..]
        };
        let mut found: Vec<(Span, Span, &str)> = Vec::new();
        for (name, var) in &block.vars {
            if let Some(outer) = enclosing.iter().rev().find_map(|b| b.vars.get(name)) {
                found.push((var.declared_at, outer.declared_at, name));
            }
        }
        for (inner, outer, name) in found {
            let d = Diagnostic::new(
                &codes::VARIABLE_SHADOWED,
                format!("variable `{name}` shadows a variable of an enclosing block"),
            )
            .primary(self.file, inner, "this is a new variable, visible only in this block")
            .secondary(self.file, outer, "the outer variable, which keeps its value")
            .help("use another name; to add to a relation of an outer instance, assign `x.attr = …`");
            self.error(d);
        }
    }

    pub(crate) fn check_implementation_body(&mut self, implementation: &'a Implementation) {
        let Ok(Resolved { fqn, kind: TypeKind::Entity }) =
            self.scope.resolve_type(self.index, &implementation.entity.text())
        else {
            // The entity is unknown (reported); still resolve the names of the body.
            self.with_instance(None, IMPLEMENTATION_RUNS, |c| c.check_block(&implementation.body, None));
            return;
        };
        self.with_instance(Some(fqn), IMPLEMENTATION_RUNS, |c| c.check_block(&implementation.body, None));
    }

    pub(crate) fn check_implement_condition(&mut self, implement: &'a Implement) {
        let Some(condition) = &implement.condition else { return };
        let entity = match self.scope.resolve_type(self.index, &implement.entity.text()) {
            Ok(Resolved { fqn, kind: TypeKind::Entity }) => Some(fqn),
            _ => None,
        };
        self.with_instance(entity, CONDITION_RUNS, |c| {
            let inferred = c.check_expr(condition, None);
            if let Some(ty) = inferred.certain()
                && *ty != StaticType::Bool
            {
                let d = Diagnostic::new(
                    &codes::NON_BOOLEAN_CONDITION,
                    "the condition of `implement … when` is not a boolean",
                )
                .primary(c.file, condition.span, format!("this is {}", ty.describe()));
                c.runtime(d);
            }
        });
    }

    fn with_instance(&mut self, entity: Option<String>, reason: &'static str, f: impl FnOnce(&mut Self)) {
        let saved = (self.instance.take(), self.impl_depth);
        self.instance = entity;
        self.impl_depth = self.blocks.len();
        self.uncertain(reason, f);
        (self.instance, self.impl_depth) = saved;
    }

    pub(crate) fn check_typedef_constraint(&mut self, typedef: &'a Typedef) {
        let Constraint::Expr(expr) = &typedef.constraint else { return };
        self.in_typedef = true;
        self.typedef_depth = self.blocks.len();
        self.uncertain("a typedef constraint runs only when a value of the type is checked", |c| {
            c.check_expr(expr, None);
        });
        self.in_typedef = false;
    }

    pub(crate) fn check_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Assign(assign) => self.check_assign(&assign.target, assign.op, &assign.value),
            Stmt::For(for_) => {
                let iterable = self.check_expr(&for_.iterable, None);
                if let Some(ty) = iterable.certain()
                    && !matches!(ty, StaticType::List)
                {
                    let d =
                        Diagnostic::new(&codes::NOT_ITERABLE, "a for loop can only iterate over lists and relations")
                            .primary(self.file, for_.iterable.span, format!("this is {}", ty.describe()));
                    self.runtime(d);
                }
                if runs_at_least_once(&for_.iterable) {
                    self.check_block(&for_.body, Some((&for_.var, None)));
                } else {
                    self.uncertain("the body of a for loop runs only for the elements there are", |c| {
                        c.check_block(&for_.body, Some((&for_.var, None)));
                    });
                }
            }
            Stmt::If(if_) => {
                for (i, (condition, _)) in if_.branches.iter().enumerate() {
                    // `elif` conditions are evaluated only when the branches before them fail.
                    let inferred = if i == 0 {
                        self.check_expr(condition, None)
                    } else {
                        self.uncertain("an elif condition is evaluated only when the conditions before it fail", |c| {
                            c.check_expr(condition, None)
                        })
                    };
                    if let Some(ty) = inferred.certain()
                        && *ty != StaticType::Bool
                    {
                        let d = Diagnostic::new(
                            &codes::NON_BOOLEAN_CONDITION,
                            "the condition of an if statement can only be a boolean",
                        )
                        .primary(self.file, condition.span, format!("this is {}", ty.describe()))
                        .help("compare explicitly, e.g. `x != null` or `std::count(x) > 0`");
                        self.runtime(d);
                    }
                }
                self.uncertain("an if branch runs only when its condition holds", |c| {
                    for (_, body) in &if_.branches {
                        c.check_block(body, None);
                    }
                    if let Some(body) = &if_.else_body {
                        c.check_block(body, None);
                    }
                });
            }
            Stmt::Expr(expr) => {
                self.check_expr(expr, None);
            }
            Stmt::Error(_) => {}
        }
    }

    fn check_assign(&mut self, target: &'a Expr, op: AssignOp, value: &'a Expr) {
        match &target.kind {
            ExprKind::Var(path) if path.segments.len() > 1 => {
                let d = Diagnostic::new(
                    &codes::ASSIGN_TO_QUALIFIED_NAME,
                    format!("can not assign to `{}`: only variables of this file can be assigned", path.text()),
                )
                .primary(self.file, path.span, "a variable of another namespace");
                self.runtime(d);
                self.check_expr(value, None);
            }
            ExprKind::Attr { object, attr } => {
                let object_type = self.check_expr(object, None);
                let attribute = self.attribute_of(&object_type, attr);
                if let Some(def) = attribute
                    && op == AssignOp::Extend
                    && def.is_single_valued()
                {
                    let d = Diagnostic::new(
                        &codes::EXTEND_SINGLE_VALUED,
                        format!("can not use += on `{}`: it holds a single value", attr.name),
                    )
                    .primary(self.file, target.span, format!("`{}` is `{}`", attr.name, describe_cell(def)))
                    .help("use `=` to set it");
                    self.runtime(d);
                }
                // There is a left-hand side even when its attribute is not known.
                let hint = Some(Hint { attribute, direct: false });
                let inferred = self.check_expr(value, hint);
                if let Some(def) = attribute {
                    self.check_value_fits(def, value, &inferred);
                }
            }
            _ => {
                self.check_expr(value, None);
            }
        }
    }

    /// The attribute `attr` of a value, reporting it when the value's entity (and all its
    /// subtypes) lack it, or when the value is certainly not an instance.
    fn attribute_of(&mut self, object: &Inferred, attr: &Ident) -> Option<&'a AttrDef> {
        let index = self.index;
        match &object.ty {
            StaticType::Instance(entity) => {
                if let Some(def) = index.attribute(entity, &attr.name) {
                    return Some(def);
                }
                if index.attribute_in_family(entity, &attr.name) {
                    return None;
                }
                let d = self.unknown_attribute(entity, attr);
                self.runtime(d);
                None
            }
            ty if object.definite && ty.is_known() => {
                let d = Diagnostic::new(
                    &codes::INVALID_OPERAND,
                    format!("can not get attribute `{}` of {}: it is not an entity", attr.name, ty.describe()),
                )
                .primary(self.file, attr.span, "attribute of a non-entity value");
                self.runtime(d);
                None
            }
            _ => None,
        }
    }

    /// "entity E has no attribute x", with a suggestion among E's attributes.
    pub(crate) fn unknown_attribute(&self, entity: &str, attr: &Ident) -> Diagnostic {
        let names: Vec<&str> = self.index.attribute_names(entity).into_iter().collect();
        let d =
            Diagnostic::new(&codes::UNKNOWN_ATTRIBUTE, format!("entity `{entity}` has no attribute `{}`", attr.name))
                .primary(self.file, attr.span, "no such attribute");
        match crate::suggest::did_you_mean(&crate::suggest::similar(&attr.name, names.into_iter())) {
            Some(help) => d.help(help),
            None => d,
        }
    }

    /// A value assigned to an attribute: constants must fit its type.
    fn check_value_fits(&mut self, def: &AttrDef, value: &Expr, inferred: &Inferred) {
        match &def.kind {
            AttrKind::Value { ty, .. } => {
                let Some(constant) = consteval::eval(value, None) else { return };
                match consteval::validate(self.index, ty, &constant) {
                    Ok(()) => {}
                    Err(Violation::Type(message)) => {
                        let d = Diagnostic::new(
                            &codes::TYPE_MISMATCH,
                            format!("can not set attribute `{}` of type `{ty}` to {}", def.name, constant.repr()),
                        )
                        .primary(self.file, value.span, message);
                        self.runtime(d);
                    }
                    Err(Violation::Constraint { message, .. }) => {
                        let d = Diagnostic::new(
                            &codes::CONSTRAINT_VIOLATION,
                            format!("{} violates the constraint of `{ty}`", constant.repr()),
                        )
                        .primary(self.file, value.span, message);
                        self.runtime(d);
                    }
                }
            }
            AttrKind::Relation { target, .. } if target.is_empty() => {}
            AttrKind::Relation { target, bounds, .. } => {
                let problem = match inferred.certain() {
                    Some(StaticType::Instance(entity)) if !self.index.is_subtype(entity, target) => {
                        Some(format!("an instance of `{entity}` is not a `{target}`"))
                    }
                    Some(StaticType::List) if bounds.is_single() => {
                        Some(format!("`{}` holds one instance, not a list", def.name))
                    }
                    Some(StaticType::Null) if bounds.lower > 0 && bounds.is_single() => {
                        Some(format!("`{}` requires an instance; it can not be null", def.name))
                    }
                    Some(
                        ty @ (StaticType::Bool
                        | StaticType::Int
                        | StaticType::Float
                        | StaticType::Str
                        | StaticType::Dict),
                    ) => Some(format!("{} is not an instance of `{target}`", ty.describe())),
                    _ => None,
                };
                if let Some(problem) = problem {
                    let d = Diagnostic::new(
                        &codes::TYPE_MISMATCH,
                        format!("invalid value for relation `{}` of type `{target}`", def.name),
                    )
                    .primary(self.file, value.span, problem);
                    self.runtime(d);
                }
            }
        }
    }

    /// Checks an expression and returns what is known of its value.
    pub(crate) fn check_expr(&mut self, expr: &'a Expr, hint: Option<Hint<'a>>) -> Inferred {
        match &expr.kind {
            ExprKind::Int(_) => Inferred::definite(StaticType::Int),
            ExprKind::Float(_) => Inferred::definite(StaticType::Float),
            ExprKind::Bool(_) => Inferred::definite(StaticType::Bool),
            ExprKind::Null => Inferred::definite(StaticType::Null),
            ExprKind::Str(s) => {
                let mut definite = true;
                for part in &s.parts {
                    if let StrPart::Interpolation(path) = part {
                        definite = false;
                        self.check_reference_chain(path);
                    }
                }
                Inferred { ty: StaticType::Str, definite }
            }
            ExprKind::FStr(f) => {
                self.check_fstring_parts(&f.parts);
                Inferred::maybe_unknown(StaticType::Str)
            }
            ExprKind::Regex(regex) => {
                // A bare regex means "self matches"; it needs `self`.
                if self.instance.is_none() && !self.in_typedef {
                    let d = Diagnostic::new(&codes::UNDEFINED_VARIABLE, "a regex used as a value needs `self`")
                        .primary(
                            self.file,
                            regex.span,
                            "`matching /…/` tests `self`, which only exists in implementations",
                        );
                    self.runtime(d);
                }
                Inferred::maybe_unknown(StaticType::Bool)
            }
            ExprKind::Var(path) => self.check_var(path, 0),
            ExprKind::Attr { object, attr } => {
                let object_type = self.check_expr(object, None);
                // `self.x` in an implementation may be an attribute of a subtype declared in a
                // module this compile does not load.
                if self.is_self(object)
                    && !matches!(&object_type.ty, StaticType::Instance(e) if self.index.attribute(e, &attr.name).is_some())
                {
                    return Inferred::any();
                }
                match self.attribute_of(&object_type, attr) {
                    Some(def) => attribute_type(def),
                    None => Inferred::any(),
                }
            }
            ExprKind::Call { function, args } => self.check_call(expr, function, args),
            ExprKind::Construct { entity, args } => self.check_construct(expr, entity, args, hint),
            ExprKind::IndexLookup { entity, args } => self.check_index_lookup(entity, args),
            ExprKind::RelationLookup { object, args, .. } => {
                self.check_expr(object, None);
                self.check_args(args);
                Inferred::any()
            }
            ExprKind::MapLookup { object, key } => {
                let container = self.check_expr(object, None);
                let key_type = self.check_expr(key, None);
                if let Some(ty) = container.certain()
                    && *ty != StaticType::Dict
                {
                    let d = Diagnostic::new(
                        &codes::INVALID_DICT_LOOKUP,
                        format!("can not look up a key in {}", ty.describe()),
                    )
                    .primary(self.file, object.span, "not a dict");
                    let d = if *ty == StaticType::List {
                        d.help("lists have no indexing; use `std::at(list, i)`")
                    } else {
                        d
                    };
                    self.runtime(d);
                } else if let Some(ty) = key_type.certain()
                    && *ty != StaticType::Str
                {
                    let d = Diagnostic::new(&codes::INVALID_DICT_LOOKUP, "dict keys must be strings").primary(
                        self.file,
                        key.span,
                        format!("this is {}", ty.describe()),
                    );
                    self.runtime(d);
                }
                Inferred::any()
            }
            ExprKind::List(items) => {
                for item in items {
                    self.check_expr(item, hint);
                }
                Inferred::definite(StaticType::List)
            }
            ExprKind::ListComp { element, fors, guards } => {
                self.check_list_comprehension(element, fors, guards, hint);
                Inferred::definite(StaticType::List)
            }
            ExprKind::Dict(entries) => {
                for entry in entries {
                    self.check_expr(&entry.value, None);
                }
                Inferred::definite(StaticType::Dict)
            }
            ExprKind::Binary { op, lhs, rhs } => self.check_binary(*op, lhs, rhs),
            ExprKind::Not(inner) => {
                let operand = self.check_expr(inner, None);
                if let Some(ty) = operand.certain()
                    && *ty != StaticType::Bool
                {
                    let d = Diagnostic::new(&codes::INVALID_OPERAND, "`not` can only be applied to a boolean").primary(
                        self.file,
                        inner.span,
                        format!("this is {}", ty.describe()),
                    );
                    self.runtime(d);
                }
                Inferred { ty: StaticType::Bool, definite: operand.definite }
            }
            ExprKind::Conditional { condition, then, otherwise } => {
                let cond = self.check_expr(condition, None);
                if let Some(ty) = cond.certain()
                    && *ty != StaticType::Bool
                {
                    let d = Diagnostic::new(
                        &codes::NON_BOOLEAN_CONDITION,
                        "the condition of a conditional expression is not a boolean",
                    )
                    .primary(self.file, condition.span, format!("this is {}", ty.describe()));
                    self.runtime(d);
                }
                let (a, b) = self.uncertain("only one branch of a conditional expression is evaluated", |c| {
                    (c.check_expr(then, hint), c.check_expr(otherwise, hint))
                });
                if a.ty == b.ty {
                    Inferred { ty: a.ty, definite: a.definite && b.definite && cond.definite }
                } else {
                    Inferred::any()
                }
            }
            ExprKind::IsDefined(inner) => {
                // `d[k] is defined` means `k in d and d[k] != null and d[k] != []`: never a
                // lookup error.
                if let ExprKind::MapLookup { object, key } = &inner.kind {
                    self.check_expr(object, None);
                    self.check_expr(key, None);
                } else {
                    self.check_expr(inner, None);
                }
                Inferred::maybe_unknown(StaticType::Bool)
            }
            ExprKind::Error => Inferred::any(),
        }
    }

    /// Whether `expr` is `self` inside an implementation.
    fn is_self(&self, expr: &Expr) -> bool {
        self.instance.is_some()
            && matches!(&expr.kind, ExprKind::Var(path) if path.segments.len() == 1 && path.segments[0].name == "self")
    }

    /// `{{ a.b.c }}`: a variable and attribute reads.
    fn check_reference_chain(&mut self, path: &'a [Ident]) {
        let Some((first, rest)) = path.split_first() else { return };
        let span = first.span;
        let var = Path { segments: vec![first.clone()], span };
        let mut current = self.check_var_named(&var, 0);
        for attr in rest {
            current = match self.attribute_of(&current, attr) {
                Some(def) => attribute_type(def),
                None => Inferred::any(),
            };
        }
    }

    fn check_fstring_parts(&mut self, parts: &'a [FStrPart]) {
        for part in parts {
            if let FStrPart::Field(field) = part {
                self.check_reference_chain(&field.path);
                self.check_fstring_parts(&field.spec);
            }
        }
    }

    fn check_var(&mut self, path: &'a Path, depth: usize) -> Inferred {
        self.check_var_named(path, depth)
    }

    fn check_var_named(&mut self, path: &Path, depth: usize) -> Inferred {
        if path.segments.len() > 1 {
            let (name, prefix) = path.segments.split_last().unwrap_or((&path.segments[0], &[]));
            let prefix_text: Vec<&str> = prefix.iter().map(|s| s.name.as_str()).collect();
            let prefix_text = prefix_text.join("::");
            let prefix_span = prefix.first().map_or(path.span, |f| f.span.to(prefix.last().map_or(f.span, |l| l.span)));
            match self.scope.namespace_of(self.index, &prefix_text) {
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
    fn lookup_var(&mut self, name: &Ident, depth: usize) -> Inferred {
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
                match var.value {
                    Some(value) if depth < INFER_DEPTH => self.infer_quietly(value, depth + 1, level),
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
    fn instance_member(&self, entity: &str, name: &str) -> Option<Inferred> {
        if name == "self" {
            return Some(Inferred::definite(StaticType::Instance(entity.to_owned())));
        }
        if let Some(def) = self.index.attribute(entity, name) {
            return Some(attribute_type(def));
        }
        // An attribute of a subtype the implementation may run for.
        self.index.attribute_in_family(entity, name).then(Inferred::any)
    }

    fn report_undefined(&mut self, name: &Ident) {
        let mut visible: Vec<&str> = self.blocks.iter().flat_map(|b| b.vars.keys().copied()).collect();
        let attribute_names: Vec<String> = match &self.instance {
            Some(entity) => self.index.attribute_names(entity).into_iter().map(str::to_owned).collect(),
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
        if let Some(help) = crate::suggest::did_you_mean(&crate::suggest::similar(&name.name, visible.into_iter())) {
            d = d.help(help);
        }
        if name.name.contains('-') {
            d = d.note("`-` is part of a name when there are no spaces around it: write `y - 1` to subtract");
        }
        self.runtime(d);
    }

    /// Infers the type of a variable's value without reporting (it is checked where written).
    /// The value was written in block `level`: names in it resolve from there, not from where
    /// the variable is used (an inner block may shadow them).
    fn infer_quietly(&mut self, value: &Expr, depth: usize, level: usize) -> Inferred {
        match &value.kind {
            ExprKind::Int(_) => Inferred::definite(StaticType::Int),
            ExprKind::Float(_) => Inferred::definite(StaticType::Float),
            ExprKind::Bool(_) => Inferred::definite(StaticType::Bool),
            ExprKind::Null => Inferred::definite(StaticType::Null),
            ExprKind::Str(s) => Inferred { ty: StaticType::Str, definite: !s.has_interpolation() },
            ExprKind::List(_) | ExprKind::ListComp { .. } => Inferred::definite(StaticType::List),
            ExprKind::Dict(_) => Inferred::definite(StaticType::Dict),
            ExprKind::Construct { entity, .. } => match self.scope.resolve_type(self.index, &entity.text()) {
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

    fn check_args(&mut self, args: &'a [Arg]) -> Vec<Inferred> {
        args.iter().map(|arg| self.check_expr(arg.value(), None)).collect()
    }

    fn check_splat(&mut self, expr: &'a Expr, inferred: &Inferred) {
        if let Some(ty) = inferred.certain()
            && *ty != StaticType::Dict
        {
            let d = Diagnostic::new(&codes::INVALID_OPERAND, "the ** operator can only be applied to dicts").primary(
                self.file,
                expr.span,
                format!("this is {}", ty.describe()),
            );
            self.runtime(d);
        }
    }

    fn check_call(&mut self, call: &'a Expr, function: &'a Path, args: &'a [Arg]) -> Inferred {
        let inferred = self.check_args(args);
        for (arg, ty) in args.iter().zip(&inferred) {
            if let Arg::Splat(e) = arg {
                self.check_splat(e, ty);
            }
        }
        let written = function.text();
        if function.segments.len() == 1 && CASTS.contains(&written.as_str()) {
            let positional = args.iter().filter(|a| matches!(a, Arg::Positional(_))).count();
            if positional != 1 || args.len() != 1 {
                let d = Diagnostic::new(
                    &codes::INVALID_ARGUMENTS,
                    format!("the cast `{written}` takes exactly one positional argument"),
                )
                .primary(self.file, call.span, format!("{} argument(s) given", args.len()));
                self.runtime(d);
            }
            if written == "number" {
                self.deprecated_number(function.span);
            }
            let ty = match written.as_str() {
                "string" => StaticType::Str,
                "int" => StaticType::Int,
                "float" => StaticType::Float,
                "bool" => StaticType::Bool,
                _ => StaticType::Any,
            };
            return Inferred::maybe_unknown(ty);
        }
        if function.segments.len() == 1 && (written == "list" || written == "dict") {
            let d = Diagnostic::new(&codes::NOT_CALLABLE, format!("`{written}` can not be called")).primary(
                self.file,
                function.span,
                "only plugins and the casts string, int, float, bool and number can be called",
            );
            self.runtime(d);
            return Inferred::any();
        }
        match self.scope.resolve_type(self.index, &written) {
            Ok(Resolved { fqn, kind: TypeKind::Plugin }) => {
                let Some(signature) = self.index.plugin(&fqn) else { return Inferred::any() };
                if signature.deprecated {
                    let d = Diagnostic::new(&codes::DEPRECATED, format!("the plugin `{fqn}` is deprecated")).primary(
                        self.file,
                        function.span,
                        "deprecated",
                    );
                    self.error(d);
                }
                self.check_plugin_arguments(call, &fqn, signature, args, &inferred);
                Inferred::maybe_unknown(static_type_of(signature.returns))
            }
            Ok(Resolved { fqn, kind }) => {
                let mut d = Diagnostic::new(
                    &codes::NOT_CALLABLE,
                    format!("`{fqn}` is {}, it can not be called", kind.describe()),
                )
                .primary(self.file, function.span, "only plugins and primitive casts can be called");
                if kind == TypeKind::Entity {
                    d = d.help("entities are constructed with a capitalised name: `Entity(attr=value)`");
                }
                self.runtime(d);
                Inferred::any()
            }
            Err(ResolveError::NotFound { name, namespace, suggestions }) => {
                let module = namespace.split("::").next().unwrap_or_default();
                if module != "__config__" && module != "std" {
                    let d = Diagnostic::new(
                        &codes::UNAVAILABLE_PLUGIN,
                        format!("`{name}` is not defined in module `{module}`: if it is a Python plugin, modelc can not run it"),
                    )
                    .primary(self.file, function.span, "no plugin of this name is available")
                    .note("modelc runs the std plugins, implemented in Rust; plugins written in Python are not supported");
                    self.error(d);
                } else {
                    let error = ResolveError::NotFound { name, namespace, suggestions };
                    let d = self.resolve_error(&error, function.span, "plugin");
                    self.error(d);
                }
                Inferred::any()
            }
            Err(error) => {
                let d = self.resolve_error(&error, function.span, "plugin");
                self.error(d);
                Inferred::any()
            }
        }
    }

    fn check_plugin_arguments(
        &mut self,
        call: &Expr,
        fqn: &str,
        signature: &modelc_stdlib::PluginSignature,
        args: &[Arg],
        inferred: &[Inferred],
    ) {
        use modelc_stdlib::ParamKind;
        let has_splat = args.iter().any(|a| matches!(a, Arg::Splat(_)));
        let positional: Vec<(usize, &Expr)> = args
            .iter()
            .enumerate()
            .filter_map(|(i, a)| if let Arg::Positional(e) = a { Some((i, e)) } else { None })
            .collect();
        let mut problems: Vec<(Span, String)> = Vec::new();
        if let Some(max) = signature.max_positional()
            && positional.len() > max
        {
            problems.push((
                positional[max].1.span,
                format!("{fqn}() takes {max} positional arguments but {} were given", positional.len()),
            ));
        }
        let normal: Vec<&modelc_stdlib::Param> =
            signature.params.iter().filter(|p| p.kind == ParamKind::Normal).collect();
        let mut bound: Vec<&str> = normal.iter().take(positional.len()).map(|p| p.name).collect();
        let accepts_any_keyword = signature.params.iter().any(|p| p.kind == ParamKind::VarKeywords);
        for arg in args {
            let Arg::Keyword(name, _) = arg else { continue };
            let known = signature
                .params
                .iter()
                .any(|p| p.name == name.name && matches!(p.kind, ParamKind::Normal | ParamKind::KeywordOnly));
            if bound.contains(&name.name.as_str()) && known {
                problems.push((name.span, format!("{fqn}() got multiple values for argument '{}'", name.name)));
            } else if !known && !accepts_any_keyword {
                problems.push((name.span, format!("{fqn}() got an unexpected keyword argument: '{}'", name.name)));
            }
            bound.push(&name.name);
        }
        if !has_splat {
            let missing: Vec<&str> = signature.required().map(|p| p.name).filter(|n| !bound.contains(n)).collect();
            if !missing.is_empty() {
                let list: Vec<String> = missing.iter().map(|m| format!("'{m}'")).collect();
                problems.push((
                    call.span,
                    format!("{fqn}() missing {} required argument(s): {}", missing.len(), list.join(", ")),
                ));
            }
        }
        for (span, message) in problems {
            let d = Diagnostic::new(&codes::INVALID_ARGUMENTS, message).primary(self.file, span, "");
            self.runtime(d);
        }
        // Argument types, where both the parameter's and the value's are certain.
        for (i, (position, expr)) in positional.iter().enumerate() {
            let Some(param) = normal.get(i) else { break };
            self.check_argument_type(fqn, param, expr, &inferred[*position]);
        }
        for (arg, ty) in args.iter().zip(inferred) {
            if let Arg::Keyword(name, expr) = arg
                && let Some(param) = normal.iter().find(|p| p.name == name.name)
            {
                self.check_argument_type(fqn, param, expr, ty);
            }
        }
    }

    fn check_argument_type(&mut self, fqn: &str, param: &modelc_stdlib::Param, expr: &Expr, inferred: &Inferred) {
        let Some(actual) = inferred.certain() else { return };
        let fits = match param.ty {
            "any" | "expression" => true,
            "string" => *actual == StaticType::Str,
            "int" => matches!(actual, StaticType::Int | StaticType::Bool),
            "float" => *actual == StaticType::Float,
            "bool" => *actual == StaticType::Bool,
            "list" => *actual == StaticType::List,
            "dict" => *actual == StaticType::Dict,
            "string?" => matches!(actual, StaticType::Str | StaticType::Null),
            "int?" => matches!(actual, StaticType::Int | StaticType::Bool | StaticType::Null),
            "string[]" => *actual == StaticType::List,
            other if other.starts_with("std::") && other.chars().nth(5).is_some_and(char::is_uppercase) => {
                matches!(actual, StaticType::Instance(_))
            }
            _ => true,
        };
        if !fits {
            let d = Diagnostic::new(
                &codes::TYPE_MISMATCH,
                format!("argument `{}` of {fqn}() must be `{}`", param.name, param.ty),
            )
            .primary(self.file, expr.span, format!("this is {}", actual.describe()));
            self.runtime(d);
        }
    }

    fn check_construct(
        &mut self,
        expr: &'a Expr,
        written: &'a modelc_syntax::ast::TypeRef,
        args: &'a [Arg],
        hint: Option<Hint<'a>>,
    ) -> Inferred {
        let entity = self.resolve_constructed(written, hint);
        let Some(entity) = entity else {
            self.check_args(args);
            return Inferred::any();
        };
        if let Some(Hint { attribute: Some(attribute), direct: true }) = hint {
            let expected = match &attribute.kind {
                AttrKind::Relation { target, .. } if target.is_empty() => None,
                AttrKind::Relation { target, .. } => (!self.index.is_subtype(&entity, target)).then(|| target.clone()),
                AttrKind::Value { ty, .. } => Some(ty.to_string()),
            };
            if let Some(expected) = expected {
                let d = Diagnostic::new(
                    &codes::TYPE_MISMATCH,
                    format!("can not assign a value of type `{entity}` to `{}` of type `{expected}`", attribute.name),
                )
                .primary(self.file, written.span, format!("an instance of `{entity}`"));
                self.error(d);
            }
        }
        let mut given: Vec<&str> = Vec::new();
        let mut has_splat = false;
        for arg in args {
            match arg {
                Arg::Keyword(name, value) => {
                    given.push(&name.name);
                    let Some(def) = self.index.attribute(&entity, &name.name) else {
                        if self.index.is_incomplete(&entity) {
                            self.check_expr(value, None);
                            continue;
                        }
                        let d = self.unknown_attribute(&entity, name);
                        self.error(d);
                        self.check_expr(value, None);
                        continue;
                    };
                    // The reference checks the types of nested constructors statically, except
                    // for index attributes, which it evaluates before the instance exists.
                    let in_index = self.index.indexes(&entity).iter().any(|i| i.contains(&name.name));
                    let inferred = self.check_expr(value, Some(Hint { attribute: Some(def), direct: !in_index }));
                    self.check_value_fits(def, value, &inferred);
                }
                Arg::Splat(value) => {
                    has_splat = true;
                    let inferred = self.check_expr(value, None);
                    self.check_splat(value, &inferred);
                    self.check_splat_keys(&entity, value, args);
                }
                Arg::Positional(value) => {
                    // Reported by the parser.
                    self.check_expr(value, None);
                }
            }
        }
        if !has_splat {
            self.check_index_attributes_given(expr, &entity, &given, hint);
        }
        Inferred::definite(StaticType::Instance(entity))
    }

    /// The entity a constructor names. An unqualified name that is not in scope may still name
    /// a subtype of the relation the value is assigned to (spec §4.5).
    fn resolve_constructed(&mut self, written: &modelc_syntax::ast::TypeRef, hint: Option<Hint<'a>>) -> Option<String> {
        let text = written.text();
        let error = match self.scope.resolve_type(self.index, &text) {
            Ok(Resolved { fqn, kind: TypeKind::Entity }) => return Some(fqn),
            Ok(Resolved { fqn, kind }) => {
                let d = Diagnostic::new(
                    &codes::WRONG_KIND_OF_NAME,
                    format!("`{fqn}` is {}, not an entity", kind.describe()),
                )
                .primary(self.file, written.span, "only entities can be constructed");
                self.error(d);
                return None;
            }
            Err(error) => error,
        };
        if written.namespace.is_empty()
            && let Some(Hint { attribute: Some(AttrDef { kind: AttrKind::Relation { target, .. }, .. }), .. }) = hint
        {
            let mut candidates: Vec<&str> = self
                .index
                .subtypes(target)
                .into_iter()
                .filter(|e| e.rsplit("::").next() == Some(text.as_str()))
                .collect();
            candidates.sort_unstable();
            match candidates.as_slice() {
                [one] => return Some((*one).to_owned()),
                [] => {}
                many => {
                    let list: Vec<String> = many.iter().map(|m| format!("`{m}`")).collect();
                    let d = Diagnostic::new(
                        &codes::AMBIGUOUS_TYPE,
                        format!("`{text}` could be any of {}", list.join(", ")),
                    )
                    .primary(self.file, written.span, "ambiguous")
                    .help("qualify the name with its namespace");
                    self.error(d);
                    return None;
                }
            }
        }
        let d = self.resolve_error(&error, written.span, "entity");
        self.error(d);
        None
    }

    /// `**d` where `d` is a constant dict: its keys must be attributes not given explicitly.
    fn check_splat_keys(&mut self, entity: &str, value: &Expr, args: &[Arg]) {
        let here = self.blocks.len().saturating_sub(1);
        let Some(consteval::Const::Dict(entries)) = self.constant_value(value, 0, here) else { return };
        for (key, _) in entries {
            let explicit = args.iter().any(|a| matches!(a, Arg::Keyword(name, _) if name.name == key));
            if explicit {
                let d = Diagnostic::new(
                    &codes::DUPLICATE_KEYWORD_ARGUMENT,
                    format!("attribute `{key}` is set twice in this constructor of `{entity}`"),
                )
                .primary(self.file, value.span, format!("`**` also sets `{key}`"));
                self.runtime(d);
            } else if self.index.attribute(entity, &key).is_none() && !self.index.is_incomplete(entity) {
                let d =
                    Diagnostic::new(&codes::UNKNOWN_ATTRIBUTE, format!("entity `{entity}` has no attribute `{key}`"))
                        .primary(self.file, value.span, format!("`**` sets `{key}`"));
                self.runtime(d);
            }
        }
    }

    /// The constant value of an expression written in block `level`, following variables
    /// assigned exactly once (each resolved from the block it is written in).
    fn constant_value(&self, expr: &Expr, depth: usize, level: usize) -> Option<consteval::Const> {
        if let ExprKind::Var(path) = &expr.kind
            && let [name] = path.segments.as_slice()
        {
            if depth >= INFER_DEPTH {
                return None;
            }
            let (found_at, value) = self.visible_var(&name.name, level)?;
            return self.constant_value(value?, depth + 1, found_at);
        }
        consteval::eval(expr, None)
    }

    /// The variable `name` as seen from block `level`: the block declaring it and its value.
    fn visible_var(&self, name: &str, level: usize) -> Option<(usize, Option<&'a Expr>)> {
        self.blocks.get(..=level)?.iter().enumerate().rev().find_map(|(i, b)| b.vars.get(name).map(|v| (i, v.value)))
    }

    fn check_index_attributes_given(&mut self, expr: &Expr, entity: &str, given: &[&str], hint: Option<Hint<'a>>) {
        let inverse = match hint.and_then(|h| h.attribute).map(|a| &a.kind) {
            Some(AttrKind::Relation { inverse: Some(inverse), .. }) => Some(inverse.as_str()),
            _ => None,
        };
        let mut missing: Vec<String> = Vec::new();
        for index in self.index.indexes(entity) {
            for attribute in index {
                let provided = given.contains(&attribute.as_str())
                    || self.index.has_default(entity, attribute)
                    || inverse == Some(attribute.as_str());
                if !provided && !missing.contains(attribute) {
                    missing.push(attribute.clone());
                }
            }
        }
        // Like the reference: without a left-hand side, or with two or more missing, the
        // constructor can never work. With a left-hand side and one missing, the inverse of the
        // assigned relation may fill it when the statement runs.
        let static_error = hint.is_none() || missing.len() > 1;
        let unknown_target = hint.is_some_and(|h| h.attribute.is_none());
        for attribute in missing {
            let d = Diagnostic::new(
                &codes::MISSING_INDEX_ATTRIBUTE,
                format!("the constructor of `{entity}` does not set `{attribute}`, which is part of an index"),
            )
            .primary(self.file, expr.span, format!("`{attribute}` missing"))
            .help(format!(
                "pass `{attribute}=…`: instances of an indexed entity are identified by their index attributes"
            ));
            if static_error {
                self.error(d);
            } else if !unknown_target {
                self.runtime(d);
            }
        }
    }

    fn check_index_lookup(&mut self, written: &'a modelc_syntax::ast::TypeRef, args: &'a [Arg]) -> Inferred {
        let entity = self.resolve_entity(written);
        self.check_args(args);
        let Some(entity) = entity else { return Inferred::any() };
        if args.iter().any(|a| matches!(a, Arg::Splat(_))) {
            return Inferred::maybe_unknown(StaticType::Instance(entity));
        }
        let mut names: Vec<String> =
            args.iter().filter_map(|a| if let Arg::Keyword(n, _) = a { Some(n.name.clone()) } else { None }).collect();
        names.sort();
        let indexes = self.index.indexes(&entity);
        let declared_invalid = self
            .index
            .ancestry(&entity)
            .iter()
            .flat_map(|d| &d.invalid_indexes)
            .any(|i| i.iter().all(|a| names.contains(a)) && i.len() == names.len());
        if !indexes.contains(&names.as_slice()) && !declared_invalid && !self.index.is_incomplete(&entity) {
            let known: Vec<String> = indexes.iter().map(|i| format!("({})", i.join(", "))).collect();
            let mut d = Diagnostic::new(
                &codes::NO_MATCHING_INDEX,
                format!("no index defined on `{entity}` for a lookup on ({})", names.join(", ")),
            )
            .primary(self.file, written.span, "no index with exactly these attributes");
            d = if known.is_empty() {
                d.help(format!("declare one: `index {}({})`", written.text(), names.join(", ")))
            } else {
                d.note(format!("the indexes of `{entity}` are {}", known.join(", ")))
            };
            self.runtime(d);
        }
        Inferred::maybe_unknown(StaticType::Instance(entity))
    }

    fn check_list_comprehension(
        &mut self,
        element: &'a Expr,
        fors: &'a [modelc_syntax::ast::CompFor],
        guards: &'a [Expr],
        hint: Option<Hint<'a>>,
    ) {
        let mut block = Block::default();
        for (i, comp) in fors.iter().enumerate() {
            let iterable = if i == 0 {
                self.check_expr(&comp.iterable, None)
            } else {
                self.blocks.push(std::mem::take(&mut block));
                let inferred = self.uncertain("a list comprehension body runs once per element", |c| {
                    c.check_expr(&comp.iterable, None)
                });
                block = self.blocks.pop().unwrap_or_default();
                inferred
            };
            if let Some(ty) = iterable.certain()
                && *ty != StaticType::List
            {
                let d = Diagnostic::new(
                    &codes::NOT_ITERABLE,
                    "a list comprehension can only iterate over lists and relations",
                )
                .primary(self.file, comp.iterable.span, format!("this is {}", ty.describe()));
                self.runtime(d);
            }
            block.vars.insert(&comp.var.name, Var { value: None, declared_at: comp.var.span });
        }
        self.warn_shadowing(&block);
        self.blocks.push(block);
        // The first guard runs for every element; the element and later guards only for the
        // elements that pass the guards before them.
        let iteration_runs = fors.iter().all(|f| runs_at_least_once(&f.iterable));
        let reason = "a list comprehension body runs once per element (that passes the guards)";
        let saved = (self.certain, self.uncertain_reason);
        for (i, guard) in guards.iter().enumerate() {
            if self.certain && (!iteration_runs || i > 0) {
                (self.certain, self.uncertain_reason) = (false, reason);
            }
            let inferred = self.check_expr(guard, None);
            if let Some(ty) = inferred.certain()
                && *ty != StaticType::Bool
            {
                let d = Diagnostic::new(
                    &codes::NON_BOOLEAN_CONDITION,
                    "the guard of a list comprehension is not a boolean",
                )
                .primary(self.file, guard.span, format!("this is {}", ty.describe()));
                self.runtime(d);
            }
        }
        if self.certain && (!iteration_runs || !guards.is_empty()) {
            (self.certain, self.uncertain_reason) = (false, reason);
        }
        self.check_expr(element, hint);
        (self.certain, self.uncertain_reason) = saved;
        self.blocks.pop();
    }

    fn check_binary(&mut self, op: BinOp, lhs: &'a Expr, rhs: &'a Expr) -> Inferred {
        let left = self.check_expr(lhs, None);
        if matches!(op, BinOp::And | BinOp::Or) {
            // The right operand is evaluated only when the left does not decide.
            let decides = match consteval::eval(lhs, None) {
                Some(consteval::Const::Bool(b)) => Some(b == (op == BinOp::Or)),
                _ => None,
            };
            let right = if decides == Some(false) {
                self.check_expr(rhs, None)
            } else {
                self.uncertain(
                    "the right operand of `and`/`or` is evaluated only when the left one does not decide",
                    |c| c.check_expr(rhs, None),
                )
            };
            if let Some(ty) = left.certain()
                && *ty != StaticType::Bool
            {
                let d = Diagnostic::new(
                    &codes::INVALID_OPERAND,
                    format!("`{}` expects a boolean left operand", op.symbol()),
                )
                .primary(self.file, lhs.span, format!("this is {}", ty.describe()));
                self.runtime(d);
            } else if let Some(ty) = right.certain()
                && *ty != StaticType::Bool
                && decides != Some(true)
            {
                let d = Diagnostic::new(
                    &codes::INVALID_OPERAND,
                    format!("`{}` expects a boolean right operand", op.symbol()),
                )
                .primary(self.file, rhs.span, format!("this is {}", ty.describe()));
                let certain = self.certain && decides == Some(false);
                if certain {
                    self.error(d)
                } else {
                    self.uncertain("the right operand may not be evaluated", |c| c.runtime(d))
                }
            }
            return Inferred { ty: StaticType::Bool, definite: left.definite && right.definite };
        }
        let right = self.check_expr(rhs, None);
        let definite = left.definite && right.definite;
        let (Some(l), Some(r)) = (left.certain().cloned(), right.certain().cloned()) else {
            return match op {
                BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::In | BinOp::NotIn => {
                    Inferred::maybe_unknown(StaticType::Bool)
                }
                _ => Inferred::any(),
            };
        };
        let problem: Option<String> = match op {
            BinOp::Eq | BinOp::Ne => None,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                (!(l.is_number() && r.is_number())).then(|| "can only compare numbers".to_owned())
            }
            BinOp::In | BinOp::NotIn => (!matches!(r, StaticType::List | StaticType::Dict)).then(|| {
                format!("the right operand of `{}` must be a list or dict, not {}", op.symbol(), r.describe())
            }),
            BinOp::Add if l == StaticType::Str || r == StaticType::Str => (l != r).then(|| {
                let other = if l == StaticType::Str { &r } else { &l };
                format!("can only concatenate a string to a string, not to {}", other.describe())
            }),
            _ => (!(l.is_number() && r.is_number())).then(|| {
                format!("unsupported operand types for `{}`: {} and {}", op.symbol(), l.describe(), r.describe())
            }),
        };
        if let Some(problem) = problem {
            let d = Diagnostic::new(&codes::INVALID_OPERAND, problem.clone()).primary(
                self.file,
                lhs.span.to(rhs.span),
                format!("{} {} {}", l.describe(), op.symbol(), r.describe()),
            );
            self.runtime(d);
            return Inferred::any();
        }
        let ty = match op {
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::In | BinOp::NotIn => {
                StaticType::Bool
            }
            BinOp::Add if l == StaticType::Str => StaticType::Str,
            BinOp::Div => StaticType::Float,
            BinOp::Pow => StaticType::Any,
            _ if l == StaticType::Float || r == StaticType::Float => StaticType::Float,
            _ => StaticType::Int,
        };
        Inferred { ty, definite }
    }
}

/// A list literal with an element that is certainly there after flattening and certainly not
/// unknown (a scalar literal or a constructor): a loop over it runs its body.
fn runs_at_least_once(iterable: &Expr) -> bool {
    let ExprKind::List(items) = &iterable.kind else { return false };
    items.iter().any(|item| match &item.kind {
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Null | ExprKind::Construct { .. } => true,
        ExprKind::Str(s) => !s.has_interpolation(),
        _ => false,
    })
}

/// What reading an attribute gives: the declared type, possibly unknown.
fn attribute_type(def: &AttrDef) -> Inferred {
    match &def.kind {
        AttrKind::Relation { target, bounds, .. } if bounds.is_single() && !target.is_empty() => {
            Inferred::maybe_unknown(StaticType::Instance(target.clone()))
        }
        AttrKind::Relation { bounds, .. } if bounds.is_single() => Inferred::any(),
        AttrKind::Relation { .. } => Inferred::maybe_unknown(StaticType::List),
        AttrKind::Value { ty, .. } => Inferred::maybe_unknown(value_static_type(ty)),
    }
}

fn value_static_type(ty: &ValueType) -> StaticType {
    if ty.list {
        return StaticType::List;
    }
    if ty.nullable {
        return StaticType::Any;
    }
    match &ty.base {
        BaseType::String => StaticType::Str,
        BaseType::Int => StaticType::Int,
        BaseType::Float => StaticType::Float,
        BaseType::Bool => StaticType::Bool,
        BaseType::List => StaticType::List,
        BaseType::Dict => StaticType::Dict,
        _ => StaticType::Any,
    }
}

/// The static type of a plugin's declared return type.
fn static_type_of(ty: &str) -> StaticType {
    match ty {
        "string" => StaticType::Str,
        "int" => StaticType::Int,
        "float" => StaticType::Float,
        "bool" => StaticType::Bool,
        "list" => StaticType::List,
        "dict" => StaticType::Dict,
        "null" => StaticType::Null,
        _ => StaticType::Any,
    }
}

fn describe_cell(def: &AttrDef) -> String {
    match &def.kind {
        AttrKind::Value { ty, .. } => ty.to_string(),
        AttrKind::Relation { target, bounds, .. } => {
            format!("{target} [{}:{}]", bounds.lower, bounds.upper.map_or(String::new(), |u| u.to_string()))
        }
    }
}
