//! Index lookups (spec §4.6, execution §1.7): `E[k=v]` returns the instance, or parks until
//! one with that key is constructed.

use modelc_diagnostics::{Diagnostic, Span, codes};
use modelc_value::Value;

use crate::cells::{CellKind, Owner, ScopeId};
use crate::engine::{Engine, Eval};

impl<'a> Engine<'a> {
    /// `E[k=v]`: the instance, or a wait until it is constructed.
    pub(crate) fn lookup(
        &mut self,
        entity: &str,
        mut keys: Vec<(std::borrow::Cow<'_, str>, Value)>,
        scope: ScopeId,
        span: Span,
    ) -> Eval<Value> {
        keys.sort_by(|a, b| a.0.cmp(&b.0));
        let Some(plan_id) = self.plans.id(entity) else {
            return Err(self.fail(
                scope,
                span,
                Diagnostic::new(&codes::UNKNOWN_TYPE, format!("could not find entity `{entity}`")),
                "not found",
            ));
        };
        let plan = self.plans.get(plan_id);
        let found = plan.indexes.iter().find(|index| {
            index.attributes.len() == keys.len() && index.attributes.iter().zip(&keys).all(|(a, (k, _))| a == k)
        });
        let Some(index) = found else {
            let names: Vec<&str> = keys.iter().map(|(n, _)| n.as_ref()).collect();
            return Err(self.fail(
                scope,
                span,
                Diagnostic::new(
                    &codes::NO_MATCHING_INDEX,
                    format!("no index defined on {entity} for this lookup: {names:?}"),
                ),
                "no such index",
            ));
        };
        let mut text = String::new();
        for (n, v) in &keys {
            if !text.is_empty() {
                text.push_str(", ");
            }
            text.push_str(n);
            text.push('=');
            self.write_key_value(&mut text, plan.position(n).is_some_and(|p| plan.is_float(p)), v);
        }
        let key = (index.owner, text);
        if let Some(instance) = self.index.get(key.0, &key.1)
            && self.is_subtype(self.entity_of(instance), plan.fqn)
        {
            return Ok(Value::Instance(instance));
        }
        let cell = match self.parked.get(&key) {
            Some(cell) => *cell,
            None => {
                let owner =
                    crate::cells::LookupOwner { entity: plan.fqn, key: key.1.clone(), file: self.file_of(scope), span };
                self.lookups.push(owner);
                let cell = self.new_cell(&CellKind::Lookup, Owner::Lookup(self.lookups.len() as u32 - 1));
                self.parked.insert(key, cell);
                cell
            }
        };
        Err(crate::engine::Stop::Wait(cell))
    }
}
