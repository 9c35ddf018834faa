//! `json_dumps` and `json_loads`: Python's `json.dumps`/`json.loads` through
//! [`modelc_value::json`]. Loading can produce nested lists, which DSL literals cannot.

use modelc_value::Value;
use modelc_value::json::{JsonError, from_json, to_json};

use super::bind::BoundArgs;
use super::error::PluginError;

type Result<T> = std::result::Result<T, PluginError>;

fn external(e: JsonError) -> PluginError {
    PluginError::External { kind: e.kind, message: e.message }
}

pub(crate) fn json_dumps(args: &BoundArgs) -> Result<Value> {
    to_json(args.value("obj")?).map(Value::from).map_err(external)
}

pub(crate) fn json_loads(args: &BoundArgs) -> Result<Value> {
    from_json(args.str_arg("s")?).map_err(external)
}

#[cfg(test)]
mod tests {
    use super::*;
    use modelc_value::IndexMap;

    #[test]
    fn dumps_with_python_separators() {
        let d: IndexMap<String, Value> = [("a".to_string(), Value::list(vec![Value::Int(1), Value::Int(2)]))].into();
        let out = json_dumps(&BoundArgs::new().with("obj", Value::dict(d))).unwrap();
        assert_eq!(out.as_str(), Some(r#"{"a": [1, 2]}"#));
    }

    #[test]
    fn loads_nested_values() {
        let v = json_loads(&BoundArgs::new().with("s", r#"{"a": 1, "l": [[1], [2, 3]]}"#)).unwrap();
        assert_eq!(modelc_value::interpolate(&v, &|_| String::new()), "{'a': 1, 'l': [[1], [2, 3]]}");
        let err = json_loads(&BoundArgs::new().with("s", "{")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
        );
    }
}
