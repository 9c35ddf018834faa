//! Values set twice at a file's top level, where every statement certainly runs: a variable
//! assigned two different constants (`x = 1`, then `x = 2`), or an attribute of an instance
//! constructed at the top level given two different constants, in its constructor and by a later
//! assignment (`a = A(name="x")`, then `a.name = "y"`). Execution reports these (E0301) when it
//! runs; `check` finds them without running. Setting an equal value again is allowed, as in
//! execution. Anything not constant, or not at the top level, is left to execution.

use std::collections::HashMap;

use modelc_diagnostics::{Diagnostic, FileId, Span, codes};
use modelc_value::Value;

use crate::hir::{Arg, ConstructArg, Expr, ExprKind, FileHir, Name, Stmt, Target, Var};

/// A constant and where it was set.
type Set = (Value, Span);

/// The double sets of constants among a lowered file's top-level statements (`text` is the
/// file's, for entity names as written).
pub(crate) fn top_level_double_sets(file_id: FileId, hir: &FileHir, text: &str) -> Vec<Diagnostic> {
    let locals = &hir.top_level.locals;
    let name_of = |slot: u32| locals.get(slot as usize).map_or("", |l| l.text.as_str());
    // By slot: a variable's constant.
    let mut variables: HashMap<u32, Set> = HashMap::new();
    // By slot: variables bound to an instance constructed at the top level, with its constant
    // attributes.
    let mut instances: HashMap<u32, (&str, HashMap<&str, Set>)> = HashMap::new();
    let mut found = Vec::new();
    for stmt in &hir.top_level.stmts {
        let Stmt::Assign(assign) = stmt else { continue };
        if assign.extend {
            continue;
        }
        match &assign.target {
            Target::Local { slot, .. } => {
                let constructed = match &assign.value.kind {
                    ExprKind::Construct { entity_span, args, .. } => {
                        let keywords = args.iter().filter_map(|arg| match arg {
                            ConstructArg::Keyword { name, value, .. } => Some((name, value)),
                            _ => None,
                        });
                        Some((*entity_span, constant_keywords(keywords)))
                    }
                    ExprKind::UnknownEntity { entity_span, constructor: true, args, .. } => {
                        let keywords = args.iter().filter_map(|arg| match arg {
                            Arg::Keyword(name, value) => Some((name, value)),
                            _ => None,
                        });
                        Some((*entity_span, constant_keywords(keywords)))
                    }
                    _ => None,
                };
                if let Some((entity_span, attributes)) = constructed {
                    instances.insert(*slot, (text.get(entity_span.range()).unwrap_or_default(), attributes));
                    continue;
                }
                let Some(value) = constant(&assign.value) else {
                    variables.remove(slot);
                    continue;
                };
                match variables.get(slot) {
                    Some((first, at)) if !first.py_eq(&value) => found.push(twice(
                        file_id,
                        format!("variable `{}` is set twice", name_of(*slot)),
                        (first, *at),
                        (&value, assign.value.span),
                    )),
                    Some(_) => {}
                    None => {
                        variables.insert(*slot, (value, assign.value.span));
                    }
                }
            }
            Target::Attribute { object, attr, .. } => {
                let ExprKind::Var(Var::Local { up: 0, slot }) = &object.kind else { continue };
                let Some((entity, attributes)) = instances.get_mut(slot) else { continue };
                let Some(value) = constant(&assign.value) else { continue };
                match attributes.get(attr.text.as_str()) {
                    Some((first, at)) if !first.py_eq(&value) => found.push(twice(
                        file_id,
                        format!("attribute `{}` of the `{entity}` in `{}` is set twice", attr.text, name_of(*slot)),
                        (first, *at),
                        (&value, assign.value.span),
                    )),
                    Some(_) => {}
                    None => {
                        attributes.insert(attr.text.as_str(), (value, assign.value.span));
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// The keyword arguments of a constructor whose values are constants.
fn constant_keywords<'h>(keywords: impl Iterator<Item = (&'h Name, &'h Expr)>) -> HashMap<&'h str, Set> {
    keywords.filter_map(|(name, value)| constant(value).map(|c| (name.text.as_str(), (c, value.span)))).collect()
}

/// The value of a scalar constant: a number, a string without interpolation, a boolean or null.
/// (Lists and dicts are left out: a relation's `=` adds to what it holds.)
fn constant(expr: &Expr) -> Option<Value> {
    match crate::consteval::eval_alone(expr)? {
        value @ (Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::Null | Value::Str(_)) => Some(value),
        _ => None,
    }
}

fn twice(file: FileId, message: String, first: (&Value, Span), again: (&Value, Span)) -> Diagnostic {
    let (shown_first, shown_again) = (crate::consteval::repr(first.0), crate::consteval::repr(again.0));
    Diagnostic::new(&codes::DOUBLE_SET, format!("{message}: first to {shown_first}, then to {shown_again}"))
        .primary(file, again.1, "set again here, to another value")
        .secondary(file, first.1, "first set here")
        .note("variables and attributes are assigned once; assigning an equal value again is allowed")
}
