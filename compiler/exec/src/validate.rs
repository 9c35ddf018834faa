//! Typedef constraints decided by the engine, for the one validation of values against their
//! declared types (`modelc_sema::validate`): a constraint is evaluated in a scope that holds only
//! `self`, so plugins work in it and any other name is an error, as in the reference.

use rustc_hash::FxHashMap;

use modelc_diagnostics::Diagnostic;
use modelc_sema::consteval;
use modelc_sema::hir::{ConstraintHir, Expr};
use modelc_sema::types::{BaseType, ValueType};
use modelc_sema::validate::{Constraints, Misfit};
use modelc_value::Value;

use crate::cells::{CellKind, Owner, Scope, ScopeId, TaskId};
use crate::engine::{Engine, Stop, TaskKind};

/// Constraint results already computed, for string and integer values: `(typedef, value)` →
/// holds. (Names and ports repeat across a model; other values are checked every time.)
/// How many results the constraint cache keeps: values repeat (an agent name on every
/// resource) or are all different (a name per resource), and the first are worth keeping only
/// in the first case.
const CONSTRAINT_CACHE_LIMIT: usize = 16_384;

pub(crate) type ConstraintCache<'a> = FxHashMap<(&'a str, CachedValue), bool>;

#[derive(PartialEq, Eq, Hash)]
pub(crate) enum CachedValue {
    Str(modelc_value::ArcStr),
    Int(i64),
}

impl<'a> Engine<'a> {
    /// Checks `value` against `ty`.
    pub(crate) fn check_type(&mut self, ty: &ValueType, value: &Value) -> Result<(), Misfit<Box<Diagnostic>>> {
        modelc_sema::validate::validate(&mut Running(self), ty, value)
    }

    /// How messages show a value: Python's `repr`, instances by where they were made.
    pub(crate) fn show(&self, value: &Value) -> String {
        modelc_value::py_repr(value, &|id| self.describe(id))
    }

    /// Evaluates typedef `fqn`'s constraint for `value` (cached per value).
    fn constraint_holds(&mut self, fqn: &str, value: &Value) -> Result<bool, Box<Diagnostic>> {
        let Some((fqn, (unit, constraint))) = self.program.constraints.get_key_value(fqn) else { return Ok(true) };
        let (unit, constraint) = (*unit, *constraint);
        let key = match value {
            Value::Str(s) => Some((fqn.as_str(), CachedValue::Str(s.clone()))),
            Value::Int(i) => Some((fqn.as_str(), CachedValue::Int(*i))),
            _ => None,
        };
        if let Some(holds) = key.as_ref().and_then(|k| self.constraint_cache.get(k)) {
            return Ok(*holds);
        }
        let holds = match constraint {
            ConstraintHir::Regex(pattern) => match value {
                Value::Str(s) => consteval::regex_match(pattern, s).unwrap_or(false),
                _ => false,
            },
            ConstraintHir::Expr(expr) => self.eval_constraint(expr, unit, value)?,
        };
        if let Some(key) = key
            && self.constraint_cache.len() < CONSTRAINT_CACHE_LIMIT
        {
            self.constraint_cache.insert(key, holds);
        }
        Ok(holds)
    }

    fn eval_constraint(&mut self, expr: &'a Expr, unit: usize, value: &Value) -> Result<bool, Box<Diagnostic>> {
        let task = self.constraint_task();
        let cell = self.new_cell(&CellKind::Variable, Owner::Variable(None));
        self.cell_mut(cell).value = Some(value.clone());
        let scope = ScopeId(self.scopes.len() as u32);
        self.scopes.push(Scope::new(cell, 1, None, None, unit as u32, 0));
        match self.eval(task, expr, scope) {
            Ok(Value::Bool(b)) => Ok(b),
            // Undecidable here: an unknown value passes, like everywhere else.
            Ok(_) | Err(Stop::Wait(_) | Stop::Listen) => Ok(true),
            Err(Stop::Fail(diagnostic)) => Err(diagnostic),
        }
    }

    /// The task constraint evaluations run in: never scheduled, it only holds memoised calls.
    fn constraint_task(&mut self) -> TaskId {
        if let Some(task) = self.constraint_task {
            return task;
        }
        let id = self.create_task(TaskKind::Constraint, ScopeId(0));
        self.pin(id);
        self.tasks[id.0 as usize].done = true;
        self.constraint_task = Some(id);
        id
    }
}

/// Constraints decided by the running engine.
struct Running<'e, 'a>(&'e mut Engine<'a>);

impl Constraints for Running<'_, '_> {
    type Failure = Box<Diagnostic>;

    fn typedef_base(&self, fqn: &str) -> Option<BaseType> {
        self.0.program.index.typedefs.get(fqn).map(|def| def.base.clone())
    }

    fn holds(&mut self, fqn: &str, value: &Value) -> Result<bool, Self::Failure> {
        self.0.constraint_holds(fqn, value)
    }

    fn show(&self, value: &Value) -> String {
        self.0.show(value)
    }
}
