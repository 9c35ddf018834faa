//! How a resource's fields get their values: an attribute, a path of attributes, or one of the
//! export functions a `resource` declaration can name (`hash=file_content(content, …)`). The
//! functions do what the reference's Python exporters of the fs and mitogen modules do:
//!
//! * `file_content(content, prefix_content, suffix_content, content_separator)`: the file's
//!   text, with the `Content` blocks of the prefix and suffix (sorted by `sorting_key`, else by
//!   `value`) joined by the separator, goes to the IR's content table; the field is its sha1.
//!   (The reference fails on any suffix: it reads a misspelt `content_seperator`. modelc
//!   appends the suffix as the module documents.)
//! * `mitogen_context(via, host)`: the mitogen context the resource is deployed through, as a
//!   dict: its own `via`, else its host's `via`, else an ssh context to the host's `ip` (through
//!   sudo unless `remote_user` is root); every attribute that is not null, and the context's own
//!   `via`, nested.

use indexmap::IndexMap;
use modelc_exec::graph::InstanceGraph;
use modelc_value::{InstanceId, Value};
use serde_json::json;
use sha1::{Digest, Sha1};

use crate::identity::{contains_unknown, field_value};
use crate::shapes::Field;

/// What fields are computed with: the graph, the plain attributes of an entity, and the
/// content table the files' text goes to.
pub(crate) struct FieldContext<'a> {
    pub graph: &'a InstanceGraph,
    /// Per entity of the graph, the names of its attributes that are not relations (inherited
    /// ones included).
    pub plain_attributes: &'a [Vec<String>],
    pub files: &'a mut IndexMap<String, String>,
    /// The values the module's Python mappers computed for this resource (`Field::Python`).
    pub mapped: &'a [Value],
}

/// A field's value, and whether it is known; an error says why it cannot be computed.
pub(crate) fn field(
    context: &mut FieldContext<'_>,
    instance: InstanceId,
    field: &Field,
) -> Result<(serde_json::Value, bool), String> {
    let graph = context.graph;
    match field {
        Field::Attribute(at) => Ok(field_value(&graph.values(instance)[*at])),
        Field::Flag(at, default) => {
            let flag = match at.map(|at| &graph.values(instance)[at]) {
                Some(Value::Bool(b)) => *b,
                _ => *default,
            };
            Ok((serde_json::Value::Bool(flag), true))
        }
        Field::Python(at) => match context.mapped.get(*at) {
            Some(Value::Instance(id)) => {
                Err(format!("its mapper returned an instance of `{}`, which is not a value", graph.entity_of(*id).fqn))
            }
            Some(value) => Ok(field_value(value)),
            None => Err("its mapper gave no value".to_owned()),
        },
        Field::Missing => Err(format!(
            "`{}` has no attribute of that name, and no mapper of its Python class computes it",
            graph.entity_of(instance).fqn
        )),
        Field::Path(path) => Ok(field_value(&follow(graph, instance, path)?)),
        Field::Call(function, args) => {
            let values = args.iter().map(|path| follow(graph, instance, path)).collect::<Result<Vec<_>, _>>()?;
            if values.iter().any(contains_unknown_deep(graph)) {
                return Ok((serde_json::Value::String(modelc_ir::UNDEFINED.to_owned()), false));
            }
            match function.as_str() {
                "file_content" => file_content(context, &values),
                "mitogen_context" => mitogen_context(context, &values).map(|v| (v, true)),
                other => Err(format!("`{other}` is not an export function")),
            }
        }
    }
}

/// Whether a value, or an attribute of an instance it holds that the functions read, is unknown.
fn contains_unknown_deep(graph: &InstanceGraph) -> impl Fn(&Value) -> bool + '_ {
    move |value| match value {
        Value::Instance(id) => graph.values(*id).iter().any(contains_unknown),
        Value::List(items) => items.iter().any(|i| match i {
            Value::Instance(id) => graph.values(*id).iter().any(contains_unknown),
            other => contains_unknown(other),
        }),
        other => contains_unknown(other),
    }
}

/// Follows `path` from `instance`; a null on the way gives null.
fn follow(graph: &InstanceGraph, instance: InstanceId, path: &[String]) -> Result<Value, String> {
    let mut value = Value::Instance(instance);
    for step in path {
        value = match value {
            Value::Instance(at) => graph.attribute(at, step).cloned().unwrap_or(Value::Null),
            Value::Null => return Ok(Value::Null),
            Value::Unknown => return Ok(Value::Unknown),
            other => {
                return Err(format!(
                    "`{}` cannot be followed: a {} has no `{step}`",
                    path.join("."),
                    other.type_name()
                ));
            }
        };
    }
    Ok(value)
}

fn file_content(context: &mut FieldContext<'_>, values: &[Value]) -> Result<(serde_json::Value, bool), String> {
    let graph = context.graph;
    let Some(Value::Str(content)) = values.first() else {
        return Err("its content is not a string".to_owned());
    };
    let separator = match values.get(3) {
        Some(Value::Str(s)) => s.to_string(),
        _ => "\n".to_owned(),
    };
    let blocks = |value: Option<&Value>| -> Result<Option<String>, String> {
        let items = match value {
            Some(Value::List(items)) if !items.is_empty() => items.to_vec(),
            Some(Value::Instance(id)) => vec![Value::Instance(*id)],
            _ => return Ok(None),
        };
        let mut parts: Vec<(String, String)> = Vec::new();
        for item in items.iter() {
            let Value::Instance(id) = item else {
                return Err("a prefix or suffix block is not an instance".to_owned());
            };
            let text = |name: &str| match graph.attribute(*id, name) {
                Some(Value::Str(s)) => Some(s.to_string()),
                _ => None,
            };
            let value = text("value").ok_or("a content block has no `value` string")?;
            parts.push((text("sorting_key").unwrap_or_else(|| value.clone()), value));
        }
        // Python's sorted() is stable: equal keys keep their order.
        parts.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Some(parts.into_iter().map(|(_, v)| v).collect::<Vec<_>>().join(&separator)))
    };
    let mut text = content.to_string();
    if let Some(prefix) = blocks(values.get(1))? {
        text = format!("{prefix}{separator}{text}");
    }
    if let Some(suffix) = blocks(values.get(2))? {
        text = format!("{text}{separator}{suffix}");
    }
    let hash: String = Sha1::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    context.files.entry(hash.clone()).or_insert(text);
    Ok((serde_json::Value::String(hash), true))
}

fn mitogen_context(context: &FieldContext<'_>, values: &[Value]) -> Result<serde_json::Value, String> {
    let graph = context.graph;
    if let Some(Value::Instance(via)) = values.first() {
        return serialize_context(context, *via);
    }
    let Some(Value::Instance(host)) = values.get(1) else {
        return Err("it has no mitogen context: set its `via`, or give it a host".to_owned());
    };
    if let Some(Value::Instance(via)) = graph.attribute(*host, "via") {
        return serialize_context(context, *via);
    }
    let text = |value: Option<&Value>| value.map_or(serde_json::Value::Null, |v| field_value(v).0);
    let ip = graph.attribute(*host, "ip");
    if matches!(ip, None | Some(Value::Null)) {
        return Err(
            "it has no mitogen context: set its `via`, its host's `via` (e.g. `via=mitogen::Local()`), or its host's `ip`"
                .to_owned(),
        );
    }
    let python = match graph.attribute(*host, "os") {
        Some(Value::Instance(os)) => match graph.attribute(*os, "python_cmd") {
            Some(Value::Str(cmd)) => cmd.to_string(),
            _ => "python3".to_owned(),
        },
        _ => "python3".to_owned(),
    };
    let remote_user = graph.attribute(*host, "remote_user");
    let ssh = json!({
        "method_name": "ssh",
        "name": text(graph.attribute(*host, "name")),
        "hostname": text(ip),
        "username": text(remote_user),
        "port": text(graph.attribute(*host, "remote_port")),
        "check_host_keys": "ignore",
        "ssh_args": ["-o", "UserKnownHostsFile=/dev/null", "-o", "PasswordAuthentication=no"],
        "python_path": [python],
    });
    if matches!(remote_user, Some(Value::Str(user)) if &**user == "root") {
        Ok(ssh)
    } else {
        Ok(json!({"method_name": "sudo", "name": "", "via": ssh}))
    }
}

/// A `mitogen::Context` instance as a dict: its attributes that are not null, then its own
/// `via`, nested.
fn serialize_context(context: &FieldContext<'_>, instance: InstanceId) -> Result<serde_json::Value, String> {
    let graph = context.graph;
    let mut map = serde_json::Map::new();
    let entity = &graph.entity_of(instance).fqn;
    for name in &context.plain_attributes[graph.get(instance).entity as usize] {
        match graph.attribute(instance, name) {
            None | Some(Value::Null) => {}
            Some(value) => {
                map.insert(name.clone(), field_value(value).0);
            }
        }
    }
    if !map.contains_key("method_name") {
        return Err(format!("its context is a `{entity}`, not a mitogen::Context"));
    }
    if let Some(Value::Instance(via)) = graph.attribute(instance, "via") {
        map.insert("via".to_owned(), serialize_context(context, *via)?);
    }
    Ok(serde_json::Value::Object(map))
}
