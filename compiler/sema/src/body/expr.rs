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
        let (root, links) = expr.attribute_links();
        let mut inferred = self.check_expr(root, None);
        let mut last = None;
        for (n, modelc_syntax::ast::AttrLink { attr, .. }) in links.into_iter().enumerate() {
            let through_self = n == 0 && self.is_self(root);
            last = self.attribute_of(&inferred, attr, through_self);
            inferred = last.map_or_else(Inferred::any, attribute_type);
        }
        self.last_chain = last.map(|def| (expr, def));
        inferred
    }

    fn check_expr_level(&mut self, expr: &'a Expr, hint: Option<Hint<'a>>) -> Inferred {
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
            ExprKind::Attr { .. } => self.check_attribute_chain(expr),
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

    /// Whether `expr` is `self` inside an implementation.
    pub(super) fn is_self(&self, expr: &Expr) -> bool {
        self.instance.is_some()
            && matches!(&expr.kind, ExprKind::Var(path) if path.segments.len() == 1 && path.segments[0].name == "self")
    }

    /// `{{ a.b.c }}`: a variable and attribute reads.
    pub(super) fn check_reference_chain(&mut self, path: &'a [Ident]) {
        let Some((first, rest)) = path.split_first() else { return };
        let span = first.span;
        let var = Path { segments: vec![first.clone()], span };
        let mut current = self.check_var_named(&var, 0);
        let from_self = first.name == "self" && self.instance.is_some();
        for (n, attr) in rest.iter().enumerate() {
            current = match self.attribute_of(&current, attr, n == 0 && from_self) {
                Some(def) => attribute_type(def),
                None => Inferred::any(),
            };
        }
    }

    pub(super) fn check_fstring_parts(&mut self, parts: &'a [FStrPart]) {
        for part in parts {
            if let FStrPart::Field(field) = part {
                if field.path.iter().all(|segment| is_name(&segment.name)) {
                    self.check_reference_chain(&field.path);
                } else {
                    self.report_fstring_field(field);
                }
                self.check_fstring_parts(&field.spec);
            }
        }
    }

    /// An f-string field that is not a name chain (`{a[0]}`, `{x.upper()}`): like the reference,
    /// a name that is not found, with what a field may hold.
    fn report_fstring_field(&mut self, field: &FStrField) {
        let (Some(first), Some(last)) = (field.path.first(), field.path.last()) else { return };
        let written: Vec<&str> = field.path.iter().map(|segment| segment.name.as_str()).collect();
        let span = modelc_diagnostics::Span { start: first.span.start, end: last.span.end };
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
            block.vars.insert(&comp.var.name, Var { value: None, declared_at: comp.var.span, element: None });
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

    pub(super) fn check_binary(&mut self, expr: &'a Expr, op: BinOp, lhs: &'a Expr, rhs: &'a Expr) -> Inferred {
        let left = self.check_expr(lhs, None);
        if matches!(op, BinOp::And | BinOp::Or) {
            // The constant value of the left operand: an `and`/`or` left operand was just
            // checked and left its value behind, so a chain `a or b or …` is evaluated once.
            let left_value = match self.logic_value.take() {
                Some((checked, value)) if std::ptr::eq(checked, lhs) => value,
                _ => match consteval::eval(lhs, None) {
                    Some(modelc_value::Value::Bool(b)) => Some(b),
                    _ => None,
                },
            };
            // The right operand is evaluated only when the left does not decide.
            let decides = left_value.map(|b| b == (op == BinOp::Or));
            let value = match decides {
                Some(true) => left_value,
                Some(false) => match consteval::eval(rhs, None) {
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
                BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::In | BinOp::NotIn => {
                    Inferred::maybe_unknown(StaticType::Bool)
                }
                _ => Inferred::any(),
            };
        };
        // The same typing table execution follows (`modelc_value::ops`).
        let (Some(op_kind), Some(lk), Some(rk)) = (Op::from_symbol(op.symbol()), kind(&l), kind(&r)) else {
            return Inferred::any();
        };
        let ty = match ops::typing(op_kind, lk, rk) {
            Ok(Some(result)) => static_type(result),
            Ok(None) => StaticType::Any,
            Err(problem) => {
                let d = Diagnostic::new(&codes::INVALID_OPERAND, problem).primary(
                    self.file,
                    lhs.span.to(rhs.span),
                    format!("{} {} {}", l.describe(), op.symbol(), r.describe()),
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
