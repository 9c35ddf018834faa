//! The grammar's actions: building nodes and the checks the reference makes while parsing.
//!
//! Each function is called from one rule in `grammar.lalrpop`. Checks report into the [`Sink`]
//! and still return a node, so one mistake never hides the rest of the file.

use modelc_diagnostics::{Code, Span, codes};

use crate::ast::*;
use crate::literals;
use crate::sink::{Sink, add_help, add_secondary};

/// Builds the file: a leading triple-quoted string is the module docstring, and one directly
/// after a relation, typedef or `implement` documents it (the reference's grammar has these
/// positions; we attach them here so the LR(1) grammar needs no lookahead for them).
pub(crate) fn file(items: Vec<Item>) -> File {
    let mut file = File { docstring: None, items: Vec::with_capacity(items.len()) };
    for item in items {
        if let Some(doc) = docstring_of(&item) {
            match file.items.last_mut() {
                None if file.docstring.is_none() => {
                    file.docstring = Some(doc);
                    continue;
                }
                Some(Item::Relation(r)) if r.docstring.is_none() => {
                    r.docstring = Some(doc);
                    continue;
                }
                Some(Item::Typedef(t)) if t.docstring.is_none() => {
                    t.docstring = Some(doc);
                    continue;
                }
                Some(Item::Implement(i)) if i.docstring.is_none() => {
                    i.docstring = Some(doc);
                    continue;
                }
                _ => {}
            }
        }
        file.items.push(item);
    }
    file
}

/// The string of a statement that is nothing but a triple-quoted string.
fn docstring_of(item: &Item) -> Option<StrLit> {
    match item {
        Item::Stmt(stmt) => docstring_of_stmt(stmt),
        _ => None,
    }
}

fn docstring_of_stmt(stmt: &Stmt) -> Option<StrLit> {
    match stmt {
        Stmt::Expr(Expr { kind: ExprKind::Str(s), .. }) if s.style == StrStyle::Triple => Some(s.clone()),
        _ => None,
    }
}

/// Reports a definition whose name contains `-` (allowed by the lexer, not for definitions).
fn check_hyphen(sink: &mut Sink, name: &Ident, what: &str) {
    if name.name.contains('-') {
        let suggestion = name.name.replace('-', "_");
        let diagnostic = sink.report(
            &codes::HYPHEN_IN_NAME,
            name.span,
            format!("{what} `{}` contains a hyphen", name.name),
            "`-` is not allowed in defined names",
        );
        add_help(diagnostic, format!("use an underscore: `{suggestion}`"));
    }
}

pub(crate) fn expect_lower(sink: &mut Sink, name: Ident, what: &str) -> Ident {
    let lowered = lower_first(&name.name);
    let diagnostic = sink.report(
        &codes::NAME_CASE,
        name.span,
        format!("`{}` must start with a lower-case letter", name.name),
        format!("{what} must be lower-case"),
    );
    add_help(diagnostic, format!("capitalised names are for entities; write `{lowered}`"));
    name
}

fn lower_first(name: &str) -> String {
    let mut chars = name.chars();
    chars.next().map(|c| c.to_ascii_lowercase().to_string() + chars.as_str()).unwrap_or_default()
}

fn upper_first(name: &str) -> String {
    let trimmed = name.trim_start_matches('_');
    let mut chars = trimmed.chars();
    chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
}

pub(crate) fn expect_entity_name(sink: &mut Sink, name: Ident) -> Ident {
    let diagnostic = sink.report(
        &codes::ENTITY_NAME_CASE,
        name.span,
        format!("entity name `{}` must start with a capital letter", name.name),
        "entity names are capitalised",
    );
    add_help(diagnostic, format!("write `{}`", upper_first(&name.name)));
    name
}

/// `bool up = True`: a capitalised name where a default literal belongs. `True`, `False`, `None`
/// and `Null` are read as the literal they mean (so the entity is kept); anything else as null.
pub(crate) fn capitalised_default(sink: &mut Sink, name: Ident) -> Expr {
    let literal = match name.name.as_str() {
        "True" => Some(("true", ExprKind::Bool(true))),
        "False" => Some(("false", ExprKind::Bool(false))),
        "None" | "Null" => Some(("null", ExprKind::Null)),
        _ => None,
    };
    let (message, help, kind) = match literal {
        Some((fixed, kind)) => (
            format!("`{}` is not a value of the language", name.name),
            format!("booleans are `true` and `false`, and no value is `null`: write `{fixed}`"),
            kind,
        ),
        None => (
            format!("an attribute default is a literal, and `{}` is a name", name.name),
            "write a number, a string, `true`, `false`, `null` or a list of them".to_owned(),
            ExprKind::Null,
        ),
    };
    let diagnostic = sink.report(&codes::UNEXPECTED_TOKEN, name.span, message, "not a literal");
    add_help(diagnostic, help);
    Expr::new(kind, name.span)
}

/// `[0:*]` or `[*]`: "any number" written as in UML. Read as no upper bound.
pub(crate) fn star_bound(sink: &mut Sink, lower: Option<&str>, span: Span) -> (Option<String>, Option<String>, bool) {
    let lower = lower.unwrap_or("0");
    let diagnostic = sink.report(
        &codes::UNEXPECTED_TOKEN,
        span,
        "`*` is not a bound of a multiplicity",
        "no upper bound is written as nothing",
    );
    add_help(diagnostic, format!("write `[{lower}:]` for {lower} or more values"));
    (Some(lower.to_owned()), None, true)
}

pub(crate) fn lower_parent(sink: &mut Sink, path: Path) -> TypeRef {
    let mut segments = path.segments;
    let name = segments.pop().expect("a path has at least one segment");
    let diagnostic = sink.report(
        &codes::ENTITY_NAME_CASE,
        path.span,
        format!("`{}` cannot be a parent: entities extend entities, whose names are capitalised", name.name),
        "not an entity name",
    );
    add_help(diagnostic, "only entities can be extended; typedefs constrain values of attributes instead");
    TypeRef { namespace: segments, name, span: path.span }
}

pub(crate) fn import(sink: &mut Sink, module: Path, alias: Option<Ident>, span: Span) -> Import {
    for segment in &module.segments {
        check_hyphen(sink, segment, "module name");
    }
    if let Some(alias) = &alias {
        check_hyphen(sink, alias, "import alias");
    }
    Import { module, alias, span }
}

pub(crate) fn entity(
    sink: &mut Sink,
    name: Ident,
    parents: Vec<TypeRef>,
    doc: Option<(&str, Span)>,
    attributes: Vec<Option<Box<Attribute>>>,
    span: Span,
) -> Entity {
    check_hyphen(sink, &name, "entity name");
    let docstring = doc.map(|(raw, span)| literals::string(raw, span.start as usize, sink));
    Entity { name, parents, docstring, attributes: attributes.into_iter().flatten().map(|a| *a).collect(), span }
}

pub(crate) fn attribute(
    sink: &mut Sink,
    ty: AttrType,
    name: Ident,
    default: Option<AttrDefault>,
    span: Span,
) -> Attribute {
    check_hyphen(sink, &name, "attribute name");
    if let (AttrBase::Dict, false, Some(AttrDefault::Value(Expr { kind: ExprKind::Null, span: null_span }))) =
        (&ty.base, ty.nullable, &default)
    {
        let diagnostic = sink.report(
            &codes::DICT_NULL_DEFAULT,
            *null_span,
            "`null` cannot be assigned to `dict`",
            "this attribute is not nullable",
        );
        add_help(diagnostic, format!("declare it nullable: `dict? {} = null`", name.name));
    }
    Attribute { ty, name, default, span }
}

pub(crate) fn implementation(
    sink: &mut Sink,
    name: Ident,
    entity: TypeRef,
    mut body: Vec<Stmt>,
    span: Span,
) -> Implementation {
    check_hyphen(sink, &name, "implementation name");
    let docstring = body.first().and_then(docstring_of_stmt);
    if docstring.is_some() {
        body.remove(0);
    }
    Implementation { name, entity, docstring, body, span }
}

pub(crate) fn implement(
    sink: &mut Sink,
    entity: TypeRef,
    implementations: Vec<ImplRef>,
    condition: Option<Expr>,
    span: Span,
) -> Implement {
    let parents = implementations.iter().find_map(|i| match i {
        ImplRef::Parents(span) => Some(*span),
        ImplRef::Named(_) => None,
    });
    if let (Some(parents), Some(condition)) = (parents, &condition)
        && condition.kind != ExprKind::Bool(true)
    {
        let diagnostic = sink.report(
            &codes::CONDITIONAL_PARENTS,
            condition.span,
            "`using parents` cannot be conditional",
            "a condition on `parents` is not allowed",
        );
        add_secondary(diagnostic, parents, "inherits the parents' implementations");
        add_help(diagnostic, "remove the `when` clause, or name the implementations explicitly");
    }
    Implement { entity, implementations, condition, docstring: None, span }
}

pub(crate) fn relation(
    sink: &mut Sink,
    left: RelationEnd,
    op: Result<Ident, Vec<Expr>>,
    right_entity: TypeRef,
    right: Option<(Ident, Multiplicity)>,
    span: Span,
) -> Relation {
    check_hyphen(sink, &left.attribute, "relation end");
    if let Some((name, _)) = &right {
        check_hyphen(sink, name, "relation end");
    }
    let (arrow, annotations) = match op {
        Ok(arrow) => (Some(arrow), Vec::new()),
        Err(annotations) => (None, annotations),
    };
    Relation { left, right_entity, right, arrow, annotations, docstring: None, span }
}

pub(crate) fn typedef(
    sink: &mut Sink,
    (name, name_span): (Ident, Span),
    base: Path,
    constraint: Constraint,
    span: Span,
) -> Typedef {
    let name = if name.name.starts_with(|c: char| c.is_ascii_uppercase()) {
        expect_lower(sink, name, "a typedef name")
    } else {
        name
    };
    check_hyphen(sink, &name, "typedef name");
    if let Constraint::Expr(expr) = &constraint
        && !references_self(expr, &name.name)
    {
        let diagnostic = sink.report(
            &codes::TYPEDEF_WITHOUT_SELF,
            expr.span,
            format!("the constraint of typedef `{}` never uses `self`", name.name),
            "this expression does not depend on the value",
        );
        add_secondary(diagnostic, name_span, "the typedef being constrained");
        add_help(diagnostic, "refer to the checked value as `self`, e.g. `matching self > 0`");
    }
    Typedef { name, base, constraint, docstring: None, span }
}

/// Whether a constraint mentions the checked value: `self`, the typedef's own name, or an
/// attribute tested with the bare `name is defined` form (which reads `self.name`).
fn references_self(expr: &Expr, typedef_name: &str) -> bool {
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        let found = match &e.kind {
            ExprKind::Var(path) => {
                path.segments.len() == 1 && matches!(path.segments[0].name.as_str(), "self")
                    || path.text() == typedef_name
            }
            ExprKind::IsDefined(target) => matches!(target.kind, ExprKind::Var(_)),
            ExprKind::Str(s) => {
                s.parts.iter().any(|p| matches!(p, StrPart::Interpolation(path) if path[0].name == "self"))
            }
            ExprKind::FStr(f) => f
                .parts
                .iter()
                .any(|p| matches!(p, FStrPart::Field(field) if field.path.first().is_some_and(|i| i.name == "self"))),
            _ => false,
        };
        if found {
            return true;
        }
        e.for_each_child(&mut |c| stack.push(c));
    }
    false
}

pub(crate) fn default_constructor(sink: &mut Sink, (name, _): (Ident, Span), constructor: Expr, span: Span) -> Typedef {
    let diagnostic = sink.report(
        &codes::DEFAULT_CONSTRUCTOR,
        span,
        "default constructors are no longer supported",
        "`typedef ... as Entity(...)` defines a default constructor",
    );
    add_help(diagnostic, "call the constructor where it is needed, or give the entity attribute defaults");
    let base = Path { segments: Vec::new(), span: constructor.span };
    Typedef { name, base, constraint: Constraint::Expr(constructor), docstring: None, span }
}

pub(crate) fn assign(sink: &mut Sink, target: Expr, op: AssignOp, value: Expr, span: Span) -> Stmt {
    if let ExprKind::Var(path) = &target.kind {
        if let [name] = path.segments.as_slice() {
            check_hyphen(sink, name, "variable name");
        }
        if op == AssignOp::Extend {
            let diagnostic = sink.report(
                &codes::EXTEND_VARIABLE,
                target.span,
                format!("cannot use `+=` on variable `{}`", path.text()),
                "variables are assigned once",
            );
            add_help(
                diagnostic,
                "`+=` adds to a relation of an instance (`x.items += y`); build a variable's whole value at once",
            );
        }
    }
    Stmt::Assign(Box::new(Assign { target, op, value, span }))
}

pub(crate) fn misplaced_definition(sink: &mut Sink, keyword: &str, span: Span) -> Stmt {
    let diagnostic = sink.report(
        &codes::DEFINITION_IN_BLOCK,
        span,
        format!("`{keyword}` is only allowed at the top level of a file"),
        "a definition inside a block",
    );
    add_help(diagnostic, "move it out of the implementation, `for` or `if` block, to the top level");
    Stmt::Error(span)
}

pub(crate) fn binary(op: BinOp, lhs: Expr, rhs: Expr, span: Span) -> Expr {
    Expr::new(ExprKind::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }, span)
}

pub(crate) fn float(text: &str, span: Span) -> Expr {
    // The lexer only produces digits, an optional sign and one dot, which always parse.
    Expr::new(ExprKind::Float(text.parse().unwrap_or(f64::NAN)), span)
}

/// Reports keyword arguments given twice.
fn check_duplicate_keywords(sink: &mut Sink, args: &[Arg]) {
    let mut seen: Vec<&Ident> = Vec::new();
    for arg in args {
        if let Arg::Keyword(name, _) = arg {
            if let Some(first) = seen.iter().find(|s| s.name == name.name) {
                let first_span = first.span;
                let diagnostic = sink.report(
                    &codes::DUPLICATE_KEYWORD_ARGUMENT,
                    name.span,
                    format!("keyword argument `{}` is given twice", name.name),
                    "given again here",
                );
                add_secondary(diagnostic, first_span, "first given here");
            } else {
                seen.push(name);
            }
        }
    }
}

pub(crate) fn call(sink: &mut Sink, function: Expr, args: Vec<Arg>, span: Span) -> Expr {
    check_duplicate_keywords(sink, &args);
    match &function.kind {
        ExprKind::Var(path) => Expr::new(ExprKind::Call { function: path.clone(), args }, span),
        _ => {
            let text = chain_text(&function);
            let diagnostic = sink.report(
                &codes::NAMESPACE_DOT,
                function.span,
                format!("`{text}` cannot be called: there are no methods"),
                "a call on an attribute chain",
            );
            add_help(
                diagnostic,
                format!("namespaces are separated by `::`; did you mean `{}`?", text.replace('.', "::")),
            );
            Expr::error(span)
        }
    }
}

/// `a.b.c` for a variable/attribute chain.
fn chain_text(expr: &Expr) -> String {
    let (root, links) = expr.attribute_links();
    let mut text = match &root.kind {
        ExprKind::Var(path) => path.text(),
        _ => "…".to_owned(),
    };
    for link in links {
        text.push('.');
        text.push_str(&link.attr.name);
    }
    text
}

pub(crate) fn dotted_type(sink: &mut Sink, object: Expr, name: Ident, span: Span) -> Expr {
    let text = format!("{}.{}", chain_text(&object), name.name);
    let diagnostic = sink.report(
        &codes::NAMESPACE_DOT,
        span,
        format!("`{text}` uses `.` where a namespace needs `::`"),
        "entity types are named with `::`",
    );
    add_help(diagnostic, format!("write `{}`", text.replace('.', "::")));
    Expr::error(span)
}

/// Reports the positional arguments where only keyword arguments are allowed: once, at the
/// first, with the others labelled.
fn reject_positional(sink: &mut Sink, args: &[Arg], code: &'static Code, message: &str, help: &str) {
    let mut positional = args.iter().filter_map(|arg| match arg {
        Arg::Positional(value) => Some(value.span),
        _ => None,
    });
    let Some(first) = positional.next() else { return };
    let diagnostic = sink.report(code, first, message, "a positional argument");
    for other in positional {
        add_secondary(diagnostic, other, "another");
    }
    add_help(diagnostic, help);
}

pub(crate) fn construct(sink: &mut Sink, entity: TypeRef, args: Vec<Arg>, span: Span) -> Expr {
    check_duplicate_keywords(sink, &args);
    let message = format!("constructor `{}` takes keyword arguments only", entity.text());
    // `std::Replace("a", "b")`: a plugin call written with a capital reads as a constructor.
    let help = if args.iter().all(|a| matches!(a, Arg::Positional(_))) && !entity.namespace.is_empty() {
        format!(
            "name the attribute: `attribute=value`; or, to call a plugin, write its name in lower case: `{}`",
            entity.text().rsplit_once("::").map_or(String::new(), |(ns, n)| format!("{ns}::{}", n.to_lowercase()))
        )
    } else {
        "name the attribute: `attribute=value`".to_owned()
    };
    reject_positional(sink, &args, &codes::POSITIONAL_CONSTRUCTOR_ARGUMENT, &message, &help);
    Expr::new(ExprKind::Construct { entity: Box::new(entity), args }, span)
}

pub(crate) fn index_lookup(sink: &mut Sink, entity: TypeRef, args: Vec<Arg>, span: Span) -> Expr {
    check_duplicate_keywords(sink, &args);
    let message = format!("index lookups on `{}` take keyword arguments only", entity.text());
    let help = "name the indexed attribute: `Entity[attribute=value]`";
    reject_positional(sink, &args, &codes::INVALID_LOOKUP, &message, help);
    Expr::new(ExprKind::IndexLookup { entity: Box::new(entity), args }, span)
}

pub(crate) fn relation_lookup(sink: &mut Sink, object: Expr, args: Vec<Arg>, span: Span) -> Expr {
    check_duplicate_keywords(sink, &args);
    let object_span = object.span;
    match object.kind.clone() {
        ExprKind::Attr { object, attr } => Expr::new(ExprKind::RelationLookup { object, relation: attr, args }, span),
        _ => {
            let text = chain_text(&object);
            let diagnostic = sink.report(
                &codes::INVALID_LOOKUP,
                object_span,
                format!("`{text}` cannot be looked up by keyword"),
                "a variable, not an entity type or a relation",
            );
            add_help(
                diagnostic,
                format!("look up through an entity type (`Entity[...]`) or a relation (`{text}.relation[...]`)"),
            );
            Expr::error(span)
        }
    }
}

pub(crate) fn is_defined(sink: &mut Sink, target: Expr, span: Span) -> Expr {
    if let ExprKind::Var(path) = &target.kind
        && path.segments.len() > 1
    {
        let diagnostic = sink.report(
            &codes::INVALID_IS_DEFINED,
            target.span,
            format!("`{}` is a namespaced name; `is defined` tests attributes", path.text()),
            "not an attribute",
        );
        add_help(diagnostic, "test an attribute of an instance: `x.attribute is defined`");
    }
    Expr::new(ExprKind::IsDefined(Box::new(target)), span)
}

#[allow(clippy::vec_box, reason = "the grammar boxes entries to keep its stack values small")]
pub(crate) fn dict(sink: &mut Sink, entries: Vec<Box<(Expr, Expr)>>, span: Span) -> Expr {
    let mut out: Vec<DictEntry> = Vec::with_capacity(entries.len());
    // Each key's text → where it was first written (a scan of the earlier keys per key made
    // wide dicts quadratic).
    let mut seen: std::collections::HashMap<String, Span> = std::collections::HashMap::with_capacity(entries.len());
    for entry in entries {
        let (key, value) = *entry;
        let key_span = key.span;
        let literal = match &key.kind {
            ExprKind::Str(s) if s.style != StrStyle::Triple => s.clone(),
            _ => {
                let diagnostic = sink.report(
                    &codes::NON_STRING_DICT_KEY,
                    key_span,
                    "dictionary keys must be string literals",
                    "not a plain string literal",
                );
                add_help(diagnostic, "write the key in quotes: `{\"key\": value}`");
                continue;
            }
        };
        if literal.has_interpolation() {
            let diagnostic = sink.report(
                &codes::INTERPOLATED_DICT_KEY,
                key_span,
                "string interpolation is not supported in dictionary keys",
                "this key contains `{{ ... }}`",
            );
            add_help(diagnostic, "use a raw string for a key containing double braces: r\"{{key}}\"");
            continue;
        }
        let text = literal.as_constant().unwrap_or_default();
        if let Some(&first_span) = seen.get(&text) {
            let diagnostic = sink.report(
                &codes::DUPLICATE_DICT_KEY,
                key_span,
                format!("key {text:?} appears twice in this dictionary"),
                "duplicate key",
            );
            add_secondary(diagnostic, first_span, "first used here");
            continue;
        }
        seen.insert(text, literal.span);
        out.push(DictEntry { key: literal, value });
    }
    Expr::new(ExprKind::Dict(out), span)
}
