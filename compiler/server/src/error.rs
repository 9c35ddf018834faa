//! A failed call: its HTTP status and `{"error": {"code", "message"}}` body (`modelc_api`).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use modelc_api::{ErrorBody, ErrorDetail, ErrorKind};
use modelc_store::StoreError;

/// How long a client waits before calling again while the database is away.
const RETRY_AFTER_SECONDS: &str = "2";

#[derive(Debug)]
pub(crate) struct ApiError {
    status: u16,
    detail: ErrorDetail,
}

impl ApiError {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> ApiError {
        ApiError::with_code(kind.status(), kind.code(), message)
    }

    fn with_code(status: u16, code: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            detail: ErrorDetail {
                code: code.to_owned(),
                message: message.into(),
                resources: Vec::new(),
                sets: Vec::new(),
            },
        }
    }

    /// Its code, as the body says it.
    #[cfg(test)]
    pub(crate) fn code(&self) -> &str {
        &self.detail.code
    }

    /// A server fault: said to the client without detail beyond the message.
    pub(crate) fn internal(message: impl Into<String>) -> ApiError {
        ApiError::with_code(500, "internal", message)
    }

    pub(crate) fn unavailable(message: impl std::fmt::Display) -> ApiError {
        ApiError::new(ErrorKind::Unavailable, format!("the store cannot be reached now: {message}"))
    }

    /// A store's answer: a refused export is 422 with the rule's code; a missing version 404;
    /// a stale release 409; a database fault 500 (503 when the connection is lost, decided by
    /// the pool).
    pub(crate) fn from_store(error: StoreError) -> ApiError {
        match error {
            StoreError::Rejected(rejection) => {
                let code = modelc_api::rule_code(rejection.rule).id;
                let mut error = ApiError::with_code(ErrorKind::Rejected.status(), code, rejection.message);
                error.detail.resources = rejection.resources;
                error.detail.sets = rejection.sets;
                error
            }
            StoreError::NoSuchVersion(_) | StoreError::Empty => ApiError::new(ErrorKind::NotFound, error.to_string()),
            StoreError::Conflict(message) => ApiError::new(ErrorKind::Conflict, message),
            StoreError::NotFound(_) | StoreError::Storage(_) => ApiError::internal(error.to_string()),
        }
    }

    pub(crate) fn message(&self) -> &str {
        &self.detail.message
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, axum::Json(ErrorBody { error: self.detail })).into_response();
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static(RETRY_AFTER_SECONDS));
        }
        response
    }
}

pub(crate) type ApiResult<T> = Result<T, ApiError>;
