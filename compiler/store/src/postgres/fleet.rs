//! What `modelc server` and its agents keep beside the versions, in the same database (so two
//! servers on one database serve the same agents, and nothing lives anywhere else):
//!
//! * **releases**: a version is deployed by agents only once released, in increasing order;
//!   each release records the agents whose resources it changed (`agent_releases`), so a long
//!   poll wakes only those, and a requirement on another agent's resource is met only by that
//!   agent's result in a version at least as new as the last release that changed it;
//! * **tokens**: only the hash of each API token, with its role and agents;
//! * **agents**: each name's lease (who holds it, until when, by the database's clock) and the
//!   versions it is deploying and has deployed;
//! * **actions**: each result an agent reports, once per action id however often it is sent,
//!   and `resource_states`, every resource's latest action.

use postgres::{GenericClient, Transaction};
use serde::{Deserialize, Serialize};

use super::{LOCK, PgStore, signed, storage, unsigned};
use crate::StoreError;

/// One release at a time: releases are numbered in order, and a stale one is refused.
const RELEASE_LOCK: i64 = LOCK + 2;

/// The channel a release is announced on (its payload: the version).
pub const RELEASES_CHANNEL: &str = "modelc_releases";

/// The channel on which recorded results are announced (no payload): requirements waited for
/// on any server may have been met.
pub const RESULTS_CHANNEL: &str = "modelc_results";

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Export, plan and release versions, and read the store.
    Export,
    /// Deploy its own agents' resources and report their results.
    Agent,
    /// Read versions, status and actions.
    Read,
    /// Everything, tokens included.
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Export => "export",
            Role::Agent => "agent",
            Role::Read => "read",
            Role::Admin => "admin",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        [Role::Export, Role::Agent, Role::Read, Role::Admin].into_iter().find(|r| r.as_str() == text)
    }
}

/// A stored token (never the token itself: its hash finds it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Token {
    pub id: String,
    pub role: Role,
    /// The agents an agent token deploys.
    pub agents: Vec<String>,
    pub created: String,
    pub revoked: Option<String>,
}

/// A version as released.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Release {
    pub version: u64,
    pub released: String,
    /// The agents whose resources this release changed since the one before.
    pub agents: Vec<String>,
    /// It was released before this call (releasing it again changes nothing).
    pub already: bool,
}

/// One action an agent reports: a handler started (`finished` empty) or ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    /// Made by the agent: the same action sent twice is recorded once.
    pub action_id: String,
    /// The resource.
    pub id: String,
    pub agent: String,
    pub version: u64,
    /// `changed`, `unchanged`, `failed`, …; empty while it runs.
    #[serde(default)]
    pub result: Option<String>,
    pub started: String,
    #[serde(default)]
    pub finished: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub changes: serde_json::Value,
    /// What the handler learnt about the resource, by name (an ended action's): kept in the
    /// store's facts (`crate::Fact`), not with the action.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub facts: std::collections::BTreeMap<String, String>,
}

/// A resource's latest action, as `status` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceState {
    pub id: String,
    pub agent: String,
    pub version: u64,
    /// The action's result; `deploying` while it runs, `agent-lost` when its agent's lease
    /// expired before it finished.
    pub result: String,
    pub started: String,
    pub finished: Option<String>,
    pub error: Option<String>,
}

/// An agent as the server knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentState {
    pub name: String,
    /// Its lease is held and has not expired.
    pub connected: bool,
    /// The last version it finished deploying.
    pub version: Option<u64>,
    /// The version it is deploying.
    pub deploying: Option<u64>,
}

/// What a resource another agent deploys has reached, as a requirement sees it in a version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requirement {
    pub id: String,
    /// Its result in that version (`changed`, `failed`, …), or `None` while it has none yet: its
    /// agent has not finished it since the last release that changed that agent.
    pub result: Option<String>,
    pub error: Option<String>,
}

/// Why a lease was not given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseHeld {
    /// When the holder's lease ends, RFC 3339.
    pub until: String,
}

/// One serialisable snapshot of the agents and resource states (`modelc status`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    /// The latest released version.
    pub version: Option<u64>,
    pub agents: Vec<AgentState>,
    pub resources: Vec<ResourceState>,
}

/// An RFC 3339 time as PostgreSQL writes it for us: `2026-11-27T14:39:44.123Z`.
const RFC3339: &str = "YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"";

impl PgStore {
    /// Releases `version` unless a newer one is released already, which holds its changes (a
    /// partial export builds on the latest version) or replaces them (a full one): what an
    /// export with `--release` asks, when exports race each other.
    pub fn release_at_least(&mut self, version: u64) -> Result<Release, StoreError> {
        match self.latest_release()? {
            Some((latest, _)) if latest >= version => self.release_of(latest)?.ok_or(StoreError::NoSuchVersion(latest)),
            _ => match self.release(Some(version)) {
                // A newer one was released between the look and the release.
                Err(StoreError::Conflict(_)) => {
                    let (latest, _) = self.latest_release()?.ok_or(StoreError::NoSuchVersion(version))?;
                    self.release_of(latest)?.ok_or(StoreError::NoSuchVersion(latest))
                }
                other => other,
            },
        }
    }

    /// Releases `version` (`None`: the latest). A version older than the latest released is
    /// refused ([`StoreError::Conflict`]); the latest released one again changes nothing.
    pub fn release(&mut self, version: Option<u64>) -> Result<Release, StoreError> {
        let mut tx = self.client.get_mut().transaction().map_err(storage)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&RELEASE_LOCK]).map_err(storage)?;
        let version = match version {
            Some(v) => super::info(&mut tx, v)?.version,
            None => super::latest(&mut tx)?.ok_or(StoreError::Empty)?.version,
        };
        let latest = latest_release(&mut tx)?;
        if let Some((last, released)) = &latest {
            if version < *last {
                return Err(StoreError::Conflict(format!(
                    "version {version} is older than version {last}, released at {released}: releases only move forward"
                )));
            }
            if version == *last {
                let agents = agents_of_release(&mut tx, version)?;
                return Ok(Release { version, released: released.clone(), agents, already: true });
            }
        }
        let agents = changed_agents(&mut tx, latest.map(|(v, _)| v), version)?;
        let released = crate::utc_now();
        tx.execute("INSERT INTO releases (version, released) VALUES ($1, $2)", &[&signed(version), &released])
            .map_err(storage)?;
        tx.execute(
            "INSERT INTO agent_releases (agent, version) SELECT UNNEST($1::text[]), $2",
            &[&agents, &signed(version)],
        )
        .map_err(storage)?;
        tx.execute("SELECT pg_notify($1, $2)", &[&RELEASES_CHANNEL, &version.to_string()]).map_err(storage)?;
        tx.commit().map_err(storage)?;
        Ok(Release { version, released, agents, already: false })
    }

    /// The latest released version and when it was released.
    pub fn latest_release(&self) -> Result<Option<(u64, String)>, StoreError> {
        self.read(|tx| latest_release(tx))
    }

    /// A release (its agents), or `None` when `version` is not released.
    pub fn release_of(&self, version: u64) -> Result<Option<Release>, StoreError> {
        self.read(|tx| {
            let row = tx
                .query_opt("SELECT released FROM releases WHERE version = $1", &[&signed(version)])
                .map_err(storage)?;
            row.map(|row| {
                Ok(Release { version, released: row.get(0), agents: agents_of_release(tx, version)?, already: true })
            })
            .transpose()
        })
    }

    /// The last release up to `upto` that changed `agent`'s resources: what the agent must
    /// deploy to be up to date with `upto`.
    pub fn due_version(&self, agent: &str, upto: u64) -> Result<Option<u64>, StoreError> {
        self.read(|tx| due_version(tx, agent, upto))
    }

    /// The resources of `agents` in `version`, in stored order.
    pub fn agent_resources(&self, agents: &[String], version: u64) -> Result<Vec<modelc_ir::Resource>, StoreError> {
        self.read(|tx| {
            super::info(tx, version)?;
            let rows = tx
                .query(
                    "SELECT data FROM resources WHERE agent = ANY($1) AND first_version <= $2
                     AND COALESCE(last_version, 9223372036854775807) > $2 ORDER BY seq",
                    &[&agents, &signed(version)],
                )
                .map_err(storage)?;
            super::decode_rows(&rows)
        })
    }

    /// What each of `ids` has reached as a requirement in `version`: the result of its latest
    /// finished action, if that action deployed a version at least as new as the last release
    /// up to `version` that changed its agent. A result from before that release is not one
    /// (the resource may have changed since), so a requirement is never met early.
    pub fn requirements(&self, ids: &[String], version: u64) -> Result<Vec<Requirement>, StoreError> {
        self.read(|tx| {
            let rows = tx
                .query(
                    "SELECT rid, agent, version, result, finished, error FROM resource_states WHERE rid = ANY($1)",
                    &[&ids],
                )
                .map_err(storage)?;
            let states: std::collections::HashMap<String, postgres::Row> =
                rows.into_iter().map(|row| (row.get::<_, String>(0), row)).collect();
            let mut due = std::collections::HashMap::new();
            let mut out = Vec::with_capacity(ids.len());
            for id in ids {
                let agent = modelc_ir::id::ResourceId::parse(id).map(|parsed| parsed.agent);
                let mut requirement = Requirement { id: id.clone(), result: None, error: None };
                if let (Some(agent), Some(state)) = (agent, states.get(id)) {
                    let due = match due.get(&agent) {
                        Some(due) => *due,
                        None => {
                            let found = due_version(tx, &agent, version)?;
                            due.insert(agent.clone(), found);
                            found
                        }
                    };
                    let finished: Option<String> = state.get(4);
                    let deployed = unsigned(state.get(2));
                    if finished.is_some() && due.is_some_and(|due| deployed >= due) {
                        requirement.result = state.get(3);
                        requirement.error = state.get(5);
                    }
                }
                out.push(requirement);
            }
            Ok(out)
        })
    }

    /// The file contents of `hashes` that some resource of `agents` names: what an agent may
    /// fetch.
    pub fn agent_contents(
        &self,
        agents: &[String],
        hashes: &[String],
    ) -> Result<std::collections::HashMap<String, Vec<u8>>, StoreError> {
        self.read(|tx| {
            let rows = tx
                .query(
                    "SELECT hash, data FROM contents WHERE hash = ANY($2) AND EXISTS (
                         SELECT 1 FROM resources r WHERE r.content = contents.hash AND r.agent = ANY($1))",
                    &[&agents, &hashes],
                )
                .map_err(storage)?;
            Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
        })
    }

    /// Stores a new token's hash; its id.
    pub fn create_token(&mut self, hash: &[u8], role: Role, agents: &[String]) -> Result<Token, StoreError> {
        let id = format!("t{}", hex(&crate::random_bytes(6)?));
        let created = crate::utc_now();
        self.client
            .get_mut()
            .execute(
                "INSERT INTO tokens (id, hash, role, agents, created) VALUES ($1, $2, $3, $4, $5)",
                &[&id, &hash, &role.as_str(), &agents, &created],
            )
            .map_err(storage)?;
        Ok(Token { id, role, agents: agents.to_vec(), created, revoked: None })
    }

    /// The token whose hash this is (revoked ones included: the caller refuses those).
    pub fn token_by_hash(&self, hash: &[u8]) -> Result<Option<Token>, StoreError> {
        self.read(|tx| {
            let row = tx
                .query_opt("SELECT id, role, agents, created, revoked FROM tokens WHERE hash = $1", &[&hash])
                .map_err(storage)?;
            Ok(row.as_ref().map(token))
        })
    }

    /// Every token, oldest first.
    pub fn tokens(&self) -> Result<Vec<Token>, StoreError> {
        self.read(|tx| {
            let rows = tx
                .query("SELECT id, role, agents, created, revoked FROM tokens ORDER BY created, id", &[])
                .map_err(storage)?;
            Ok(rows.iter().map(token).collect())
        })
    }

    /// Revokes a token; `false` when there is no token with that id.
    pub fn revoke_token(&mut self, id: &str) -> Result<bool, StoreError> {
        let changed = self
            .client
            .get_mut()
            .execute("UPDATE tokens SET revoked = COALESCE(revoked, $2) WHERE id = $1", &[&id, &crate::utc_now()])
            .map_err(storage)?;
        Ok(changed > 0)
    }

    /// Takes or renews the lease on agent `name` for `holder` (an agent process's random id)
    /// for `seconds`; refused while another holder's lease runs.
    pub fn take_lease(&mut self, name: &str, holder: &str, seconds: f64) -> Result<Result<(), LeaseHeld>, StoreError> {
        let row = self
            .client
            .get_mut()
            .query_opt(
                &format!(
                    "INSERT INTO agents (name, holder, expires, seen) VALUES ($1, $2, now() + make_interval(secs => $3), to_char(now() AT TIME ZONE 'UTC', '{RFC3339}'))
                     ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires = EXCLUDED.expires, seen = EXCLUDED.seen
                       WHERE agents.holder IS NULL OR agents.holder = EXCLUDED.holder OR agents.expires < now()
                     RETURNING name"
                ),
                &[&name, &holder, &seconds],
            )
            .map_err(storage)?;
        if row.is_some() {
            return Ok(Ok(()));
        }
        let until: String = self
            .client
            .get_mut()
            .query_one(
                &format!("SELECT to_char(expires AT TIME ZONE 'UTC', '{RFC3339}') FROM agents WHERE name = $1"),
                &[&name],
            )
            .map_err(storage)?
            .get(0);
        Ok(Err(LeaseHeld { until }))
    }

    /// Gives up `holder`'s lease on `name` (an agent that stops cleanly).
    pub fn drop_lease(&mut self, name: &str, holder: &str) -> Result<(), StoreError> {
        self.client
            .get_mut()
            .execute(
                "UPDATE agents SET holder = NULL, expires = NULL WHERE name = $1 AND holder = $2",
                &[&name, &holder],
            )
            .map_err(storage)?;
        Ok(())
    }

    /// Whether `holder` holds a running lease on `name`.
    pub fn holds_lease(&self, name: &str, holder: &str) -> Result<bool, StoreError> {
        self.read(|tx| {
            Ok(tx
                .query_opt(
                    "SELECT 1 FROM agents WHERE name = $1 AND holder = $2 AND expires >= now()",
                    &[&name, &holder],
                )
                .map_err(storage)?
                .is_some())
        })
    }

    /// Notes that agent `name` began (`finished: false`) or finished deploying `version`.
    pub fn agent_progress(&mut self, name: &str, version: u64, finished: bool) -> Result<(), StoreError> {
        let statement = if finished {
            "UPDATE agents SET deployed = GREATEST(COALESCE(deployed, 0), $2), deploying = NULL WHERE name = $1"
        } else {
            "UPDATE agents SET deploying = $2 WHERE name = $1"
        };
        self.client.get_mut().execute(statement, &[&name, &signed(version)]).map_err(storage)?;
        Ok(())
    }

    /// Records `actions` in one transaction: each action once (a retried one changes nothing but
    /// what it adds: its end), and each resource's latest action. Returns how many were new or
    /// newly finished. Two statements whatever the batch's size.
    pub fn record_actions(&mut self, actions: &[Action]) -> Result<u64, StoreError> {
        // One row per action id (a batch may hold an action's start and its end: the end wins).
        let mut merged: Vec<&Action> = Vec::with_capacity(actions.len());
        let mut at: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for action in actions {
            match at.get(action.action_id.as_str()) {
                Some(&i) if merged[i].finished.is_none() => merged[i] = action,
                Some(_) => {}
                None => {
                    at.insert(&action.action_id, merged.len());
                    merged.push(action);
                }
            }
        }
        let column =
            |f: &dyn Fn(&Action) -> Option<String>| -> Vec<Option<String>> { merged.iter().map(|a| f(a)).collect() };
        let ids = column(&|a| Some(a.action_id.clone()));
        let rids = column(&|a| Some(a.id.clone()));
        let agents = column(&|a| Some(a.agent.clone()));
        let versions: Vec<i64> = merged.iter().map(|a| signed(a.version)).collect();
        let results = column(&|a| a.result.clone());
        let started = column(&|a| Some(a.started.clone()));
        let finished = column(&|a| a.finished.clone());
        let errors = column(&|a| a.error.clone());
        let changes = column(&|a| if a.changes.is_null() { None } else { Some(a.changes.to_string()) });
        let mut tx = self.client.get_mut().transaction().map_err(storage)?;
        let written: i64 = tx
            .query_one(
                // Inserted, or, when only started before, given its end; an action that already
                // ended is never changed again. Each resource's latest action: a later start
                // replaces it, and its own end completes it.
                "WITH incoming AS (
                     SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[],
                                          $7::text[], $8::text[], $9::text[])
                       AS t(action_id, rid, agent, version, result, started, finished, error, changes)
                 ), written AS (
                     INSERT INTO actions (action_id, rid, agent, version, result, started, finished, error, changes)
                     SELECT * FROM incoming
                     ON CONFLICT (action_id) DO UPDATE
                       SET result = EXCLUDED.result, finished = EXCLUDED.finished, error = EXCLUDED.error,
                           changes = EXCLUDED.changes
                       WHERE actions.finished IS NULL AND EXCLUDED.finished IS NOT NULL
                         AND actions.rid = EXCLUDED.rid AND actions.agent = EXCLUDED.agent
                     RETURNING action_id, rid, agent, version, result, started, finished, error
                 ), states AS (
                     INSERT INTO resource_states (rid, agent, action_id, version, result, started, finished, error)
                     SELECT DISTINCT ON (rid) rid, agent, action_id, version, result, started, finished, error
                     FROM written ORDER BY rid, started DESC, finished DESC NULLS LAST
                     ON CONFLICT (rid) DO UPDATE
                       SET agent = EXCLUDED.agent, action_id = EXCLUDED.action_id, version = EXCLUDED.version,
                           result = EXCLUDED.result, started = EXCLUDED.started, finished = EXCLUDED.finished,
                           error = EXCLUDED.error
                       WHERE resource_states.action_id = EXCLUDED.action_id OR resource_states.started <= EXCLUDED.started
                     RETURNING 1
                 )
                 SELECT COUNT(*) FROM written",
                &[&ids, &rids, &agents, &versions, &results, &started, &finished, &errors, &changes],
            )
            .map_err(storage)?
            .get(0);
        let facts: Vec<crate::Fact> = merged
            .iter()
            .flat_map(|a| {
                a.facts.iter().map(|(name, value)| crate::Fact {
                    id: a.id.clone(),
                    name: name.clone(),
                    value: value.clone(),
                })
            })
            .collect();
        super::runs::keep_facts(&mut tx, &facts)?;
        if written > 0 {
            tx.execute("SELECT pg_notify($1, '')", &[&RESULTS_CHANNEL]).map_err(storage)?;
        }
        tx.commit().map_err(storage)?;
        Ok(unsigned(written))
    }

    /// The actions recorded for `agent` (every agent: `None`) that started at or after `since`,
    /// in the order they were first received.
    pub fn actions(&self, agent: Option<&str>, since: Option<&str>) -> Result<Vec<Action>, StoreError> {
        self.read(|tx| {
            let rows = tx
                .query(
                    "SELECT action_id, rid, agent, version, result, started, finished, error, changes FROM actions
                     WHERE ($1::text IS NULL OR agent = $1) AND ($2::text IS NULL OR started >= $2) ORDER BY seq",
                    &[&agent, &since],
                )
                .map_err(storage)?;
            Ok(rows
                .iter()
                .map(|row| Action {
                    action_id: row.get(0),
                    id: row.get(1),
                    agent: row.get(2),
                    version: unsigned(row.get(3)),
                    result: row.get(4),
                    started: row.get(5),
                    finished: row.get(6),
                    error: row.get(7),
                    changes: row
                        .get::<_, Option<String>>(8)
                        .and_then(|c| serde_json::from_str(&c).ok())
                        .unwrap_or_default(),
                    facts: std::collections::BTreeMap::new(),
                })
                .collect())
        })
    }

    /// The agents (`None`: all) and their resources' latest states, with the latest release.
    pub fn status(&self, agents: Option<&[String]>) -> Result<Status, StoreError> {
        self.read(|tx| {
            let version = latest_release(tx)?.map(|(v, _)| v);
            let rows = tx
                .query(
                    "SELECT name, holder IS NOT NULL AND expires >= now(), deployed, deploying FROM agents
                     WHERE $1::text[] IS NULL OR name = ANY($1) ORDER BY name",
                    &[&agents],
                )
                .map_err(storage)?;
            let agents_state: Vec<AgentState> = rows
                .iter()
                .map(|row| AgentState {
                    name: row.get(0),
                    connected: row.get(1),
                    version: row.get::<_, Option<i64>>(2).map(unsigned),
                    deploying: row.get::<_, Option<i64>>(3).map(unsigned),
                })
                .collect();
            let rows = tx
                .query(
                    "SELECT s.rid, s.agent, s.version, s.result, s.started, s.finished, s.error,
                            COALESCE(a.holder IS NOT NULL AND a.expires >= now(), false)
                     FROM resource_states s LEFT JOIN agents a ON a.name = s.agent
                     WHERE $1::text[] IS NULL OR s.agent = ANY($1) ORDER BY s.agent, s.rid",
                    &[&agents],
                )
                .map_err(storage)?;
            let resources = rows
                .iter()
                .map(|row| {
                    let finished: Option<String> = row.get(5);
                    let connected: bool = row.get(7);
                    let result = match (finished.is_some(), connected) {
                        (true, _) => row.get::<_, Option<String>>(3).unwrap_or_default(),
                        (false, true) => "deploying".to_owned(),
                        (false, false) => "agent-lost".to_owned(),
                    };
                    ResourceState {
                        id: row.get(0),
                        agent: row.get(1),
                        version: unsigned(row.get(2)),
                        result,
                        started: row.get(4),
                        finished,
                        error: row.get(6),
                    }
                })
                .collect();
            Ok(Status { version, agents: agents_state, resources })
        })
    }
}

fn latest_release(tx: &mut impl GenericClient) -> Result<Option<(u64, String)>, StoreError> {
    let row =
        tx.query_opt("SELECT version, released FROM releases ORDER BY version DESC LIMIT 1", &[]).map_err(storage)?;
    Ok(row.map(|row| (unsigned(row.get(0)), row.get(1))))
}

fn due_version(tx: &mut impl GenericClient, agent: &str, upto: u64) -> Result<Option<u64>, StoreError> {
    let row = tx
        .query_one(
            "SELECT MAX(version) FROM agent_releases WHERE agent = $1 AND version <= $2",
            &[&agent, &signed(upto)],
        )
        .map_err(storage)?;
    Ok(row.get::<_, Option<i64>>(0).map(unsigned))
}

fn agents_of_release(tx: &mut impl GenericClient, version: u64) -> Result<Vec<String>, StoreError> {
    let rows = tx
        .query("SELECT agent FROM agent_releases WHERE version = $1 ORDER BY agent", &[&signed(version)])
        .map_err(storage)?;
    Ok(rows.iter().map(|row| row.get(0)).collect())
}

/// The agents with a resource added, removed or changed from version `from` (`None`: nothing) to
/// `to`: the rows opened or closed between the two. Rows are shared between versions while
/// unchanged, so this reads only the changes.
fn changed_agents(tx: &mut Transaction<'_>, from: Option<u64>, to: u64) -> Result<Vec<String>, StoreError> {
    // Rows are numbered in the order versions wrote them: those a version in (from, to] opened
    // are a range of row numbers.
    let from_seq = match from {
        Some(from) => super::last_seq(tx, from)?,
        None => 0,
    };
    let to_seq = super::last_seq(tx, to)?;
    let from = signed(from.unwrap_or(0));
    let rows = tx
        .query(
            // A partial export writes every row of the sets it replaces: a row closed and one
            // opened for the same resource with the same digest is no change.
            "WITH opened AS (
                 SELECT rid, agent, digest FROM resources WHERE seq > $3 AND seq <= $4
                   AND COALESCE(last_version, 9223372036854775807) > $2
             ), closed AS (
                 SELECT rid, agent, digest FROM resources
                 WHERE last_version > $1 AND last_version <= $2 AND first_version <= $1
             )
             SELECT DISTINCT COALESCE(opened.agent, closed.agent) AS agent
             FROM opened FULL OUTER JOIN closed ON opened.rid = closed.rid
             WHERE opened.digest IS DISTINCT FROM closed.digest
               AND COALESCE(opened.agent, closed.agent) IS NOT NULL
             ORDER BY agent",
            &[&from, &signed(to), &from_seq, &to_seq],
        )
        .map_err(storage)?;
    Ok(rows.iter().map(|row| row.get(0)).collect())
}

fn token(row: &postgres::Row) -> Token {
    Token {
        id: row.get(0),
        role: Role::parse(row.get(1)).unwrap_or(Role::Read),
        agents: row.get(2),
        created: row.get(3),
        revoked: row.get(4),
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
