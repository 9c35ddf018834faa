//! Evaluating binary operators: `and`/`or` short-circuit here; every other operator is
//! `modelc_value::ops`, the one Python-semantics core that analysis uses too (spec §4.9).

use modelc_diagnostics::{Diagnostic, Span, codes};
use modelc_sema::hir::{BinOp, Expr};
use modelc_value::Value;

use crate::cells::{ScopeId, TaskId};
use crate::engine::{Engine, Eval};

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
