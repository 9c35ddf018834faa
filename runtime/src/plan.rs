//! What a run will do with each resource of a version, before anything runs: deploy it, or
//! report why not (another agent's, no handler, not deployable here), and the dependency
//! graph among them by position.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use modelc_ir::{Resource, ResourceState};

use crate::handler::Handlers;
use crate::remote::Target;

/// Which agents this run handles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentSelection {
    /// The agents of this machine: the agent named `host` or `localhost`, and every agent
    /// whose `std::AgentConfig` has the uri `local:`.
    ThisMachine { host: String },
    /// Exactly these agents (`--agent NAME`).
    Named(Vec<String>),
}

impl AgentSelection {
    /// The agents of `resources` this selection handles.
    pub fn agents(&self, resources: &[Resource]) -> HashSet<String> {
        match self {
            AgentSelection::Named(names) => names.iter().cloned().collect(),
            AgentSelection::ThisMachine { host } => {
                let mut agents: HashSet<String> = [host.clone(), "localhost".to_owned()].into_iter().collect();
                for r in resources.iter().filter(|r| r.entity_type == "std::AgentConfig") {
                    let uri = r.attributes.get("uri").and_then(|v| v.as_str());
                    if let (Some("local:"), Some(name)) = (uri, r.attributes.get("agentname").and_then(|v| v.as_str()))
                    {
                        agents.insert(name.to_owned());
                    }
                }
                agents
            }
        }
    }
}

/// What the run does with one resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disposition {
    /// Its handler runs once everything it requires has deployed.
    Deploy,
    /// Another agent's resource: listed, never applied.
    NotHandled,
    /// Another agent's resource that one deployed here requires: never applied here, its
    /// result in this version comes from outside the run ([`crate::engine::Awaited`]), and
    /// what requires it waits for it ([`Plan::await_foreign`]).
    Awaited,
    /// No handler for its type.
    NoHandler,
    /// Cannot be deployed here; the reason.
    Undeployable(String),
}

/// The resources of one run and their graph.
pub struct Plan {
    /// The version's resources in queue order, then purged copies of removed resources.
    pub resources: Vec<Resource>,
    pub dispositions: Vec<Disposition>,
    /// Positions of the resources each one requires.
    pub requires: Vec<Vec<usize>>,
    /// Positions of the resources that require each one.
    pub dependents: Vec<Vec<usize>>,
    /// Requirements that are not in the version at all (an IR written by hand); such a
    /// resource is blocked.
    pub missing: Vec<Vec<String>>,
    /// Positions of resources that must be refreshed whatever happens in this run (a refresh
    /// an earlier run could not do).
    pub pending_refresh: Vec<usize>,
    /// The edges [`Plan::add_autoedges`] added, `(after, before)`.
    pub autoedges: Vec<(usize, usize)>,
    /// Per resource, the receivers of its notifications and their timing (`notifications.rs`).
    pub notify: Vec<Vec<(usize, modelc_ir::Timing)>>,
    /// Ordering-only edges `(after, before)`: `after` waits for `before` but runs even when
    /// `before` fails.
    pub soft: HashSet<(usize, usize)>,
    /// Groups of resources applied together (`autogroup.rs`), by position; each has two or
    /// more members, in plan order.
    pub groups: Vec<Vec<usize>>,
    /// Per resource, its group in `groups`.
    pub group_of: Vec<Option<usize>>,
    /// Per resource, whether a dry run checks it even when something it requires would change
    /// first ([`Handler::predicts_after_requirements`](crate::handler::Handler)).
    pub predictable: Vec<bool>,
    /// The directories the resources deployed in this run make exist, per target
    /// ([`Target::key`]: "" for this machine).
    pub directories: HashMap<String, HashSet<PathBuf>>,
    /// The resources of the previous version deployed here that this version no longer has and
    /// that stay on the machine: they do not say `purge_on_delete`. Ids, in that version's order.
    pub left_behind: Vec<String>,
}

impl Plan {
    /// Plans a run of `resources` for the agents `selection` picks.
    ///
    /// `previous` is the last version deployed here: every resource of it with
    /// `purge_on_delete` that this version no longer has is added, purged. `pending_refresh`
    /// names receivers an earlier run owes a refresh.
    pub fn new(
        resources: Vec<Resource>,
        previous: &[Resource],
        selection: &AgentSelection,
        handlers: &Handlers,
        pending_refresh: &[String],
    ) -> Plan {
        let mut resources = resources;
        resources.extend(purged_copies(&resources, previous));
        let agents = selection.agents(&resources);
        let position: HashMap<&str, usize> = resources.iter().enumerate().map(|(i, r)| (r.id.as_str(), i)).collect();
        let mut requires = vec![Vec::new(); resources.len()];
        let mut dependents = vec![Vec::new(); resources.len()];
        let mut missing = vec![Vec::new(); resources.len()];
        for (i, r) in resources.iter().enumerate() {
            for target in &r.requires {
                match position.get(target.as_str()) {
                    Some(&j) if j != i => {
                        requires[i].push(j);
                        dependents[j].push(i);
                    }
                    Some(_) => {}
                    None => missing[i].push(target.clone()),
                }
            }
        }
        let mut dispositions: Vec<Disposition> = resources.iter().map(|r| disposition(r, &agents, handlers)).collect();
        // Nor two resources with one id: which desired state would win is not for the runtime
        // to guess.
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (i, r) in resources.iter().enumerate() {
            if let Some(&first) = seen.get(r.id.as_str()) {
                for j in [first, i] {
                    dispositions[j] =
                        Disposition::Undeployable("the version has two resources with this id".to_owned());
                }
            } else {
                seen.insert(&r.id, i);
            }
        }
        // A compile never produces a cycle, but an IR written by hand may: what is in one (or
        // waits on one) could never start, so it is settled now instead of waiting forever.
        for i in in_or_after_cycle(&requires, &dependents) {
            if dispositions[i] != Disposition::NotHandled {
                dispositions[i] = Disposition::Undeployable(
                    "it is part of a dependency cycle, or requires something that is".to_owned(),
                );
            }
        }
        let mut pending_refresh: Vec<usize> =
            pending_refresh.iter().filter_map(|id| position.get(id.as_str()).copied()).collect();
        pending_refresh.sort_unstable();
        pending_refresh.dedup();
        let deployed = |i: usize| dispositions[i] == Disposition::Deploy;
        let handler_of = |r: &Resource| handlers.get(&r.entity_type);
        let predictable = resources
            .iter()
            .enumerate()
            .map(|(i, r)| deployed(i) && handler_of(r).is_some_and(|h| h.predicts_after_requirements()))
            .collect();
        let mut directories: HashMap<String, HashSet<PathBuf>> = HashMap::new();
        for (_, r) in resources.iter().enumerate().filter(|&(i, _)| deployed(i)) {
            if let (Some(directory), Ok(target)) = (handler_of(r).and_then(|h| h.creates_directory(r)), Target::of(r)) {
                directories.entry(target.key()).or_default().insert(directory);
            }
        }
        // A removed resource's agent may have been this machine's through an AgentConfig that
        // went with it.
        let previous_agents: HashSet<String> = agents.union(&selection.agents(previous)).cloned().collect();
        let left_behind = left_behind(&resources, previous, &previous_agents);
        let mut plan = Plan {
            resources,
            dispositions,
            requires,
            dependents,
            missing,
            pending_refresh,
            autoedges: Vec::new(),
            notify: Vec::new(),
            soft: HashSet::new(),
            groups: Vec::new(),
            group_of: Vec::new(),
            predictable,
            directories,
            left_behind,
        };
        plan.add_notifications();
        plan.group_of = vec![None; plan.len()];
        plan
    }

    /// Adds the edges the resources imply (`autoedge.rs`) between resources deployed here;
    /// returns how many.
    pub fn add_autoedges(&mut self) -> usize {
        let edges = crate::autoedge::implied(&self.resources, &self.requires);
        for (after, before) in edges {
            let both_here = [after, before].iter().all(|&i| self.dispositions[i] == Disposition::Deploy);
            if both_here {
                self.requires[after].push(before);
                self.dependents[before].push(after);
                self.autoedges.push((after, before));
            }
        }
        self.autoedges.len()
    }

    /// Makes the other agents' resources that a resource deployed here requires
    /// [`Disposition::Awaited`]: an agent of a server waits for their results instead of
    /// counting them as not deployed. Returns how many.
    pub fn await_foreign(&mut self) -> usize {
        let mut awaited = 0;
        for i in 0..self.len() {
            let required_here = self.dependents[i].iter().any(|&d| self.dispositions[d] == Disposition::Deploy);
            if self.dispositions[i] == Disposition::NotHandled && required_here {
                self.dispositions[i] = Disposition::Awaited;
                awaited += 1;
            }
        }
        awaited
    }

    /// Makes the resources with these ids [`Disposition::Awaited`] whatever their agent: an
    /// agent's incremental run holds its own unchanged resources that a changed one requires,
    /// and gives their last results instead of running them again.
    pub fn await_resources(&mut self, ids: &HashSet<String>) {
        for i in 0..self.len() {
            if ids.contains(&self.resources[i].id) {
                self.dispositions[i] = Disposition::Awaited;
            }
        }
    }

    pub fn len(&self) -> usize {
        self.resources.len()
    }

    /// The directories the run makes exist on the machine `resource` is deployed on.
    pub fn directories_for(&self, resource: &Resource) -> &HashSet<PathBuf> {
        static NONE: std::sync::LazyLock<HashSet<PathBuf>> = std::sync::LazyLock::new(HashSet::new);
        let key = Target::of(resource).map(|t| t.key()).unwrap_or_default();
        self.directories.get(&key).unwrap_or(&NONE)
    }

    pub fn is_empty(&self) -> bool {
        self.resources.is_empty()
    }
}

/// The resources that no order reaches: those in a dependency cycle and those after one.
fn in_or_after_cycle(requires: &[Vec<usize>], dependents: &[Vec<usize>]) -> Vec<usize> {
    let mut waiting: Vec<usize> = requires.iter().map(Vec::len).collect();
    let mut ready: Vec<usize> = (0..requires.len()).filter(|&i| waiting[i] == 0).collect();
    while let Some(i) = ready.pop() {
        for &d in &dependents[i] {
            waiting[d] -= 1;
            if waiting[d] == 0 {
                ready.push(d);
            }
        }
    }
    (0..requires.len()).filter(|&i| waiting[i] > 0).collect()
}

fn disposition(resource: &Resource, agents: &HashSet<String>, handlers: &Handlers) -> Disposition {
    if !agents.contains(&resource.agent) {
        return Disposition::NotHandled;
    }
    if resource.state == ResourceState::Undefined {
        let unknown: Vec<&str> =
            resource.attributes.iter().filter(|(_, v)| contains_undefined(v)).map(|(name, _)| name).collect();
        return Disposition::Undeployable(format!(
            "it has values not known at compile time ({}); it is deployed once a compile knows them",
            if unknown.is_empty() { "an attribute".to_owned() } else { unknown.join(", ") }
        ));
    }
    match Target::of(resource) {
        Err(reason) => return Disposition::Undeployable(reason),
        Ok(Target::Remote(chain)) if !handlers.reaches_remote() => {
            return Disposition::Undeployable(format!(
                "its context (`via`) is {chain}; this run deploys only on this machine"
            ));
        }
        Ok(_) => {}
    }
    if handlers.get(&resource.entity_type).is_none() {
        return Disposition::NoHandler;
    }
    Disposition::Deploy
}

fn contains_undefined(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::String(s) => s == modelc_ir::UNDEFINED,
        serde_json::Value::Array(items) => items.iter().any(contains_undefined),
        serde_json::Value::Object(map) => map.values().any(contains_undefined),
        _ => false,
    }
}

/// The resources of `previous` that are gone from `current`, handled here, and stay on the
/// machine ([`Resource::stays_when_removed`]).
fn left_behind(current: &[Resource], previous: &[Resource], agents: &HashSet<String>) -> Vec<String> {
    let present: HashSet<&str> = current.iter().map(|r| r.id.as_str()).collect();
    previous
        .iter()
        .filter(|r| !present.contains(r.id.as_str()) && agents.contains(&r.agent) && r.stays_when_removed())
        .map(|r| r.id.clone())
        .collect()
}

/// Purged copies of the resources of `previous` that have `purge_on_delete` and are gone from
/// `current`. Among them, requirements are turned around: what was deployed after something is
/// removed before it (a file before the directory that held it).
fn purged_copies(current: &[Resource], previous: &[Resource]) -> Vec<Resource> {
    let present: HashSet<&str> = current.iter().map(|r| r.id.as_str()).collect();
    let removed: Vec<&Resource> =
        previous.iter().filter(|r| !present.contains(r.id.as_str()) && r.purged_when_removed()).collect();
    let ids: HashSet<&str> = removed.iter().map(|r| r.id.as_str()).collect();
    let mut copies: Vec<Resource> = removed
        .iter()
        .map(|r| {
            let mut copy = (*r).clone();
            copy.attributes.insert("purged".to_owned(), serde_json::Value::Bool(true));
            copy.requires.clear();
            copy.resource_set = None;
            copy
        })
        .collect();
    for r in &removed {
        for target in r.requires.iter().filter(|t| ids.contains(t.as_str())) {
            if let Some(copy) = copies.iter_mut().find(|c| c.id == *target) {
                copy.requires.push(r.id.clone());
            }
        }
    }
    copies
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::resource;

    #[test]
    fn this_machine_handles_its_host_localhost_and_local_agent_configs() {
        let mut config = resource("std::AgentConfig", "internal", "agentname", "edge", &[]);
        config.attributes.insert("uri", "local:".into());
        let resources = vec![config, resource("std::testing::NullResource", "edge", "name", "a", &[])];
        let agents = AgentSelection::ThisMachine { host: "box".into() }.agents(&resources);
        assert!(agents.contains("box") && agents.contains("localhost") && agents.contains("edge"));
        assert!(!agents.contains("internal"));
    }

    #[test]
    fn remote_contexts_need_a_way_there() {
        let mut r = resource("fs::File", "h", "path", "/x", &[]);
        let agents: HashSet<String> = ["h".to_owned()].into();
        r.attributes.insert("via", serde_json::json!({"method_name": "local", "name": ""}));
        assert_eq!(disposition(&r, &agents, &Handlers::builtin()), Disposition::Deploy);
        r.attributes.insert("via", serde_json::json!({"method_name": "ssh", "hostname": "10.0.0.1"}));
        let Disposition::Undeployable(why) = disposition(&r, &agents, &Handlers::builtin()) else { panic!() };
        assert!(why.contains("ssh 10.0.0.1"), "{why}");
        r.attributes.insert("via", serde_json::json!({"method_name": "docker"}));
        assert!(matches!(disposition(&r, &agents, &Handlers::builtin()), Disposition::Undeployable(_)));
    }

    #[test]
    fn removed_purgeable_resources_come_back_purged_in_reverse_order() {
        let mut dir = resource("fs::Directory", "h", "path", "/d", &[]);
        let mut file = resource("fs::File", "h", "path", "/d/f", &[&dir.id]);
        let mut kept = resource("fs::File", "h", "path", "/k", &[]);
        for r in [&mut dir, &mut file, &mut kept] {
            r.attributes.insert("purge_on_delete", true.into());
        }
        let copies = purged_copies(std::slice::from_ref(&kept), &[dir.clone(), file.clone(), kept.clone()]);
        assert_eq!(copies.len(), 2);
        assert_eq!(copies[0].id, dir.id);
        assert_eq!(copies[0].attributes["purged"], true);
        assert_eq!(copies[0].requires, vec![file.id.clone()], "the directory goes after the file in it");
        assert!(copies[1].requires.is_empty());
    }
}
