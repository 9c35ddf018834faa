//! Where versions are: a store (`--store`, `MODELC_STORE`, or the project's embedded one) or a
//! server (`--server`). Both are opened as a `Store`, so the commands that read, plan and export
//! versions do the same thing with either; a server's token comes from `MODELC_TOKEN` or
//! `--token-file`, never from the command line.

use std::path::{Path, PathBuf};

use modelc_client::{Client, ClientOptions, RemoteStore};
use modelc_ir::Ir;
use modelc_store::{Access, Locator, PartialRequest, Store, StoreError};

use crate::cli::ServerArg;

/// The environment variable a client's token is read from.
pub(crate) const TOKEN_VAR: &str = "MODELC_TOKEN";

pub(crate) enum Place {
    Store(Locator),
    Server(Server),
}

/// A server, its token, and whether exports through it are released (where the release goes).
#[derive(Clone)]
pub(crate) struct Server {
    pub(crate) client: Client,
    pub(crate) released: Option<modelc_client::Released>,
}

impl Place {
    /// Opens it for `access` (a server is not opened until its first call).
    pub(crate) fn open(&self, access: Access) -> Result<Box<dyn Store>, StoreError> {
        match self {
            Place::Store(locator) => modelc_store::open(locator, access),
            Place::Server(server) => Ok(Box::new(RemoteStore::new(server.client.clone(), server.released.clone()))),
        }
    }

    /// What exporting `ir` would change ([`modelc_store::plan`] for a store).
    pub(crate) fn plan(
        &self,
        ir: &Ir,
        partial: Option<&PartialRequest>,
    ) -> Result<modelc_store::plan::Plan, StoreError> {
        match self {
            Place::Store(locator) => modelc_store::plan(locator, ir, partial),
            Place::Server(_) => self.open(Access::Read)?.plan(ir, partial),
        }
    }

    /// The facts deploys learnt, for `std::getfact`: none where there is no store yet. A store
    /// that cannot be read gives none either, with a warning: the compile goes on, as the
    /// reference's does when its server does not answer.
    pub(crate) fn facts(&self, warnings: &mut dyn std::io::Write) -> std::sync::Arc<modelc_exec::KnownFacts> {
        let read = self.open(Access::Read).and_then(|store| store.facts());
        let mut known = modelc_exec::KnownFacts::new();
        match read {
            Ok(facts) => {
                for fact in facts {
                    known.entry(fact.id).or_default().insert(fact.name, fact.value);
                }
            }
            Err(StoreError::NotFound(_)) => {}
            Err(error) => {
                let _ = writeln!(
                    warnings,
                    "warning: the facts of {self} cannot be read ({error}): `std::getfact` finds none"
                );
            }
        }
        std::sync::Arc::new(known)
    }
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Store(locator) => locator.fmt(f),
            Place::Server(server) => write!(f, "server {}", server.client.url()),
        }
    }
}

/// The server `--server` names, with its token; `None` without `--server`.
pub(crate) fn server(arg: &ServerArg, release: bool, cwd: &Path) -> Result<Option<Server>, String> {
    let Some(url) = &arg.url else { return Ok(None) };
    let token = token(arg.token_file.as_deref(), cwd)?;
    let options = ClientOptions { ca: arg.ca.as_ref().map(|ca| absolute(ca, cwd)), timeout: None };
    let client = Client::new(url, Some(token), &options)?;
    Ok(Some(Server { client, released: release.then(Default::default) }))
}

/// The token of `--token-file`, else of `MODELC_TOKEN`.
pub(crate) fn token(file: Option<&Path>, cwd: &Path) -> Result<String, String> {
    let token = match file {
        Some(file) => {
            let file = absolute(file, cwd);
            std::fs::read_to_string(&file).map_err(|e| format!("cannot read the token file {}: {e}", file.display()))?
        }
        None => std::env::var(TOKEN_VAR).map_err(|_| {
            format!(
                "a server needs a token: set {TOKEN_VAR}, or give --token-file FILE (`modelc token create` makes one)"
            )
        })?,
    };
    let token = token.trim().to_owned();
    if token.is_empty() {
        return Err("the token is empty".to_owned());
    }
    Ok(token)
}

fn absolute(path: &Path, cwd: &Path) -> PathBuf {
    if path.is_absolute() { path.to_owned() } else { cwd.join(path) }
}
