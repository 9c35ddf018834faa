//! The generated service catalogue (the benchmark's model) compiles to what it describes: a
//! network per id with its hosts, one resource set per network holding exactly that network's
//! hosts, and a single agent config that every host's constructor merged into.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use modelc_tests::catalogue::service_catalogue;
use modelc_tests::scratch_dir;
use modelc_value::{InstanceId, Value};

#[test]
fn the_catalogue_compiles_to_sets_of_each_networks_hosts() {
    let dir = scratch_dir("catalogue");
    let main = dir.join("main.cf");
    std::fs::write(&main, service_catalogue(4, 3)).unwrap();
    let target = modelc_driver::locate(Some(&main), &dir).unwrap();
    let mut loaded = modelc_driver::load(&target, &dir).unwrap();
    let compiled = modelc_driver::compile(&mut loaded, modelc_exec::World::default());
    assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.diagnostics);
    let model = compiled.model.unwrap();
    let counts: Vec<(&str, usize)> = model.instances_by_entity.iter().map(|(e, n)| (e.as_str(), *n)).collect();
    assert_eq!(
        counts,
        [
            ("std::OS", 7),
            ("__config__::Network", 4),
            ("std::ResourceSet", 4),
            ("__config__::Host", 12),
            ("std::AgentConfig", 1)
        ]
    );
    let graph = &model.graph;
    let instances = |value: &Value| -> Vec<InstanceId> {
        let Value::List(items) = value else { panic!("not a list: {value:?}") };
        items.iter().map(|i| if let Value::Instance(id) = i { *id } else { panic!("not an instance") }).collect()
    };
    let networks: Vec<InstanceId> = graph.of_entity("__config__::Network").collect();
    for set in graph.of_entity("std::ResourceSet") {
        let Some(Value::Str(name)) = graph.attribute(set, "name") else { panic!("set without a name") };
        let hosts = instances(graph.attribute(set, "resources").unwrap());
        assert_eq!(hosts.len(), 3, "{name}");
        let network = networks
            .iter()
            .copied()
            .find(|n| graph.attribute(*n, "name").is_some_and(|v| v.py_eq(&Value::Str(name.clone()))))
            .unwrap();
        for host in hosts {
            assert!(matches!(graph.attribute(host, "network"), Some(Value::Instance(n)) if *n == network), "{name}");
        }
    }
}
