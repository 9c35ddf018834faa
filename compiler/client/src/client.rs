//! HTTP calls to a server: JSON in, JSON out, export bodies zstd-compressed as they are sent,
//! a failed call's `{"error": …}` read back as a [`CallError`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use modelc_api::{
    ActionsReport, AgentResources, ContentsRequest, ContentsResponse, ErrorBody, ErrorKind, ExportRequest,
    ExportResponse, LeaseRequest, PREFIX, PlanRequest, ReleaseRequest, RequirementsRequest, TokenCreated, TokenRequest,
    Work,
};
use modelc_store::postgres::fleet::{Action, Release, Requirement, Status, Token};
use modelc_store::{Changes, Snapshot, VersionInfo};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// How to reach a server.
#[derive(Debug, Clone, Default)]
pub struct ClientOptions {
    /// A PEM file of the certificate authority that signed the server's certificate, when it is
    /// not one the web trusts (`MODELC_SERVER_CA`).
    pub ca: Option<PathBuf>,
    /// How long a call may take at most; long polls add their own wait to it.
    pub timeout: Option<Duration>,
}

/// A server, and the token calls carry.
#[derive(Clone)]
pub struct Client {
    base: String,
    token: Option<Arc<str>>,
    agent: ureq::Agent,
    timeout: Duration,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("Client").field("base", &self.base).finish_non_exhaustive()
    }
}

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// The server answered with an error.
    Api {
        status: u16,
        /// `unauthorized`, …, or a store rule's code.
        code: String,
        message: String,
        resources: Vec<String>,
        sets: Vec<String>,
    },
    /// The server could not be reached, or its answer could not be read.
    Transport(String),
}

impl CallError {
    /// What kind of refusal this is (`None`: no answer, or a status the API does not use).
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            CallError::Api { status, .. } => ErrorKind::of_status(*status),
            CallError::Transport(_) => None,
        }
    }

    /// Worth trying again later: the server or its database is away.
    pub fn is_transient(&self) -> bool {
        match self {
            CallError::Transport(_) => true,
            CallError::Api { status, .. } => *status == 503 || *status >= 500,
        }
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Api { status, code, message, .. } => write!(f, "{message} (HTTP {status}, {code})"),
            CallError::Transport(message) => f.write_str(message),
        }
    }
}

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

impl Client {
    /// A client of the server at `url` (`https://host:port`, or `http://` on loopback).
    pub fn new(url: &str, token: Option<String>, options: &ClientOptions) -> Result<Client, String> {
        let url = url.trim_end_matches('/');
        let scheme_ok = url.starts_with("https://") || url.starts_with("http://");
        if !scheme_ok {
            return Err(format!("`{url}` is not a server URL: give https://host:port (or http:// on loopback)"));
        }
        let mut tls = ureq::tls::TlsConfig::builder().provider(ureq::tls::TlsProvider::Rustls);
        if let Some(ca) = &options.ca {
            let pem = std::fs::read(ca)
                .map_err(|e| format!("cannot read the certificate authority {}: {e}", ca.display()))?;
            let certs: Vec<ureq::tls::Certificate<'static>> = ureq::tls::parse_pem(&pem)
                .filter_map(|item| match item {
                    Ok(ureq::tls::PemItem::Certificate(cert)) => Some(cert),
                    _ => None,
                })
                .collect();
            if certs.is_empty() {
                return Err(format!("{} holds no certificate", ca.display()));
            }
            tls = tls.root_certs(ureq::tls::RootCerts::Specific(Arc::new(certs)));
        }
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .tls_config(tls.build())
            .timeout_connect(Some(Duration::from_secs(10)))
            .max_idle_connections_per_host(4)
            .build()
            .new_agent();
        Ok(Client {
            base: format!("{url}{PREFIX}"),
            token: token.map(|t| Arc::from(t.trim())),
            agent,
            timeout: options.timeout.unwrap_or(DEFAULT_TIMEOUT),
        })
    }

    /// The server's URL, as messages name it.
    pub fn url(&self) -> &str {
        self.base.trim_end_matches(PREFIX)
    }

    fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        path: &str,
        body: Payload,
        wait: Duration,
    ) -> Result<T, CallError> {
        let url = format!("{}{path}", self.base);
        let builder = ureq::http::Request::builder().method(method).uri(&url).header("accept", "application/json");
        let builder = match &self.token {
            Some(token) => builder.header("authorization", format!("Bearer {token}")),
            None => builder,
        };
        let builder = match &body {
            Payload::None => builder,
            Payload::Json(_) => builder.header("content-type", "application/json"),
            Payload::Zstd(_) => builder.header("content-type", "application/json").header("content-encoding", "zstd"),
        };
        let response = match body {
            Payload::None => self.send(builder.body(()), wait),
            Payload::Json(bytes) => self.send(builder.body(bytes), wait),
            Payload::Zstd(stream) => self.send(builder.body(stream), wait),
        }?;
        let status = response.status().as_u16();
        let mut body = response.into_body();
        let text = body
            .with_config()
            .limit(1 << 30)
            .read_to_vec()
            .map_err(|e| CallError::Transport(format!("the answer of {} could not be read: {e}", self.url())))?;
        if (200..300).contains(&status) {
            let text = if text.is_empty() { b"null".to_vec() } else { text };
            return serde_json::from_slice(&text)
                .map_err(|e| CallError::Transport(format!("{} answered what modelc does not read: {e}", self.url())));
        }
        Err(match serde_json::from_slice::<ErrorBody>(&text) {
            Ok(ErrorBody { error }) => CallError::Api {
                status,
                code: error.code,
                message: error.message,
                resources: error.resources,
                sets: error.sets,
            },
            Err(_) => CallError::Api {
                status,
                code: "http".to_owned(),
                message: format!("{} answered HTTP {status}", self.url()),
                resources: Vec::new(),
                sets: Vec::new(),
            },
        })
    }

    fn send<B: ureq::AsSendBody>(
        &self,
        request: Result<ureq::http::Request<B>, ureq::http::Error>,
        wait: Duration,
    ) -> Result<ureq::http::Response<ureq::Body>, CallError> {
        let request = request.map_err(|e| CallError::Transport(e.to_string()))?;
        let config = self.agent.configure_request(request).timeout_global(Some(self.timeout + wait)).build();
        self.agent.run(config).map_err(|e| CallError::Transport(transport(&e, self.url())))
    }

    fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, CallError> {
        self.call("GET", path, Payload::None, Duration::ZERO)
    }

    fn post<B: Serialize, T: DeserializeOwned>(&self, path: &str, body: &B) -> Result<T, CallError> {
        self.call("POST", path, Payload::Json(json(body)?), Duration::ZERO)
    }

    pub fn health(&self) -> Result<modelc_api::Health, CallError> {
        self.get("/health")
    }

    pub fn versions(&self) -> Result<Vec<VersionInfo>, CallError> {
        self.get("/versions")
    }

    pub fn snapshot(&self, version: Option<u64>) -> Result<Snapshot, CallError> {
        self.get(&format!("/versions/{}", version.map_or_else(|| "latest".to_owned(), |v| v.to_string())))
    }

    pub fn changes(&self, from: u64, to: u64) -> Result<Changes, CallError> {
        self.get(&format!("/versions/{from}/changes/{to}"))
    }

    /// Sends an export, zstd-compressed as it is written and sent as it is compressed: the
    /// server reads the start of a large model while the rest is still being encoded, and the
    /// whole JSON is never held.
    pub fn export(&self, request: &ExportRequest<'_>) -> Result<ExportResponse, CallError> {
        let (reader, writer) =
            std::io::pipe().map_err(|e| CallError::Transport(format!("cannot send the export: {e}")))?;
        std::thread::scope(|scope| {
            let encoding = scope.spawn(move || encode_export(request, writer));
            let answer = self.call(
                "POST",
                "/versions",
                Payload::Zstd(ureq::SendBody::from_owned_reader(reader)),
                Duration::ZERO,
            );
            match encoding.join() {
                // The body ended early because the call did: its answer says why.
                Ok(Err(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => answer,
                Ok(Err(e)) => Err(CallError::Transport(format!("cannot encode the export: {e}"))),
                Ok(Ok(())) => answer,
                Err(_) => Err(CallError::Transport("encoding the export failed".to_owned())),
            }
        })
    }

    pub fn plan(&self, request: &PlanRequest) -> Result<modelc_store::plan::Plan, CallError> {
        self.post("/plan", request)
    }

    pub fn release(&self, version: Option<u64>) -> Result<Release, CallError> {
        self.post("/releases", &ReleaseRequest { version })
    }

    pub fn latest_release(&self) -> Result<Option<Release>, CallError> {
        self.get("/releases/latest")
    }

    pub fn contents(&self, hashes: &[String]) -> Result<ContentsResponse, CallError> {
        self.post("/contents", &ContentsRequest { hashes: hashes.to_vec() })
    }

    pub fn facts(&self) -> Result<Vec<modelc_store::Fact>, CallError> {
        self.get("/facts")
    }

    pub fn status(&self, agent: Option<&str>) -> Result<Status, CallError> {
        self.get(&format!("/status{}", query(&[("agent", agent)])))
    }

    pub fn actions(&self, agent: Option<&str>, since: Option<&str>) -> Result<Vec<Action>, CallError> {
        self.get(&format!("/actions{}", query(&[("agent", agent), ("since", since)])))
    }

    pub fn create_token(&self, request: &TokenRequest) -> Result<TokenCreated, CallError> {
        self.post("/tokens", request)
    }

    pub fn tokens(&self) -> Result<Vec<Token>, CallError> {
        self.get("/tokens")
    }

    pub fn revoke_token(&self, id: &str) -> Result<(), CallError> {
        self.call::<serde_json::Value>("DELETE", &format!("/tokens/{}", encode(id)), Payload::None, Duration::ZERO)
            .map(drop)
    }

    /// Takes or renews agent `name`'s lease for `holder`; how long it runs.
    pub fn take_lease(&self, name: &str, holder: &str) -> Result<Duration, CallError> {
        let granted: modelc_api::LeaseGranted =
            self.post(&format!("/agents/{}/lease", encode(name)), &LeaseRequest { holder: holder.to_owned() })?;
        Ok(Duration::from_secs_f64(granted.seconds.clamp(0.5, 3600.0)))
    }

    pub fn drop_lease(&self, name: &str, holder: &str) -> Result<(), CallError> {
        let body = json(&LeaseRequest { holder: holder.to_owned() })?;
        self.call::<serde_json::Value>(
            "DELETE",
            &format!("/agents/{}/lease", encode(name)),
            Payload::Json(body),
            Duration::ZERO,
        )
        .map(drop)
    }

    /// The long poll: answers once a release changes `name` beyond `known`, or after `wait`.
    pub fn work(&self, name: &str, holder: &str, known: Option<u64>, wait: Duration) -> Result<Work, CallError> {
        let known = known.map(|k| k.to_string());
        let wait_text = wait.as_secs_f64().to_string();
        let path = format!(
            "/agents/{}/work{}",
            encode(name),
            query(&[("holder", Some(holder)), ("known", known.as_deref()), ("wait", Some(&wait_text))])
        );
        self.call("GET", &path, Payload::None, wait)
    }

    pub fn agent_resources(&self, name: &str, version: u64) -> Result<AgentResources, CallError> {
        self.get(&format!("/agents/{}/versions/{version}/resources", encode(name)))
    }

    /// The results of `ids` in `version`; with `wait`, once one has a result or after that long.
    pub fn requirements(&self, version: u64, ids: &[String], wait: Duration) -> Result<Vec<Requirement>, CallError> {
        let body = json(&RequirementsRequest { ids: ids.to_vec(), wait: wait.as_secs_f64() })?;
        self.call("POST", &format!("/versions/{version}/requirements"), Payload::Json(body), wait)
    }

    pub fn report(&self, holder: &str, actions: &[Action]) -> Result<u64, CallError> {
        let answer: serde_json::Value =
            self.post("/actions", &ActionsReport { holder: holder.to_owned(), actions: actions.to_vec() })?;
        Ok(answer.get("recorded").and_then(serde_json::Value::as_u64).unwrap_or(0))
    }

    pub fn progress(&self, name: &str, holder: &str, version: u64, finished: bool) -> Result<(), CallError> {
        let body = modelc_api::Progress { holder: holder.to_owned(), version, finished };
        self.post::<_, serde_json::Value>(&format!("/agents/{}/progress", encode(name)), &body).map(drop)
    }
}

fn json<B: Serialize>(body: &B) -> Result<Vec<u8>, CallError> {
    serde_json::to_vec(body).map_err(|e| CallError::Transport(format!("cannot encode the request: {e}")))
}

/// A transport error as a person reads it, naming the server (never the request's headers).
fn transport(error: &ureq::Error, url: &str) -> String {
    match error {
        ureq::Error::Io(io) => format!("cannot reach the server {url}: {io}"),
        ureq::Error::Timeout(_) => format!("the server {url} did not answer in time"),
        ureq::Error::HostNotFound => format!("cannot reach the server {url}: unknown host"),
        other => format!("cannot reach the server {url}: {other}"),
    }
}

/// A call's body.
enum Payload {
    None,
    Json(Vec<u8>),
    /// JSON compressed with zstd as it is sent (a chunked body).
    Zstd(ureq::SendBody<'static>),
}

/// Writes `request` as zstd-compressed JSON into `writer` (closed at the end, which ends the
/// body). Small writes are gathered first: zstd compresses a large block faster than many small
/// ones.
fn encode_export(request: &ExportRequest<'_>, writer: std::io::PipeWriter) -> std::io::Result<()> {
    let encoder = zstd::stream::write::Encoder::new(writer, 1)?;
    let mut buffered = std::io::BufWriter::with_capacity(1 << 17, encoder);
    serde_json::to_writer(&mut buffered, request)?;
    buffered.into_inner().map_err(std::io::IntoInnerError::into_error)?.finish()?;
    Ok(())
}

/// `?a=1&b=2` of the pairs that have a value, percent-encoded.
fn query(pairs: &[(&str, Option<&str>)]) -> String {
    let parts: Vec<String> =
        pairs.iter().filter_map(|(key, value)| value.map(|v| format!("{key}={}", encode(v)))).collect();
    if parts.is_empty() { String::new() } else { format!("?{}", parts.join("&")) }
}

/// Percent-encodes all but unreserved characters.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}
