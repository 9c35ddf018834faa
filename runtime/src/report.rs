//! What a deploy says about each resource and about the whole run.

use serde::Serialize;

/// How one resource ended in a run. Every resource of the version gets exactly one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Its handler changed the machine (or ran its command, or refreshed it).
    Changed,
    /// Its handler found the machine as desired.
    Unchanged,
    /// Its handler failed; its dependents are blocked.
    Failed,
    /// A resource it requires did not deploy; it was not run.
    Blocked,
    /// Its handler chose not to act (`exec::Run` with `skip_on_fail`); its dependents are blocked.
    Skipped,
    /// Its guards (meta `only_if`, `not_if`, `creates`) kept it from running; it counts as
    /// done, so its dependents run.
    Guarded,
    /// Dry run: its handler found differences and changed nothing.
    WouldChange,
    /// Dry run: it requires something that would change, so checking it now would not say
    /// what a real run does. It was not checked.
    NotEvaluated,
    /// No handler deploys its type.
    NoHandler,
    /// It cannot be deployed by this runtime: a value unknown at compile time, or a context
    /// (`via`) that is not the local machine.
    Undeployable,
    /// It belongs to an agent this run does not handle; it was not looked at.
    NotHandled,
    /// The run was interrupted (Ctrl-C) before it started.
    Interrupted,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Changed => "changed",
            Outcome::Unchanged => "unchanged",
            Outcome::Failed => "failed",
            Outcome::Blocked => "blocked",
            Outcome::Skipped => "skipped",
            Outcome::Guarded => "guarded",
            Outcome::WouldChange => "would-change",
            Outcome::NotEvaluated => "not-evaluated",
            Outcome::NoHandler => "no-handler",
            Outcome::Undeployable => "undeployable",
            Outcome::NotHandled => "not-handled",
            Outcome::Interrupted => "interrupted",
        }
    }

    /// Whether the resources that require this one may run after it.
    pub fn lets_dependents_run(self) -> bool {
        matches!(
            self,
            Outcome::Changed | Outcome::Unchanged | Outcome::Guarded | Outcome::WouldChange | Outcome::NotEvaluated
        )
    }

    /// Whether this outcome makes the deploy fail (exit status 1).
    pub fn is_problem(self) -> bool {
        matches!(
            self,
            Outcome::Failed | Outcome::Blocked | Outcome::NoHandler | Outcome::Undeployable | Outcome::Interrupted
        )
    }
}

/// One difference between the machine and the desired state.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The attribute that differs (`hash`, `permissions`, `owner`, `purged`, `command`, …).
    pub field: String,
    /// What the machine has (`null` when the thing does not exist).
    pub old: serde_json::Value,
    /// What the desired state asks for.
    pub new: serde_json::Value,
    /// For file content: a unified diff of the text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

impl Change {
    pub fn new(field: &str, old: impl Into<serde_json::Value>, new: impl Into<serde_json::Value>) -> Change {
        Change { field: field.to_owned(), old: old.into(), new: new.into(), diff: None }
    }
}

/// What happened to one resource.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResourceReport {
    /// Its position in the run's plan.
    #[serde(skip)]
    pub index: usize,
    /// The versionless id.
    pub id: String,
    pub result: Outcome,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Change>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The failed (or otherwise not deployed) resources it requires, for `blocked`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocked_by: Vec<String>,
    /// Whether it was refreshed because a resource it requires changed (or a refresh was left
    /// over from an earlier run).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub refreshed: bool,
    /// How long its handler ran, in milliseconds (0 when it did not run), retries included.
    pub duration_ms: f64,
    /// How many times its handler ran (more than once when it failed and had retries).
    #[serde(skip_serializing_if = "at_most_once")]
    pub attempts: u32,
    /// The first member of the group it was applied with (autogroup), when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Where the model creates it (`main.cf:12`).
    pub source: String,
}

fn at_most_once(attempts: &u32) -> bool {
    *attempts <= 1
}

/// A refresh that a `before` or `delayed` notification caused: a run of the receiver's handler
/// besides its own deploy. (An `immediately` notification refreshes the receiver in its own
/// deploy, which comes right after the sender's: its report says `refreshed`.)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotificationReport {
    /// The receiver's id.
    pub receiver: String,
    pub timing: modelc_ir::Timing,
    /// The senders that changed (or, in a dry run, would change), in plan order.
    pub senders: Vec<String>,
    /// `changed` (refreshed), `would-change` (dry run or noop: it would be refreshed), or
    /// `failed`.
    pub result: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub duration_ms: f64,
}

/// What a run did, resource by resource, in queue order.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub resources: Vec<ResourceReport>,
    /// The refreshes `before` and `delayed` notifications caused, in the order they ran.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notifications: Vec<NotificationReport>,
    /// Receivers whose refresh was due and did not happen (their run failed or was blocked):
    /// the next run refreshes them.
    pub pending_refreshes: Vec<String>,
    /// The run's duration in milliseconds.
    pub duration_ms: f64,
}

impl RunReport {
    /// How many resources ended with `outcome`.
    pub fn count(&self, outcome: Outcome) -> usize {
        self.resources.iter().filter(|r| r.result == outcome).count()
    }

    /// Whether every handled resource converged (or would, in a dry run).
    pub fn converged(&self) -> bool {
        !self.resources.iter().any(|r| r.result.is_problem())
            && !self.notifications.iter().any(|n| n.result.is_problem())
    }

    pub fn get(&self, id: &str) -> Option<&ResourceReport> {
        self.resources.iter().find(|r| r.id == id)
    }
}
