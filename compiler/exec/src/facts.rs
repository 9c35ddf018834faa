//! `std::getfact`: the facts deploys learnt about resources (`World::facts`), found by the id
//! the resource instance will be exported with.
//!
//! The id is built as the export builds it (`modelc-refine`'s identity), from the same
//! declarations (`ModelIndex::identifying_declaration`, `ModelIndex::declared_agent`), but
//! during execution: attributes are read through the plugin's context, so a value not set yet
//! makes the call wait, as the reference's `getfact` does. An id a module's Python mapper
//! computes, or an entity without a declared id, has no fact.

use std::collections::HashMap;

use modelc_db::AgentSummary;
use modelc_sema::ModelIndex;
use modelc_sema::resources::DEFAULT_AGENT;
use modelc_std_plugins::{AttributeError, PluginContext};
use modelc_value::{InstanceId, Value};

/// What earlier deploys learnt: per versionless resource id, each fact's value by name.
pub type KnownFacts = HashMap<String, HashMap<String, String>>;

/// The versionless id `instance` (of `entity`) will be exported with, its attributes read
/// through `context`; `None` when it has no
/// declared id, a mapper computes it, or a part of it is unknown.
pub(crate) fn resource_id(
    index: &ModelIndex,
    entity: &str,
    instance: InstanceId,
    context: &mut dyn PluginContext,
) -> Result<Option<String>, AttributeError> {
    let Some((_, declaring, declaration)) = index.identifying_declaration(entity) else {
        return Ok(None);
    };
    let Some(id_attribute) = declaration.id.as_deref() else {
        return Ok(None);
    };
    if declaration.python.as_ref().is_some_and(|p| p.id_mapped) {
        return Ok(None);
    }
    let agent = match index.declared_agent(entity) {
        None => DEFAULT_AGENT.to_owned(),
        Some(AgentSummary::Literal(agent)) => agent.clone(),
        Some(AgentSummary::Path(path)) => {
            let mut at = Value::Instance(instance);
            for name in path {
                let Value::Instance(owner) = at else { return Ok(None) };
                at = context.attribute(owner, name)?;
            }
            match at {
                Value::Str(agent) => agent.to_string(),
                _ => return Ok(None),
            }
        }
    };
    let value = context.attribute(instance, id_attribute)?;
    let Some(key) = modelc_value::known_string(&value, &|id| context.entity_name(id)) else {
        return Ok(None);
    };
    let id =
        modelc_ir::ResourceId { entity_type: declaring.fqn.clone(), agent, key: vec![(id_attribute.to_owned(), key)] };
    Ok(Some(id.text()))
}
