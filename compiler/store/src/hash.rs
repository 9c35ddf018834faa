//! The hash that decides whether a shared resource changed: md5 of the id followed by the
//! attributes as JSON with sorted keys (the reference's `attribute_hash`, spec export §3.5).
//! The event flags count as attributes, as they are fields in the reference.

use md5::{Digest, Md5};
use modelc_ir::reference::{PythonJson, python_json};
use modelc_ir::{Attributes, Resource};
use serde_json::Value;

/// What a partial export may not change in a shared resource: its attributes and event flags.
pub(crate) fn compared_fields(resource: &Resource) -> Attributes {
    let mut fields = resource.attributes.clone();
    for (name, flag) in [("send_event", resource.send_event), ("receive_events", resource.receive_events)] {
        if !fields.contains_key(name) {
            fields.insert(name, Value::Bool(flag));
        }
    }
    fields
}

/// md5 of the id followed by `json.dumps(fields, sort_keys=True)`, as the reference's server
/// computes it.
pub(crate) fn attribute_hash(resource: &Resource) -> String {
    let fields = Value::Object(compared_fields(resource).iter().map(|(k, v)| (k.to_owned(), v.clone())).collect());
    let text = python_json(&fields, PythonJson { sort_keys: true, escape_slash: false });
    let digest = Md5::new().chain_update(resource.id.as_bytes()).chain_update(text.as_bytes()).finalize();
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_does_not_change_the_hash_and_values_and_events_do() {
        let mut a = resource("r");
        a.attributes = [("x", serde_json::json!({"b": 1, "a": 2})), ("y", serde_json::json!(1))].into_iter().collect();
        let mut b = resource("r");
        b.attributes = [("y", serde_json::json!(1)), ("x", serde_json::json!({"a": 2, "b": 1}))].into_iter().collect();
        assert_eq!(attribute_hash(&a), attribute_hash(&b));
        let mut c = b.clone();
        c.attributes.insert("y", serde_json::json!(2));
        assert_ne!(attribute_hash(&a), attribute_hash(&c));
        let mut d = b.clone();
        d.send_event = true;
        assert_ne!(attribute_hash(&a), attribute_hash(&d));
        let mut e = a.clone();
        e.id = "s".into();
        assert_ne!(attribute_hash(&a), attribute_hash(&e));
    }

    fn resource(id: &str) -> Resource {
        Resource {
            id: id.into(),
            entity_type: "t".into(),
            agent: "internal".into(),
            attributes: Default::default(),
            requires: Vec::new(),
            send_event: false,
            receive_events: true,
            resource_set: None,
            state: modelc_ir::ResourceState::Available,
            source: modelc_ir::Source { entity: "t".into(), file: "main.cf".into(), line: 1 }.into(),
            meta: Default::default(),
            notify: Vec::new(),
        }
    }
}
