//! The client of `modelc server` (`modelc_api`): one blocking call per API call, for the
//! command line (`--server`) and the agent. [`RemoteStore`] puts the server behind the store's
//! own interface, so `versions`, `show`, `diff`, `plan` and `export` read and write a server as
//! they do a store.
//!
//! The token comes from the caller (the command line reads `MODELC_TOKEN` or `--token-file`)
//! and travels only in the `Authorization` header; errors never repeat it.

#![allow(clippy::disallowed_methods, reason = "the client reads its certificate authority file")]

mod client;
mod remote;

pub use client::{CallError, Client, ClientOptions};
pub use remote::{Released, RemoteStore, store_error};
