//! Resources built by hand for unit tests.

use modelc_ir::{Resource, ResourceState, Source};

/// A resource of `entity_type` on `agent`, identified by `key=value`, requiring `requires`.
pub(crate) fn resource(entity_type: &str, agent: &str, key: &str, value: &str, requires: &[&String]) -> Resource {
    Resource {
        id: format!("{entity_type}[{agent},{key}={value}]"),
        entity_type: entity_type.to_owned(),
        agent: agent.to_owned(),
        attributes: [(key.to_owned(), serde_json::Value::String(value.to_owned()))].into_iter().collect(),
        requires: requires.iter().map(|r| (*r).clone()).collect(),
        send_event: false,
        receive_events: true,
        resource_set: None,
        state: ResourceState::Available,
        source: Source { entity: entity_type.to_owned(), file: "main.cf".to_owned(), line: 1 }.into(),
        meta: Default::default(),
        notify: Vec::new(),
    }
}
