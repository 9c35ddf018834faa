//! Typed access to bound arguments for the plugin bodies. The executor validates arguments
//! against the declared types before the call; these accessors still check, so a wrong value
//! becomes an [`PluginError::Invalid`] instead of a panic.

use indexmap::IndexMap;
use modelc_value::Value;

use super::bind::BoundArgs;
use super::error::PluginError;

/// The value as the reference's type errors show it: `'[1]'`, `'null'`.
pub(crate) fn shown(value: &Value) -> String {
    modelc_value::interpolate(value, &|id| format!("instance {}", id.0))
}

fn wrong(value: &Value, expected: &str) -> PluginError {
    PluginError::invalid(format!("Invalid value '{}', expected {expected}", shown(value)))
}

impl BoundArgs {
    pub(crate) fn value(&self, name: &str) -> Result<&Value, PluginError> {
        self.get(name).ok_or_else(|| PluginError::invalid(format!("missing argument '{name}'")))
    }

    pub fn str_arg(&self, name: &str) -> Result<&str, PluginError> {
        let v = self.value(name)?;
        v.as_str().ok_or_else(|| wrong(v, "string"))
    }

    /// An `int` parameter: integers and booleans, as the DSL's `int` type accepts.
    pub(crate) fn int_arg(&self, name: &str) -> Result<i64, PluginError> {
        let v = self.value(name)?;
        v.as_int().ok_or_else(|| wrong(v, "int"))
    }

    pub(crate) fn bool_arg(&self, name: &str) -> Result<bool, PluginError> {
        match self.value(name)? {
            Value::Bool(b) => Ok(*b),
            v => Err(wrong(v, "bool")),
        }
    }

    pub(crate) fn list_arg(&self, name: &str) -> Result<&[Value], PluginError> {
        let v = self.value(name)?;
        v.as_list().ok_or_else(|| wrong(v, "list"))
    }

    pub(crate) fn dict_arg(&self, name: &str) -> Result<&IndexMap<String, Value>, PluginError> {
        let v = self.value(name)?;
        v.as_dict().ok_or_else(|| wrong(v, "dict"))
    }

    /// A `string?` parameter.
    pub(crate) fn opt_str_arg(&self, name: &str) -> Result<Option<&str>, PluginError> {
        match self.value(name)? {
            Value::Null => Ok(None),
            v => v.as_str().map(Some).ok_or_else(|| wrong(v, "string")),
        }
    }

    /// An `int?` parameter.
    pub(crate) fn opt_int_arg(&self, name: &str) -> Result<Option<i64>, PluginError> {
        match self.value(name)? {
            Value::Null => Ok(None),
            v => v.as_int().map(Some).ok_or_else(|| wrong(v, "int")),
        }
    }
}

/// Python's index normalisation: negative indexes count from the end; `None` when out of range.
pub(crate) fn py_index(index: i64, len: usize) -> Option<usize> {
    let len = i64::try_from(len).ok()?;
    let i = if index < 0 { index.checked_add(len)? } else { index };
    if (0..len).contains(&i) { usize::try_from(i).ok() } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accessors_check_types() {
        let args =
            BoundArgs::new().with("s", "x").with("n", true).with("l", Value::list(vec![])).with("o", Value::Null);
        assert_eq!(args.str_arg("s"), Ok("x"));
        assert_eq!(args.int_arg("n"), Ok(1));
        assert_eq!(args.opt_str_arg("o"), Ok(None));
        assert_eq!(args.opt_int_arg("n"), Ok(Some(1)));
        assert_eq!(args.str_arg("l").unwrap_err().to_string(), "Invalid value '[]', expected string");
        assert_eq!(args.bool_arg("nope").unwrap_err().to_string(), "missing argument 'nope'");
    }

    #[test]
    fn python_indexes() {
        assert_eq!(py_index(1, 3), Some(1));
        assert_eq!(py_index(-1, 3), Some(2));
        assert_eq!(py_index(-4, 3), None);
        assert_eq!(py_index(3, 3), None);
        assert_eq!(py_index(i64::MIN, 3), None);
    }
}
