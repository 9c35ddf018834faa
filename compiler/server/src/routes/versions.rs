//! Versions: list, show and compare them (read), export, plan and release them (export), and
//! the file contents they name.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use modelc_api::{
    ContentsRequest, ContentsResponse, ErrorKind, ExportRequest, ExportResponse, PlanRequest, ReleaseRequest,
};
use modelc_store::postgres::fleet::{Release, Role};
use modelc_store::{Changes, ExportOutcome, Snapshot, Store, VersionInfo};

use crate::App;
use crate::auth::{caller, require};
use crate::error::{ApiError, ApiResult};

const READERS: &[Role] = &[Role::Read, Role::Export];

pub(crate) async fn list(State(app): State<Arc<App>>, headers: HeaderMap) -> ApiResult<Json<Vec<VersionInfo>>> {
    require(&caller(&app, &headers).await?, READERS)?;
    Ok(Json(app.pool.run(|store| store.versions()).await?))
}

pub(crate) async fn show(
    State(app): State<Arc<App>>,
    Path(version): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Json<Snapshot>> {
    require(&caller(&app, &headers).await?, READERS)?;
    let version = super::version(&version)?;
    Ok(Json(app.pool.run(move |store| store.snapshot(version)).await?))
}

pub(crate) async fn changes(
    State(app): State<Arc<App>>,
    Path((from, to)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Json<Changes>> {
    require(&caller(&app, &headers).await?, READERS)?;
    let number =
        |text: &str| super::version(text)?.ok_or_else(|| ApiError::new(ErrorKind::BadRequest, "give two numbers"));
    let (from, to) = (number(&from)?, number(&to)?);
    Ok(Json(app.pool.run(move |store| store.changes(from, to)).await?))
}

/// `POST /versions`: stores the IR as a new version (201), or says the latest one is the same
/// (200); releases it when asked.
pub(crate) async fn export(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<(StatusCode, Json<ExportResponse>)> {
    require(&caller(&app, &headers).await?, &[Role::Export])?;
    let request: ExportRequest<'static> = crate::body::json(&headers, body, app.config.max_body).await?;
    let response = app
        .pool
        .run(move |store| {
            let outcome = match &request.partial {
                Some(partial) => store.export_partial_with(&request.ir, partial, &request.metadata, request.force)?,
                None => store.export_full_with(&request.ir, &request.metadata, request.force, None)?,
            };
            let (stored, version) = match outcome {
                ExportOutcome::Stored(info) => (true, info),
                ExportOutcome::Unchanged(info) => (false, info),
            };
            // A newer version released meanwhile by a racing export holds this one's changes.
            let release = if request.release { Some(store.release_at_least(version.version)?) } else { None };
            // The answer does not wait for a large model to be freed.
            let _ = std::thread::Builder::new().name("free-export".to_owned()).spawn(move || drop(request));
            Ok(ExportResponse { stored, version, release })
        })
        .await?;
    let status = if response.stored { StatusCode::CREATED } else { StatusCode::OK };
    Ok((status, Json(response)))
}

pub(crate) async fn plan(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<modelc_store::plan::Plan>> {
    require(&caller(&app, &headers).await?, &[Role::Export])?;
    let request: PlanRequest<'static> = crate::body::json(&headers, body, app.config.max_body).await?;
    let plan = app.pool.run(move |store| store.plan(&request.ir, request.partial.as_ref())).await;
    // A store with no version yet plans as an empty one.
    Ok(Json(plan?))
}

pub(crate) async fn release(State(app): State<Arc<App>>, headers: HeaderMap, body: Body) -> ApiResult<Json<Release>> {
    require(&caller(&app, &headers).await?, &[Role::Export])?;
    let request: ReleaseRequest = crate::body::json(&headers, body, app.config.max_body).await?;
    Ok(Json(app.pool.run(move |store| store.release(request.version)).await?))
}

pub(crate) async fn latest_release(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
) -> ApiResult<Json<Option<Release>>> {
    let token = caller(&app, &headers).await?;
    if token.role != Role::Agent {
        require(&token, READERS)?;
    }
    let release = app
        .pool
        .run(|store| match store.latest_release()? {
            Some((version, _)) => store.release_of(version),
            None => Ok(None),
        })
        .await?;
    Ok(Json(release))
}

/// `GET /facts`: every fact the deploys learnt (`std::getfact` in the compiles that export here).
pub(crate) async fn facts(State(app): State<Arc<App>>, headers: HeaderMap) -> ApiResult<Json<Vec<modelc_store::Fact>>> {
    let token = caller(&app, &headers).await?;
    require(&token, READERS)?;
    Ok(Json(app.pool.run(|store| store.facts()).await?))
}

/// `POST /contents`: by hash. An agent token gets only what its own resources name.
pub(crate) async fn contents(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<ContentsResponse>> {
    let token = caller(&app, &headers).await?;
    let request: ContentsRequest = crate::body::json(&headers, body, app.config.max_body).await?;
    let found = if token.role == Role::Agent {
        let agents = token.agents.clone();
        app.pool.run(move |store| store.agent_contents(&agents, &request.hashes)).await?
    } else {
        require(&token, READERS)?;
        app.pool.run(move |store| store.contents(&request.hashes)).await?
    };
    let mut contents = std::collections::BTreeMap::new();
    #[allow(clippy::iter_over_hash_type, reason = "into an ordered map")]
    for (hash, bytes) in found {
        let text =
            String::from_utf8(bytes).map_err(|_| ApiError::internal(format!("the content {hash} is not text")))?;
        contents.insert(hash, text);
    }
    Ok(Json(ContentsResponse { contents }))
}
