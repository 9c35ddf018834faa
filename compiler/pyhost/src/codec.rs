//! The model's values as the protocol carries them: JSON, with lists as arrays and three
//! tagged objects, `{"$d": {…}}` for a dict, `{"$i": id, "t": entity}` for an instance and
//! `{"$u": 1}` for an unknown.

use indexmap::IndexMap;
use modelc_std_plugins::PluginContext;
use modelc_value::{InstanceId, Value};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};

pub(crate) fn encode(value: &Value, context: &dyn PluginContext) -> serde_json::Value {
    // Serializing a value can not fail: every map key is a string.
    serde_json::to_value(Wire { value, context }).unwrap_or_default()
}

/// A value as the protocol writes it: serialized straight into a message, so that a large
/// one (a batch of 10,000 instances) is not built as a `serde_json::Value` first.
pub(crate) struct Wire<'a> {
    pub value: &'a Value,
    pub context: &'a dyn PluginContext,
}

impl Serialize for Wire<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let wire = |value| Wire { value, context: self.context };
        match self.value {
            Value::Null => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Int(i) => serializer.serialize_i64(*i),
            // NaN and infinities are not JSON; the model's floats never hold them.
            Value::Float(f) if f.is_finite() => serializer.serialize_f64(*f),
            Value::Float(_) => serializer.serialize_unit(),
            Value::Str(s) => serializer.serialize_str(s),
            Value::List(items) => serializer.collect_seq(items.iter().map(wire)),
            Value::Dict(entries) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("$d", &WireDict { entries, context: self.context })?;
                map.end()
            }
            Value::Instance(id) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("$i", &id.0)?;
                map.serialize_entry("t", &self.context.entity_name(*id))?;
                map.end()
            }
            Value::Unknown => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("$u", &1)?;
                map.end()
            }
        }
    }
}

struct WireDict<'a> {
    entries: &'a IndexMap<String, Value>,
    context: &'a dyn PluginContext,
}

impl Serialize for WireDict<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.entries.iter().map(|(k, v)| (k, Wire { value: v, context: self.context })))
    }
}

pub(crate) fn decode(value: &serde_json::Value) -> Result<Value, String> {
    Decoded::deserialize(value).map(|decoded| decoded.0).map_err(|why| why.to_string())
}

/// A value read from the protocol: straight from a message's text (a batch's answer), or from a
/// parsed message through [`decode`].
pub(crate) struct Decoded(pub Value);

impl<'de> Deserialize<'de> for Decoded {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor).map(Decoded)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a value of the model")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Value, E> {
        Ok(Value::Int(i))
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Value, E> {
        i64::try_from(u).map(Value::Int).map_err(|_| E::custom(format!("{u} is not a number the model holds")))
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Value, E> {
        Ok(Value::Float(f))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        Ok(Value::str(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(Decoded(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::list(items))
    }

    /// The three tagged objects: `{"$d": {…}}`, `{"$i": id, "t": entity}` and `{"$u": 1}`.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut value = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "$d" => value = Some(Value::dict(map.next_value::<DictEntries>()?.0)),
                "$i" => {
                    let id: u32 = map.next_value().map_err(|_| de::Error::custom("an instance without its number"))?;
                    value = Some(Value::Instance(InstanceId(id)));
                }
                "$u" => {
                    map.next_value::<IgnoredAny>()?;
                    value = Some(Value::Unknown);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        value.ok_or_else(|| de::Error::custom("an object that is not a value modelc knows"))
    }
}

/// A dict's entries, in order.
struct DictEntries(IndexMap<String, Value>);

impl<'de> Deserialize<'de> for DictEntries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = DictEntries;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a dict's entries")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<DictEntries, A::Error> {
                let mut entries = IndexMap::with_capacity(map.size_hint().unwrap_or(0));
                while let Some((key, Decoded(value))) = map.next_entry::<String, Decoded>()? {
                    entries.insert(key, value);
                }
                Ok(DictEntries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor)
    }
}
