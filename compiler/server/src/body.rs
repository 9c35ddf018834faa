//! Request bodies: read up to the server's limit (413 beyond it), decompressed when sent so (zstd
//! or gzip, up to 16 times the limit: a small body must not expand without bound), and parsed
//! strictly (400 for anything that is not the call's JSON, unknown fields included).

use std::io::Read;

use axum::body::Body;
use axum::http::HeaderMap;
use modelc_api::ErrorKind;
use serde::de::DeserializeOwned;

use crate::error::{ApiError, ApiResult};

/// How much larger than the limit a compressed body may become.
const EXPANSION: usize = 16;

pub(crate) async fn json<T: DeserializeOwned>(headers: &HeaderMap, body: Body, limit: usize) -> ApiResult<T> {
    let bytes = axum::body::to_bytes(body, limit).await.map_err(|_| too_large(limit))?;
    let encoding =
        headers.get(axum::http::header::CONTENT_ENCODING).and_then(|v| v.to_str().ok()).unwrap_or("identity");
    let expanded = limit.saturating_mul(EXPANSION);
    let bytes = match encoding.to_ascii_lowercase().as_str() {
        "identity" => bytes.to_vec(),
        "gzip" => expand(flate2::read::GzDecoder::new(&bytes[..]), "gzip", expanded)?,
        "zstd" => expand(
            zstd::stream::read::Decoder::new(&bytes[..])
                .map_err(|e| ApiError::new(ErrorKind::BadRequest, format!("the body is not valid zstd: {e}")))?,
            "zstd",
            expanded,
        )?,
        other => {
            return Err(ApiError::new(
                ErrorKind::BadRequest,
                format!("content encoding `{other}`: send zstd, gzip or none"),
            ));
        }
    };
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::new(ErrorKind::BadRequest, format!("the body is not valid: {e}")))
}

/// Decompresses up to `limit` bytes (413 beyond it).
fn expand(decoder: impl Read, name: &str, limit: usize) -> ApiResult<Vec<u8>> {
    let mut out = Vec::new();
    decoder
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| ApiError::new(ErrorKind::BadRequest, format!("the body is not valid {name}: {e}")))?;
    if out.len() > limit {
        return Err(too_large(limit));
    }
    Ok(out)
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(ErrorKind::TooLarge, format!("the body is larger than this server takes ({limit} bytes, --max-body)"))
}
