//! Values set twice at a file's top level, where every statement certainly runs: a variable
//! assigned two different constants (`x = 1`, then `x = 2`), or an attribute of an instance
//! constructed at the top level given two different constants, in its constructor and by a later
//! assignment (`a = A(name="x")`, then `a.name = "y"`). Execution reports these (E0301) when it
//! runs; `check` finds them without running. Setting an equal value again is allowed, as in
//! execution. Anything not constant, or not at the top level, is left to execution.

use std::collections::HashMap;

use modelc_diagnostics::{Diagnostic, FileId, Span, codes};
use modelc_syntax::ast::{Arg, AssignOp, Expr, ExprKind, File, Item, Stmt};
use modelc_value::Value;

/// A constant and where it was set.
type Set = (Value, Span);

/// The double sets of constants among `file`'s top-level statements.
pub(crate) fn top_level_double_sets(file_id: FileId, file: &File) -> Vec<Diagnostic> {
    let mut variables: HashMap<&str, Set> = HashMap::new();
    // Variables bound to an instance constructed at the top level: its constant attributes.
    let mut instances: HashMap<&str, (String, HashMap<&str, Set>)> = HashMap::new();
    let mut found = Vec::new();
    for item in &file.items {
        let Item::Stmt(Stmt::Assign(assign)) = item else { continue };
        if assign.op != AssignOp::Set {
            continue;
        }
        match &assign.target.kind {
            ExprKind::Var(path) if path.segments.len() == 1 => {
                let name = path.segments[0].name.as_str();
                if let ExprKind::Construct { entity, args } = &assign.value.kind {
                    instances.insert(name, (entity.text(), constant_keywords(args)));
                    continue;
                }
                let Some(value) = constant(&assign.value) else {
                    variables.remove(name);
                    continue;
                };
                match variables.get(name) {
                    Some((first, at)) if !first.py_eq(&value) => found.push(twice(
                        file_id,
                        format!("variable `{name}` is set twice"),
                        (first, *at),
                        (&value, assign.value.span),
                    )),
                    Some(_) => {}
                    None => {
                        variables.insert(name, (value, assign.value.span));
                    }
                }
            }
            ExprKind::Attr { object, attr } => {
                let ExprKind::Var(path) = &object.kind else { continue };
                let [variable] = path.segments.as_slice() else { continue };
                let Some((entity, attributes)) = instances.get_mut(variable.name.as_str()) else { continue };
                let Some(value) = constant(&assign.value) else { continue };
                match attributes.get(attr.name.as_str()) {
                    Some((first, at)) if !first.py_eq(&value) => found.push(twice(
                        file_id,
                        format!("attribute `{}` of the `{entity}` in `{}` is set twice", attr.name, variable.name),
                        (first, *at),
                        (&value, assign.value.span),
                    )),
                    Some(_) => {}
                    None => {
                        attributes.insert(attr.name.as_str(), (value, assign.value.span));
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// The keyword arguments of a constructor whose values are constants.
fn constant_keywords(args: &[Arg]) -> HashMap<&str, Set> {
    args.iter()
        .filter_map(|arg| match arg {
            Arg::Keyword(name, value) => constant(value).map(|c| (name.name.as_str(), (c, value.span))),
            _ => None,
        })
        .collect()
}

/// The value of a scalar constant: a number, a string without interpolation, a boolean or null.
/// (Lists and dicts are left out: a relation's `=` adds to what it holds.)
fn constant(expr: &Expr) -> Option<Value> {
    match crate::consteval::eval(expr, None)? {
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
