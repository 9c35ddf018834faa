//! A resource's exported attributes: an ordered map from name to JSON value, sized for half a
//! million resources. The names are shared (`Arc<str>`): every resource of a type names the same
//! fields, so refinement hands each resource clones of one set of names, not copies. A few fields
//! per resource make a vector scanned in order cheaper than a hash map, in memory and in time.
//! It reads and writes as a JSON object, in insertion order, as an `IndexMap` would.

use std::sync::Arc;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

#[derive(Debug, Clone, Default)]
pub struct Attributes(Vec<(Arc<str>, Value)>);

impl Attributes {
    pub fn new() -> Attributes {
        Attributes(Vec::new())
    }

    pub fn with_capacity(capacity: usize) -> Attributes {
        Attributes(Vec::with_capacity(capacity))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.iter().find(|(n, _)| &**n == name).map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut Value> {
        self.0.iter_mut().find(|(n, _)| &**n == name).map(|(_, v)| v)
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Sets `name`: in place when it is there (the old value is returned), else at the end.
    pub fn insert(&mut self, name: impl Into<Arc<str>>, value: Value) -> Option<Value> {
        let name = name.into();
        match self.get_mut(&name) {
            Some(slot) => Some(std::mem::replace(slot, value)),
            None => {
                self.0.push((name, value));
                None
            }
        }
    }

    /// Removes `name`, keeping the order of the others.
    pub fn shift_remove(&mut self, name: &str) -> Option<Value> {
        let position = self.0.iter().position(|(n, _)| &**n == name)?;
        Some(self.0.remove(position).1)
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Value)> {
        self.0.iter().map(|(n, v)| (&**n, v))
    }

    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.0.iter().map(|(n, _)| &**n)
    }

    pub fn values(&self) -> impl ExactSizeIterator<Item = &Value> {
        self.0.iter().map(|(_, v)| v)
    }
}

/// Equal when they hold the same names with equal values, in any order (as `IndexMap`).
impl PartialEq for Attributes {
    fn eq(&self, other: &Attributes) -> bool {
        self.len() == other.len() && self.iter().all(|(name, value)| other.get(name) == Some(value))
    }
}

impl<K: Into<Arc<str>>> FromIterator<(K, Value)> for Attributes {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Attributes {
        let mut attributes = Attributes::new();
        for (name, value) in iter {
            attributes.insert(name, value);
        }
        attributes
    }
}

impl<'a> IntoIterator for &'a Attributes {
    type Item = (&'a str, &'a Value);
    type IntoIter =
        std::iter::Map<std::slice::Iter<'a, (Arc<str>, Value)>, fn(&'a (Arc<str>, Value)) -> (&'a str, &'a Value)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(n, v)| (&**n, v))
    }
}

impl std::ops::Index<&str> for Attributes {
    type Output = Value;

    fn index(&self, name: &str) -> &Value {
        self.get(name).unwrap_or(&Value::Null)
    }
}

impl Serialize for Attributes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (name, value) in self.iter() {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Attributes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Attributes, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = Attributes;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of attribute names to values")
            }

            fn visit_map<M: MapAccess<'de>>(self, mut access: M) -> Result<Attributes, M::Error> {
                let mut attributes = Attributes::with_capacity(access.size_hint().unwrap_or(0));
                while let Some((name, value)) = access.next_entry::<String, Value>()? {
                    attributes.insert(name, value);
                }
                Ok(attributes)
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

#[cfg(test)]
mod tests {
    use super::Attributes;
    use serde_json::json;

    #[test]
    fn keeps_order_replaces_in_place_and_reads_as_an_object() {
        let mut a = Attributes::new();
        a.insert("path", json!("/etc/motd"));
        a.insert("mode", json!(420));
        assert_eq!(a.insert("path", json!("/etc/issue")), Some(json!("/etc/motd")));
        assert_eq!(a.keys().collect::<Vec<_>>(), ["path", "mode"]);
        let text = serde_json::to_string(&a).unwrap();
        assert_eq!(text, r#"{"path":"/etc/issue","mode":420}"#);
        let back: Attributes = serde_json::from_str(&text).unwrap();
        assert_eq!(back, a);
        let reordered: Attributes = [("mode", json!(420)), ("path", json!("/etc/issue"))].into_iter().collect();
        assert_eq!(reordered, a, "equality ignores order, as IndexMap's");
        assert_eq!(a.shift_remove("path"), Some(json!("/etc/issue")));
        assert_eq!(a.len(), 1);
    }
}
