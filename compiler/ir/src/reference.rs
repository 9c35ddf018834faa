//! The reference exporter's offline output (`inmanta export -j FILE`, spec export §2.6): one
//! JSON list of resource dicts, each with its attributes, `requires` (versionless ids),
//! `"version": 0` and `id` with `,v=0`, written the way Python's `json.dumps` writes it
//! (`", "` and `": "` separators, non-ASCII as `\uXXXX`) with `</` written `<\/`. The reference
//! orders the list and the fields arbitrarily (Python sets); here both follow the queue and
//! declaration order, so compare the two as sets.

use modelc_value::dumps::{self, Style};
use serde_json::Value;

use crate::Ir;

/// How Python's `json.dumps` is called: the exporter escapes `</` (its custom encoder); the
/// server's attribute hash sorts keys (`sort_keys=True`). The writer is the one
/// `modelc_value::dumps`, which `std::json_dumps` uses too.
pub type PythonJson = Style;

/// The exporter's style: keys in order, `</` as `<\/`.
const EXPORTER: Style = Style { sort_keys: false, escape_slash: true };

/// `value` as Python's `json.dumps` writes it in `style`.
pub fn python_json(value: &Value, style: Style) -> String {
    // A serde_json value holds no instance and no NaN: it is always writable.
    dumps::dumps(value, style, usize::MAX).unwrap_or_default()
}

/// The `export -j` list of an IR.
pub fn export_list(ir: &Ir) -> String {
    let mut out = String::from("[");
    for (i, resource) in ir.resources.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push('{');
        for (name, value) in &resource.attributes {
            dumps::write_str(&mut out, name, EXPORTER);
            out.push_str(": ");
            out.push_str(&python_json(value, EXPORTER));
            out.push_str(", ");
        }
        out.push_str("\"requires\": [");
        for (k, required) in resource.requires.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            dumps::write_str(&mut out, required, EXPORTER);
        }
        out.push_str("], \"version\": 0, \"id\": ");
        dumps::write_str(&mut out, &format!("{},v=0", resource.id), EXPORTER);
        out.push('}');
    }
    out.push(']');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_what_the_reference_writes() {
        let mut ir = crate::tests::sample();
        ir.resources.truncate(2);
        ir.resources[1].attributes.insert("value", serde_json::json!("</script> é"));
        assert_eq!(
            export_list(&ir),
            r#"[{"name": "a", "requires": [], "version": 0, "id": "test::R[internal,name=a],v=0"}, {"name": "b", "value": "<\/script> \u00e9", "requires": ["test::R[internal,name=a]"], "version": 0, "id": "test::R[internal,name=b],v=0"}]"#
        );
    }

    #[test]
    fn the_hash_style_sorts_keys_and_leaves_slashes() {
        let value = serde_json::json!({"b": [1.0, "</x>", 1e20, 1.5e-7], "a": {"d": null, "c": "é"}});
        let style = Style { sort_keys: true, escape_slash: false };
        assert_eq!(
            python_json(&value, style),
            r#"{"a": {"c": "\u00e9", "d": null}, "b": [1.0, "</x>", 1e+20, 1.5e-07]}"#
        );
    }
}
