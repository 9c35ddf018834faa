//! Request bodies: read up to the server's limit (413 beyond it), decompressed as they arrive
//! when sent so (zstd or gzip, up to 16 times the limit: a small body must not expand without
//! bound), and parsed strictly (400 for anything that is not the call's JSON, unknown fields
//! included). A large body is parsed on the blocking pool, never on a thread that serves calls.

use std::io::Write;

use axum::body::Body;
use axum::http::HeaderMap;
use http_body_util::BodyExt;
use modelc_api::ErrorKind;
use serde::de::DeserializeOwned;

use crate::error::{ApiError, ApiResult};

/// How much larger than the limit a compressed body may become.
const EXPANSION: usize = 16;

/// Bodies larger than this are parsed on the blocking pool.
const PARSED_INLINE: usize = 256 * 1024;

pub(crate) async fn json<T: DeserializeOwned + Send + 'static>(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
) -> ApiResult<T> {
    let encoding =
        headers.get(axum::http::header::CONTENT_ENCODING).and_then(|v| v.to_str().ok()).unwrap_or("identity");
    let mut sink = Sink::new(&encoding.to_ascii_lowercase(), limit.saturating_mul(EXPANSION))?;
    let mut body = body;
    let mut received = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| ApiError::new(ErrorKind::BadRequest, format!("the body was cut short: {e}")))?;
        let Ok(data) = frame.into_data() else { continue };
        received += data.len();
        if received > limit {
            return Err(too_large(limit));
        }
        sink.write(&data)?;
    }
    let bytes = sink.finish()?;
    if bytes.len() <= PARSED_INLINE {
        return parse(&bytes);
    }
    tokio::task::spawn_blocking(move || parse(&bytes))
        .await
        .map_err(|_| ApiError::internal("reading the body failed".to_owned()))?
}

fn parse<T: DeserializeOwned>(bytes: &[u8]) -> ApiResult<T> {
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::new(ErrorKind::BadRequest, format!("the body is not valid: {e}")))
}

/// Where a body's chunks go as they arrive: kept as they are, or decompressed into a buffer of
/// bounded size.
enum Sink {
    Identity(Vec<u8>),
    Gzip(Box<flate2::write::GzDecoder<Bounded>>),
    Zstd(Box<zstd::stream::write::Decoder<'static, Bounded>>),
}

impl Sink {
    fn new(encoding: &str, expanded: usize) -> ApiResult<Sink> {
        let bounded = Bounded { bytes: Vec::new(), limit: expanded };
        match encoding {
            "identity" => Ok(Sink::Identity(Vec::new())),
            "gzip" => Ok(Sink::Gzip(Box::new(flate2::write::GzDecoder::new(bounded)))),
            "zstd" => Ok(Sink::Zstd(Box::new(
                zstd::stream::write::Decoder::new(bounded).map_err(|e| ApiError::internal(e.to_string()))?,
            ))),
            other => Err(ApiError::new(
                ErrorKind::BadRequest,
                format!("content encoding `{other}`: send zstd, gzip or none"),
            )),
        }
    }

    fn write(&mut self, chunk: &[u8]) -> ApiResult<()> {
        let written = match self {
            Sink::Identity(bytes) => {
                bytes.extend_from_slice(chunk);
                return Ok(());
            }
            Sink::Gzip(decoder) => decoder.write_all(chunk),
            Sink::Zstd(decoder) => decoder.write_all(chunk),
        };
        written.map_err(|e| self.failed(&e))
    }

    fn finish(self) -> ApiResult<Vec<u8>> {
        let (name, limit) = (self.name(), self.limit());
        let finished = match self {
            Sink::Identity(bytes) => return Ok(bytes),
            Sink::Gzip(decoder) => decoder.finish(),
            Sink::Zstd(decoder) => decoder.finish(),
        };
        finished.map(|bounded| bounded.bytes).map_err(|e| failed(name, limit, &e))
    }

    fn failed(&self, error: &std::io::Error) -> ApiError {
        failed(self.name(), self.limit(), error)
    }

    fn name(&self) -> &'static str {
        match self {
            Sink::Identity(_) => "identity",
            Sink::Gzip(_) => "gzip",
            Sink::Zstd(_) => "zstd",
        }
    }

    fn limit(&self) -> usize {
        match self {
            Sink::Identity(_) => usize::MAX,
            Sink::Gzip(decoder) => decoder.get_ref().limit,
            Sink::Zstd(decoder) => decoder.get_ref().limit,
        }
    }
}

/// A decoder's error: the body expanded too far (413), or is not what it says it is (400).
fn failed(name: &str, limit: usize, error: &std::io::Error) -> ApiError {
    if expanded(error) {
        return ApiError::new(
            ErrorKind::TooLarge,
            format!("the body expands to more than this server takes ({limit} bytes decompressed)"),
        );
    }
    invalid(name, error)
}

/// Whether `error` is, or wraps (decoders pass their writer's errors on wrapped), [`Expanded`].
fn expanded(error: &std::io::Error) -> bool {
    match error.get_ref() {
        Some(inner) if inner.is::<Expanded>() => true,
        Some(inner) => inner.downcast_ref::<std::io::Error>().is_some_and(expanded),
        None => false,
    }
}

fn invalid(name: &str, error: &std::io::Error) -> ApiError {
    ApiError::new(ErrorKind::BadRequest, format!("the body is not valid {name}: {error}"))
}

/// Decompressed bytes, refused beyond `limit`: a decoder writes its output in pieces, so a body
/// that would expand without bound fails at the first piece beyond it.
struct Bounded {
    bytes: Vec<u8>,
    limit: usize,
}

/// A body expanded beyond its limit.
#[derive(Debug)]
struct Expanded;

impl std::fmt::Display for Expanded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the body expands beyond the limit")
    }
}

impl std::error::Error for Expanded {}

impl Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + buf.len() > self.limit {
            return Err(std::io::Error::other(Expanded));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(ErrorKind::TooLarge, format!("the body is larger than this server takes ({limit} bytes, --max-body)"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    fn read(encoding: &str, bytes: Vec<u8>, limit: usize) -> ApiResult<serde_json::Value> {
        let mut headers = HeaderMap::new();
        headers.insert(axum::http::header::CONTENT_ENCODING, encoding.parse().unwrap());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(json(&headers, Body::from(bytes), limit))
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn a_compressed_body_reads_as_the_json_it_holds() {
        let text = serde_json::json!({"list": (0..100_000).collect::<Vec<u32>>()});
        let bytes = serde_json::to_vec(&text).unwrap();
        assert_eq!(read("zstd", zstd::encode_all(&bytes[..], 1).unwrap(), 1 << 20).unwrap(), text);
        assert_eq!(read("gzip", gzip(&bytes), 1 << 20).unwrap(), text);
        assert_eq!(read("identity", bytes.clone(), 1 << 20).unwrap(), text);
    }

    #[test]
    fn a_body_beyond_the_limit_or_expanding_beyond_it_is_too_large() {
        let bytes = serde_json::to_vec(&"x".repeat(10_000)).unwrap();
        assert_eq!(read("identity", bytes.clone(), 1000).unwrap_err().code(), ErrorKind::TooLarge.code());
        // A few hundred bytes that expand to 10 kB: beyond 16 times a 500-byte limit.
        let small = zstd::encode_all(&bytes[..], 19).unwrap();
        assert!(small.len() < 500, "{}", small.len());
        let refused = read("zstd", small, 500).unwrap_err();
        assert_eq!(refused.code(), ErrorKind::TooLarge.code(), "{}", refused.message());
        assert_eq!(read("gzip", gzip(&bytes), 500).unwrap_err().code(), ErrorKind::TooLarge.code());
    }

    #[test]
    fn a_cut_or_unknown_encoding_is_a_bad_request() {
        let bytes = zstd::encode_all(&b"{\"a\": 1}"[..], 1).unwrap();
        let cut = read("zstd", bytes[..bytes.len() - 3].to_vec(), 1000).unwrap_err();
        assert_eq!(cut.code(), ErrorKind::BadRequest.code());
        assert!(cut.message().contains("not valid zstd"), "{}", cut.message());
        let unknown = read("br", bytes, 1000).unwrap_err();
        assert!(unknown.message().contains("send zstd, gzip or none"), "{}", unknown.message());
        let not_json = read("identity", b"{\"a\": ".to_vec(), 1000).unwrap_err();
        assert!(not_json.message().contains("the body is not valid"), "{}", not_json.message());
    }
}
