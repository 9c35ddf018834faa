//! Whether a value fits a declared type (spec §3.2, §3.4): its base type, `[]`, `?` and typedef
//! constraints, and the words every layer reports a misfit with. `check` validates constants
//! (defaults, values written in the model) and execution validates values as they are set and
//! plugin arguments, both through [`validate`]; what differs between them is only how a
//! typedef's constraint is decided (statically, or by the engine, plugins included), which
//! they give through [`Constraints`].

use std::fmt::Display;

use modelc_value::Value;

use crate::types::{BaseType, ValueType};

/// Why a value does not fit its type.
#[derive(Debug, Clone, PartialEq)]
pub enum Misfit<F> {
    /// The base type rejects it: the message.
    Invalid(String),
    /// A typedef's constraint rejects it: the typedef, the value (a string as it is, any other
    /// value as messages show it), and the message.
    Violated { typedef: String, value: String, message: String },
    /// Deciding a constraint failed.
    Failed(F),
}

/// What validation asks of where it runs.
pub trait Constraints {
    /// Why deciding a constraint can fail.
    type Failure;
    /// The base a typedef refines, when the typedef is known.
    fn typedef_base(&self, fqn: &str) -> Option<BaseType>;
    /// Whether `value` satisfies typedef `fqn`'s own constraint: true when it has none, or when
    /// it cannot be decided here.
    fn holds(&mut self, fqn: &str, value: &Value) -> Result<bool, Self::Failure>;
    /// How messages show a value: Python's `repr`, as the reference's messages do.
    fn show(&self, value: &Value) -> String;
}

/// "invalid value 1, expected float": the message of a value its type rejects.
pub fn invalid(shown: &str, expected: impl Display) -> String {
    format!("invalid value {shown}, expected {expected}")
}

/// Checks `value` against `ty`. An unknown value fits anything.
pub fn validate<C: Constraints + ?Sized>(c: &mut C, ty: &ValueType, value: &Value) -> Result<(), Misfit<C::Failure>> {
    if value.is_unknown() {
        return Ok(());
    }
    if value.is_null() {
        return if ty.nullable { Ok(()) } else { Err(Misfit::Invalid(invalid(&c.show(value), ty))) };
    }
    if ty.list {
        let Value::List(items) = value else { return Err(Misfit::Invalid(invalid(&c.show(value), ty))) };
        let element = ValueType { base: ty.base.clone(), list: false, nullable: false };
        return items.iter().try_for_each(|item| validate(c, &element, item));
    }
    validate_base(c, &ty.base, value, 0)
}

fn validate_base<C: Constraints + ?Sized>(
    c: &mut C,
    base: &BaseType,
    value: &Value,
    depth: usize,
) -> Result<(), Misfit<C::Failure>> {
    let fits = match base {
        BaseType::String => matches!(value, Value::Str(_)),
        BaseType::Int => matches!(value, Value::Int(_) | Value::Bool(_)),
        BaseType::Float => matches!(value, Value::Float(_)),
        BaseType::Number => matches!(value, Value::Int(_) | Value::Bool(_) | Value::Float(_)),
        BaseType::Bool => matches!(value, Value::Bool(_)),
        // A `list` or `dict` attribute holds plain values, never instances.
        BaseType::List => matches!(value, Value::List(items) if items.iter().all(plain)),
        BaseType::Dict => matches!(value, Value::Dict(entries) if entries.values().all(plain)),
        BaseType::Entity(_) => matches!(value, Value::Instance(_)),
        BaseType::Any | BaseType::Unresolved => true,
        BaseType::Typedef(fqn) => {
            let Some(refined) = c.typedef_base(fqn) else { return Ok(()) };
            // Typedef chains are short; a cycle (an error reported where it is declared) stops.
            if depth < 16 {
                validate_base(c, &refined, value, depth + 1)?;
            }
            if !c.holds(fqn, value).map_err(Misfit::Failed)? {
                let shown = c.show(value);
                return Err(Misfit::Violated {
                    typedef: fqn.clone(),
                    message: format!("invalid value {shown}, does not match the constraint of {fqn}"),
                    value: match value {
                        Value::Str(s) => s.to_string(),
                        _ => shown,
                    },
                });
            }
            true
        }
    };
    if fits { Ok(()) } else { Err(Misfit::Invalid(invalid(&c.show(value), base))) }
}

/// Values a `list` or `dict` attribute may hold: no instances, at any depth.
fn plain(value: &Value) -> bool {
    match value {
        Value::Instance(_) => false,
        Value::List(items) => items.iter().all(plain),
        Value::Dict(entries) => entries.values().all(plain),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Typedef `t::small` refines `int` with `self < 10`; `t::broken`'s constraint fails.
    struct Fixed;

    impl Constraints for Fixed {
        type Failure = &'static str;

        fn typedef_base(&self, fqn: &str) -> Option<BaseType> {
            matches!(fqn, "t::small" | "t::broken").then_some(BaseType::Int)
        }

        fn holds(&mut self, fqn: &str, value: &Value) -> Result<bool, Self::Failure> {
            match (fqn, value) {
                ("t::broken", _) => Err("the constraint failed"),
                (_, Value::Int(n)) => Ok(*n < 10),
                _ => Ok(true),
            }
        }

        fn show(&self, value: &Value) -> String {
            crate::consteval::repr(value)
        }
    }

    fn ty(base: BaseType, list: bool, nullable: bool) -> ValueType {
        ValueType { base, list, nullable }
    }

    #[test]
    fn misfits_are_worded_once() {
        let check = |t: &ValueType, v: &Value| validate(&mut Fixed, t, v);
        assert_eq!(
            check(&ty(BaseType::Float, false, false), &Value::Int(1)),
            Err(Misfit::Invalid("invalid value 1, expected float".into()))
        );
        assert_eq!(
            check(&ty(BaseType::String, false, false), &Value::Null),
            Err(Misfit::Invalid("invalid value null, expected string".into()))
        );
        assert_eq!(check(&ty(BaseType::String, false, true), &Value::Null), Ok(()));
        assert_eq!(check(&ty(BaseType::Int, false, false), &Value::Unknown), Ok(()));
        let small = BaseType::Typedef("t::small".into());
        assert_eq!(
            check(&ty(small.clone(), false, false), &Value::Int(70)),
            Err(Misfit::Violated {
                typedef: "t::small".into(),
                value: "70".into(),
                message: "invalid value 70, does not match the constraint of t::small".into(),
            })
        );
        // Each element of a typed list, against the element type.
        assert!(matches!(
            check(&ty(small, true, false), &Value::list(vec![Value::Int(1), Value::Int(12)])),
            Err(Misfit::Violated { value, .. }) if value == "12"
        ));
        assert_eq!(
            check(&ty(BaseType::Typedef("t::broken".into()), false, false), &Value::Int(1)),
            Err(Misfit::Failed("the constraint failed"))
        );
    }
}
