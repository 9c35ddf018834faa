//! The id and agent of one resource instance, and its exported attribute values (spec export
//! §2.2–2.3): values become text the way Python's `str()` writes them (`True`, `1.5`, `None`);
//! an unknown id or agent prunes the resource; an unknown anywhere in a field makes the field
//! `"<<undefined>>"`.

use modelc_exec::graph::InstanceGraph;
use modelc_ir::{ResourceId, UNDEFINED};
use modelc_value::{InstanceId, Value};

use crate::shapes::{Agent, Key, ResourceShape, Shapes};

/// How far a default key follows relations to instances with their own index.
const MAX_KEY_DEPTH: usize = 8;

/// The identity of a resource instance.
pub enum Identity {
    Id(ResourceId),
    /// The id or agent is not known at compile time: the resource is not exported.
    Unknown,
    /// The id or agent cannot be built; the reason completes "its id ..." / "its agent ...".
    Invalid(String),
}

/// The resource's agent, or why it has none.
pub fn agent(graph: &InstanceGraph, instance: InstanceId, shape: &ResourceShape) -> Result<String, Identity> {
    match &shape.agent {
        Agent::Literal(agent) => Ok(agent.clone()),
        Agent::Path(path) => match follow(graph, instance, path) {
            Ok(Value::Str(agent)) => Ok(agent.to_string()),
            Ok(Value::Unknown) => Err(Identity::Unknown),
            Ok(other) => Err(Identity::Invalid(format!(
                "its agent `{}` is {}, not a string",
                path.join("."),
                describe(graph, &other)
            ))),
            Err(reason) => Err(Identity::Invalid(reason)),
        },
    }
}

/// The resource's id; `mapped_id` is the id attribute's text when a Python mapper computes it.
pub fn identify(
    graph: &InstanceGraph,
    shapes: &Shapes<'_>,
    instance: InstanceId,
    shape: &ResourceShape,
    mapped_id: Option<&str>,
) -> Identity {
    let values = graph.values(instance);
    let agent = match agent(graph, instance, shape) {
        Ok(agent) => agent,
        Err(identity) => return identity,
    };
    let mut key = Vec::new();
    match &shape.key {
        Key::Mapped(name) => match mapped_id {
            Some(value) => key.push((name.clone(), value.to_owned())),
            None => return Identity::Unknown,
        },
        Key::Declared(name, at) => match text(graph, &values[*at]) {
            Some(value) => key.push((name.clone(), value)),
            None => return Identity::Unknown,
        },
        Key::Index(attributes) => {
            for (name, at) in attributes {
                if let Err(identity) = push_key(graph, shapes, name, &values[*at], &mut key, 0) {
                    return identity;
                }
            }
        }
        Key::Missing => return Identity::Invalid("it has no id".to_owned()),
    }
    Identity::Id(ResourceId { entity_type: shape.entity_type.clone(), agent, key })
}

/// Adds `name=value` to a default key; a related instance adds its own index key, prefixed
/// (`network.id=7`).
fn push_key(
    graph: &InstanceGraph,
    shapes: &Shapes<'_>,
    name: &str,
    value: &Value,
    key: &mut Vec<(String, String)>,
    depth: usize,
) -> Result<(), Identity> {
    let Value::Instance(related) = value else {
        let text = text(graph, value).ok_or(Identity::Unknown)?;
        key.push((name.to_owned(), text));
        return Ok(());
    };
    let entity = &graph.entity_of(*related).fqn;
    let index = shapes.first_index(entity).filter(|_| depth < MAX_KEY_DEPTH).ok_or_else(|| {
        Identity::Invalid(format!("its index attribute `{name}` is a `{entity}`, which has no index to name it by"))
    })?;
    let mut nested_name = String::with_capacity(name.len() + 16);
    for attribute in index {
        let nested = graph.attribute(*related, attribute).unwrap_or(&Value::Null);
        nested_name.clear();
        nested_name.push_str(name);
        nested_name.push('.');
        nested_name.push_str(attribute);
        push_key(graph, shapes, &nested_name, nested, key, depth + 1)?;
    }
    Ok(())
}

/// Follows `path` from `instance`: every step but the last leads to one instance (of a list,
/// the first, as the reference's agent lookup takes it).
fn follow(graph: &InstanceGraph, instance: InstanceId, path: &[String]) -> Result<Value, String> {
    let mut at = instance;
    for (i, step) in path.iter().enumerate() {
        let mut value = graph.attribute(at, step).cloned().unwrap_or(Value::Null);
        if i + 1 == path.len() {
            return Ok(value);
        }
        if let Value::List(items) = &value
            && let Some(first) = items.first()
        {
            value = first.clone();
        }
        match value {
            Value::Instance(next) => at = next,
            Value::Unknown => return Ok(Value::Unknown),
            Value::Null => {
                return Err(format!("its agent `{}` cannot be followed: `{step}` is not set (null)", path.join(".")));
            }
            other => return Err(format!("its agent `{}` cannot be followed: `{step}` is {other:?}", path.join("."))),
        }
    }
    Err("its agent path is empty".to_owned())
}

/// A value as Python's `str()` writes it; `None` when (part of) it is unknown.
pub fn text(graph: &InstanceGraph, value: &Value) -> Option<String> {
    modelc_value::known_string(value, &|id| graph.entity_of(id).fqn.clone())
}

fn describe(graph: &InstanceGraph, value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Instance(id) => format!("an instance of `{}`", graph.entity_of(*id).fqn),
        other => format!("a {}", other.type_name()),
    }
}

/// See [`Value::contains_unknown`].
pub fn contains_unknown(value: &Value) -> bool {
    value.contains_unknown()
}

/// A field's exported value, and whether it is known.
pub fn field_value(value: &Value) -> (serde_json::Value, bool) {
    if contains_unknown(value) {
        return (serde_json::Value::String(UNDEFINED.to_owned()), false);
    }
    match modelc_value::json::to_serde_json(value) {
        Ok(json) => (json, true),
        // NaN and infinities have no JSON form; the reference fails the export on them too.
        Err(_) => (serde_json::Value::String(modelc_value::cast_string(value, &|_| String::new())), true),
    }
}
