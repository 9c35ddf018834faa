//! `modelc lsp`: the language server.
//!
//! A synchronous main loop over `lsp-server`'s channels (`server.rs`) keeps a [`Workspace`]:
//! the project's files in a salsa database, with the editor's open documents in place of their
//! text on disk. Every change sets one file's text and checks again, which recomputes only what
//! depends on that file, and publishes the syntax and `check` diagnostics of every open
//! document. Positions are converted in the encoding negotiated with the client
//! (`position.rs`: UTF-16 by default, UTF-8 when offered).
//!
//! After a pause in typing, a model that checks without errors is executed on a worker thread
//! (`execution.rs`) for the diagnostics only execution finds; the next edit cancels the run.
//!
//! A malformed message gets its JSON-RPC error answer (`transport.rs`) and a handler that
//! panics answers `InternalError` (`server.rs`): no one message ends a session.
//!
//! The server reads the project from disk and never writes anything.
#![allow(clippy::disallowed_methods, reason = "the server reads the project and open files from disk")]

mod completion;
mod diagnostics;
mod execution;
mod navigation;
pub mod position;
mod server;
mod structure;
pub mod transport;
pub mod workspace;

pub use server::{Error, run};

/// Serves the client on stdin and stdout until it shuts the server down.
pub fn stdio() -> Result<(), Error> {
    let (connection, io_threads) = transport::stdio();
    run(&connection)?;
    drop(connection);
    io_threads.join()?;
    Ok(())
}
