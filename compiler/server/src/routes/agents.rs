//! Agents: hold a name (lease), long-poll for the releases that change their resources, fetch
//! those, wait for the results of resources other agents deploy, report actions and progress;
//! and the status and actions everyone reads.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use modelc_api::{
    ActionsReport, AgentResources, ErrorKind, Foreign, LeaseGranted, LeaseRequest, RequirementsRequest, Work,
};
use modelc_store::postgres::fleet::{Action, Requirement, Role, Status};
use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;

use crate::App;
use crate::auth::{caller, readable_agents, require_agent};
use crate::error::{ApiError, ApiResult};
use crate::events::Event;

pub(crate) async fn take_lease(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<LeaseGranted>> {
    require_agent(&caller(&app, &headers).await?, &name)?;
    let request: LeaseRequest = crate::body::json(&headers, body, app.config.max_body).await?;
    lease(&app, &name, &request.holder).await?;
    Ok(Json(LeaseGranted { seconds: app.config.lease.as_secs_f64() }))
}

pub(crate) async fn drop_lease(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<StatusCode> {
    require_agent(&caller(&app, &headers).await?, &name)?;
    let request: LeaseRequest = crate::body::json(&headers, body, app.config.max_body).await?;
    app.pool.run(move |store| store.drop_lease(&name, &request.holder)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Takes or renews `holder`'s lease on `name`; 409 while another process holds it.
async fn lease(app: &Arc<App>, name: &str, holder: &str) -> ApiResult<()> {
    if holder.is_empty() || holder.len() > 128 {
        return Err(ApiError::new(ErrorKind::BadRequest, "a lease holder is 1 to 128 characters"));
    }
    let seconds = app.config.lease.as_secs_f64();
    let (owned_name, owned_holder) = (name.to_owned(), holder.to_owned());
    match app.pool.run(move |store| store.take_lease(&owned_name, &owned_holder, seconds)).await? {
        Ok(()) => Ok(()),
        Err(held) => Err(ApiError::new(
            ErrorKind::Conflict,
            format!("agent `{name}` is held by another process (its lease runs until {})", held.until),
        )),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkQuery {
    holder: String,
    /// The version the agent has (the last it was given).
    known: Option<u64>,
    /// Seconds to wait at most (the server's long poll time by default, never more).
    wait: Option<f64>,
}

/// `GET /agents/{name}/work`: answers as soon as a release changes this agent's resources
/// beyond `known` (at once if one already has), otherwise after the long poll's time. Renews
/// the lease as it waits.
pub(crate) async fn work(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    uri: Uri,
    headers: HeaderMap,
) -> ApiResult<Json<Work>> {
    require_agent(&caller(&app, &headers).await?, &name)?;
    let query: WorkQuery = super::query(&uri)?;
    let longest = app.config.long_poll.as_secs_f64();
    let wait = Duration::from_secs_f64(query.wait.unwrap_or(longest).clamp(0.0, longest));
    // Subscribed before looking: a release between the look and the wait is not lost.
    let mut events = app.events.subscribe();
    lease(&app, &name, &query.holder).await?;
    let deadline = tokio::time::Instant::now() + wait;
    let renew_every = app.config.lease / 3;
    let mut next_renewal = tokio::time::Instant::now() + renew_every;
    loop {
        let work = due(&app, &name).await?;
        if work.version.is_some() && work.version > query.known {
            return Ok(Json(work));
        }
        // Wait for a release naming this agent, or a reason to look again.
        loop {
            tokio::select! {
                event = events.recv() => match event {
                    Ok(Event::Released { agents }) if agents.contains(&name) => break,
                    Ok(Event::Released { .. } | Event::Results) => {}
                    Ok(Event::Missed) | Err(RecvError::Lagged(_)) => break,
                    Err(RecvError::Closed) => {
                        tokio::time::sleep_until(deadline).await;
                        return Ok(Json(due(&app, &name).await?));
                    }
                },
                () = tokio::time::sleep_until(next_renewal) => {
                    lease(&app, &name, &query.holder).await?;
                    next_renewal += renew_every;
                }
                () = tokio::time::sleep_until(deadline) => {
                    lease(&app, &name, &query.holder).await?;
                    return Ok(Json(work));
                }
            }
        }
    }
}

/// What agent `name` must deploy: the last release that changed it, and the latest release.
async fn due(app: &Arc<App>, name: &str) -> ApiResult<Work> {
    let name = name.to_owned();
    app.pool
        .run(move |store| {
            let released = store.latest_release()?.map(|(v, _)| v);
            let version = match released {
                Some(latest) => store.due_version(&name, latest)?,
                None => None,
            };
            Ok(Work { version, released })
        })
        .await
}

/// `GET /agents/{name}/versions/{version}/resources`: the agent's resources in a released
/// version, and the ids and agents of the other agents' resources they require.
pub(crate) async fn resources(
    State(app): State<Arc<App>>,
    Path((name, version)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Json<AgentResources>> {
    require_agent(&caller(&app, &headers).await?, &name)?;
    let version = super::version(&version)?
        .ok_or_else(|| ApiError::new(ErrorKind::BadRequest, "name the version by its number"))?;
    let agents = vec![name.clone()];
    let resources = app
        .pool
        .run(move |store| {
            // An agent deploys only released versions.
            let released = store.latest_release()?.map(|(v, _)| v);
            if released.is_none_or(|latest| version > latest) {
                return Ok(None);
            }
            store.agent_resources(&agents, version).map(Some)
        })
        .await?
        .ok_or_else(|| ApiError::new(ErrorKind::NotFound, format!("version {version} is not released")))?;
    let own: HashSet<&str> = resources.iter().map(|r| r.id.as_str()).collect();
    let mut foreign = Vec::new();
    let mut seen = HashSet::new();
    for required in resources.iter().flat_map(|r| &r.requires) {
        if !own.contains(required.as_str()) && seen.insert(required.clone()) {
            let agent = modelc_ir::ResourceId::parse(required).map(|id| id.agent).unwrap_or_default();
            foreign.push(Foreign { id: required.clone(), agent });
        }
    }
    Ok(Json(AgentResources { version, resources, foreign }))
}

/// `POST /versions/{version}/requirements`: the results of resources in that version, for an
/// agent whose resources require them (an agent token may read only those, and only their
/// results). With `wait`, it answers once one of them has a result, or after that long.
pub(crate) async fn requirements(
    State(app): State<Arc<App>>,
    Path(version): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<Vec<Requirement>>> {
    let token = caller(&app, &headers).await?;
    let version = super::version(&version)?
        .ok_or_else(|| ApiError::new(ErrorKind::BadRequest, "name the version by its number"))?;
    let request: RequirementsRequest = crate::body::json(&headers, body, app.config.max_body).await?;
    if token.role == Role::Agent {
        let agents = token.agents.clone();
        let own = app.pool.run(move |store| store.agent_resources(&agents, version)).await?;
        let required: HashSet<&str> = own.iter().flat_map(|r| &r.requires).map(String::as_str).collect();
        if let Some(id) = request.ids.iter().find(|id| !required.contains(id.as_str())) {
            return Err(ApiError::new(
                ErrorKind::Forbidden,
                format!("no resource of {} requires {id} in version {version}", token.agents.join(", ")),
            ));
        }
    } else {
        crate::auth::require(&token, &[Role::Read, Role::Export])?;
    }
    let longest = app.config.long_poll.as_secs_f64();
    let deadline = tokio::time::Instant::now() + Duration::from_secs_f64(request.wait.clamp(0.0, longest));
    let mut events = app.events.subscribe();
    loop {
        let ids = request.ids.clone();
        let found = app.pool.run(move |store| store.requirements(&ids, version)).await?;
        if found.iter().any(|r| r.result.is_some()) || tokio::time::Instant::now() >= deadline {
            return Ok(Json(found));
        }
        loop {
            tokio::select! {
                event = events.recv() => match event {
                    Ok(Event::Results | Event::Missed) | Err(RecvError::Lagged(_)) => break,
                    Ok(Event::Released { .. }) => {}
                    Err(RecvError::Closed) => return Ok(Json(found)),
                },
                () = tokio::time::sleep_until(deadline) => return Ok(Json(found)),
            }
        }
    }
}

/// `POST /actions`: an agent's results, each recorded once however often sent.
pub(crate) async fn report(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<serde_json::Value>> {
    let token = caller(&app, &headers).await?;
    // Only agents report (an empty report from another role is refused as well).
    crate::auth::require(&token, &[Role::Agent])?;
    let report: ActionsReport = crate::body::json(&headers, body, app.config.max_body).await?;
    for action in &report.actions {
        require_agent(&token, &action.agent)?;
        check_action(action)?;
    }
    let recorded = app.pool.run(move |store| store.record_actions(&report.actions)).await?;
    Ok(Json(serde_json::json!({ "recorded": recorded })))
}

fn check_action(action: &Action) -> ApiResult<()> {
    let bad = |what: &str| Err(ApiError::new(ErrorKind::BadRequest, format!("action {}: {what}", action.action_id)));
    if action.action_id.is_empty() || action.action_id.len() > 128 {
        return bad("an action id is 1 to 128 characters");
    }
    if !rfc3339(&action.started) || action.finished.as_deref().is_some_and(|f| !rfc3339(f)) {
        return bad("times are RFC 3339 (2026-11-27T14:39:44.123Z)");
    }
    if action.finished.is_some() != action.result.is_some() {
        return bad("a finished action has a result, and only a finished one");
    }
    Ok(())
}

/// `2026-11-27T14:39:44Z` or with fractions or an offset: the shape, not the calendar.
fn rfc3339(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() >= 20
        && bytes.len() <= 40
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes[10] == b'T'
        && bytes[13] == b':'
        && bytes[16] == b':'
        && (text.ends_with('Z') || text[19..].contains(['+', '-']))
        && text.chars().all(|c| c.is_ascii_digit() || "-:TZ.+".contains(c))
}

pub(crate) async fn progress(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<StatusCode> {
    require_agent(&caller(&app, &headers).await?, &name)?;
    let progress: modelc_api::Progress = crate::body::json(&headers, body, app.config.max_body).await?;
    lease(&app, &name, &progress.holder).await?;
    app.pool.run(move |store| store.agent_progress(&name, progress.version, progress.finished)).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Filter {
    agent: Option<String>,
    since: Option<String>,
}

/// The agents a read asks for, within what the token may read.
fn agents_asked(token: &modelc_store::postgres::fleet::Token, agent: Option<String>) -> ApiResult<Option<Vec<String>>> {
    let readable = readable_agents(token)?;
    match (agent, readable) {
        (Some(agent), Some(readable)) if !readable.contains(&agent) => {
            Err(ApiError::new(ErrorKind::Forbidden, format!("this token does not read agent `{agent}`")))
        }
        (Some(agent), _) => Ok(Some(vec![agent])),
        (None, readable) => Ok(readable),
    }
}

pub(crate) async fn status(State(app): State<Arc<App>>, uri: Uri, headers: HeaderMap) -> ApiResult<Json<Status>> {
    let token = caller(&app, &headers).await?;
    let filter: Filter = super::query(&uri)?;
    if filter.since.is_some() {
        return Err(ApiError::new(ErrorKind::BadRequest, "status takes `agent` only"));
    }
    let agents = agents_asked(&token, filter.agent)?;
    Ok(Json(app.pool.run(move |store| store.status(agents.as_deref())).await?))
}

pub(crate) async fn actions(State(app): State<Arc<App>>, uri: Uri, headers: HeaderMap) -> ApiResult<Json<Vec<Action>>> {
    let token = caller(&app, &headers).await?;
    let filter: Filter = super::query(&uri)?;
    let agents = agents_asked(&token, filter.agent)?;
    let since = filter.since;
    let actions = app
        .pool
        .run(move |store| {
            let mut all = Vec::new();
            match agents {
                None => all = store.actions(None, since.as_deref())?,
                Some(agents) => {
                    for agent in agents {
                        all.extend(store.actions(Some(&agent), since.as_deref())?);
                    }
                }
            }
            Ok(all)
        })
        .await?;
    Ok(Json(actions))
}
