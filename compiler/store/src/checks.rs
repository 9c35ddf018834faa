//! Checks of an export's own resources, made before the store is touched. A compile never
//! produces resources that break them (refinement reports the same problems as E04xx), but the
//! store is the guard of its own invariants: an IR read from a file (`modelc export --ir`) or
//! written by another tool gets the same checks.

use rustc_hash::FxHashMap as HashMap;

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

/// An export's resources by id.
pub(crate) struct ById<'a> {
    index: HashMap<&'a str, u32>,
    resources: &'a [Resource],
}

impl<'a> ById<'a> {
    pub(crate) fn get(&self, id: &str) -> Option<&'a Resource> {
        self.index.get(id).map(|&i| &self.resources[i as usize])
    }

    pub(crate) fn contains_key(&self, id: &str) -> bool {
        self.index.contains_key(id)
    }
}

/// The export's resources by id. Refused: an id that appears twice, and resource sets that
/// disagree with the resources (a set listing a resource that is not its member, or a resource
/// in a set the export does not list).
pub(crate) fn by_id(ir: &Ir) -> Result<ById<'_>, StoreError> {
    let mut index = HashMap::with_capacity_and_hasher(ir.resources.len(), Default::default());
    for (i, resource) in ir.resources.iter().enumerate() {
        if index.insert(resource.id.as_str(), i as u32).is_some() {
            return Err(reject(
                Rule::DuplicateId,
                format!("resource `{}` appears more than once in the export", resource.id),
                vec![resource.id.clone()],
                resource.resource_set.iter().cloned().collect(),
            ));
        }
    }
    // Which resources some set lists (as a member of that very set).
    let mut listed = vec![false; ir.resources.len()];
    for set in &ir.sets {
        for member in &set.resources {
            let position = index.get(member.as_str()).map(|&i| i as usize);
            let actual = position.map(|i| ir.resources[i].resource_set.as_deref());
            if actual != Some(Some(set.name.as_str())) {
                let place = match actual {
                    None => "is not in the export".to_owned(),
                    Some(None) => "is shared".to_owned(),
                    Some(Some(other)) => format!("is in set `{other}`"),
                };
                return Err(reject(
                    Rule::SetMismatch,
                    format!("resource set `{}` lists `{member}`, which {place}", set.name),
                    vec![member.clone()],
                    vec![set.name.clone()],
                ));
            }
            if let Some(i) = position {
                listed[i] = true;
            }
        }
    }
    for (resource, listed) in ir.resources.iter().zip(listed) {
        let Some(set) = resource.resource_set.as_deref() else { continue };
        if !listed {
            return Err(reject(
                Rule::SetMismatch,
                format!("resource `{}` is in set `{set}`, which does not list it", resource.id),
                vec![resource.id.clone()],
                vec![set.to_owned()],
            ));
        }
    }
    Ok(ById { index, resources: &ir.resources })
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

/// The checks of a full export, which need no store: ids unique, sets consistent, every
/// requirement in the export, none across sets. [`crate::Store::export_full`] makes them too;
/// a caller makes them first so that a refused export does not even create the store.
pub fn check_full_export(ir: &Ir) -> Result<(), StoreError> {
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
