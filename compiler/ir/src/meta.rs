//! Meta parameters: how the runtime deploys one resource (docs/runtime.md), declared in the
//! model with `std::Meta`. The defaults are what a resource without them gets, and a resource
//! with the defaults writes no `meta` into the IR, so models that use none give the same
//! documents as before.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Meta {
    /// Report what would change, change nothing.
    pub noop: bool,
    /// How many times a failed deploy is tried again; -1: until it succeeds.
    pub retry: i64,
    /// A success gives the resource its retries back (continuous mode).
    pub retry_reset: bool,
    /// Seconds to wait before each retry (and between polls).
    pub delay: f64,
    /// How the wait grows from one retry to the next.
    pub backoff: Backoff,
    /// Seconds a deploy may take before it fails; `None`: no limit.
    pub timeout: Option<f64>,
    /// In continuous mode, check it every this many seconds instead of watching it for changes;
    /// 0: check it once, at the start. `None`: watch it (or, for kinds that cannot be watched,
    /// check it once).
    pub poll: Option<f64>,
    /// Runs per second this resource's events may cause (a token bucket); `None`: no limit.
    pub limit: Option<f64>,
    /// How many runs the bucket lets through at once.
    pub burst: u32,
    /// Counting semaphores held while it deploys: `"name"` (size 1) or `"name:N"`.
    pub sema: Vec<String>,
    /// Edges the resources imply (a file after its directory) are added at deploy time.
    pub autoedge: bool,
    /// It may be deployed together with resources of its kind.
    pub autogroup: bool,
    /// Guards, checked before each deploy: it runs only when this command succeeds…
    pub only_if: Option<String>,
    /// …and this one fails (or does not exist)…
    pub not_if: Option<String>,
    /// …and this path does not exist. A resource its guards keep from running is `guarded`,
    /// which lets what requires it run.
    pub creates: Option<String>,
}

/// How the wait before a retry grows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum Backoff {
    /// The same delay every time.
    None,
    /// The delay doubles after each failure, up to `cap` seconds; `jitter` draws each wait at
    /// random between half of it and all of it, so retries of many resources spread out.
    Exponential { cap: f64, jitter: bool },
}

impl Default for Meta {
    /// The defaults of the rule table ([`crate::meta_params::PARAMS`]).
    fn default() -> Meta {
        crate::meta_params::defaults()
    }
}

impl Meta {
    pub fn is_default(&self) -> bool {
        self == Meta::shared_default()
    }

    /// The defaults, shared by every resource that has them.
    fn shared_default() -> &'static Meta {
        static DEFAULT: std::sync::LazyLock<Meta> = std::sync::LazyLock::new(Meta::default);
        &DEFAULT
    }

    /// Whether a resource that failed `failures` times may be tried again (`retry` -1: always).
    pub fn retries_left(&self, failures: u32) -> bool {
        self.retry < 0 || i64::from(failures) <= self.retry
    }

    /// The wait before retry number `attempt` (1 for the first retry), without jitter.
    pub fn retry_delay(&self, attempt: u32) -> f64 {
        match &self.backoff {
            Backoff::None => self.delay,
            Backoff::Exponential { cap, .. } => {
                let factor = 2f64.powi(attempt.saturating_sub(1).min(62) as i32);
                (self.delay * factor).min(*cap)
            }
        }
    }

    /// The semaphores as `(name, size)`, sorted by name (the order they are acquired in).
    /// `None` for an id that is not `name` or `name:N` with N ≥ 1.
    pub fn semaphores(&self) -> Option<Vec<(String, usize)>> {
        let mut out = Vec::new();
        for id in &self.sema {
            out.push(parse_semaphore(id)?);
        }
        out.sort();
        out.dedup_by(|a, b| a.0 == b.0);
        Some(out)
    }
}

/// A notification: when the resource that carries it changes, `target` is refreshed at `timing`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notify {
    /// The receiver's id.
    pub target: String,
    pub timing: Timing,
}

/// When a notified resource is refreshed (Chef's timers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Timing {
    /// Right after the sender changed, before anything else that requires the sender starts.
    Immediately,
    /// Once at the end of the run, however many senders changed, even when the run failed
    /// elsewhere.
    Delayed,
    /// Before the sender changes: the sender is checked first, and only when it would change is
    /// the receiver refreshed, then the sender applied.
    Before,
}

impl Timing {
    pub fn as_str(self) -> &'static str {
        match self {
            Timing::Immediately => "immediately",
            Timing::Delayed => "delayed",
            Timing::Before => "before",
        }
    }
}

/// `"name"` is size 1, `"name:N"` size N (digits, the first not 0; a size too large to count is
/// no limit); anything else is `None` (the rule of std's `semaphore` typedef).
pub fn parse_semaphore(id: &str) -> Option<(String, usize)> {
    let (name, size) = match id.rsplit_once(':') {
        Some((name, size)) => {
            let digits = size.bytes().all(|b| b.is_ascii_digit()) && !size.starts_with('0') && !size.is_empty();
            (name, if digits { size.parse::<usize>().unwrap_or(usize::MAX) } else { return None })
        }
        None => (id, 1),
    };
    semaphore_name(name).then(|| (name.to_owned(), size))
}

/// A semaphore's name: letters, digits, `_`, `.` and `-`, at least one.
pub(crate) fn semaphore_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semaphore_ids() {
        assert_eq!(parse_semaphore("disk"), Some(("disk".to_owned(), 1)));
        assert_eq!(parse_semaphore("disk:4"), Some(("disk".to_owned(), 4)));
        assert_eq!(parse_semaphore("disk:0"), None, "a size of 0 is an error, not 1");
        assert_eq!(parse_semaphore("disk:x"), None);
        assert_eq!(parse_semaphore(":2"), None);
        assert_eq!(parse_semaphore("a b"), None);
        assert_eq!(parse_semaphore("disk:01"), None, "std's pattern has no leading 0");
        assert_eq!(parse_semaphore("disk:+3"), None);
        assert_eq!(parse_semaphore("disk:99999999999999999999999"), Some(("disk".to_owned(), usize::MAX)));
    }

    #[test]
    fn exponential_backoff_doubles_up_to_its_cap() {
        let meta = Meta { delay: 1.0, backoff: Backoff::Exponential { cap: 5.0, jitter: false }, ..Meta::default() };
        let waits: Vec<f64> = (1..=5).map(|n| meta.retry_delay(n)).collect();
        assert_eq!(waits, [1.0, 2.0, 4.0, 5.0, 5.0]);
    }
}

/// A resource's meta parameters: a [`Meta`] to read, held only when it differs from the
/// defaults. Most resources have the defaults, and a `Meta` is some 200 bytes: at half a
/// million resources that is 100 MB of defaults. It serialises as the `Meta` it reads as.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResourceMeta(Option<Box<Meta>>);

impl ResourceMeta {
    pub fn is_default(&self) -> bool {
        self.0.as_deref().is_none_or(Meta::is_default)
    }
}

impl From<Meta> for ResourceMeta {
    fn from(meta: Meta) -> ResourceMeta {
        ResourceMeta((!meta.is_default()).then(|| Box::new(meta)))
    }
}

impl std::ops::Deref for ResourceMeta {
    type Target = Meta;

    fn deref(&self) -> &Meta {
        self.0.as_deref().unwrap_or_else(|| Meta::shared_default())
    }
}

impl std::ops::DerefMut for ResourceMeta {
    /// Writing gives the resource its own copy.
    fn deref_mut(&mut self) -> &mut Meta {
        self.0.get_or_insert_with(Box::default)
    }
}

impl Serialize for ResourceMeta {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ResourceMeta {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<ResourceMeta, D::Error> {
        Meta::deserialize(deserializer).map(ResourceMeta::from)
    }
}
