//! The resource IR: what a compile hands to everything after it (the store, partial export,
//! the runtime, the editor). It is plain, serialisable data with a format version, and it is
//! the only contract between the compiler and the runtime: neither side reads the other's types.
//!
//! * [`Ir::resources`] is the **resource queue**: every resource, in the order its instance was
//!   created, with its id, agent, exported attributes, `requires` (ids), events and set;
//! * [`graph::DependencyGraph`] is the **resource graph** built from it (petgraph), with the
//!   topological order a deployment follows;
//! * [`Ir::sets`] lists the resource sets, empty ones included (a partial export deletes what an
//!   empty set held); a resource in no set is shared.
//!
//! [`reference`] writes the reference exporter's `export -j` list, and [`draw`] renders the graph
//! as DOT or Mermaid and the terminal summary; [`text_diff`] shows how a text attribute changes,
//! at a bounded cost. [`writable`] says which fields a hand-written graph may give each
//! resource type.

pub mod attributes;
pub mod draw;
pub mod graph;
pub mod id;
pub mod meta;
pub mod meta_params;
mod parallel;
pub mod reference;
pub mod text_diff;
pub mod writable;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

pub use attributes::Attributes;
pub use id::ResourceId;
pub use meta::{Backoff, Meta, Notify, ResourceMeta, Timing};

/// The format this crate reads and writes. Bumped on every incompatible change.
pub const FORMAT_VERSION: u32 = 1;

/// The `format` tag of an IR document.
pub const FORMAT_NAME: &str = "modelc-resources";

/// The value of an attribute that is not known at compile time (the reference's marker).
pub const UNDEFINED: &str = "<<undefined>>";

/// A compiled model's resources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ir {
    pub format: String,
    pub format_version: u32,
    /// The resource queue, in creation order.
    #[serde(deserialize_with = "parallel::resources")]
    pub resources: Vec<Resource>,
    /// Every resource set, in creation order, with its members in queue order.
    pub sets: Vec<ResourceSet>,
    /// The content table: the text of files the resources name by sha1 (`fs::File`'s `hash`),
    /// so a runtime can deploy them without the model. Absent when no resource has content,
    /// so models without files give the same document as before.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub files: IndexMap<String, String>,
}

/// One resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    /// The versionless id, `type[agent,attribute=value]`.
    pub id: String,
    /// The resource type, the part of the id before `[`.
    #[serde(rename = "type")]
    pub entity_type: String,
    pub agent: String,
    /// The exported attributes, in declaration order.
    pub attributes: Attributes,
    /// The ids of the resources this one is deployed after, in queue order.
    pub requires: Vec<String>,
    /// Tell the resources that require this one when it changes.
    pub send_event: bool,
    /// React to the events of the resources this one requires.
    pub receive_events: bool,
    /// The set this resource belongs to; `None` = shared.
    pub resource_set: Option<String>,
    /// `undefined` when an attribute is not known at compile time (it holds [`UNDEFINED`]).
    pub state: ResourceState,
    /// Where its instance was created.
    /// Shared by the resources made by one statement (they have the same source).
    pub source: std::sync::Arc<Source>,
    /// How the runtime deploys it; absent when it has the defaults.
    #[serde(default, skip_serializing_if = "ResourceMeta::is_default")]
    pub meta: ResourceMeta,
    /// The resources this one notifies when it changes, with the timing of each (the model's
    /// `std::Notify` instances it sends); absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notify: Vec<Notify>,
}

/// How to remove from a machine what a resource that [stays when removed](Resource::stays_when_removed)
/// left there.
pub const HOW_TO_PURGE: &str =
    "to remove one, deploy it once with `purged=true`, or set `purge_on_delete=true` before taking it out of the model";

impl Resource {
    /// Whether taking this resource out of the model leaves what it manages on the machine: it
    /// is purgeable (it has `purge_on_delete`) but not purged on delete, and not purged already.
    /// `plan` and `deploy` say so; a resource with `purge_on_delete=true` is purged instead.
    pub fn stays_when_removed(&self) -> bool {
        self.flag("purge_on_delete") == Some(false) && self.flag("purged") != Some(true)
    }

    /// Whether taking this resource out of the model purges it: `purge_on_delete` and not purged
    /// already. A run purges such resources of the version it last deployed.
    pub fn purged_when_removed(&self) -> bool {
        self.flag("purge_on_delete") == Some(true) && self.flag("purged") != Some(true)
    }

    /// Whether a run that deployed this resource remembers it for the next: it is purgeable (it
    /// has `purge_on_delete`, either way) and not purged, so that when it leaves the model the
    /// next run purges it or says that it stays.
    pub fn remembered_after_deploy(&self) -> bool {
        self.attributes.contains_key("purge_on_delete") && self.flag("purged") != Some(true)
    }

    fn flag(&self, name: &str) -> Option<bool> {
        self.attributes.get(name).and_then(serde_json::Value::as_bool)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResourceState {
    Available,
    Undefined,
}

/// A place in the model, for messages and editors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// The entity of the instance (a subtype of the resource type, or the type itself).
    pub entity: String,
    pub file: String,
    pub line: u32,
}

/// A resource set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceSet {
    pub name: String,
    /// Member ids, in queue order. Empty when no member is exported.
    pub resources: Vec<String>,
    pub source: Source,
}

impl Ir {
    pub fn new(resources: Vec<Resource>, sets: Vec<ResourceSet>) -> Ir {
        Ir { format: FORMAT_NAME.to_owned(), format_version: FORMAT_VERSION, resources, sets, files: IndexMap::new() }
    }

    /// The IR as pretty-printed JSON, ending in a newline. Byte-identical for equal IRs.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("the IR is plain data and always serialises");
        text.push('\n');
        text
    }

    /// Reads an IR written by [`Ir::to_json`], refusing other formats and versions.
    pub fn from_json(text: &str) -> Result<Ir, String> {
        let ir: Ir = serde_json::from_str(text).map_err(|e| format!("not a resource IR document: {e}"))?;
        if ir.format != FORMAT_NAME {
            return Err(format!("not a resource IR document: format is `{}`", ir.format));
        }
        if ir.format_version != FORMAT_VERSION {
            return Err(format!(
                "resource IR format version {} is not supported (this build reads version {FORMAT_VERSION})",
                ir.format_version
            ));
        }
        Ok(ir)
    }

    /// The resources in no set.
    pub fn shared(&self) -> impl Iterator<Item = &Resource> {
        self.resources.iter().filter(|r| r.resource_set.is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> Ir {
        let resource = |name: &str, set: Option<&str>, requires: &[&str]| Resource {
            id: format!("test::R[internal,name={name}]"),
            entity_type: "test::R".into(),
            agent: "internal".into(),
            attributes: [("name".to_owned(), serde_json::json!(name))].into_iter().collect(),
            requires: requires.iter().map(|r| format!("test::R[internal,name={r}]")).collect(),
            send_event: false,
            receive_events: true,
            resource_set: set.map(str::to_owned),
            state: ResourceState::Available,
            source: Source { entity: "test::R".into(), file: "main.cf".into(), line: 1 }.into(),
            meta: Default::default(),
            notify: Vec::new(),
        };
        Ir::new(
            vec![resource("a", Some("s"), &[]), resource("b", Some("s"), &["a"]), resource("c", None, &["b"])],
            vec![ResourceSet {
                name: "s".into(),
                resources: vec!["test::R[internal,name=a]".into(), "test::R[internal,name=b]".into()],
                source: Source { entity: "std::ResourceSet".into(), file: "main.cf".into(), line: 2 },
            }],
        )
    }

    /// The purgeable rule, in its one home: what a run remembers, purges and says stays.
    #[test]
    fn which_resources_are_remembered_purged_or_left_when_removed() {
        let with = |attributes: &[(&str, bool)]| {
            let mut resource = sample().resources[0].clone();
            for (name, value) in attributes {
                resource.attributes.insert(*name, serde_json::json!(value));
            }
            let r = &resource;
            (r.remembered_after_deploy(), r.purged_when_removed(), r.stays_when_removed())
        };
        assert_eq!(with(&[]), (false, false, false), "not purgeable");
        assert_eq!(with(&[("purge_on_delete", true)]), (true, true, false));
        assert_eq!(with(&[("purge_on_delete", false)]), (true, false, true));
        assert_eq!(with(&[("purge_on_delete", true), ("purged", true)]), (false, false, false));
        assert_eq!(with(&[("purge_on_delete", false), ("purged", true)]), (false, false, false));
    }

    #[test]
    fn json_round_trips_and_keeps_attribute_order() {
        let mut ir = sample();
        ir.resources[0].attributes.insert("zeta", serde_json::json!({"b": 1, "a": 2}));
        ir.resources[0].attributes.insert("alpha", serde_json::json!(1));
        let text = ir.to_json();
        assert!(text.find("\"zeta\"").unwrap() < text.find("\"alpha\"").unwrap());
        assert!(text.find("\"b\": 1").unwrap() < text.find("\"a\": 2").unwrap());
        assert_eq!(Ir::from_json(&text).unwrap(), ir);
    }

    #[test]
    fn other_formats_and_versions_are_refused() {
        let text = sample().to_json();
        let newer = text.replace("\"format_version\": 1", "\"format_version\": 99");
        assert!(Ir::from_json(&newer).unwrap_err().contains("version 99 is not supported"));
        assert!(Ir::from_json("{}").is_err());
        assert!(Ir::from_json(&text.replace(FORMAT_NAME, "other")).unwrap_err().contains("format is `other`"));
    }
}
