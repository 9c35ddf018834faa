//! The API's routes (`modelc_api` has the bodies), each handler in the module of what it
//! serves: versions and exports, tokens, agents. Every request is logged on one line (method,
//! path, status, time): never its headers, so never a token.

mod agents;
mod tokens;
mod versions;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::Request;
use axum::http::Uri;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use modelc_api::{ErrorKind, Health, PREFIX};
use serde::de::DeserializeOwned;

use crate::App;
use crate::error::{ApiError, ApiResult};

pub(crate) fn router(app: Arc<App>) -> Router {
    let api = Router::new()
        .route("/health", get(health))
        .route("/versions", get(versions::list).post(versions::export))
        .route("/versions/{version}", get(versions::show))
        .route("/versions/{from}/changes/{to}", get(versions::changes))
        .route("/versions/{version}/requirements", post(agents::requirements))
        .route("/plan", post(versions::plan))
        .route("/releases", post(versions::release))
        .route("/releases/latest", get(versions::latest_release))
        .route("/contents", post(versions::contents))
        .route("/facts", get(versions::facts))
        .route("/status", get(agents::status))
        .route("/actions", get(agents::actions).post(agents::report))
        .route("/tokens", get(tokens::list).post(tokens::create))
        .route("/tokens/{id}", axum::routing::delete(tokens::revoke))
        .route("/agents/{name}/lease", post(agents::take_lease).delete(agents::drop_lease))
        .route("/agents/{name}/work", get(agents::work))
        .route("/agents/{name}/versions/{version}/resources", get(agents::resources))
        .route("/agents/{name}/progress", post(agents::progress));
    Router::new()
        .nest(PREFIX, api)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn(log))
        .with_state(app)
}

/// `GET /health`: no token needed; says whether the database answers.
async fn health(axum::extract::State(app): axum::extract::State<Arc<App>>) -> Response {
    let store = app.pool.run(|store| store.latest_release()).await.is_ok();
    let body = Health {
        status: if store { "ok" } else { "degraded" }.to_owned(),
        store,
        version: env!("CARGO_PKG_VERSION").to_owned(),
    };
    let status = if store { axum::http::StatusCode::OK } else { axum::http::StatusCode::SERVICE_UNAVAILABLE };
    (status, axum::Json(body)).into_response()
}

async fn not_found(uri: Uri) -> ApiError {
    ApiError::new(ErrorKind::NotFound, format!("there is no call {}", uri.path()))
}

async fn method_not_allowed(request: Request) -> ApiError {
    ApiError::new(ErrorKind::BadRequest, format!("{} does not take {}", request.uri().path(), request.method()))
}

/// One line per request on stderr.
async fn log(request: Request, next: Next) -> Response {
    let (method, path) = (request.method().clone(), request.uri().path().to_owned());
    let started = Instant::now();
    let response = next.run(request).await;
    eprintln!(
        "{} {method} {path} {} {:.1} ms",
        modelc_store::utc_now(),
        response.status().as_u16(),
        started.elapsed().as_secs_f64() * 1000.0
    );
    response
}

/// A request's query, parsed strictly (400 otherwise).
pub(super) fn query<T: DeserializeOwned>(uri: &Uri) -> ApiResult<T> {
    axum::extract::Query::<T>::try_from_uri(uri)
        .map(|q| q.0)
        .map_err(|e| ApiError::new(ErrorKind::BadRequest, format!("the query is not valid: {}", e.body_text())))
}

/// A version in a path: a number, or `latest`.
pub(super) fn version(text: &str) -> ApiResult<Option<u64>> {
    if text == "latest" {
        return Ok(None);
    }
    text.parse::<u64>()
        .map(Some)
        .map_err(|_| ApiError::new(ErrorKind::BadRequest, format!("`{text}` is not a version number")))
}
