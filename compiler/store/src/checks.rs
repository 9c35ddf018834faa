//! Checks of an export's own resources, made before the store is touched. A compile never
//! produces resources that break them (refinement reports the same problems as E04xx), but the
//! store is the guard of its own invariants: an IR read from a file (`modelc export --ir`) or
//! written by another tool gets the same checks.

use std::collections::HashMap;

use modelc_ir::{Ir, Resource};

use crate::{Rejection, Rule, StoreError};

pub(crate) fn reject(rule: Rule, message: String, resources: Vec<String>, sets: Vec<String>) -> StoreError {
    StoreError::Rejected(Rejection { rule, message, resources, sets })
}

/// A partial export into a store without versions.
pub(crate) fn no_base() -> StoreError {
    reject(
        Rule::NoBase,
        "a partial export needs a version to build on, and the store has none: export the full model first".to_owned(),
        Vec::new(),
        Vec::new(),
    )
}

/// The export's resources by id; an id that appears twice is a rejection.
pub(crate) fn by_id(ir: &Ir) -> Result<HashMap<&str, &Resource>, StoreError> {
    let mut by_id = HashMap::with_capacity(ir.resources.len());
    for resource in &ir.resources {
        if by_id.insert(resource.id.as_str(), resource).is_some() {
            return Err(reject(
                Rule::DuplicateId,
                format!("resource `{}` appears more than once in the export", resource.id),
                vec![resource.id.clone()],
                resource.resource_set.iter().cloned().collect(),
            ));
        }
    }
    Ok(by_id)
}

/// `resource` requires `required`, which is in `target_set` (`None`: shared): a rejection when
/// the two are members of different sets.
pub(crate) fn same_set_or_shared(
    resource: &Resource,
    required: &str,
    target_set: Option<&str>,
) -> Result<(), StoreError> {
    match (resource.resource_set.as_deref(), target_set) {
        (Some(from), Some(to)) if from != to => Err(reject(
            Rule::CrossSet,
            format!("resource `{}` in set `{from}` requires `{required}` in set `{to}`", resource.id),
            vec![resource.id.clone(), required.to_owned()],
            vec![from.to_owned(), to.to_owned()],
        )),
        _ => Ok(()),
    }
}

pub(crate) fn dangling(resource: &Resource, required: &str, kept_from: Option<u64>) -> StoreError {
    let place = match kept_from {
        Some(v) => format!("neither in this export nor kept from version {v}"),
        None => "not in this export".to_owned(),
    };
    reject(
        Rule::Dangling,
        format!("resource `{}` requires `{required}`, which is {place}", resource.id),
        vec![resource.id.clone(), required.to_owned()],
        resource.resource_set.iter().cloned().collect(),
    )
}

/// A full export: ids unique, every requirement in the export, none across sets.
pub(crate) fn full_export(ir: &Ir) -> Result<(), StoreError> {
    let by_id = by_id(ir)?;
    for resource in &ir.resources {
        for required in &resource.requires {
            let Some(target) = by_id.get(required.as_str()) else {
                return Err(dangling(resource, required, None));
            };
            same_set_or_shared(resource, required, target.resource_set.as_deref())?;
        }
    }
    Ok(())
}
