//! Every index of every entity: `(entity, key)` → instance, for constructors (which return the
//! instance an index already holds) and index lookups. Sized for millions of keys: a table of
//! 16-byte entries over one arena of key text, rather than a map of owned strings (48 bytes a
//! slot, and an allocation per key).

use std::hash::BuildHasher as _;

use hashbrown::HashTable;
use modelc_value::InstanceId;
use rustc_hash::{FxBuildHasher, FxHashMap};

#[derive(Default)]
pub(crate) struct InstanceIndex<'a> {
    table: HashTable<Entry>,
    /// The text of every key, one after the other.
    text: String,
    /// The entities whose indexes hold keys, numbered.
    entities: FxHashMap<&'a str, u32>,
}

#[derive(Clone, Copy)]
struct Entry {
    entity: u32,
    start: u32,
    len: u32,
    instance: InstanceId,
}

fn key_hash(entity: u32, key: &str) -> u64 {
    FxBuildHasher.hash_one((entity, key))
}

impl<'a> InstanceIndex<'a> {
    fn key_of(&self, entry: &Entry) -> &str {
        &self.text[entry.start as usize..(entry.start + entry.len) as usize]
    }

    /// The instance `entity`'s index holds under `key`.
    pub(crate) fn get(&self, entity: &str, key: &str) -> Option<InstanceId> {
        let number = *self.entities.get(entity)?;
        self.table.find(key_hash(number, key), |e| e.entity == number && self.key_of(e) == key).map(|e| e.instance)
    }

    /// Puts `instance` under `key` in `entity`'s index (in place of what was there).
    pub(crate) fn insert(&mut self, entity: &'a str, key: &str, instance: InstanceId) {
        let count = self.entities.len() as u32;
        let number = *self.entities.entry(entity).or_insert(count);
        let hash = key_hash(number, key);
        let (table, text) = (&mut self.table, &self.text);
        let same = |e: &Entry| e.entity == number && &text[e.start as usize..(e.start + e.len) as usize] == key;
        if let Some(entry) = table.find_mut(hash, same) {
            entry.instance = instance;
            return;
        }
        let entry = Entry { entity: number, start: self.text.len() as u32, len: key.len() as u32, instance };
        self.text.push_str(key);
        let text = &self.text;
        self.table
            .insert_unique(hash, entry, |e| key_hash(e.entity, &text[e.start as usize..(e.start + e.len) as usize]));
    }
}

#[cfg(test)]
mod tests {
    use super::InstanceIndex;
    use modelc_value::InstanceId;

    #[test]
    fn keys_are_per_entity_and_replaced_in_place() {
        let mut index = InstanceIndex::default();
        for i in 0..10_000u32 {
            index.insert("Host", &format!("id={i}"), InstanceId(i));
        }
        index.insert("Network", "id=7", InstanceId(99_999));
        assert_eq!(index.get("Host", "id=7"), Some(InstanceId(7)));
        assert_eq!(index.get("Network", "id=7"), Some(InstanceId(99_999)));
        assert_eq!(index.get("Network", "id=8"), None);
        assert_eq!(index.get("Other", "id=7"), None);
        index.insert("Host", "id=7", InstanceId(42));
        assert_eq!(index.get("Host", "id=7"), Some(InstanceId(42)));
        assert_eq!(index.get("Host", "id=9999"), Some(InstanceId(9999)));
    }
}
