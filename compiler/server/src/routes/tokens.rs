//! Tokens (admin only): create one (the secret is in this answer and nowhere else), list them,
//! revoke one.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use modelc_api::{ErrorKind, TokenCreated, TokenRequest};
use modelc_store::postgres::fleet::{Role, Token};

use crate::App;
use crate::auth::{caller, require};
use crate::error::{ApiError, ApiResult};

pub(crate) async fn create(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<(StatusCode, Json<TokenCreated>)> {
    require(&caller(&app, &headers).await?, &[Role::Admin])?;
    let request: TokenRequest = crate::body::json(&headers, body, app.config.max_body).await?;
    request.check().map_err(|message| ApiError::new(ErrorKind::BadRequest, message))?;
    let created = app
        .pool
        .run(move |store| {
            let token = modelc_api::new_token()?;
            let info = store.create_token(&modelc_api::hash_token(&token), request.role, &request.agents)?;
            Ok(TokenCreated { token, info })
        })
        .await?;
    Ok((StatusCode::CREATED, Json(created)))
}

pub(crate) async fn list(State(app): State<Arc<App>>, headers: HeaderMap) -> ApiResult<Json<Vec<Token>>> {
    require(&caller(&app, &headers).await?, &[Role::Admin])?;
    Ok(Json(app.pool.run(|store| store.tokens()).await?))
}

pub(crate) async fn revoke(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> ApiResult<StatusCode> {
    require(&caller(&app, &headers).await?, &[Role::Admin])?;
    if app.pool.run(move |store| store.revoke_token(&id)).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::new(ErrorKind::NotFound, "there is no such token"))
    }
}
