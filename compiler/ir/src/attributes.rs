//! A resource's exported attributes: an ordered map from name to JSON value, sized for half a
//! million resources. The names are shared (`Arc<str>`): every resource of a type names the same
//! fields, so refinement hands each resource clones of one set of names, not copies. A few fields
//! per resource make a vector scanned in order cheaper than a hash map, in memory and in time.
//! Values are boxed (a JSON value is 72 bytes), except `null`, `true` and `false`, which every
//! resource has several of (`send_event`, `receive_events`, `purged`…) and which are shared.
//! It reads and writes as a JSON object, in insertion order, as an `IndexMap` would.

use std::sync::Arc;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

#[derive(Debug, Clone, Default)]
pub struct Attributes(Vec<(Arc<str>, Slot)>);

/// Where an attribute's value is: one of the shared constants, or its own box.
#[derive(Debug, Clone)]
enum Slot {
    Shared(&'static Value),
    Own(Box<Value>),
}

static NULL: Value = Value::Null;
static TRUE: Value = Value::Bool(true);
static FALSE: Value = Value::Bool(false);

impl Slot {
    fn new(value: Value) -> Slot {
        match value {
            Value::Null => Slot::Shared(&NULL),
            Value::Bool(true) => Slot::Shared(&TRUE),
            Value::Bool(false) => Slot::Shared(&FALSE),
            other => Slot::Own(Box::new(other)),
        }
    }

    fn get(&self) -> &Value {
        match self {
            Slot::Shared(value) => value,
            Slot::Own(value) => value,
        }
    }

    fn get_mut(&mut self) -> &mut Value {
        if let Slot::Shared(value) = self {
            *self = Slot::Own(Box::new((*value).clone()));
        }
        match self {
            Slot::Own(value) => value,
            Slot::Shared(_) => unreachable!("made its own just above"),
        }
    }

    fn take(self) -> Value {
        match self {
            Slot::Shared(value) => value.clone(),
            Slot::Own(value) => *value,
        }
    }
}

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
        self.0.iter().find(|(n, _)| &**n == name).map(|(_, v)| v.get())
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut Value> {
        self.0.iter_mut().find(|(n, _)| &**n == name).map(|(_, v)| v.get_mut())
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Sets `name`: in place when it is there (the old value is returned), else at the end.
    pub fn insert(&mut self, name: impl Into<Arc<str>>, value: Value) -> Option<Value> {
        let name = name.into();
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some((_, slot)) => Some(std::mem::replace(slot, Slot::new(value)).take()),
            None => {
                self.0.push((name, Slot::new(value)));
                None
            }
        }
    }

    /// Removes `name`, keeping the order of the others.
    pub fn shift_remove(&mut self, name: &str) -> Option<Value> {
        let position = self.0.iter().position(|(n, _)| &**n == name)?;
        Some(self.0.remove(position).1.take())
    }

    pub fn iter(&self) -> Iter<'_> {
        Iter(self.0.iter())
    }

    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.0.iter().map(|(n, _)| &**n)
    }

    pub fn values(&self) -> impl ExactSizeIterator<Item = &Value> {
        self.0.iter().map(|(_, v)| v.get())
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
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        Iter(self.0.iter())
    }
}

/// The attributes in order, as `(name, value)`.
pub struct Iter<'a>(std::slice::Iter<'a, (Arc<str>, Slot)>);

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a str, &'a Value);

    fn next(&mut self) -> Option<(&'a str, &'a Value)> {
        self.0.next().map(|(n, v)| (&**n, v.get()))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl ExactSizeIterator for Iter<'_> {}

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

    #[test]
    fn shared_constants_are_written_through_a_copy() {
        let mut a = Attributes::new();
        a.insert("purged", json!(false));
        a.insert("other", json!(false));
        *a.get_mut("purged").unwrap() = json!(true);
        assert_eq!(a.get("purged"), Some(&json!(true)));
        assert_eq!(a.get("other"), Some(&json!(false)), "the shared `false` is unchanged");
        assert_eq!(a.insert("other", json!(null)), Some(json!(false)));
        assert_eq!(serde_json::to_string(&a).unwrap(), r#"{"purged":true,"other":null}"#);
    }
}
