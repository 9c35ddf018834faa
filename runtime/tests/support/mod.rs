//! What the runtime's integration tests share: resources written by hand for the agent `local`,
//! and a plan and run of them.
#![allow(dead_code, reason = "each test file uses part of it")]

use modelc_ir::{Meta, Resource, ResourceState, Source};
use modelc_runtime::{AgentSelection, Handlers, MemoryContent, Observer, Options, Plan, RunReport, Silent};
use serde_json::json;

/// A resource of agent `local` whose id is `type[local,key=value]`, with more attributes.
pub(crate) fn keyed(entity_type: &str, key: &str, value: &str, attributes: serde_json::Value) -> Resource {
    let mut all = serde_json::Map::new();
    all.insert(key.into(), json!(value));
    all.extend(attributes.as_object().cloned().unwrap_or_default());
    Resource {
        id: format!("{entity_type}[local,{key}={value}]"),
        entity_type: entity_type.into(),
        agent: "local".into(),
        attributes: all.into_iter().collect(),
        requires: Vec::new(),
        send_event: false,
        receive_events: true,
        resource_set: None,
        state: ResourceState::Available,
        source: Source { entity: entity_type.into(), file: "main.cf".into(), line: 1 }.into(),
        meta: Meta::default().into(),
        notify: Vec::new(),
    }
}

/// A resource named `name`, with these attributes and meta parameters.
pub(crate) fn named(entity_type: &str, name: &str, attributes: serde_json::Value, meta: Meta) -> Resource {
    Resource { meta: meta.into(), ..keyed(entity_type, "name", name, attributes) }
}

/// The plan of `resources` for agent `local`.
pub(crate) fn plan(resources: Vec<Resource>, handlers: &Handlers) -> Plan {
    Plan::new(resources, &[], &AgentSelection::Named(vec!["local".into()]), handlers, &[])
}

/// Plans and runs `resources`.
pub(crate) fn run(resources: Vec<Resource>, handlers: &Handlers, options: &Options) -> RunReport {
    run_observed(resources, handlers, options, &Silent)
}

pub(crate) fn run_observed(
    resources: Vec<Resource>,
    handlers: &Handlers,
    options: &Options,
    observer: &dyn Observer,
) -> RunReport {
    let plan = plan(resources, handlers);
    modelc_runtime::run(&plan, handlers, &MemoryContent::default(), options, observer)
}
