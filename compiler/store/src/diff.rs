//! The difference between two versions: resources added, removed and changed, with the
//! attributes, requirements and set of each change.

use indexmap::IndexMap;
use modelc_ir::{Attributes, Resource};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What changed from one version to another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diff {
    pub from: u64,
    pub to: u64,
    /// Ids, in the newer version's order.
    pub added: Vec<String>,
    /// Ids, in the older version's order.
    pub removed: Vec<String>,
    pub changed: Vec<Change>,
    /// The removed resources that a deploy leaves on the machine
    /// ([`Resource::stays_when_removed`]), in the older version's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_behind: Vec<String>,
    /// The texts of the file contents the changes name (`hash` attributes), by sha1, where the
    /// caller has them ([`Diff::content_hashes`]): shown as a unified diff instead of two hashes.
    #[serde(skip)]
    pub contents: IndexMap<String, String>,
}

/// One resource in both versions, different.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub id: String,
    /// Attribute → (old, new); a missing side is `null`.
    pub attributes: IndexMap<String, (Value, Value)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires_added: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires_removed: Vec<String>,
    /// (old, new) set, when it changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_set: Option<(Option<String>, Option<String>)>,
}

impl Diff {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// The sha1s of the file contents that the changed `hash` attributes name, both sides, each
    /// once: the texts to look up and put in [`Diff::contents`].
    pub fn content_hashes(&self) -> Vec<String> {
        let mut hashes: indexmap::IndexSet<String> = indexmap::IndexSet::new();
        for change in &self.changed {
            if let Some((old, new)) = change.attributes.get(CONTENT_ATTRIBUTE) {
                hashes.extend([old, new].into_iter().filter_map(|v| v.as_str().map(str::to_owned)));
            }
        }
        hashes.into_iter().collect()
    }

    /// Keeps the contents that are text (UTF-8), by sha1, for the diff to show.
    pub fn add_contents(&mut self, contents: impl IntoIterator<Item = (String, Vec<u8>)>) {
        for (hash, bytes) in contents {
            if let Ok(text) = String::from_utf8(bytes) {
                self.contents.insert(hash, text);
            }
        }
    }
}

/// The attribute that names a resource's file content by its sha1 (the fs module's `hash`; the
/// store keeps the content, and prune keeps what a row names this way).
pub const CONTENT_ATTRIBUTE: &str = "hash";

/// The difference from `old` (version `from`) to `new` (version `to`).
pub fn diff(from: u64, old: &[Resource], to: u64, new: &[Resource]) -> Diff {
    let old_by_id: IndexMap<&str, &Resource> = old.iter().map(|r| (r.id.as_str(), r)).collect();
    let new_by_id: IndexMap<&str, &Resource> = new.iter().map(|r| (r.id.as_str(), r)).collect();
    let added = new.iter().filter(|r| !old_by_id.contains_key(r.id.as_str())).map(|r| r.id.clone()).collect();
    let removed = old.iter().filter(|r| !new_by_id.contains_key(r.id.as_str())).map(|r| r.id.clone()).collect();
    let mut changed = Vec::new();
    for resource in new {
        let Some(before) = old_by_id.get(resource.id.as_str()) else { continue };
        let attributes = attribute_changes(&before.attributes, &resource.attributes);
        let requires_added: Vec<String> =
            resource.requires.iter().filter(|r| !before.requires.contains(r)).cloned().collect();
        let requires_removed: Vec<String> =
            before.requires.iter().filter(|r| !resource.requires.contains(r)).cloned().collect();
        let resource_set = (before.resource_set != resource.resource_set)
            .then(|| (before.resource_set.clone(), resource.resource_set.clone()));
        if !attributes.is_empty()
            || !requires_added.is_empty()
            || !requires_removed.is_empty()
            || resource_set.is_some()
        {
            changed.push(Change {
                id: resource.id.clone(),
                attributes,
                requires_added,
                requires_removed,
                resource_set,
            });
        }
    }
    let left_behind = old
        .iter()
        .filter(|r| !new_by_id.contains_key(r.id.as_str()) && r.stays_when_removed())
        .map(|r| r.id.clone())
        .collect();
    Diff { from, to, added, removed, changed, left_behind, contents: IndexMap::new() }
}

/// Attribute → (old, new) for every attribute that differs, in the new order then the removed
/// ones; a missing side is `null`.
pub fn attribute_changes(old: &Attributes, new: &Attributes) -> IndexMap<String, (Value, Value)> {
    let mut changes = IndexMap::new();
    for (name, value) in new {
        match old.get(name) {
            Some(before) if before == value => {}
            before => {
                changes.insert(name.to_owned(), (before.cloned().unwrap_or(Value::Null), value.clone()));
            }
        }
    }
    for (name, value) in old {
        if !new.contains_key(name) {
            changes.insert(name.to_owned(), (value.clone(), Value::Null));
        }
    }
    changes
}

impl std::fmt::Display for Diff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "from version {} to version {}:", self.from, self.to)?;
        for id in &self.added {
            writeln!(f, "+ {id}")?;
        }
        for id in &self.removed {
            if self.left_behind.contains(id) {
                writeln!(f, "- {id} (stays on the machine: it does not set purge_on_delete)")?;
            } else {
                writeln!(f, "- {id}")?;
            }
        }
        for change in &self.changed {
            writeln!(f, "~ {}", change.id)?;
            for (name, (old, new)) in &change.attributes {
                let texts = |v: &Value| v.as_str().and_then(|hash| self.contents.get(hash));
                if name == CONTENT_ATTRIBUTE
                    && let (Some(a), Some(b)) = (texts(old), texts(new))
                {
                    writeln!(
                        f,
                        "    content (sha1 {} -> {}):",
                        old.as_str().unwrap_or(""),
                        new.as_str().unwrap_or("")
                    )?;
                    for line in modelc_ir::text_diff::unified(a, b, None, 2).lines() {
                        writeln!(f, "      {line}")?;
                    }
                    continue;
                }
                match (old.as_str(), new.as_str()) {
                    // Text over several lines: a unified diff of its lines.
                    (Some(a), Some(b)) if a.contains('\n') || b.contains('\n') => {
                        writeln!(f, "    {name}:")?;
                        let diff = modelc_ir::text_diff::unified(a, b, None, 2);
                        for line in diff.lines() {
                            writeln!(f, "      {line}")?;
                        }
                    }
                    _ => writeln!(f, "    {name}: {old} -> {new}")?,
                }
            }
            for required in &change.requires_added {
                writeln!(f, "    requires + {required}")?;
            }
            for required in &change.requires_removed {
                writeln!(f, "    requires - {required}")?;
            }
            if let Some((old, new)) = &change.resource_set {
                let show = |s: &Option<String>| s.clone().unwrap_or_else(|| "(shared)".to_owned());
                writeln!(f, "    set: {} -> {}", show(old), show(new))?;
            }
        }
        write!(f, "{} added, {} removed, {} changed", self.added.len(), self.removed.len(), self.changed.len())?;
        if !self.left_behind.is_empty() {
            write!(
                f,
                "\nnote: a deploy leaves {} of the removed resources on the machine; {}",
                self.left_behind.len(),
                modelc_ir::HOW_TO_PURGE
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_over_several_lines_is_shown_as_a_unified_diff() {
        let mut attributes = IndexMap::new();
        attributes.insert(
            "content".to_owned(),
            (Value::from("port = 80\nhost = a\nlog = on\n"), Value::from("port = 443\nhost = a\nlog = on\n")),
        );
        attributes.insert("mode".to_owned(), (Value::from(644), Value::from(600)));
        let change = Change {
            id: "fs::File[h,path=/etc/app.conf]".to_owned(),
            attributes,
            requires_added: Vec::new(),
            requires_removed: Vec::new(),
            resource_set: None,
        };
        let diff = Diff {
            from: 1,
            to: 2,
            added: Vec::new(),
            removed: Vec::new(),
            changed: vec![change],
            left_behind: Vec::new(),
            contents: IndexMap::new(),
        };
        let text = diff.to_string();
        assert!(text.contains("    content:\n"), "{text}");
        assert!(text.contains("      -port = 80\n      +port = 443\n       host = a\n"), "{text}");
        assert!(text.contains("    mode: 644 -> 600\n"), "{text}");
    }
}
