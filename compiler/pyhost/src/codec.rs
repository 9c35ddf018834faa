//! The model's values as the protocol carries them: JSON, with lists as arrays and three
//! tagged objects, `{"$d": {…}}` for a dict, `{"$i": id, "t": entity}` for an instance and
//! `{"$u": 1}` for an unknown.

use indexmap::IndexMap;
use modelc_std_plugins::PluginContext;
use modelc_value::{InstanceId, Value};
use serde_json::{Map, Number, json};

pub(crate) fn encode(value: &Value, context: &dyn PluginContext) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => json!(b),
        Value::Int(i) => json!(i),
        Value::Float(f) => Number::from_f64(*f).map_or(serde_json::Value::Null, serde_json::Value::Number),
        Value::Str(s) => json!(s.as_str()),
        Value::List(items) => serde_json::Value::Array(items.iter().map(|v| encode(v, context)).collect()),
        Value::Dict(entries) => {
            let map: Map<String, serde_json::Value> =
                entries.iter().map(|(k, v)| (k.clone(), encode(v, context))).collect();
            json!({ "$d": map })
        }
        Value::Instance(id) => json!({ "$i": id.0, "t": context.entity_name(*id) }),
        Value::Unknown => json!({ "$u": 1 }),
    }
}

pub(crate) fn decode(value: &serde_json::Value) -> Result<Value, String> {
    Ok(match value {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().ok_or_else(|| format!("{n} is not a number the model holds"))?),
        },
        serde_json::Value::String(s) => Value::str(s.as_str()),
        serde_json::Value::Array(items) => Value::list(items.iter().map(decode).collect::<Result<_, _>>()?),
        serde_json::Value::Object(object) => {
            if let Some(id) = object.get("$i") {
                let id = id.as_u64().and_then(|i| u32::try_from(i).ok()).ok_or("an instance without its number")?;
                Value::Instance(InstanceId(id))
            } else if object.contains_key("$u") {
                Value::Unknown
            } else if let Some(serde_json::Value::Object(entries)) = object.get("$d") {
                let mut dict = IndexMap::with_capacity(entries.len());
                for (key, item) in entries {
                    dict.insert(key.clone(), decode(item)?);
                }
                Value::dict(dict)
            } else {
                return Err(format!("a value modelc does not know: {value}"));
            }
        }
    })
}
