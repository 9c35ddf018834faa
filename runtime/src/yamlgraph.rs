//! The YAML graph front end: resources and edges written by hand (or by another tool) in a YAML
//! file, deployed alone or merged with a compiled model at named handover vertices (the
//! langpuppet merge of mgmt, `../shared/spec/runtime.md` §4).
//!
//! ```yaml
//! graph: web
//! resources:
//!   - kind: fs::File            # or file; fs::Directory (dir), fs::Symlink (symlink),
//!     name: conf                #    exec::Run (exec), std::testing::NullResource (noop)
//!     fields: {path: /srv/app.conf, content: "port = 80\n", mode: 644}
//!     meta: {retry: 3, sema: ["disk:2"]}
//!   - kind: handover            # where the compiled model's std::Handover(name="app") is
//!     name: app
//! edges:
//!   - {from: {kind: file, name: conf}, to: {kind: handover, name: app}}
//!   - {from: {kind: handover, name: app}, to: {kind: exec, name: reload}, notify: delayed}
//! ```
//!
//! A kind's fields come from its type's `resource` declaration ([`Vocabulary::shapes`]: the
//! compiler derives them, so a graph's resource has a compiled one's attributes); `purged` is
//! accepted where the type's handler purges.
//!
//! Everything is decoded strictly: an unknown key, kind or field, a missing field, a meta value
//! the compiler would refuse, an edge to a vertex the file does not have, and a handover vertex
//! with fields are errors, each naming what it is about, all reported at once (mgmt silently
//! drops `meta:` blocks in its YAML graphs). A resource's id is `kind[agent,name=NAME]`.

use std::collections::{BTreeMap, HashMap};

use modelc_ir::{Meta, Notify, Resource, ResourceState, Source, Timing};
use serde::Deserialize;
use serde_json::{Value, json};

use modelc_ir::writable::{FieldInput, WritableShape};

use crate::handler::{Handlers, MemoryContent};

/// The entity type of the compiled model's handover vertices.
pub const HANDOVER_TYPE: &str = "std::Handover";

/// A decoded graph.
#[derive(Debug)]
pub struct YamlGraph {
    pub name: String,
    /// Its resources, in file order; edges to and from handover vertices name them as
    /// `handover:NAME` until [`merge`] puts the model's handover resources there.
    pub resources: Vec<Resource>,
    /// The content of its files, by sha1.
    pub content: MemoryContent,
    /// Its handover vertices: name → the ids of the graph's resources that come before it.
    pub handovers: BTreeMap<String, Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphFile {
    graph: String,
    #[serde(default)]
    #[allow(dead_code, reason = "free text for the reader")]
    comment: Option<String>,
    #[serde(default)]
    resources: Vec<VertexSpec>,
    #[serde(default)]
    edges: Vec<EdgeSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VertexSpec {
    kind: String,
    name: String,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    fields: BTreeMap<String, Value>,
    /// Decoded per resource (not with the file), so an unknown key is one error among the rest.
    #[serde(default)]
    meta: Option<serde_json::Map<String, Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EdgeSpec {
    from: End,
    to: End,
    #[serde(default)]
    notify: Option<NotifySpec>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct End {
    kind: String,
    name: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum NotifySpec {
    Flag(bool),
    Timing(String),
}

/// The kinds a graph may write, by every name it may write them with: a resource type of the
/// runtime's handlers. What each may be given comes from the type's writable shape.
const KINDS: &[(&[&str], &str)] = &[
    (&["fs::File", "file"], "fs::File"),
    (&["fs::Directory", "dir", "directory"], "fs::Directory"),
    (&["fs::Symlink", "symlink"], "fs::Symlink"),
    (&["exec::Run", "exec"], "exec::Run"),
    (&["std::testing::NullResource", "noop"], "std::testing::NullResource"),
];

/// A kind as this graph may use it: its writable shape, and whether its handler purges.
struct Kind<'s> {
    shape: &'s WritableShape,
    purgeable: bool,
}

impl Kind<'_> {
    fn entity_type(&self) -> &str {
        &self.shape.entity_type
    }

    fn accepts(&self, field: &str) -> bool {
        self.shape.accepts(field) || (self.purgeable && field == PURGED)
    }

    fn writable_names(&self) -> Vec<&str> {
        let mut names = self.shape.writable_names();
        if self.purgeable {
            names.push(PURGED);
        }
        names
    }
}

/// std's `PurgeableResource` attribute: the resource is removed, for a handler that does.
const PURGED: &str = "purged";

/// What a graph's kinds are made of: the writable shape of each resource type (the compiler's
/// `modelc_sema::writable::writable_shapes`, from the `resource` declarations) and the handlers
/// that deploy them.
pub struct Vocabulary<'a> {
    pub shapes: &'a [WritableShape],
    pub handlers: &'a Handlers,
}

impl Vocabulary<'_> {
    fn kind(&self, name: &str) -> Option<Kind<'_>> {
        let entity_type = entity_type_of(name)?;
        let shape = self.shapes.iter().find(|s| s.entity_type == entity_type)?;
        Some(Kind { shape, purgeable: self.handlers.get(entity_type).is_some_and(|h| h.purges()) })
    }
}

/// The resource type a kind's name (its full type or its short name) stands for.
fn entity_type_of(name: &str) -> Option<&'static str> {
    KINDS.iter().find(|(names, _)| names.contains(&name)).map(|(_, entity_type)| *entity_type)
}

fn is_handover(kind: &str) -> bool {
    kind == "handover"
}

/// Decodes a graph file (`file` names it in messages). Every problem is reported.
pub fn parse(text: &str, file: &str, vocabulary: &Vocabulary<'_>) -> Result<YamlGraph, Vec<String>> {
    let spec: GraphFile = serde_yaml_ng::from_str(text).map_err(|e| vec![format!("{file}: {e}")])?;
    let mut errors = Vec::new();
    if spec.graph.trim().is_empty() {
        errors.push(format!("{file}: `graph` names the graph; it is empty"));
    }
    let mut resources = Vec::new();
    let mut content = MemoryContent::default();
    let mut handovers: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // (kind as written → canonical, name) → id
    let mut ids: HashMap<(String, String), String> = HashMap::new();
    for vertex in &spec.resources {
        let what = format!("{file}: resource `{}` of kind `{}`", vertex.name, vertex.kind);
        if is_handover(&vertex.kind) {
            if !vertex.fields.is_empty() || vertex.meta.is_some() || vertex.agent.is_some() {
                errors.push(format!(
                    "{file}: handover vertex `{}` has fields: a handover vertex only names the point where the \
                     compiled model's graph meets this one",
                    vertex.name
                ));
            }
            if handovers.insert(vertex.name.clone(), Vec::new()).is_some() {
                errors.push(format!("{file}: handover vertex `{}` is listed twice", vertex.name));
            }
            continue;
        }
        let Some(kind) = vocabulary.kind(&vertex.kind) else {
            let known: Vec<&str> = KINDS.iter().map(|(names, _)| names[0]).collect();
            errors.push(format!("{what}: unknown kind; the kinds are {}, and `handover`", known.join(", ")));
            continue;
        };
        match resource(vertex, &kind, &mut content) {
            Ok(resource) => {
                let key = (kind.entity_type().to_owned(), vertex.name.clone());
                if ids.insert(key, resource.id.clone()).is_some() {
                    errors.push(format!("{what}: listed twice"));
                    continue;
                }
                resources.push(resource);
            }
            Err(problems) => errors.extend(problems.into_iter().map(|p| format!("{what}: {p}"))),
        }
    }
    let handover_names: std::collections::HashSet<String> = handovers.keys().cloned().collect();
    let end_id = |end: &End| -> Result<String, String> {
        if is_handover(&end.kind) {
            return if handover_names.contains(&end.name) {
                Ok(format!("handover:{}", end.name))
            } else {
                Err(format!("handover vertex `{}`", end.name))
            };
        }
        let canonical = entity_type_of(&end.kind).unwrap_or(end.kind.as_str());
        ids.get(&(canonical.to_owned(), end.name.clone())).cloned().ok_or(format!("`{}` `{}`", end.kind, end.name))
    };
    for (n, edge) in spec.edges.iter().enumerate() {
        let timing = match &edge.notify {
            None | Some(NotifySpec::Flag(false)) => None,
            Some(NotifySpec::Flag(true)) => Some(Timing::Immediately),
            Some(NotifySpec::Timing(t)) => match t.as_str() {
                "immediately" => Some(Timing::Immediately),
                "delayed" => Some(Timing::Delayed),
                "before" => Some(Timing::Before),
                other => {
                    errors.push(format!(
                        "{file}: edge {}: notify `{other}` is not true, false, `immediately`, `delayed` or `before`",
                        n + 1
                    ));
                    None
                }
            },
        };
        let (from, to) = match (end_id(&edge.from), end_id(&edge.to)) {
            (Ok(from), Ok(to)) => (from, to),
            (Err(missing), _) | (_, Err(missing)) => {
                errors.push(format!("{file}: edge {} names {missing}, which the graph does not have", n + 1));
                continue;
            }
        };
        if let Some(name) = to.strip_prefix("handover:") {
            // What comes before the handover vertex comes before the model's handover resource.
            handovers.entry(name.to_owned()).or_default().push(from.clone());
            if timing.is_some() {
                errors.push(format!("{file}: edge {}: a handover vertex has nothing to refresh", n + 1));
            }
            continue;
        }
        let Some(target) = resources.iter_mut().find(|r| r.id == to) else { continue };
        target.requires.push(from.clone());
        if let Some(timing) = timing {
            if from.starts_with("handover:") {
                errors.push(format!("{file}: edge {}: a handover vertex sends no notifications", n + 1));
            } else if let Some(sender) = resources.iter_mut().find(|r| r.id == from) {
                sender.notify.push(Notify { target: to.clone(), timing });
            }
        }
    }
    if errors.is_empty() { Ok(YamlGraph { name: spec.graph, resources, content, handovers }) } else { Err(errors) }
}

/// The resource a vertex describes, with its fields checked against its kind's shape: each
/// field the vertex gives, itself or by the attribute it is computed from; null for the others.
fn resource(vertex: &VertexSpec, kind: &Kind<'_>, content: &mut MemoryContent) -> Result<Resource, Vec<String>> {
    let mut problems = Vec::new();
    for field in vertex.fields.keys() {
        if !kind.accepts(field) {
            problems.push(format!("unknown field `{field}`; its fields are {}", kind.writable_names().join(", ")));
        }
    }
    for field in &kind.shape.required {
        if !vertex.fields.contains_key(field) {
            problems.push(format!("it needs the field `{field}`"));
        }
    }
    let agent = vertex.agent.clone().unwrap_or_else(|| "localhost".to_owned());
    let mut attributes = modelc_ir::Attributes::new();
    attributes.insert("name".to_owned(), json!(vertex.name));
    for field in &kind.shape.fields {
        let given = vertex.fields.get(&field.name);
        let value = match &field.input {
            None => given.cloned(),
            Some(FieldInput::Copy(attribute)) => match (given, vertex.fields.get(attribute)) {
                (Some(_), Some(_)) => {
                    problems.push(format!("give `{}` or `{attribute}`, not both", field.name));
                    None
                }
                (given, from) => given.or(from).cloned(),
            },
            Some(FieldInput::FileContent(attribute)) => match (vertex.fields.get(attribute), given) {
                (Some(Value::String(text)), None) => {
                    let hash = crate::handlers::posix::sha1_bytes(text.as_bytes());
                    content.0.insert(hash.clone(), text.as_bytes().to_vec());
                    Some(json!(hash))
                }
                (None, Some(Value::String(hash))) => Some(json!(hash)),
                (Some(_), Some(_)) => {
                    problems.push(format!("give `{attribute}` or `{}`, not both", field.name));
                    None
                }
                (Some(_), None) => {
                    problems.push(format!("its `{attribute}` is not a string"));
                    None
                }
                (None, _) => {
                    problems.push(format!("it needs the field `{attribute}` (or `{}`)", field.name));
                    None
                }
            },
        };
        attributes.insert(field.name.clone(), value.unwrap_or(Value::Null));
    }
    if kind.purgeable {
        attributes.insert(PURGED.to_owned(), vertex.fields.get(PURGED).cloned().unwrap_or(Value::Bool(false)));
    }
    let meta = match &vertex.meta {
        Some(map) => meta(map).unwrap_or_else(|errors| {
            problems.extend(errors);
            Meta::default()
        }),
        None => Meta::default(),
    };
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Resource {
        id: format!("{}[{agent},name={}]", kind.entity_type(), vertex.name),
        entity_type: kind.entity_type().to_owned(),
        agent,
        attributes,
        requires: Vec::new(),
        send_event: false,
        receive_events: true,
        resource_set: None,
        state: ResourceState::Available,
        source: Source { entity: kind.entity_type().to_owned(), file: "graph".to_owned(), line: 0 }.into(),
        meta: meta.into(),
        notify: Vec::new(),
    })
}

/// Meta parameters checked by the rules the compiler checks them by (`modelc_ir::meta_params`),
/// named as `std::Meta` names them.
fn meta(map: &serde_json::Map<String, Value>) -> Result<Meta, Vec<String>> {
    use modelc_ir::meta_params::{Given, PARAMS, meta_of};
    fn given(value: &Value) -> Given<'_> {
        match value {
            Value::Null => Given::Null,
            Value::Bool(b) => Given::Bool(*b),
            Value::Number(n) => n.as_i64().map_or_else(|| Given::Float(n.as_f64().unwrap_or(f64::NAN)), Given::Int),
            Value::String(s) => Given::Str(s),
            Value::Array(items) => Given::List(items.iter().map(given).collect()),
            Value::Object(_) => Given::Map,
        }
    }
    let names: Vec<&str> = PARAMS.iter().map(|p| p.name).collect();
    let mut problems: Vec<String> = map
        .keys()
        .filter(|key| !names.contains(&key.as_str()))
        .map(|key| format!("meta has no parameter `{key}`; it has {}", names.join(", ")))
        .collect();
    let meta = meta_of(|name| map.get(name).map(given)).map_err(|refused| {
        refused.into_iter().map(|(name, problem)| format!("meta `{name}`: {} ({})", problem.message, problem.help))
    });
    match meta {
        Ok(meta) if problems.is_empty() => Ok(meta),
        Ok(_) => Err(problems),
        Err(refused) => {
            problems.extend(refused);
            Err(problems)
        }
    }
}

/// The graph alone: a graph with handover vertices needs a model to meet.
pub fn alone(graph: YamlGraph) -> Result<Vec<Resource>, Vec<String>> {
    merge(Vec::new(), graph)
}

/// The compiled model's resources and the graph's, joined at the handover vertices: each of the
/// graph's handover vertices is the model's `std::Handover` of the same name; what the graph
/// orders before it comes before the model's handover resource, what it orders after it comes
/// after. A handover of either side without its match is an error naming it.
pub fn merge(model: Vec<Resource>, graph: YamlGraph) -> Result<Vec<Resource>, Vec<String>> {
    let mut errors = Vec::new();
    let mut resources = model;
    let model_handovers: HashMap<String, usize> = resources
        .iter()
        .enumerate()
        .filter(|(_, r)| r.entity_type == HANDOVER_TYPE)
        .filter_map(|(i, r)| Some((r.attributes.get("name")?.as_str()?.to_owned(), i)))
        .collect();
    for name in graph.handovers.keys() {
        if !model_handovers.contains_key(name) {
            errors.push(format!(
                "handover vertex `{name}` of graph `{}` has no match: the model has no std::Handover(name=\"{name}\")",
                graph.name
            ));
        }
    }
    let mut unmatched: Vec<&String> = model_handovers.keys().filter(|n| !graph.handovers.contains_key(*n)).collect();
    unmatched.sort();
    for name in unmatched {
        errors.push(format!(
            "std::Handover(name=\"{name}\") of the model has no match: graph `{}` has no handover vertex `{name}`",
            graph.name
        ));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let handover_id = |name: &str| resources[model_handovers[name]].id.clone();
    let ids: HashMap<String, String> =
        graph.handovers.keys().map(|n| (format!("handover:{n}"), handover_id(n))).collect();
    for (name, before) in &graph.handovers {
        let at = model_handovers[name];
        for id in before {
            if !resources[at].requires.contains(id) {
                resources[at].requires.push(id.clone());
            }
        }
    }
    for mut resource in graph.resources {
        for required in &mut resource.requires {
            if let Some(id) = ids.get(required.as_str()) {
                *required = id.clone();
            }
        }
        resources.push(resource);
    }
    Ok(resources)
}
