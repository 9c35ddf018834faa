//! The hash that decides whether a shared resource changed: md5 of the id followed by the
//! attributes as JSON with sorted keys (the reference's `attribute_hash`, spec export §3.5).

use md5::{Digest, Md5};
use serde_json::Value;

pub(crate) fn attribute_hash(id: &str, attributes: &indexmap::IndexMap<String, Value>) -> String {
    let mut text = String::new();
    let sorted: std::collections::BTreeMap<&String, &Value> = attributes.iter().collect();
    text.push('{');
    for (i, (key, value)) in sorted.into_iter().enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        text.push_str(&serde_json::to_string(key).unwrap_or_default());
        text.push_str(": ");
        write_sorted(&mut text, value);
    }
    text.push('}');
    let digest = Md5::new().chain_update(id.as_bytes()).chain_update(text.as_bytes()).finalize();
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn write_sorted(out: &mut String, value: &Value) {
    match value {
        Value::Object(entries) => {
            let sorted: std::collections::BTreeMap<&String, &Value> = entries.iter().collect();
            out.push('{');
            for (i, (key, item)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&serde_json::to_string(key).unwrap_or_default());
                out.push_str(": ");
                write_sorted(out, item);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_sorted(out, item);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_does_not_change_the_hash_and_values_do() {
        let a: indexmap::IndexMap<String, Value> =
            [("x".to_owned(), serde_json::json!({"b": 1, "a": 2})), ("y".to_owned(), serde_json::json!(1))].into();
        let b: indexmap::IndexMap<String, Value> =
            [("y".to_owned(), serde_json::json!(1)), ("x".to_owned(), serde_json::json!({"a": 2, "b": 1}))].into();
        assert_eq!(attribute_hash("r", &a), attribute_hash("r", &b));
        let mut c = b.clone();
        c.insert("y".into(), serde_json::json!(2));
        assert_ne!(attribute_hash("r", &a), attribute_hash("r", &c));
        assert_ne!(attribute_hash("r", &a), attribute_hash("s", &a));
    }
}
