//! Expressions: their static types where certain, attribute references, f-strings, list
//! comprehensions and operators.

use modelc_value::ops::{self, Kind, Op};

use super::*;

impl<'a> Checker<'a> {
    /// Checks an expression and returns what is known of its value.
    pub(crate) fn check_expr(&mut self, expr: &'a Expr, hint: Option<Hint<'a>>) -> Inferred {
        modelc_syntax::stack::deep(|| self.check_expr_level(expr, hint))
    }

    /// `a.b.c…`, link by link from the root outwards: a chain is long, not deep, and a
    /// recursive walk of it took a stack frame per link (640,000 links: 0.9 GB).
    fn check_attribute_chain(&mut self, expr: &'a Expr) -> Inferred {
        let mut links: Vec<&'a Name> = Vec::new();
        let mut root = expr;
        while let ExprKind::Attr { object, attr } = &root.kind {
            links.push(attr);
            root = object;
        }
        links.reverse();
        let mut inferred = self.check_expr(root, None);
        let mut last = None;
        for (n, attr) in links.into_iter().enumerate() {
            let through_self = n == 0 && self.is_self(root);
            last = self.attribute_of(&inferred, attr, through_self);
            inferred = last.map_or_else(Inferred::any, attribute_type);
        }
        self.last_chain = last.map(|def| (expr, def));
        inferred
    }

    fn check_expr_level(&mut self, expr: &'a Expr, hint: Option<Hint<'a>>) -> Inferred {
        match &expr.kind {
            ExprKind::Int(_) | ExprKind::IntOutOfRange => Inferred::definite(StaticType::Int),
            ExprKind::Float(_) => Inferred::definite(StaticType::Float),
            ExprKind::Bool(_) => Inferred::definite(StaticType::Bool),
            ExprKind::Null => Inferred::definite(StaticType::Null),
            ExprKind::Str(parts) => {
                let mut definite = true;
                for part in parts {
                    if let StrPart::Interpolation(chain) = part {
                        definite = false;
                        self.check_reference_chain(chain);
                    }
                }
                Inferred { ty: StaticType::Str, definite }
            }
            ExprKind::FStr(parts) => {
                self.check_fstring_parts(parts);
                Inferred::maybe_unknown(StaticType::Str)
            }
            ExprKind::Regex { subject, .. } => {
                // A bare regex means "self matches"; it needs `self`.
                if matches!(subject, hir::Var::Undefined(_)) {
                    let d = Diagnostic::new(&codes::UNDEFINED_VARIABLE, "a regex used as a value needs `self`")
                        .primary(
                            self.file,
                            expr.span,
                            "`matching /…/` tests `self`, which only exists in implementations",
                        );
                    self.runtime(d);
                }
                Inferred::maybe_unknown(StaticType::Bool)
            }
            ExprKind::Var(var) => self.check_var(var, expr.span, 0),
            ExprKind::Attr { .. } => self.check_attribute_chain(expr),
            ExprKind::Call { callee, written, function_span, args } => {
                self.check_call(expr, *callee, written, *function_span, args)
            }
            ExprKind::Construct { entity, entity_span, args } => {
                self.check_construct(expr, self.hir.entity_name(*entity), *entity_span, args, hint)
            }
            ExprKind::IndexLookup { entity, entity_span, args } => {
                self.check_index_lookup(self.hir.entity_name(*entity), *entity_span, args)
            }
            ExprKind::UnknownEntity { written, entity_span, constructor, candidates, args } => {
                self.check_unknown_entity(written, *entity_span, *constructor, candidates);
                self.check_args(args);
                Inferred::any()
            }
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
                for (_, value) in entries {
                    self.check_expr(value, None);
                }
                Inferred::definite(StaticType::Dict)
            }
            ExprKind::Binary { op, lhs, rhs } => self.check_binary(expr, *op, lhs, rhs),
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

    /// Whether `expr` is `self` inside an implementation of a known entity.
    pub(super) fn is_self(&self, expr: &Expr) -> bool {
        self.instance().is_some() && matches!(&expr.kind, ExprKind::Var(hir::Var::SelfInstance { .. }))
    }

    /// `{{ a.b.c }}`: a variable and attribute reads.
    pub(super) fn check_reference_chain(&mut self, chain: &'a hir::Chain) {
        let mut current = self.check_var(&chain.root, chain.root_span, 0);
        let from_self = matches!(chain.root, hir::Var::SelfInstance { .. }) && self.instance().is_some();
        for (n, attr) in chain.attrs.iter().enumerate() {
            current = match self.attribute_of(&current, attr, n == 0 && from_self) {
                Some(def) => attribute_type(def),
                None => Inferred::any(),
            };
        }
    }

    pub(super) fn check_fstring_parts(&mut self, parts: &'a [FStrPart]) {
        for part in parts {
            if let FStrPart::Field(field) = part {
                if let Some(chain) = &field.chain {
                    let root_is_name = match &chain.root {
                        hir::Var::Undefined(written) => is_name(written),
                        _ => true,
                    };
                    if root_is_name && chain.attrs.iter().all(|attr| is_name(&attr.text)) {
                        self.check_reference_chain(chain);
                    } else {
                        self.report_fstring_field(chain);
                    }
                }
                self.check_fstring_parts(&field.spec);
            }
        }
    }

    /// An f-string field that is not a name chain (`{a[0]}`, `{x.upper()}`): like the reference,
    /// a name that is not found, with what a field may hold.
    fn report_fstring_field(&mut self, chain: &hir::Chain) {
        let root = match &chain.root {
            hir::Var::Undefined(written) => written.as_str(),
            _ => self.text.get(chain.root_span.range()).unwrap_or_default(),
        };
        let written: Vec<&str> = std::iter::once(root).chain(chain.attrs.iter().map(|a| a.text.as_str())).collect();
        let end = chain.attrs.last().map_or(chain.root_span.end, |a| a.span.end);
        let span = modelc_diagnostics::Span { start: chain.root_span.start, end };
        let d = Diagnostic::new(&codes::UNDEFINED_VARIABLE, format!("variable `{}` not found", written.join(".")))
            .primary(self.file, span, "an f-string field holds a name or a dotted chain of names, nothing else")
            .help(
                "a field is `{name}` or `{a.b.c}`, then optionally `!r`, `!s` or `!a`, then optionally `:` and a \
                 format spec (`{port:>5}`); an index, a call or an operator is not evaluated: assign the value to a \
                 variable first",
            );
        self.runtime(d);
    }

    pub(super) fn check_list_comprehension(
        &mut self,
        element: &'a Expr,
        fors: &'a [hir::CompFor],
        guards: &'a [Expr],
        hint: Option<Hint<'a>>,
    ) {
        // Each `for` clause's variable is a scope of its own, as lowering counts them.
        let depth = self.scopes.len();
        let mut all = Block::default();
        for (i, comp) in fors.iter().enumerate() {
            let iterable = if i == 0 {
                self.check_expr(&comp.iterable, None)
            } else {
                self.uncertain("a list comprehension body runs once per element", |c| {
                    c.check_expr(&comp.iterable, None)
                })
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
            let var = Var { value: None, declared_at: comp.var.span, element: None };
            all.entry(comp.var.text.as_str()).or_insert(var);
            self.scopes.push(Scope::Block([(comp.var.text.as_str(), var)].into_iter().collect()));
        }
        let own = self.scopes.split_off(depth);
        self.warn_shadowing(&all);
        self.scopes.extend(own);
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
        self.scopes.truncate(depth);
    }

    pub(super) fn check_binary(&mut self, expr: &'a Expr, op: BinOp, lhs: &'a Expr, rhs: &'a Expr) -> Inferred {
        let left = self.check_expr(lhs, None);
        if matches!(op, BinOp::And | BinOp::Or) {
            // The constant value of the left operand: an `and`/`or` left operand was just
            // checked and left its value behind, so a chain `a or b or …` is evaluated once.
            let left_value = match self.logic_value.take() {
                Some((checked, value)) if std::ptr::eq(checked, lhs) => value,
                _ => match consteval::eval_alone(lhs) {
                    Some(modelc_value::Value::Bool(b)) => Some(b),
                    _ => None,
                },
            };
            // The right operand is evaluated only when the left does not decide.
            let decides = left_value.map(|b| b == (op == BinOp::Or));
            let value = match decides {
                Some(true) => left_value,
                Some(false) => match consteval::eval_alone(rhs) {
                    Some(modelc_value::Value::Bool(b)) => Some(b),
                    _ => None,
                },
                None => None,
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
            self.logic_value = Some((expr, value));
            return Inferred { ty: StaticType::Bool, definite: left.definite && right.definite };
        }
        let right = self.check_expr(rhs, None);
        let definite = left.definite && right.definite;
        let (Some(l), Some(r)) = (left.certain().cloned(), right.certain().cloned()) else {
            return match op {
                BinOp::Value(Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge | Op::In | Op::NotIn) => {
                    Inferred::maybe_unknown(StaticType::Bool)
                }
                _ => Inferred::any(),
            };
        };
        // The same typing table execution follows (`modelc_value::ops`).
        let (BinOp::Value(op_kind), Some(lk), Some(rk)) = (op, kind(&l), kind(&r)) else {
            return Inferred::any();
        };
        let ty = match ops::typing(op_kind, lk, rk) {
            Ok(Some(result)) => static_type(result),
            Ok(None) => StaticType::Any,
            Err(problem) => {
                let d = Diagnostic::new(&codes::INVALID_OPERAND, problem).primary(
                    self.file,
                    lhs.span.to(rhs.span),
                    format!("{} {} {}", l.describe(), op_kind.symbol(), r.describe()),
                );
                self.runtime(d);
                return Inferred::any();
            }
        };
        Inferred { ty, definite }
    }
}

/// The operator kind of a static type; `None` when it is not known.
fn kind(ty: &StaticType) -> Option<Kind> {
    Some(match ty {
        StaticType::Null => Kind::Null,
        StaticType::Bool => Kind::Bool,
        StaticType::Int => Kind::Int,
        StaticType::Float => Kind::Float,
        StaticType::Str => Kind::Str,
        StaticType::List => Kind::List,
        StaticType::Dict => Kind::Dict,
        StaticType::Instance(_) => Kind::Instance,
        StaticType::Any => return None,
    })
}

fn static_type(kind: Kind) -> StaticType {
    match kind {
        Kind::Null => StaticType::Null,
        Kind::Bool => StaticType::Bool,
        Kind::Int => StaticType::Int,
        Kind::Float => StaticType::Float,
        Kind::Str => StaticType::Str,
        Kind::List => StaticType::List,
        Kind::Dict => StaticType::Dict,
        Kind::Instance => StaticType::Any,
    }
}

/// Whether `text` is a name the language could have written (letters, digits, `_` and `-`, not
/// starting with a digit).
fn is_name(text: &str) -> bool {
    text.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
}
