//! One agent name: its lock, its lease, and its loop of deploys.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Sender, unbounded};
use modelc_api::ErrorKind;
use modelc_ir::Resource;
use modelc_runtime::{AgentSelection, Handlers, MemoryContent, Options, Plan};
use nix::fcntl::{Flock, FlockArg};

use crate::Config;
use crate::awaited::RemoteResults;
use crate::backoff::Backoff;
use crate::drift::{FileEvents, Fingerprint};
use crate::outbox::Outbox;
use crate::poller::{Poller, Wake, sleep_unless_stopped};
use crate::reporter::Reporter;
use crate::state::{Contents, Desired, private_dir};

/// What an agent says it does (the command line prints it; tests read it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// It holds its name and is polling.
    Started {
        known: Option<u64>,
    },
    /// It is deploying a version (`repair`: again, without a new version).
    Deploying {
        version: u64,
        resources: usize,
        repair: bool,
    },
    /// A deploy ended: how many resources ended how.
    Deployed {
        version: u64,
        counts: Vec<(String, usize)>,
    },
    /// The server cannot be reached; it keeps enforcing what it has.
    Disconnected,
    Reconnected,
    /// Something went wrong that it will try again.
    Warning(String),
}

pub struct Agent {
    name: String,
    holder: String,
    config: Config,
    dir: PathBuf,
    contents: Contents,
    desired: Option<Desired>,
    outbox: Outbox,
    /// How long the server's lease runs.
    lease: Duration,
    /// Per own resource, whether its last run here converged: a new version deploys only what
    /// changed and what had not converged (an incremental run); repairs deploy everything.
    converged: HashMap<String, bool>,
    /// The connections to the hosts its resources' contexts name, kept across runs.
    hosts: Arc<modelc_runtime::remote::Hosts>,
    /// The files the last run settled and how each stood then (see `FileEvents::watch`).
    settled: Vec<(PathBuf, Option<Fingerprint>)>,
    _lock: Flock<File>,
}

impl Agent {
    /// Takes name `name`: the lock in the state directory (another process of this machine
    /// serving it is refused) and the lease at the server (another machine's is refused).
    pub fn start(config: &Config, name: &str) -> Result<Agent, String> {
        if name.is_empty() || name.contains(['/', '\0']) || name == "." || name == ".." {
            return Err(format!("`{name}` is not an agent name this agent can keep state for"));
        }
        private_dir(&config.state_dir)?;
        let dir = config.state_dir.join(name);
        private_dir(&dir)?;
        let lock_path = config.state_dir.join(format!("{name}.lock"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| format!("cannot open {}: {e}", lock_path.display()))?;
        let lock = Flock::lock(file, FlockArg::LockExclusiveNonblock)
            .map_err(|_| format!("another agent process serves `{name}` from {}", config.state_dir.display()))?;
        let holder: String =
            modelc_store::random_bytes(12).map_err(|e| e.to_string())?.iter().map(|b| format!("{b:02x}")).collect();
        let lease = match config.client.take_lease(name, &holder) {
            Ok(lease) => lease,
            Err(error) if error.kind() == Some(ErrorKind::Conflict) => {
                return Err(format!("agent `{name}` is held by another process: {error}"));
            }
            Err(error) => return Err(format!("agent `{name}` cannot start: {error}")),
        };
        let outbox = Outbox::open(dir.join("outbox"), config.client.clone(), holder.clone())?;
        Ok(Agent {
            name: name.to_owned(),
            holder,
            contents: Contents::open(&config.state_dir)?,
            desired: Desired::load(&dir),
            config: config.clone(),
            dir,
            outbox,
            lease,
            converged: HashMap::new(),
            hosts: Arc::new(modelc_runtime::remote::Hosts::new(config.remote.clone())),
            settled: Vec::new(),
            _lock: lock,
        })
    }

    /// Runs until `stop` is set, or the agent must stop (its name taken, its token refused).
    pub fn run(mut self, stop: &Arc<AtomicBool>, events: &(dyn Fn(&str, Event) + Sync)) -> Result<(), String> {
        let name = self.name.clone();
        let say = |event: Event| events(&name, event);
        let (wake_tx, wake_rx) = unbounded::<Wake>();
        let known = self.desired.as_ref().map(|d| d.version);
        say(Event::Started { known });
        let poller = Poller {
            client: self.config.client.clone(),
            name: self.name.clone(),
            holder: self.holder.clone(),
            known,
            wait: self.config.poll,
            stop: Arc::clone(stop),
        };
        let poller_wake = wake_tx.clone();
        let poller = std::thread::Builder::new()
            .name(format!("agent-{}-poll", self.name))
            .spawn(move || poller.run(&poller_wake))
            .map_err(|e| format!("cannot start polling: {e}"))?;
        let keeper = self.keep_lease(stop, wake_tx.clone())?;
        let mut files = FileEvents::new(self.config.watch_files, wake_tx.clone());
        let mut next_repair = Instant::now() + self.config.repair_interval;
        // What a restart found: enforced at once, the server's newer version if any follows.
        let mut due: Option<(u64, bool)> = known.map(|v| (v, true));
        let mut failure = None;
        while !stop.load(Ordering::SeqCst) {
            if let Some((version, repair)) = due.take() {
                match self.deploy(version, repair, stop, &say) {
                    Ok(()) => {}
                    Err(error) => {
                        say(Event::Warning(error));
                        // Tried again soon, not at the next release.
                        if !repair {
                            due = Some((version, false));
                            sleep_unless_stopped(Duration::from_secs(2), stop);
                            continue;
                        }
                    }
                }
                files.watch(self.desired.as_ref(), &std::mem::take(&mut self.settled));
                next_repair = Instant::now() + self.config.repair_interval;
            }
            let wait = next_repair.saturating_duration_since(Instant::now()).min(Duration::from_millis(200));
            match wake_rx.recv_timeout(wait) {
                Ok(Wake::Version(version)) => due = Some((version, false)),
                Ok(Wake::File) => {
                    // Drift of a managed file: repaired with everything else (as a repair run).
                    // Events until the repair starts are one (its own writes bring one more,
                    // which finds nothing to do).
                    files.settle();
                    if let Some(desired) = &self.desired {
                        due = Some((desired.version, true));
                    }
                }
                Ok(Wake::Connected(true)) => say(Event::Reconnected),
                Ok(Wake::Connected(false)) => say(Event::Disconnected),
                Ok(Wake::Fatal(why)) => {
                    failure = Some(why);
                    break;
                }
                Err(_) => {
                    if Instant::now() >= next_repair
                        && let Some(desired) = &self.desired
                    {
                        due = Some((desired.version, true));
                    }
                }
            }
        }
        stop.store(true, Ordering::SeqCst);
        let _ = poller.join();
        let _ = keeper.join();
        drop(files);
        // What was reported goes out before the name is given up, if the server takes it.
        self.outbox.flush(Duration::from_secs(5));
        if failure.is_none() {
            let _ = self.config.client.drop_lease(&self.name, &self.holder);
        }
        match failure {
            Some(why) => Err(why),
            None => Ok(()),
        }
    }

    /// Renews the lease on its own thread, a third of its length apart.
    fn keep_lease(&self, stop: &Arc<AtomicBool>, wake: Sender<Wake>) -> Result<std::thread::JoinHandle<()>, String> {
        let (client, name, holder, stop) =
            (self.config.client.clone(), self.name.clone(), self.holder.clone(), Arc::clone(stop));
        let mut every = self.lease / 3;
        std::thread::Builder::new()
            .name(format!("agent-{}-lease", self.name))
            .spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    sleep_unless_stopped(every, &stop);
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    match client.take_lease(&name, &holder) {
                        Ok(lease) => every = lease / 3,
                        Err(error) if error.kind() == Some(ErrorKind::Conflict) => {
                            let _ =
                                wake.send(Wake::Fatal(format!("agent `{name}` was taken by another process: {error}")));
                            return;
                        }
                        // Away: the long poll says so; the lease is taken again when it is back.
                        Err(_) => {}
                    }
                }
            })
            .map_err(|e| format!("cannot start keeping the lease: {e}"))
    }

    /// Deploys `version`: fetched first unless it is a repair of the desired state.
    fn deploy(
        &mut self,
        version: u64,
        repair: bool,
        stop: &Arc<AtomicBool>,
        say: &dyn Fn(Event),
    ) -> Result<(), String> {
        let previous = if repair { None } else { self.desired.clone() };
        if !repair || self.desired.as_ref().is_none_or(|d| d.version != version) {
            let fetched = self.fetch(version, stop)?;
            fetched.save(&self.dir)?;
            self.desired = Some(fetched);
        }
        let Some(desired) = &self.desired else { return Ok(()) };
        let (run, standing) = self.to_run(desired, previous.as_ref(), repair);
        say(Event::Deploying { version, resources: run.len(), repair });
        let client = &self.config.client;
        if let Err(error) = client.progress(&self.name, &self.holder, version, false) {
            say(Event::Warning(format!("the server did not hear that version {version} started: {error}")));
        }
        let handlers =
            Handlers::builtin().with_remote(modelc_runtime::remote::RemoteHandler::new(Arc::clone(&self.hosts)));
        // Modules' own handlers, in a Python host for this run.
        let (handlers, warnings) = modelc_pyhost::handlers::add_module_handlers(
            handlers,
            Box::new(Arc::clone(&self.hosts)),
            &self.config.modules,
            &run.iter().collect::<Vec<_>>(),
            false,
        );
        for warning in warnings {
            say(Event::Warning(warning));
        }
        let content = self.content(&run);
        let mut resources = run;
        resources.extend(standing.iter().map(|id| stub(id, &self.name)));
        resources.extend(desired.foreign.iter().map(|f| stub(&f.id, &f.agent)));
        // Purged: what the previous version had and this one has not.
        let kept: HashSet<&str> = desired.resources.iter().map(|r| r.id.as_str()).collect();
        let removed: Vec<Resource> = previous
            .map(|p| p.resources.into_iter().filter(|r| !kept.contains(r.id.as_str())).collect())
            .unwrap_or_default();
        let selection = AgentSelection::Named(vec![self.name.clone()]);
        let mut plan = Plan::new(resources, &removed, &selection, &handlers, &[]);
        // Before the implied edges and groups, which join only resources deployed here.
        plan.await_foreign();
        plan.await_resources(&standing);
        plan.add_autoedges();
        plan.add_autogroups(&handlers);
        let awaited = RemoteResults {
            client: client.clone(),
            version,
            wait: self.config.poll,
            stop: Arc::clone(stop),
            own: standing.clone(),
        };
        let options = Options {
            jobs: self.config.jobs.max(1),
            interrupt: Arc::clone(stop),
            awaited: Some(Arc::new(awaited)),
            ..Options::default()
        };
        let reporter = Reporter {
            name: &self.name,
            version,
            outbox: &self.outbox,
            started: Mutex::new(HashMap::new()),
            counts: Mutex::new(std::collections::BTreeMap::new()),
            standing: &standing,
            converged: Mutex::new(Vec::new()),
            settled: Mutex::new(Vec::new()),
        };
        modelc_runtime::run(&plan, &handlers, &content, &options, &reporter);
        if repair || self.converged.is_empty() {
            self.converged.clear();
        }
        self.converged.retain(|id, _| kept.contains(id.as_str()));
        for (id, converged) in reporter.converged.lock().map(|c| c.clone()).unwrap_or_default() {
            self.converged.insert(id, converged);
        }
        self.settled = reporter.settled.into_inner().unwrap_or_default();
        let counts =
            reporter.counts.lock().map(|c| c.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()).unwrap_or_default();
        if let Err(error) = client.progress(&self.name, &self.holder, version, true) {
            say(Event::Warning(format!("the server did not hear that version {version} finished: {error}")));
        }
        say(Event::Deployed { version, counts });
        Ok(())
    }

    /// What a run deploys: every resource for a repair (or the first run of this process);
    /// for a new version, those that changed since the previous one or had not converged. And
    /// the own resources it stands on without running them: those the deployed ones require.
    fn to_run(&self, desired: &Desired, previous: Option<&Desired>, repair: bool) -> (Vec<Resource>, HashSet<String>) {
        let (Some(previous), false, false) = (previous, repair, self.converged.is_empty()) else {
            return (desired.resources.clone(), HashSet::new());
        };
        let before: HashMap<&str, &Resource> = previous.resources.iter().map(|r| (r.id.as_str(), r)).collect();
        let run: Vec<Resource> = desired
            .resources
            .iter()
            .filter(|r| before.get(r.id.as_str()) != Some(r) || self.converged.get(&r.id) != Some(&true))
            .cloned()
            .collect();
        let running: HashSet<&str> = run.iter().map(|r| r.id.as_str()).collect();
        let own: HashSet<&str> = desired.resources.iter().map(|r| r.id.as_str()).collect();
        let standing = run
            .iter()
            .flat_map(|r| &r.requires)
            .filter(|id| own.contains(id.as_str()) && !running.contains(id.as_str()))
            .cloned()
            .collect();
        (run, standing)
    }

    /// The agent's resources in `version` and the contents they name, from the server, with
    /// back-off while it is away.
    fn fetch(&self, version: u64, stop: &AtomicBool) -> Result<Desired, String> {
        let client = &self.config.client;
        let mut backoff = Backoff::new(Duration::from_millis(250), Duration::from_secs(30));
        let fetched = loop {
            match client.agent_resources(&self.name, version) {
                Ok(fetched) => break fetched,
                Err(error) if error.is_transient() && !stop.load(Ordering::SeqCst) => {
                    sleep_unless_stopped(backoff.next(), stop);
                }
                Err(error) => return Err(format!("cannot fetch version {version}: {error}")),
            }
        };
        let wanted: BTreeSet<String> = fetched
            .resources
            .iter()
            .filter_map(|r| r.attributes.get("hash").and_then(|h| h.as_str()).map(str::to_owned))
            .filter(|hash| self.contents.get(hash).is_none())
            .collect();
        if !wanted.is_empty() {
            let wanted: Vec<String> = wanted.into_iter().collect();
            let found = client.contents(&wanted).map_err(|e| format!("cannot fetch file contents: {e}"))?;
            for (hash, text) in &found.contents {
                self.contents.put(hash, text.as_bytes())?;
            }
        }
        Ok(Desired { version, resources: fetched.resources, foreign: fetched.foreign })
    }

    /// The contents `resources` name, from the cache.
    fn content(&self, resources: &[Resource]) -> MemoryContent {
        let mut content = MemoryContent::default();
        let hashes: BTreeSet<&str> =
            resources.iter().filter_map(|r| r.attributes.get("hash").and_then(|h| h.as_str())).collect();
        for hash in hashes {
            if let Some(bytes) = self.contents.get(hash) {
                content.0.insert(hash.to_owned(), bytes);
            }
        }
        content
    }
}

/// Another agent's resource as a plan holds it: its id and agent, nothing of its attributes.
fn stub(id: &str, agent: &str) -> Resource {
    let entity_type = id.split('[').next().unwrap_or(id).to_owned();
    Resource {
        id: id.to_owned(),
        entity_type: entity_type.clone(),
        agent: agent.to_owned(),
        attributes: Default::default(),
        requires: Vec::new(),
        send_event: false,
        receive_events: false,
        resource_set: None,
        state: modelc_ir::ResourceState::Available,
        source: Arc::new(modelc_ir::Source { entity: entity_type, file: String::new(), line: 0 }),
        meta: Default::default(),
        notify: Vec::new(),
    }
}
