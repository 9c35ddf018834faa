//! Checks of statement blocks: variables and their scopes, attribute access, constructors,
//! index lookups, plugin calls and operators, with the static types of expressions where they
//! are certain (spec §3.5, §4.2, §4.5, §4.8, §4.9).

use modelc_diagnostics::{Diagnostic, Span, codes};
use modelc_syntax::ast::{
    Arg, AssignOp, BinOp, Constraint, Expr, ExprKind, FStrField, FStrPart, Ident, Implement, Implementation, Path,
    Stmt, StrPart, Typedef,
};

use crate::check::{Block, Checker, Var};
use crate::consteval;
use crate::index::{AttrDef, AttrKind, TypeKind};
use crate::resolve::{ResolveError, Resolved};
use crate::types::{BaseType, CASTS, Inferred, StaticType, ValueType};
use crate::validate::Misfit;

mod calls;
mod construct;
mod expr;
mod names;
mod shell;

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
        for (name, assign) in stmts.filter_map(Stmt::declared_variable) {
            block
                .vars
                .entry(&name.name)
                // Assigned more than once: the value is not known statically.
                .and_modify(|v| v.value = None)
                .or_insert(Var { value: Some(&assign.value), declared_at: name.span, element: None });
        }
        block
    }

    /// Checks a block; `loop_var` is a `for` loop's variable, with the entity of its elements
    /// when the loop is over a relation.
    pub(super) fn check_block(&mut self, stmts: &'a [Stmt], loop_var: Option<(&'a Ident, Option<&'a str>)>) {
        let mut block = self.declare_block(stmts.iter());
        if let Some((var, element)) = loop_var {
            block.vars.insert(&var.name, Var { value: None, declared_at: var.span, element });
        }
        self.warn_shadowing(&block);
        self.blocks.push(block);
        for stmt in stmts {
            self.check_stmt(stmt);
        }
        if let Some(block) = self.blocks.pop() {
            self.closed_vars.extend(block.vars.iter().map(|(name, var)| (*name, var.declared_at)));
        }
    }

    /// A variable of a nested block with the name of one in an enclosing block is a new
    /// variable: assigning it does not change the outer one, which surprises.
    pub(super) fn warn_shadowing(&mut self, block: &Block<'a>) {
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
            self.scope.resolve_type(&self.index, &implementation.entity.text())
        else {
            // The entity is unknown (reported); still resolve the names of the body.
            self.with_instance(None, IMPLEMENTATION_RUNS, |c| c.check_block(&implementation.body, None));
            return;
        };
        self.with_instance(Some(fqn), IMPLEMENTATION_RUNS, |c| c.check_block(&implementation.body, None));
    }

    pub(crate) fn check_implement_condition(&mut self, implement: &'a Implement) {
        let Some(condition) = &implement.condition else { return };
        let entity = match self.scope.resolve_type(&self.index, &implement.entity.text()) {
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

    pub(super) fn with_instance(&mut self, entity: Option<String>, reason: &'static str, f: impl FnOnce(&mut Self)) {
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
                // Over a relation (`for h in self.hosts`): the elements are instances of its target.
                let element = match self.last_chain.take() {
                    Some((chain, AttrDef { kind: AttrKind::Relation { target, .. }, .. }))
                        if std::ptr::eq(chain, &for_.iterable) && !target.is_empty() =>
                    {
                        Some(target.as_str())
                    }
                    _ => None,
                };
                if let Some(ty) = iterable.certain()
                    && !matches!(ty, StaticType::List)
                {
                    let d =
                        Diagnostic::new(&codes::NOT_ITERABLE, "a for loop can only iterate over lists and relations")
                            .primary(self.file, for_.iterable.span, format!("this is {}", ty.describe()));
                    self.runtime(d);
                }
                if runs_at_least_once(&for_.iterable) {
                    self.check_block(&for_.body, Some((&for_.var, element)));
                } else {
                    self.uncertain("the body of a for loop runs only for the elements there are", |c| {
                        c.check_block(&for_.body, Some((&for_.var, element)));
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
                // The branch that certainly runs, when the conditions are constants.
                let here = self.blocks.len().saturating_sub(1);
                let mut taken = Some(if_.branches.len());
                for (i, (condition, _)) in if_.branches.iter().enumerate() {
                    match self.constant_value(condition, 0, here) {
                        Some(modelc_value::Value::Bool(false)) => {}
                        Some(modelc_value::Value::Bool(true)) => {
                            taken = Some(i);
                            break;
                        }
                        _ => {
                            taken = None;
                            break;
                        }
                    }
                }
                let bodies = if_.branches.iter().map(|(_, body)| body).chain(if_.else_body.as_ref());
                for (i, body) in bodies.enumerate() {
                    if taken == Some(i) {
                        self.check_block(body, None);
                    } else {
                        self.uncertain("an if branch runs only when its condition holds", |c| {
                            c.check_block(body, None);
                        });
                    }
                }
            }
            Stmt::Expr(expr) => {
                self.check_expr(expr, None);
            }
            Stmt::Error(_) => {}
        }
    }

    pub(super) fn check_assign(&mut self, target: &'a Expr, op: AssignOp, value: &'a Expr) {
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
                let attribute = self.attribute_of(&object_type, attr, false);
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
                    self.check_value_fits(def, value, &inferred, Setting::MaybeAgain);
                }
            }
            _ => {
                self.check_expr(value, None);
            }
        }
    }

    /// The attribute `attr` of a value whose entity is known: `self` in an implementation (an
    /// instance of the entity or of any subtype), a loop variable over a relation, a variable
    /// assigned a constructor, a relation followed from them.
    ///
    /// When neither the entity nor any loaded subtype has it:
    /// * a close name exists: a misspelling, an error wherever it is written (it can never
    ///   succeed; the reference fails only when the statement runs), with the did-you-mean;
    /// * read through `self` of a module's entity: nothing, since a subtype in a module this
    ///   compile does not load may declare it (files' `SerializableEntity` reads `self.parent`,
    ///   which its subtypes in other modules declare); of an entity of the main file, which no
    ///   module can extend, an error;
    /// * otherwise reported as the reference reports it, when the statement runs.
    ///
    /// When only some subtypes have it: W0203 in the code of the modules the check started from
    /// (reading a subtype's attribute guarded by a test of the instance is an idiom of real
    /// modules, so it is not reported in the modules a project depends on).
    pub(super) fn attribute_of(&mut self, object: &Inferred, attr: &Ident, through_self: bool) -> Option<&'a AttrDef> {
        let index = &self.index;
        match &object.ty {
            StaticType::Instance(entity) => {
                if let Some(def) = index.attribute(entity, &attr.name) {
                    return Some(def);
                }
                let family = index.family_attribute(entity, &attr.name);
                if family.incomplete {
                    return None;
                }
                if !family.having.is_empty() {
                    if index.is_root_module(self.scope.namespace) {
                        let d = self.attribute_of_some_subtypes(entity, attr, &family.having);
                        self.diagnostics.push(d);
                    }
                    return None;
                }
                let suggestions = self.close_attribute_names(entity, &attr.name);
                let misspelt = !suggestions.is_empty();
                let closed_world = entity.starts_with("__config__::");
                let d = self.unknown_attribute_suggesting(entity, attr, suggestions);
                if misspelt || (through_self && closed_world) {
                    self.error(d);
                } else if !through_self {
                    self.runtime(d);
                }
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

    /// The attributes of `entity` whose names are close to `name`, closest first.
    fn close_attribute_names(&self, entity: &str, name: &str) -> Vec<String> {
        crate::suggest::similar(name, self.index.attribute_names(entity))
    }

    /// "entity E has no attribute x; only its subtypes S do": a warning.
    fn attribute_of_some_subtypes(&self, entity: &str, attr: &Ident, having: &[String]) -> Diagnostic {
        let shown: Vec<String> = having.iter().take(3).map(|e| format!("`{e}`")).collect();
        let more = if having.len() > 3 { format!(" and {} more", having.len() - 3) } else { String::new() };
        Diagnostic::new(
            &codes::ATTRIBUTE_OF_SOME_SUBTYPES,
            format!("entity `{entity}` has no attribute `{}`: only some of its subtypes do", attr.name),
        )
        .primary(self.file, attr.span, format!("found for instances of {}{more} only", shown.join(", ")))
        .note(format!("reading it fails for an instance of `{entity}` itself, or of a subtype without it"))
        .help("declare the attribute on the entity, or read it through a value of the subtype")
    }

    /// "entity E has no attribute x", with a suggestion among E's attributes. When an import of
    /// this file failed and nothing is close to `x`, it is a follow-on, dropped: any module can
    /// add a relation to any entity (mitogen adds `std::Host.via`), so the missing module may
    /// well declare it.
    pub(crate) fn unknown_attribute(&mut self, entity: &str, attr: &Ident) -> Diagnostic {
        let suggestions = self.close_attribute_names(entity, &attr.name);
        self.unknown_attribute_suggesting(entity, attr, suggestions)
    }

    /// [`Checker::unknown_attribute`] with the close names already found.
    fn unknown_attribute_suggesting(&mut self, entity: &str, attr: &Ident, suggestions: Vec<String>) -> Diagnostic {
        if suggestions.is_empty() && !self.failed_imports.is_empty() {
            self.follow_ons.push(attr.span);
        }
        let d =
            Diagnostic::new(&codes::UNKNOWN_ATTRIBUTE, format!("entity `{entity}` has no attribute `{}`", attr.name))
                .primary(self.file, attr.span, "no such attribute");
        crate::suggest::suggest(d, self.file, attr.span, &suggestions)
    }

    /// A value assigned to an attribute: constants must fit its type.
    pub(super) fn check_value_fits(&mut self, def: &AttrDef, value: &Expr, inferred: &Inferred, setting: Setting) {
        match &def.kind {
            AttrKind::Value { ty, .. } => {
                let here = self.blocks.len().saturating_sub(1);
                let Some(constant) = self.constant_value(value, 0, here) else {
                    // `c ? a : b` with a condition known only at run time: each branch that is
                    // a constant must fit, if it is the one chosen.
                    if let ExprKind::Conditional { then, otherwise, .. } = &value.kind {
                        self.uncertain("a conditional expression's branch is chosen by its condition", |c| {
                            c.check_value_fits(def, then, inferred, setting);
                            c.check_value_fits(def, otherwise, inferred, setting);
                        });
                    }
                    return;
                };
                match consteval::validate(&self.index, ty, &constant) {
                    Ok(()) => {}
                    // A number set again after an equal one is a no-op whatever its type
                    // (`1.0` after `1`): whether this is the first value is known at run time.
                    Err(Misfit::Invalid(_))
                        if setting == Setting::MaybeAgain
                            && matches!(
                                constant,
                                modelc_value::Value::Int(_)
                                    | modelc_value::Value::Float(_)
                                    | modelc_value::Value::Bool(_)
                            ) => {}
                    Err(Misfit::Invalid(_)) => {
                        let shown = consteval::repr(&constant);
                        let mismatch =
                            crate::type_mismatch::type_mismatch(&self.index, &def.name, ty, &constant, &shown);
                        let mut d = Diagnostic::new(&codes::TYPE_MISMATCH, mismatch.message).primary(
                            self.file,
                            value.span,
                            mismatch.label,
                        );
                        if let Some(conversion) = mismatch.conversion {
                            d = d.help(conversion.help);
                            // The fix rewrites a literal; a computed value is only explained.
                            if is_literal(value) {
                                let applicability = modelc_diagnostics::Applicability::MaybeIncorrect;
                                d = d.replace(self.file, value.span, conversion.replacement, applicability);
                            }
                        }
                        self.runtime(d);
                    }
                    Err(Misfit::Violated { typedef, value: shown, .. })
                        if let Some(kind) = modelc_ir::meta_params::Kind::of_typedef(&typedef) =>
                    {
                        let problem = kind.explain(&shown);
                        let d = Diagnostic::new(&codes::INVALID_META_PARAMETER, problem.message)
                            .primary(self.file, value.span, problem.label)
                            .help(problem.help);
                        self.runtime(d);
                    }
                    Err(Misfit::Failed(never)) => match never {},
                    Err(Misfit::Violated { message, .. }) => {
                        let d = Diagnostic::new(
                            &codes::CONSTRAINT_VIOLATION,
                            format!("{} violates the constraint of `{ty}`", consteval::repr(&constant)),
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

/// Whether an attribute assignment is the instance's first value for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Setting {
    /// In a constructor: the first value.
    First,
    /// A statement `x.a = v`: an equal value may have been set before.
    MaybeAgain,
}

/// A literal written in the source (a fix can replace it with another literal).
fn is_literal(expr: &Expr) -> bool {
    matches!(&expr.kind, ExprKind::Str(_) | ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_))
}
