//! Validating values against declared types (spec §3.2, §3.4): the base type, `[]`, `?`, and
//! typedef constraints. A constraint is evaluated by the engine itself, in a scope that holds
//! only `self`, so plugins work in it and any other name is an error, as in the reference.

use rustc_hash::FxHashMap;

use modelc_diagnostics::Diagnostic;
use modelc_sema::consteval;
use modelc_sema::hir::{ConstraintHir, Expr};
use modelc_sema::types::{BaseType, ValueType};
use modelc_value::Value;

use crate::cells::{CellKind, Owner, Scope, ScopeId, TaskId};
use crate::engine::{Engine, Stop, TaskKind};

/// Why a value does not fit its type.
pub(crate) enum Misfit {
    /// The base type rejects it.
    Invalid(String),
    /// A typedef constraint rejects it: the typedef, the value that breaks it (as text), and
    /// the message.
    Violated { typedef: String, value: String, message: String },
    /// Evaluating a constraint failed.
    Failed(Box<Diagnostic>),
}

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
    pub(crate) fn check_type(&mut self, ty: &ValueType, value: &Value) -> Result<(), Misfit> {
        if value.is_unknown() {
            return Ok(());
        }
        if value.is_null() {
            return if ty.nullable {
                Ok(())
            } else {
                Err(Misfit::Invalid(format!("invalid value 'null', expected {ty}")))
            };
        }
        if ty.list {
            let Value::List(items) = value else {
                return Err(Misfit::Invalid(format!("invalid value '{}', expected {ty}", self.interpolate(value))));
            };
            let element = ValueType { base: ty.base.clone(), list: false, nullable: false };
            return items.iter().try_for_each(|item| self.check_type(&element, item));
        }
        self.check_base(&ty.base, value, 0)
    }

    fn check_base(&mut self, base: &BaseType, value: &Value, depth: usize) -> Result<(), Misfit> {
        let ok = match base {
            BaseType::String => matches!(value, Value::Str(_)),
            BaseType::Int => matches!(value, Value::Int(_) | Value::Bool(_)),
            BaseType::Float => matches!(value, Value::Float(_)),
            BaseType::Number => matches!(value, Value::Int(_) | Value::Bool(_) | Value::Float(_)),
            BaseType::Bool => matches!(value, Value::Bool(_)),
            BaseType::List => matches!(value, Value::List(items) if items.iter().all(literal)),
            BaseType::Dict => matches!(value, Value::Dict(entries) if entries.values().all(literal)),
            BaseType::Entity(_) => matches!(value, Value::Instance(_)),
            BaseType::Any | BaseType::Unresolved => true,
            BaseType::Typedef(fqn) => {
                let Some(def) = self.program.index.typedefs.get(fqn) else { return Ok(()) };
                if depth < 16 {
                    self.check_base(&def.base.clone(), value, depth + 1)?;
                }
                if !self.constraint_holds(fqn, value)? {
                    let shown = self.interpolate(value);
                    let message = format!("invalid value '{shown}', does not match the constraint of {fqn}");
                    return Err(Misfit::Violated { typedef: fqn.clone(), value: shown, message });
                }
                true
            }
        };
        if ok {
            Ok(())
        } else {
            Err(Misfit::Invalid(format!("invalid value '{}', expected {base}", self.interpolate(value))))
        }
    }

    /// Evaluates typedef `fqn`'s constraint for `value` (cached per value).
    fn constraint_holds(&mut self, fqn: &str, value: &Value) -> Result<bool, Misfit> {
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

    fn eval_constraint(&mut self, expr: &'a Expr, unit: usize, value: &Value) -> Result<bool, Misfit> {
        let task = self.constraint_task();
        let cell = self.new_cell(&CellKind::Variable, Owner::Variable(None));
        self.cell_mut(cell).value = Some(value.clone());
        let scope = ScopeId(self.scopes.len() as u32);
        self.scopes.push(Scope::new(cell, 1, None, None, unit as u32, 0));
        match self.eval(task, expr, scope) {
            Ok(Value::Bool(b)) => Ok(b),
            // Undecidable here: an unknown value passes, like everywhere else.
            Ok(_) | Err(Stop::Wait(_) | Stop::Listen) => Ok(true),
            Err(Stop::Fail(diagnostic)) => Err(Misfit::Failed(diagnostic)),
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

/// Values a `list` or `dict` attribute may hold: no instances.
fn literal(value: &Value) -> bool {
    match value {
        Value::Instance(_) => false,
        Value::List(items) => items.iter().all(literal),
        Value::Dict(entries) => entries.values().all(literal),
        _ => true,
    }
}
