//! Caps how deeply a parsed file nests, so that every later pass can walk it recursively.
//!
//! The parser itself is table-driven and the tree frees itself iteratively, so any depth
//! parses. Later phases (name resolution, evaluation, printing) recurse; bounding the depth
//! here is what keeps them within their stack. This pass walks with an explicit stack.

use modelc_diagnostics::codes;

use crate::ast::{Constraint, Expr, ExprKind, File, Item, Stmt};
use crate::sink::{Sink, add_help};

/// The deepest nesting accepted: brackets, operators and blocks counted together, except the
/// links of a left-associative chain (see [`chain_continuation`]). Real models
/// stay below 30; the cap leaves room for generated ones while keeping a recursive walk
/// (about 4 KiB a level in a debug build) within a 2 MiB thread stack.
pub const MAX_DEPTH: u32 = 256;

enum Work<'a> {
    Expr(&'a mut Expr, u32),
    Stmts(&'a mut Vec<Stmt>, u32),
}

/// Replaces every subtree nested deeper than [`MAX_DEPTH`] with an error node and reports it.
pub(crate) fn limit_depth(file: &mut File, sink: &mut Sink) {
    let mut work: Vec<Work<'_>> = Vec::new();
    for item in &mut file.items {
        match item {
            Item::Stmt(stmt) => push_stmt(stmt, 0, &mut work),
            Item::Entity(entity) => {
                for attribute in &mut entity.attributes {
                    if let Some(crate::ast::AttrDefault::Value(e)) = &mut attribute.default {
                        work.push(Work::Expr(e, 1));
                    }
                }
            }
            Item::Implementation(implementation) => work.push(Work::Stmts(&mut implementation.body, 1)),
            Item::Implement(implement) => work.extend(implement.condition.as_mut().map(|e| Work::Expr(e, 1))),
            Item::Relation(relation) => work.extend(relation.annotations.iter_mut().map(|e| Work::Expr(e, 1))),
            Item::Typedef(typedef) => {
                if let Constraint::Expr(e) = &mut typedef.constraint {
                    work.push(Work::Expr(e, 1));
                }
            }
            Item::Import(_) | Item::Index(_) | Item::Resource(_) => {}
        }
    }
    while let Some(next) = work.pop() {
        match next {
            Work::Expr(expr, depth) => {
                if depth > MAX_DEPTH {
                    report(sink, expr.span);
                    *expr = Expr::error(expr.span);
                    continue;
                }
                let continued = chain_continuation(expr).map(|c| c as *const Expr);
                expr.for_each_child_mut(&mut |child| {
                    let level = if Some(&*child as *const Expr) == continued { depth } else { depth + 1 };
                    work.push(Work::Expr(child, level));
                });
            }
            Work::Stmts(stmts, depth) => {
                if depth > MAX_DEPTH {
                    if let (Some(first), Some(last)) = (stmts.first(), stmts.last()) {
                        report(sink, first.span().to(last.span()));
                    }
                    stmts.clear();
                    continue;
                }
                for stmt in stmts.iter_mut() {
                    push_stmt(stmt, depth, &mut work);
                }
            }
        }
    }
}

/// The operand that continues a chain from `expr`: the left side of a binary operator and the
/// object of an attribute, relation or map lookup. `a + b + c` and `n.next.next` are long, not
/// deep, so they are not counted; recursive passes walk them through [`crate::stack::deep`].
fn chain_continuation(expr: &Expr) -> Option<&Expr> {
    match &expr.kind {
        ExprKind::Binary { lhs, .. } => Some(lhs),
        ExprKind::Attr { object, .. }
        | ExprKind::RelationLookup { object, .. }
        | ExprKind::MapLookup { object, .. } => Some(object),
        _ => None,
    }
}

fn push_stmt<'a>(stmt: &'a mut Stmt, depth: u32, work: &mut Vec<Work<'a>>) {
    match stmt {
        Stmt::Assign(assign) => {
            work.push(Work::Expr(&mut assign.target, depth + 1));
            work.push(Work::Expr(&mut assign.value, depth + 1));
        }
        Stmt::For(for_stmt) => {
            work.push(Work::Expr(&mut for_stmt.iterable, depth + 1));
            work.push(Work::Stmts(&mut for_stmt.body, depth + 1));
        }
        Stmt::If(if_stmt) => {
            for (condition, body) in &mut if_stmt.branches {
                work.push(Work::Expr(condition, depth + 1));
                work.push(Work::Stmts(body, depth + 1));
            }
            if let Some(body) = &mut if_stmt.else_body {
                work.push(Work::Stmts(body, depth + 1));
            }
        }
        Stmt::Expr(expr) => work.push(Work::Expr(expr, depth + 1)),
        Stmt::Error(_) => {}
    }
}

fn report(sink: &mut Sink, span: modelc_diagnostics::Span) {
    let diagnostic = sink.report(
        &codes::NESTING_TOO_DEEP,
        span,
        format!("nesting deeper than {MAX_DEPTH} levels"),
        "this part is nested too deeply",
    );
    diagnostic.notes.push(format!(
        "brackets, blocks and operands inside operands are each a level; modelc walks them recursively and \
         stops at {MAX_DEPTH} so that no model can exhaust its stack (a chain such as `a + b + c` or `x.y.z` is \
         not nesting and has no limit)"
    ));
    add_help(diagnostic, "split the expression or block into several variables or implementations");
}
