//! Who calls: every call but `health` names a token (`Authorization: Bearer …`), found by its
//! hash; a missing, unknown or revoked one is 401, and a role that may not make the call, or an
//! agent token reaching for another agent, is 403. Tokens are never logged.

use axum::http::HeaderMap;
use modelc_api::ErrorKind;
use modelc_store::postgres::fleet::{Role, Token};

use crate::App;
use crate::error::{ApiError, ApiResult};

/// The caller's token, checked.
pub(crate) async fn caller(state: &App, headers: &HeaderMap) -> ApiResult<Token> {
    let Some(value) = headers.get(modelc_api::AUTHORIZATION) else {
        return Err(ApiError::new(ErrorKind::Unauthorized, "this call needs a token: `Authorization: Bearer <token>`"));
    };
    let secret = value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| ApiError::new(ErrorKind::Unauthorized, "the Authorization header is not `Bearer <token>`"))?;
    let hash = modelc_api::hash_token(secret);
    let token = state.pool.run(move |store| store.token_by_hash(&hash)).await?;
    match token {
        None => Err(ApiError::new(ErrorKind::Unauthorized, "unknown token")),
        Some(token) if token.revoked.is_some() => {
            Err(ApiError::new(ErrorKind::Unauthorized, format!("token {} was revoked", token.id)))
        }
        Some(token) => Ok(token),
    }
}

/// The call is for one of `roles` (admin may make every call).
pub(crate) fn require(token: &Token, roles: &[Role]) -> ApiResult<()> {
    if token.role == Role::Admin || roles.contains(&token.role) {
        return Ok(());
    }
    let allowed: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
    Err(ApiError::new(
        ErrorKind::Forbidden,
        format!(
            "a token of role `{}` may not make this call (it needs {} or admin)",
            token.role.as_str(),
            allowed.join(", ")
        ),
    ))
}

/// The call acts for agent `name`: an admin token, or an agent token of that agent.
pub(crate) fn require_agent(token: &Token, name: &str) -> ApiResult<()> {
    match token.role {
        Role::Admin => Ok(()),
        Role::Agent if token.agents.iter().any(|a| a == name) => Ok(()),
        Role::Agent => Err(ApiError::new(
            ErrorKind::Forbidden,
            format!("this token deploys {}, not agent `{name}`", token.agents.join(", ")),
        )),
        other => Err(ApiError::new(
            ErrorKind::Forbidden,
            format!("a token of role `{}` does not act for agents", other.as_str()),
        )),
    }
}

/// The agents whose state `token` may read: `None` for every agent.
pub(crate) fn readable_agents(token: &Token) -> ApiResult<Option<Vec<String>>> {
    match token.role {
        Role::Agent => Ok(Some(token.agents.clone())),
        _ => require(token, &[Role::Read, Role::Export]).map(|()| None),
    }
}
