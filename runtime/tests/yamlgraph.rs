//! The YAML graph front end: a graph deployed alone on real files in the order its edges give,
//! with its meta parameters and notifications; merged with a model's resources at handover
//! vertices, in the order both sides give; and every kind of mistake reported, all at once, each
//! naming what it is about.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use modelc_ir::{Resource, Timing};
use modelc_runtime::yamlgraph::{self, HANDOVER_TYPE};
use modelc_runtime::{AgentSelection, Handlers, Options, Outcome, Plan, Silent};
use serde_json::json;

/// A graph decoded with the compiler's shapes and the shipped handlers, as `modelc deploy` does.
fn parse(text: &str, file: &str) -> Result<yamlgraph::YamlGraph, Vec<String>> {
    let handlers = Handlers::builtin();
    let vocabulary = yamlgraph::Vocabulary { shapes: modelc_sema::writable::writable_shapes(), handlers: &handlers };
    yamlgraph::parse(text, file, &vocabulary)
}

fn ids(resources: &[Resource]) -> Vec<&str> {
    resources.iter().map(|r| r.id.as_str()).collect()
}

#[test]
fn a_graph_alone_deploys_its_files_in_the_order_of_its_edges() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        r#"
graph: web
comment: two files and a command
resources:
  - kind: dir
    name: root
    fields: {{path: "{d}/srv"}}
  - kind: file
    name: conf
    fields: {{path: "{d}/srv/app.conf", content: "port = 80\n", mode: 600}}
    meta: {{retry: 2, sema: ["disk:2"]}}
  - kind: exec
    name: reload
    fields: {{command: "sh -c 'cat {d}/srv/app.conf > {d}/seen'"}}
edges:
  - {{from: {{kind: dir, name: root}}, to: {{kind: file, name: conf}}}}
  - {{from: {{kind: file, name: conf}}, to: {{kind: exec, name: reload}}, notify: delayed}}
"#,
        d = dir.path().display()
    );
    let graph = parse(&text, "web.yaml").unwrap();
    assert_eq!(graph.name, "web");
    let content = graph.content.clone();
    let resources = yamlgraph::alone(graph).unwrap();
    assert_eq!(
        ids(&resources),
        ["fs::Directory[localhost,name=root]", "fs::File[localhost,name=conf]", "exec::Run[localhost,name=reload]"]
    );
    assert_eq!(resources[1].meta.retry, 2);
    assert_eq!(resources[1].meta.sema, ["disk:2"]);
    assert_eq!(resources[1].notify[0].timing, Timing::Delayed);
    let handlers = Handlers::builtin();
    let plan = Plan::new(resources, &[], &AgentSelection::Named(vec!["localhost".into()]), &handlers, &[]);
    let report = modelc_runtime::run(&plan, &handlers, &content, &Options::default(), &Silent);
    assert!(report.converged(), "{report:#?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("seen")).unwrap(),
        "port = 80\n",
        "the command ran after the file"
    );
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(dir.path().join("srv/app.conf")).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(report.notifications.len(), 1, "the delayed notification refreshed the command");
}

fn handover(name: &str) -> Resource {
    Resource {
        id: format!("{HANDOVER_TYPE}[localhost,name={name}]"),
        entity_type: HANDOVER_TYPE.into(),
        agent: "localhost".into(),
        attributes: [("name".to_owned(), json!(name))].into_iter().collect(),
        requires: Vec::new(),
        send_event: false,
        receive_events: true,
        resource_set: None,
        state: modelc_ir::ResourceState::Available,
        source: modelc_ir::Source { entity: HANDOVER_TYPE.into(), file: "main.cf".into(), line: 3 }.into(),
        meta: Default::default(),
        notify: Vec::new(),
    }
}

fn null(name: &str, requires: &[&str]) -> Resource {
    let mut r = handover(name);
    r.entity_type = "std::testing::NullResource".into();
    r.id = format!("std::testing::NullResource[localhost,name={name}]");
    r.requires = requires.iter().map(|s| (*s).to_owned()).collect();
    r
}

#[test]
fn a_merge_orders_the_graph_around_the_models_handover_vertex() {
    let text = r#"
graph: puppet-side
resources:
  - {kind: noop, name: before}
  - {kind: handover, name: app}
  - {kind: noop, name: after}
edges:
  - {from: {kind: noop, name: before}, to: {kind: handover, name: app}}
  - {from: {kind: handover, name: app}, to: {kind: noop, name: after}}
"#;
    let graph = parse(text, "g.yaml").unwrap();
    // The model: its handover, and something of its own after it.
    let point = handover("app");
    let model_after = null("model-after", &[&point.id]);
    let merged = yamlgraph::merge(vec![point.clone(), model_after], graph).unwrap();
    let get = |id_part: &str| merged.iter().find(|r| r.id.contains(id_part)).unwrap();
    assert_eq!(get("Handover").requires, [null("before", &[]).id], "the graph's `before` comes first");
    assert_eq!(get("name=after").requires, std::slice::from_ref(&point.id), "the graph's `after` follows the handover");

    // Run it: the order holds across both sides.
    let order = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    struct Log(std::sync::Arc<std::sync::Mutex<Vec<String>>>);
    impl modelc_runtime::handler::Handler for Log {
        fn deploy(
            &self,
            r: &Resource,
            _: &modelc_runtime::handler::Context<'_>,
        ) -> Result<modelc_runtime::handler::Done, String> {
            self.0.lock().unwrap().push(r.attributes["name"].as_str().unwrap().to_owned());
            Ok(Default::default())
        }
    }
    let mut handlers = Handlers::empty();
    handlers.register("std::testing::NullResource", Log(order.clone()));
    handlers.register(HANDOVER_TYPE, Log(order.clone()));
    let plan = Plan::new(merged, &[], &AgentSelection::Named(vec!["localhost".into()]), &handlers, &[]);
    let report = modelc_runtime::run(
        &plan,
        &handlers,
        &modelc_runtime::MemoryContent::default(),
        &Options { jobs: 1, ..Options::default() },
        &Silent,
    );
    assert!(report.resources.iter().all(|r| r.result == Outcome::Unchanged));
    let order = order.lock().unwrap().clone();
    let at = |name: &str| order.iter().position(|n| n == name).unwrap();
    assert!(at("before") < at("app") && at("app") < at("after") && at("app") < at("model-after"), "{order:?}");
}

#[test]
fn unmatched_handover_vertices_on_either_side_are_errors_naming_them() {
    let text = "graph: g\nresources:\n  - {kind: handover, name: db}\n";
    let errors = yamlgraph::merge(vec![handover("app")], parse(text, "g.yaml").unwrap()).unwrap_err();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].contains("handover vertex `db`") && errors[0].contains("no std::Handover(name=\"db\")"),
        "{errors:?}"
    );
    assert!(
        errors[1].contains("std::Handover(name=\"app\")") && errors[1].contains("no handover vertex `app`"),
        "{errors:?}"
    );
    let alone = yamlgraph::alone(parse(text, "g.yaml").unwrap()).unwrap_err();
    assert!(alone[0].contains("`db`"), "a graph alone has nothing to meet: {alone:?}");
}

#[test]
fn every_mistake_in_a_graph_is_reported_at_once_naming_what_it_is_about() {
    let text = r#"
graph: broken
resources:
  - {kind: handover, name: app, fields: {path: /x}}
  - {kind: package, name: nginx}
  - {kind: file, name: conf, fields: {path: /etc/x, contents: "typo"}}
  - {kind: file, name: other, fields: {path: /etc/y, content: "y"}, meta: {retry: -5, sema: ["disk:0"], burst: 0, colour: red}}
  - {kind: file, name: good, fields: {path: /etc/z, content: "z"}, meta: {delay: -1.0, backoff: linear}}
  - {kind: noop, name: twice}
  - {kind: noop, name: twice}
edges:
  - {from: {kind: file, name: missing}, to: {kind: noop, name: twice}}
  - {from: {kind: noop, name: twice}, to: {kind: file, name: good}, notify: sometimes}
"#;
    let errors = parse(text, "broken.yaml").unwrap_err();
    let all = errors.join("\n");
    for expected in [
        "handover vertex `app` has fields",
        "resource `nginx` of kind `package`: unknown kind",
        "resource `conf` of kind `file`: unknown field `contents`",
        "resource `conf` of kind `file`: it needs the field `content` (or `hash`)",
        "resource `other` of kind `file`: meta has no parameter `colour`",
        "resource `twice` of kind `noop`: listed twice",
        "edge 1 names `file` `missing`",
        "edge 2: notify `sometimes`",
        "meta `delay`: invalid meta parameter: -1.0 is negative",
        // Every mistake of a meta block, not only its unknown parameter.
        "resource `other` of kind `file`: meta `retry`: invalid meta parameter: -5",
        "meta `backoff`: invalid meta parameter: `linear` is not a back-off",
    ] {
        assert!(all.contains(expected), "missing {expected:?} in:\n{all}");
    }
}

#[test]
fn meta_values_are_checked_as_the_compiler_checks_them() {
    let text = r#"
graph: m
resources:
  - {kind: noop, name: a, meta: {retry: -5, sema: ["disk:0", "ok:2"], burst: 0}}
"#;
    let errors = parse(text, "m.yaml").unwrap_err().join("\n");
    assert!(errors.contains("meta `retry`: invalid meta parameter: -5 is not a retry count"), "{errors}");
    assert!(errors.contains("semaphore `disk:0` has size 0"), "{errors}");
    assert!(!errors.contains("`ok:2`"), "{errors}");
    assert!(errors.contains("meta `burst`: invalid meta parameter: a burst of 0"), "{errors}");
}

#[test]
fn a_vertex_has_the_fields_its_types_resource_declaration_exports() {
    let text = r#"
graph: shapes
resources:
  - {kind: file, name: conf, fields: {path: /srv/a.conf, content: "a", mode: 600, purged: false}}
  - {kind: exec, name: reload, fields: {command: "true", timeout: 30}}
  - {kind: symlink, name: current, fields: {src: /srv/v1}}
  - {kind: exec, name: gone, fields: {command: "true", purged: true, via: {method_name: local}}}
  - {kind: dir, name: both, fields: {path: /srv, mode: 700, permissions: 755}}
"#;
    let errors = parse(text, "shapes.yaml").unwrap_err().join("\n");
    for expected in [
        // Symlink: its identity and the paths it occupies.
        "resource `current` of kind `symlink`: it needs the field `dst`",
        // exec::Run's handler does not purge; its mitogen context is the runtime's to decide.
        "resource `gone` of kind `exec`: unknown field `purged`; its fields are command, creates, cwd",
        "resource `gone` of kind `exec`: unknown field `via`",
        // `mode` is where `permissions` comes from: one of the two.
        "resource `both` of kind `dir`: give `permissions` or `mode`, not both",
    ] {
        assert!(errors.contains(expected), "missing {expected:?} in:\n{errors}");
    }
    assert!(!errors.contains("`conf`") && !errors.contains("`reload`"), "{errors}");

    let text = r#"
graph: shapes
resources:
  - {kind: file, name: conf, fields: {path: /srv/a.conf, content: "a", mode: 600}}
  - {kind: exec, name: reload, fields: {command: "true", timeout: 30}}
"#;
    let graph = parse(text, "shapes.yaml").unwrap();
    let keys = |r: &Resource| r.attributes.keys().map(str::to_owned).collect::<Vec<_>>();
    // The fields of `resource fs::File(…)` in modelc's shapes, `via` left to the runtime.
    assert_eq!(keys(&graph.resources[0]), ["name", "path", "owner", "hash", "group", "permissions", "purged"]);
    assert_eq!(graph.resources[0].attributes["permissions"], json!(600));
    assert_eq!(graph.resources[0].attributes["owner"], json!(null), "a field not given is null");
    assert_eq!(graph.resources[1].attributes["timeout"], json!(30));
    assert_eq!(graph.resources[1].attributes["cwd"], json!(null));
}
