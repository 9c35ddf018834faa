//! Checks of statement blocks: variables and their scopes, attribute access, constructors,
//! index lookups, plugin calls and operators, with the static types of expressions where they
//! are certain (spec §3.5, §4.2, §4.5, §4.8, §4.9).
//!
//! The checks walk the lowered program (`crate::hir`), where lowering has resolved every
//! name once: a variable is a slot of a scope counted out from where it is read, a constructor
//! names its entity, a call its plugin. The walk keeps one scope for each scope lowering
//! counted, holding what the checks need of each variable (its one value, a loop's element
//! entity); names that did not resolve are looked up again only to explain why.

use modelc_diagnostics::{Diagnostic, Span, codes};

use crate::check::{Block, Checker, Scope, Var};
use crate::consteval;
use crate::hir::{
    self, Arg, BinOp, ConstructArg, Expr, ExprKind, FStrPart, Name, Stmt, StrPart, Target, has_interpolation,
};
use crate::index::{AttrDef, AttrKind, TypeKind};
use crate::resolve::{ResolveError, Resolved};
use crate::types::{BaseType, Inferred, StaticType, ValueType};
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
    /// The variables a lowered block declares, in slot order, each with its value when it is
    /// assigned exactly once (`x = …`; lowering's `Target::Local` without `+=`).
    pub(crate) fn declare_block(&self, block: &'a hir::Block) -> Block<'a> {
        let mut vars: Block<'a> = block
            .locals
            .iter()
            .map(|local| (local.text.as_str(), Var { value: None, declared_at: local.span, element: None }))
            .collect();
        let mut assignments = vec![0u32; vars.len()];
        for stmt in &block.stmts {
            if let Stmt::Assign(assign) = stmt
                && let Target::Local { slot, .. } = assign.target
                && !assign.extend
                && let Some((_, var)) = vars.get_index_mut(slot as usize)
            {
                assignments[slot as usize] += 1;
                // Assigned more than once: the value is not known statically.
                var.value = (assignments[slot as usize] == 1).then_some(&assign.value);
            }
        }
        vars
    }

    /// Checks a block; `loop_var` is a `for` loop's variable (its slot and where it is
    /// written), with the entity of its elements when the loop is over a relation.
    pub(super) fn check_block(&mut self, block: &'a hir::Block, loop_var: Option<(u32, Span, Option<&'a str>)>) {
        let mut vars = self.declare_block(block);
        if let Some((slot, declared_at, element)) = loop_var
            && let Some((_, var)) = vars.get_index_mut(slot as usize)
        {
            *var = Var { value: None, declared_at, element };
        }
        self.warn_shadowing(&vars);
        self.scopes.push(Scope::Block(vars));
        for stmt in &block.stmts {
            self.check_stmt(stmt);
        }
        if let Some(Scope::Block(vars)) = self.scopes.pop() {
            self.closed_vars.extend(vars.iter().map(|(name, var)| (*name, var.declared_at)));
        }
    }

    /// The innermost scope, where the code being checked is (constants are evaluated from it).
    pub(super) fn here(&self) -> usize {
        self.scopes.len().saturating_sub(1)
    }

    /// The entity of the innermost instance scope (`self`), when there is one and it resolved.
    pub(crate) fn instance(&self) -> Option<&str> {
        self.scopes.iter().rev().find_map(|scope| match scope {
            Scope::Instance(entity) => Some(entity.as_deref()),
            Scope::Block(_) => None,
        })?
    }

    /// A variable of a nested block with the name of one in an enclosing block is a new
    /// variable: assigning it does not change the outer one, which surprises.
    pub(super) fn warn_shadowing(&mut self, block: &Block<'a>) {
        // An implementation body starts a new scope chain (instance, then the file's top
        // level): its own blocks are compared, its body block with nothing.
        let after_instance = self.scopes.iter().rposition(|s| matches!(s, Scope::Instance(_))).map(|i| i + 1);
        let enclosing = &self.scopes[after_instance.unwrap_or(0)..];
        let mut found: Vec<(Span, Span, &str)> = Vec::new();
        for (name, var) in block {
            let outer = enclosing.iter().rev().find_map(|scope| match scope {
                Scope::Block(vars) => vars.get(name),
                Scope::Instance(_) => None,
            });
            if let Some(outer) = outer {
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

    pub(crate) fn check_implementation_body(&mut self, implementation: &'a hir::ImplementationHir) {
        // An unknown entity is reported; the names of the body are still checked.
        let entity = implementation.entity.map(|e| self.hir.entity_name(e).to_owned());
        self.with_instance(entity, IMPLEMENTATION_RUNS, |c| c.check_block(&implementation.body, None));
    }

    pub(crate) fn check_implement_condition(&mut self, implement: &'a hir::ImplementHir, condition: &'a Expr) {
        let entity = implement.entity.map(|e| self.hir.entity_name(e).to_owned());
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
        self.scopes.push(Scope::Instance(entity));
        self.uncertain(reason, f);
        self.scopes.pop();
    }

    /// A typedef constraint: a scope of its own whose only variable is `self`, as lowering
    /// lowered it.
    pub(crate) fn check_typedef_constraint(&mut self, constraint: &'a Expr) {
        let own: Block<'a> =
            [("self", Var { value: None, declared_at: constraint.span, element: None })].into_iter().collect();
        let outer = std::mem::replace(&mut self.scopes, vec![Scope::Block(own)]);
        self.in_typedef = true;
        self.uncertain("a typedef constraint runs only when a value of the type is checked", |c| {
            c.check_expr(constraint, None);
        });
        self.in_typedef = false;
        self.scopes = outer;
    }

    pub(crate) fn check_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Assign(assign) => self.check_assign(&assign.target, assign.extend, &assign.value),
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
                let loop_var = Some((for_.var, for_.var_span, element));
                if runs_at_least_once(&for_.iterable) {
                    self.check_block(&for_.body, loop_var);
                } else {
                    self.uncertain("the body of a for loop runs only for the elements there are", |c| {
                        c.check_block(&for_.body, loop_var);
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
                let here = self.here();
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
        }
    }

    pub(super) fn check_assign(&mut self, target: &'a Target, extend: bool, value: &'a Expr) {
        match target {
            Target::Qualified { written, span } => {
                let d = Diagnostic::new(
                    &codes::ASSIGN_TO_QUALIFIED_NAME,
                    format!("can not assign to `{written}`: only variables of this file can be assigned"),
                )
                .primary(self.file, *span, "a variable of another namespace");
                self.runtime(d);
                self.check_expr(value, None);
            }
            Target::Attribute { object, attr, span } => {
                let object_type = self.check_expr(object, None);
                let attribute = self.attribute_of(&object_type, attr, false);
                if let Some(def) = attribute
                    && extend
                    && def.is_single_valued()
                {
                    let d = Diagnostic::new(
                        &codes::EXTEND_SINGLE_VALUED,
                        format!("can not use += on `{}`: it holds a single value", attr.text),
                    )
                    .primary(self.file, *span, format!("`{}` is `{}`", attr.text, describe_cell(def)))
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
            Target::Local { .. } | Target::Undefined { .. } | Target::Other => {
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
    pub(super) fn attribute_of(&mut self, object: &Inferred, attr: &Name, through_self: bool) -> Option<&'a AttrDef> {
        let index = &self.index;
        match &object.ty {
            StaticType::Instance(entity) => {
                if let Some(def) = index.attribute(entity, &attr.text) {
                    return Some(def);
                }
                let family = index.family_attribute(entity, &attr.text);
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
                let suggestions = self.close_attribute_names(entity, &attr.text);
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
                    format!("can not get attribute `{}` of {}: it is not an entity", attr.text, ty.describe()),
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
    fn attribute_of_some_subtypes(&self, entity: &str, attr: &Name, having: &[String]) -> Diagnostic {
        let shown: Vec<String> = having.iter().take(3).map(|e| format!("`{e}`")).collect();
        let more = if having.len() > 3 { format!(" and {} more", having.len() - 3) } else { String::new() };
        Diagnostic::new(
            &codes::ATTRIBUTE_OF_SOME_SUBTYPES,
            format!("entity `{entity}` has no attribute `{}`: only some of its subtypes do", attr.text),
        )
        .primary(self.file, attr.span, format!("found for instances of {}{more} only", shown.join(", ")))
        .note(format!("reading it fails for an instance of `{entity}` itself, or of a subtype without it"))
        .help("declare the attribute on the entity, or read it through a value of the subtype")
    }

    /// "entity E has no attribute x", with a suggestion among E's attributes. When an import of
    /// this file failed and nothing is close to `x`, it is a follow-on, dropped: any module can
    /// add a relation to any entity (mitogen adds `std::Host.via`), so the missing module may
    /// well declare it.
    pub(crate) fn unknown_attribute(&mut self, entity: &str, attr: &Name) -> Diagnostic {
        let suggestions = self.close_attribute_names(entity, &attr.text);
        self.unknown_attribute_suggesting(entity, attr, suggestions)
    }

    /// [`Checker::unknown_attribute`] with the close names already found.
    fn unknown_attribute_suggesting(&mut self, entity: &str, attr: &Name, suggestions: Vec<String>) -> Diagnostic {
        if suggestions.is_empty() && !self.failed_imports.is_empty() {
            self.follow_ons.push(attr.span);
        }
        let d =
            Diagnostic::new(&codes::UNKNOWN_ATTRIBUTE, format!("entity `{entity}` has no attribute `{}`", attr.text))
                .primary(self.file, attr.span, "no such attribute");
        crate::suggest::suggest(d, self.file, attr.span, &suggestions)
    }

    /// A value assigned to an attribute: constants must fit its type.
    pub(super) fn check_value_fits(&mut self, def: &AttrDef, value: &Expr, inferred: &Inferred, setting: Setting) {
        match &def.kind {
            AttrKind::Value { ty, .. } => {
                let here = self.here();
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
        ExprKind::Int(_)
        | ExprKind::IntOutOfRange
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Null
        | ExprKind::Construct { .. }
        | ExprKind::UnknownEntity { constructor: true, .. } => true,
        ExprKind::Str(parts) => !has_interpolation(parts),
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
    matches!(
        &expr.kind,
        ExprKind::Str(_) | ExprKind::Int(_) | ExprKind::IntOutOfRange | ExprKind::Float(_) | ExprKind::Bool(_)
    )
}
