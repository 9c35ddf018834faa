//! Evaluating binary operators: `and`/`or` short-circuit here; every other operator is
//! `modelc_value::ops`, the one Python-semantics core that analysis uses too (spec §4.9).

use modelc_diagnostics::{Diagnostic, Span, codes};
use modelc_sema::hir::{BinOp, Expr, ExprKind};
use modelc_value::Value;
use modelc_value::ops::Op;

use crate::cells::{ScopeId, TaskId};
use crate::engine::{Engine, Eval};

/// Whether `expr` is itself an addition: the operand that makes `expr + x` a chain.
fn is_sum(expr: &Expr) -> bool {
    matches!(expr.kind, ExprKind::Binary { op: BinOp::Value(Op::Add), .. })
}

impl<'a> Engine<'a> {
    pub(crate) fn eval_binary(
        &mut self,
        task: TaskId,
        op: BinOp,
        lhs: &'a Expr,
        rhs: &'a Expr,
        span: Span,
        scope: ScopeId,
    ) -> Eval<Value> {
        if op == BinOp::Value(Op::Add) && is_sum(lhs) {
            return self.eval_sum(task, lhs, rhs, span, scope);
        }
        let left = self.eval(task, lhs, scope)?;
        let op = match op {
            BinOp::Value(op) => op,
            BinOp::And | BinOp::Or => return self.eval_logical(task, op == BinOp::And, left, lhs, rhs, scope),
        };
        let right = self.eval(task, rhs, scope)?;
        modelc_value::ops::binary(op, &left, &right).map_err(|message| {
            self.fail(scope, span, Diagnostic::new(&codes::INVALID_OPERAND, message), "invalid operands")
        })
    }

    /// A chain `a + b + c + …`, left to right as the nested operators would go, with the
    /// strings of a run of string operands appended to one buffer: operator by operator, each
    /// partial sum was copied again, so a sum of n strings cost n² bytes copied.
    fn eval_sum(&mut self, task: TaskId, lhs: &'a Expr, rhs: &'a Expr, span: Span, scope: ScopeId) -> Eval<Value> {
        let mut links = vec![(rhs, span)];
        let mut first = lhs;
        while let ExprKind::Binary { op: BinOp::Value(Op::Add), lhs, rhs } = &first.kind {
            links.push((rhs, first.span));
            first = lhs;
        }
        let mut sum = modelc_value::ops::Sum::new(self.eval(task, first, scope)?);
        for (operand, span) in links.into_iter().rev() {
            let right = self.eval(task, operand, scope)?;
            sum.add(&right).map_err(|message| {
                self.fail(scope, span, Diagnostic::new(&codes::INVALID_OPERAND, message), "invalid operands")
            })?;
        }
        Ok(sum.finish())
    }

    /// `and` and `or`: short-circuit, booleans only.
    fn eval_logical(
        &mut self,
        task: TaskId,
        and: bool,
        left: Value,
        lhs: &'a Expr,
        rhs: &'a Expr,
        scope: ScopeId,
    ) -> Eval<Value> {
        let symbol = if and { "and" } else { "or" };
        let l = match left {
            Value::Bool(b) => b,
            Value::Unknown => return Ok(Value::Unknown),
            other => {
                return Err(self.fail(
                    scope,
                    lhs.span,
                    Diagnostic::new(
                        &codes::INVALID_OPERAND,
                        format!(
                            "invalid left hand value `{}`: `{}` expects a boolean",
                            self.interpolate(&other),
                            symbol
                        ),
                    ),
                    "not a boolean",
                ));
            }
        };
        if (and && !l) || (!and && l) {
            return Ok(Value::Bool(l));
        }
        match self.eval(task, rhs, scope)? {
            Value::Bool(r) => Ok(Value::Bool(r)),
            Value::Unknown => Ok(Value::Unknown),
            other => Err(self.fail(
                scope,
                rhs.span,
                Diagnostic::new(
                    &codes::INVALID_OPERAND,
                    format!("invalid value '{}', expected bool", self.interpolate(&other)),
                ),
                "not a boolean",
            )),
        }
    }
}
