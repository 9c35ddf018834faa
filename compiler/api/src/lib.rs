//! The JSON API of `modelc server` under [`PREFIX`]: the bodies each call takes and gives, and the
//! one error shape, `{"error": {"code", "message"}}`, with its HTTP status ([`ErrorKind`]).
//! The server (`modelc-server`), the command line's `--server` and the agent (`modelc-client`)
//! all read these types, so the two sides cannot drift. `docs/server.md` describes the calls.

mod token;

use std::borrow::Cow;
use std::collections::BTreeMap;

use modelc_ir::{Ir, Resource};
use modelc_store::postgres::fleet::{Action, Release, Role, Token};
use modelc_store::{Metadata, PartialRequest, Rule, VersionInfo};
use serde::{Deserialize, Serialize};

pub use token::{hash_token, new_token};

/// Every path of the API starts with this.
pub const PREFIX: &str = "/api/v1";

/// The header a client names its token in: `Authorization: Bearer <token>`.
pub const AUTHORIZATION: &str = "authorization";

/// How long a long poll waits at most before answering with no news, in seconds.
pub const LONG_POLL_SECONDS: u64 = 30;

/// `POST /versions`: an export through the server (the body zstd- or gzip-compressed). The IR is
/// borrowed where it is sent (a client does not copy a large model to send it) and owned where it
/// is read.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportRequest<'a> {
    pub ir: Cow<'a, Ir>,
    /// A partial export with this request; `None`: a full one.
    #[serde(default)]
    pub partial: Option<PartialRequest>,
    pub metadata: Metadata,
    /// Store a version even when nothing changed.
    #[serde(default)]
    pub force: bool,
    /// Release the version once stored.
    #[serde(default)]
    pub release: bool,
}

/// What an export did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExportResponse {
    /// A new version was stored (false: the resources were exactly the latest version's).
    pub stored: bool,
    pub version: VersionInfo,
    /// Its release, when asked for.
    #[serde(default)]
    pub release: Option<Release>,
}

/// `POST /plan`: what an export would change.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanRequest<'a> {
    pub ir: Cow<'a, Ir>,
    #[serde(default)]
    pub partial: Option<PartialRequest>,
}

/// `POST /releases`: release a version (`None`: the latest).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReleaseRequest {
    #[serde(default)]
    pub version: Option<u64>,
}

/// `POST /contents`: file contents by their sha1.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContentsRequest {
    pub hashes: Vec<String>,
}

/// The contents the store has, by hash (texts, as the IR carries them).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ContentsResponse {
    pub contents: BTreeMap<String, String>,
}

/// `POST /tokens`: a new token.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenRequest {
    pub role: Role,
    /// The agents of an agent token.
    #[serde(default)]
    pub agents: Vec<String>,
}

impl TokenRequest {
    /// An agent token names its agents; no other role does.
    pub fn check(&self) -> Result<(), String> {
        match (self.role, self.agents.is_empty()) {
            (Role::Agent, true) => Err("an agent token names its agents (--agent NAME)".to_owned()),
            (Role::Agent, false) | (_, true) => Ok(()),
            (_, false) => Err("only an agent token names agents".to_owned()),
        }
    }
}

/// A new token: the secret, shown once, and what is stored of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TokenCreated {
    pub token: String,
    pub info: Token,
}

/// `POST /agents/{name}/lease`, `DELETE` likewise: take, renew or give up an agent's name.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseRequest {
    /// The agent process's random id.
    pub holder: String,
}

/// The answer to a lease taken or renewed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LeaseGranted {
    /// How long it runs unless renewed, in seconds: an agent renews it well before.
    pub seconds: f64,
}

/// `GET /agents/{name}/work?holder=H&known=V`: the long poll's answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Work {
    /// The last release that changed this agent's resources (`None`: none has yet).
    pub version: Option<u64>,
    /// The latest release.
    pub released: Option<u64>,
}

/// `GET /agents/{name}/versions/{v}/resources`: what the agent deploys in a version.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AgentResources {
    pub version: u64,
    /// Its own resources, whole.
    pub resources: Vec<Resource>,
    /// The resources of other agents that its resources require: their ids and agents only.
    pub foreign: Vec<Foreign>,
}

/// A resource of another agent that one of the agent's resources requires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Foreign {
    pub id: String,
    pub agent: String,
}

/// `POST /versions/{v}/requirements`: the results, in that version, of resources other agents
/// deploy; with `wait`, the answer comes once one of them has a result it did not have in
/// `known`, or after the long poll's time.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequirementsRequest {
    pub ids: Vec<String>,
    /// Seconds to wait for news (at most [`LONG_POLL_SECONDS`]); 0: answer at once.
    #[serde(default)]
    pub wait: f64,
}

/// `POST /actions`: results an agent reports, in a batch.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionsReport {
    /// The reporting process's lease holder id.
    pub holder: String,
    pub actions: Vec<Action>,
}

/// `POST /agents/{name}/progress`: the agent began or finished deploying a version.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Progress {
    pub holder: String,
    pub version: u64,
    pub finished: bool,
}

/// `GET /health`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Health {
    /// `ok`, or `degraded` while the database cannot be reached.
    pub status: String,
    pub store: bool,
    pub version: String,
}

/// Every failed call's body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// `bad-request`, `unauthorized`, …, or a store rule's diagnostic code (`E0503`).
    pub code: String,
    pub message: String,
    /// A refused export's resources and sets, so a client reports it as a local export would.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sets: Vec<String>,
}

/// What went wrong, with its HTTP status and code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// 400: a body that is not JSON, has unknown fields, or values out of range.
    BadRequest,
    /// 401: no token, or a bad or revoked one.
    Unauthorized,
    /// 403: the token's role may not do this, or the resources are another agent's.
    Forbidden,
    /// 404: no such version, agent, resource or token.
    NotFound,
    /// 409: a stale release, an agent name held by another process.
    Conflict,
    /// 413: a body larger than the server takes.
    TooLarge,
    /// 422: the export breaks a store rule (the code is the rule's diagnostic code).
    Rejected,
    /// 503: the database cannot be reached now (with `Retry-After`).
    Unavailable,
}

impl ErrorKind {
    pub fn status(self) -> u16 {
        match self {
            ErrorKind::BadRequest => 400,
            ErrorKind::Unauthorized => 401,
            ErrorKind::Forbidden => 403,
            ErrorKind::NotFound => 404,
            ErrorKind::Conflict => 409,
            ErrorKind::TooLarge => 413,
            ErrorKind::Rejected => 422,
            ErrorKind::Unavailable => 503,
        }
    }

    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::BadRequest => "bad-request",
            ErrorKind::Unauthorized => "unauthorized",
            ErrorKind::Forbidden => "forbidden",
            ErrorKind::NotFound => "not-found",
            ErrorKind::Conflict => "conflict",
            ErrorKind::TooLarge => "too-large",
            ErrorKind::Rejected => "rejected",
            ErrorKind::Unavailable => "unavailable",
        }
    }

    /// The kind of an HTTP status the server answers with.
    pub fn of_status(status: u16) -> Option<ErrorKind> {
        [
            ErrorKind::BadRequest,
            ErrorKind::Unauthorized,
            ErrorKind::Forbidden,
            ErrorKind::NotFound,
            ErrorKind::Conflict,
            ErrorKind::TooLarge,
            ErrorKind::Rejected,
            ErrorKind::Unavailable,
        ]
        .into_iter()
        .find(|kind| kind.status() == status)
    }
}

/// The diagnostic a store rule's refusal is reported with (`E05xx`), on the command line and as
/// a 422's code.
pub fn rule_code(rule: Rule) -> &'static modelc_diagnostics::Code {
    use modelc_diagnostics::codes;
    match rule {
        Rule::NoBase => &codes::NO_BASE_VERSION,
        Rule::UpdatedAndDeleted => &codes::SET_EXPORTED_AND_DELETED,
        Rule::Moved => &codes::RESOURCE_MOVED,
        Rule::SharedChanged => &codes::SHARED_RESOURCE_CHANGED,
        Rule::CrossSet => &codes::CROSS_SET_DEPENDENCY_IN_STORE,
        Rule::Dangling => &codes::DANGLING_DEPENDENCY,
        Rule::DuplicateId => &codes::DUPLICATE_RESOURCE_IN_EXPORT,
        Rule::SetMismatch => &codes::SET_MEMBERSHIP_MISMATCH,
        Rule::UnknownSet => &codes::UNKNOWN_RESOURCE_SET,
    }
}

/// The rule a 422's code names.
pub fn rule_of_code(code: &str) -> Option<Rule> {
    [
        Rule::NoBase,
        Rule::UpdatedAndDeleted,
        Rule::Moved,
        Rule::SharedChanged,
        Rule::CrossSet,
        Rule::Dangling,
        Rule::DuplicateId,
        Rule::SetMismatch,
        Rule::UnknownSet,
    ]
    .into_iter()
    .find(|rule| rule_code(*rule).id == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_a_code_that_finds_it_again() {
        for rule in [Rule::NoBase, Rule::Moved, Rule::UnknownSet, Rule::CrossSet] {
            assert_eq!(rule_of_code(rule_code(rule).id), Some(rule));
        }
        assert_eq!(ErrorKind::of_status(409), Some(ErrorKind::Conflict));
        assert_eq!(ErrorKind::of_status(200), None);
    }
}
