//! The reference exporter's offline output (`inmanta export -j FILE`, spec export §2.6): one
//! JSON list of resource dicts, each with its attributes, `requires` (versionless ids),
//! `"version": 0` and `id` with `,v=0`, written the way Python's `json.dumps` writes it
//! (`", "` and `": "` separators, non-ASCII as `\uXXXX`) with `</` written `<\/`. The reference
//! orders the list and the fields arbitrarily (Python sets); here both follow the queue and
//! declaration order, so compare the two as sets.

use std::fmt::Write as _;

use serde_json::Value;

use crate::Ir;

/// How Python's `json.dumps` is called: the exporter escapes `</` (its custom encoder); the
/// server's attribute hash sorts keys (`sort_keys=True`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PythonJson {
    pub sort_keys: bool,
    pub escape_slash: bool,
}

/// The exporter's style: keys in order, `</` as `<\/`.
const EXPORTER: PythonJson = PythonJson { sort_keys: false, escape_slash: true };

/// `value` as Python's `json.dumps` writes it in `style` (`", "` and `": "` separators,
/// non-ASCII as `\uXXXX`, floats as Python's `repr`).
pub fn python_json(value: &Value, style: PythonJson) -> String {
    let mut out = String::new();
    write_value(&mut out, value, style);
    out
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
            write_str(&mut out, name, EXPORTER);
            out.push_str(": ");
            write_value(&mut out, value, EXPORTER);
            out.push_str(", ");
        }
        out.push_str("\"requires\": [");
        for (k, required) in resource.requires.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            write_str(&mut out, required, EXPORTER);
        }
        out.push_str("], \"version\": 0, \"id\": ");
        write_str(&mut out, &format!("{},v=0", resource.id), EXPORTER);
        out.push('}');
    }
    out.push(']');
    out
}

fn write_value(out: &mut String, value: &Value, style: PythonJson) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => out.push_str(&python_float(f)),
            _ => out.push_str(&n.to_string()),
        },
        Value::String(s) => write_str(out, s, style),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item, style);
            }
            out.push(']');
        }
        Value::Object(entries) => {
            let mut entries: Vec<(&String, &Value)> = entries.iter().collect();
            if style.sort_keys {
                entries.sort_by_key(|(key, _)| *key);
            }
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str(out, key, style);
                out.push_str(": ");
                write_value(out, item, style);
            }
            out.push('}');
        }
    }
}

/// A JSON string as Python writes it: ASCII only, and `</` escaped as `<\/` in the exporter's
/// style.
fn write_str(out: &mut String, text: &str, style: PythonJson) {
    out.push('"');
    let mut previous = '\0';
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '/' if style.escape_slash && previous == '<' => out.push_str("\\/"),
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
        previous = c;
    }
    out.push('"');
}

/// Python's `repr` of a float: `1.0`, `1e+20`, `1.5e-07`.
fn python_float(f: f64) -> String {
    let text = format!("{f:?}");
    match text.split_once('e') {
        Some((mantissa, exponent)) => {
            let exponent: i32 = exponent.parse().unwrap_or(0);
            let sign = if exponent < 0 { '-' } else { '+' };
            format!("{mantissa}e{sign}{:02}", exponent.abs())
        }
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_what_the_reference_writes() {
        let mut ir = crate::tests::sample();
        ir.resources.truncate(2);
        ir.resources[1].attributes.insert("value".into(), serde_json::json!("</script> é"));
        assert_eq!(
            export_list(&ir),
            r#"[{"name": "a", "requires": [], "version": 0, "id": "test::R[internal,name=a],v=0"}, {"name": "b", "value": "<\/script> \u00e9", "requires": ["test::R[internal,name=a]"], "version": 0, "id": "test::R[internal,name=b],v=0"}]"#
        );
    }

    #[test]
    fn the_hash_style_sorts_keys_and_leaves_slashes() {
        let value = serde_json::json!({"b": [1.0, "</x>"], "a": {"d": null, "c": "é"}});
        let style = PythonJson { sort_keys: true, escape_slash: false };
        assert_eq!(python_json(&value, style), r#"{"a": {"c": "\u00e9", "d": null}, "b": [1.0, "</x>"]}"#);
    }

    #[test]
    fn floats_print_as_python_prints_them() {
        assert_eq!(python_float(1.0), "1.0");
        assert_eq!(python_float(2.5), "2.5");
        assert_eq!(python_float(1e20), "1e+20");
        assert_eq!(python_float(1.5e-7), "1.5e-07");
    }
}
