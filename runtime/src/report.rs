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
    /// Dry run: its handler found that applying it would fail (a parent directory that
    /// nothing creates, a user the machine does not have), and why; its dependents are
    /// blocked, as in a real run.
    WouldFail,
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
            Outcome::WouldFail => "would-fail",
            Outcome::NotEvaluated => "not-evaluated",
            Outcome::NoHandler => "no-handler",
            Outcome::Undeployable => "undeployable",
            Outcome::NotHandled => "not-handled",
            Outcome::Interrupted => "interrupted",
        }
    }

    /// Every outcome, in the order summaries list them.
    pub const ALL: [Outcome; 13] = [
        Outcome::Changed,
        Outcome::Unchanged,
        Outcome::Failed,
        Outcome::Blocked,
        Outcome::Skipped,
        Outcome::Guarded,
        Outcome::WouldChange,
        Outcome::WouldFail,
        Outcome::NotEvaluated,
        Outcome::NoHandler,
        Outcome::Undeployable,
        Outcome::Interrupted,
        Outcome::NotHandled,
    ];

    /// The outcome [`Outcome::as_str`] names.
    pub fn parse(text: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == text)
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
            Outcome::Failed
                | Outcome::WouldFail
                | Outcome::Blocked
                | Outcome::NoHandler
                | Outcome::Undeployable
                | Outcome::Interrupted
        )
    }
}

/// One difference between the machine and the desired state.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
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

    /// The change in the user's terms: "created", "removed", "mode 644 → 600", "content (2 lines
    /// added, 1 removed)", "link to /srv/v2 (was /srv/v1)", "ran `make`", "reloaded: ran `…`".
    /// `applied`: it happened (a real run), or only would (a dry run). The raw attributes stay
    /// in the JSON report.
    pub fn summary(&self, applied: bool) -> String {
        use serde_json::Value;
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let from_to = |what: &str| match &self.old {
            Value::Null => format!("{what} {}", text(&self.new)),
            old => format!("{what} {} → {}", text(old), text(&self.new)),
        };
        match (self.field.as_str(), &self.old, &self.new) {
            ("purged", Value::Null | Value::Bool(true), Value::Bool(false)) => "created".to_owned(),
            ("purged", Value::Null | Value::Bool(false), Value::Bool(true)) => "removed".to_owned(),
            ("permissions", _, _) => from_to("mode"),
            ("owner", _, _) => from_to("owner"),
            ("group", _, _) => from_to("group"),
            ("hash", _, _) => format!("content ({})", self.content_summary()),
            ("src", Value::Null, new) => format!("link to {}", text(new)),
            ("src", old, new) => format!("link to {} (was {})", text(new), text(old)),
            ("command", _, new) if applied => format!("ran `{}`", text(new)),
            ("command", _, new) => format!("would run `{}`", text(new)),
            ("reload", _, new) if applied => format!("reloaded: ran `{}`", text(new)),
            ("reload", _, new) => format!("would reload: run `{}`", text(new)),
            (field, Value::Null, new) => format!("{field}: {}", text(new)),
            (field, old, new) => format!("{field}: {} → {}", text(old), text(new)),
        }
    }

    /// What a content change does, from its diff when it has one: "12 lines" for a new file,
    /// "2 lines added, 1 removed"; the sha1s otherwise (binary, large, or a real run).
    fn content_summary(&self) -> String {
        let short = |v: &serde_json::Value| v.as_str().map_or_else(|| v.to_string(), |s| s.chars().take(10).collect());
        let lines = |n: usize| format!("{n} line{}", if n == 1 { "" } else { "s" });
        let counted = self.diff.as_deref().filter(|d| !d.contains("too many changes to show")).map(|diff| {
            let body = diff.lines().filter(|l| !l.starts_with("+++") && !l.starts_with("---"));
            body.fold((0, 0), |(added, removed), line| match line.as_bytes().first() {
                Some(b'+') => (added + 1, removed),
                Some(b'-') => (added, removed + 1),
                _ => (added, removed),
            })
        });
        match (counted, self.old.is_null()) {
            (Some((added, _)), true) => lines(added),
            (Some((added, removed)), false) => match (added, removed) {
                (0, removed) => format!("{} removed", lines(removed)),
                (added, 0) => format!("{} added", lines(added)),
                (added, removed) => format!("{} added, {removed} removed", lines(added)),
            },
            (None, true) => format!("new, sha1 {}…", short(&self.new)),
            (None, false) => format!("sha1 {}… → {}…", short(&self.old), short(&self.new)),
        }
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
    /// What its handler logged.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<crate::handler::LogLine>,
    /// What its handler learnt about it (`crate::handler::Facts`), recorded with the deploy.
    #[serde(skip_serializing_if = "crate::handler::Facts::is_empty")]
    pub facts: crate::handler::Facts,
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn change(field: &str, old: Value, new: Value) -> Change {
        Change::new(field, old, new)
    }

    #[test]
    fn changes_are_said_in_the_users_terms() {
        let said = |c: Change| c.summary(true);
        assert_eq!(said(change("purged", Value::Bool(true), Value::Bool(false))), "created");
        assert_eq!(said(change("purged", Value::Bool(false), Value::Bool(true))), "removed");
        assert_eq!(said(change("permissions", Value::from(644), Value::from(600))), "mode 644 → 600");
        assert_eq!(said(change("permissions", Value::Null, Value::from(755))), "mode 755");
        assert_eq!(said(change("owner", Value::from("root"), Value::from("www"))), "owner root → www");
        assert_eq!(said(change("src", Value::Null, Value::from("/srv/v1"))), "link to /srv/v1");
        assert_eq!(
            said(change("src", Value::from("/srv/v1"), Value::from("/srv/v2"))),
            "link to /srv/v2 (was /srv/v1)"
        );
        assert_eq!(said(change("command", Value::Null, Value::from("make"))), "ran `make`");
        assert_eq!(change("command", Value::Null, Value::from("make")).summary(false), "would run `make`");
        assert_eq!(said(change("reload", Value::Null, Value::from("sh -c 'x'"))), "reloaded: ran `sh -c 'x'`");
        assert_eq!(said(change("other", Value::from(1), Value::from(2))), "other: 1 → 2");
    }

    #[test]
    fn content_is_counted_in_lines_from_its_diff() {
        let mut c = change("hash", Value::from("2789aa00112233"), Value::from("c696bb00112233"));
        c.diff = Some("--- a\n+++ b\n@@ -1,2 +1,3 @@\n-port = 80\n+port = 443\n+log = on\n host = a\n".to_owned());
        assert_eq!(c.summary(false), "content (2 lines added, 1 removed)");
        c.diff = Some("@@ -1 +1,2 @@\n x\n+y\n".to_owned());
        assert_eq!(c.summary(false), "content (1 line added)");
        c.diff = None;
        assert_eq!(c.summary(true), "content (sha1 2789aa0011… → c696bb0011…)");
        let mut new = change("hash", Value::Null, Value::from("c696bb00112233"));
        assert_eq!(new.summary(true), "content (new, sha1 c696bb0011…)");
        new.diff = Some("--- /dev/null\n+++ f\n@@ -0,0 +1,3 @@\n+a\n+b\n+c\n".to_owned());
        assert_eq!(new.summary(false), "content (3 lines)");
    }
}
