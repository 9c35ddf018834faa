//! The execution runtime: it applies a version of desired state (the resource IR) to this
//! machine, and to the machines its resources' contexts reach over ssh.
//!
//! * [`autoedge`] adds the order resources imply (a file after its directory) to a plan;
//! * [`autogroup`] groups resources a handler can apply together (files in one directory);
//! * [`plan`] decides what a run does with each resource: deploy it, or say why not (another
//!   agent's, no handler, an unknown value, a context it cannot follow), and adds purged copies of
//!   removed `purge_on_delete` resources;
//! * [`engine`] runs the plan along the dependency graph on `jobs` workers, blocking only what
//!   depends on a failure, refreshing event receivers, and reports through an [`engine::Observer`];
//! * [`handler`] is the interface a resource type's handler implements, and [`handlers`] are the
//!   ones shipped: std's `NullResource` and `AgentConfig`, `fs::File`, `fs::Directory`,
//!   `fs::Symlink` and `exec::Run`;
//! * [`meta`] applies a resource's meta parameters: noop, retries with their waits (through a
//!   [`meta::Clock`]), counting semaphores acquired in sorted order, and `--sema N`;
//! * [`notifications`] adds the order a notification's timing implies (immediately, before,
//!   delayed) to a plan;
//! * [`watch`] is continuous mode: a vertex per resource kept across versions, file-system
//!   events and timers, token buckets, retries across runs;
//! * [`yamlgraph`] reads a YAML graph of resources and edges, and merges it with a compiled
//!   model's at handover vertices;
//! * [`remote`] reaches the machines (and users) a resource's context names: ssh and sudo
//!   hops to a helper that is this modelc, copied to the target and run there;
//! * [`report`] is what a run says about each resource.
//!
//! The runtime reads only the IR (`modelc-ir`), never the compiler's own types, and knows
//! nothing of the command line or the store: `modelc deploy` wires it to both.
#![allow(clippy::disallowed_methods, reason = "the runtime acts on this machine: files, processes, the clock")]

pub mod autoedge;
pub mod autogroup;
pub mod engine;
pub mod handler;
pub mod handlers;
pub mod meta;
pub mod notifications;
pub mod operations;
pub mod plan;
pub mod remote;
pub mod report;
pub mod watch;
pub mod yamlgraph;

#[cfg(test)]
pub(crate) mod test_support;

pub use engine::{Observer, Options, Silent, run};
pub use handler::{ContentSource, Handlers, MemoryContent};
pub use meta::{Clock, SystemClock};
pub use plan::{AgentSelection, Plan};
pub use report::{Change, NotificationReport, Outcome, ResourceReport, RunReport};
