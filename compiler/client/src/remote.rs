//! A server behind the store's interface: what the command line reads and exports with
//! `--server` goes through the same code as with `--store`. The runtime's records (deploys,
//! carryover) are not the server's to give: agents report actions instead, so those calls say
//! so rather than pretend.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use modelc_api::{ErrorKind, ExportRequest, PlanRequest};
use modelc_ir::{Ir, Resource};
use modelc_store::postgres::fleet::Release;
use modelc_store::{
    About, Carryover, Changes, DeployRecord, ExportOutcome, Metadata, PartialRequest, Prefetched, PruneReport,
    Rejection, Snapshot, Store, StoreError, VersionInfo,
};

use crate::{CallError, Client};

/// Where an export through a server that releases its version puts the release.
pub type Released = Arc<Mutex<Option<Release>>>;

/// A store reached through `modelc server`.
pub struct RemoteStore {
    client: Client,
    /// Release each version exported (`export --release`), and keep the release here.
    released: Option<Released>,
}

impl RemoteStore {
    pub fn new(client: Client, released: Option<Released>) -> RemoteStore {
        RemoteStore { client, released }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    fn export(&self, request: &ExportRequest<'_>) -> Result<ExportOutcome, StoreError> {
        let response = self.client.export(request).map_err(store_error)?;
        if let (Some(cell), Some(release)) = (&self.released, response.release) {
            *cell.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(release);
        }
        Ok(if response.stored {
            ExportOutcome::Stored(response.version)
        } else {
            ExportOutcome::Unchanged(response.version)
        })
    }

    fn not_through_a_server(&self, what: &str) -> StoreError {
        StoreError::Storage(format!(
            "{what} is not done through a server ({}): agents report their runs",
            self.client.url()
        ))
    }
}

/// A failed call as the store's error: a refused export keeps its rule, resources and sets, so
/// the command line reports it as it reports a local one.
pub fn store_error(error: CallError) -> StoreError {
    let CallError::Api { status, code, message, resources, sets } = error else {
        return StoreError::Storage(error.to_string());
    };
    if let Some(rule) = modelc_api::rule_of_code(&code) {
        return StoreError::Rejected(Rejection { rule, message, resources, sets });
    }
    match ErrorKind::of_status(status) {
        Some(ErrorKind::NotFound) => {
            if let Some(number) = message.strip_prefix("there is no version ").and_then(|n| n.parse().ok()) {
                StoreError::NoSuchVersion(number)
            } else if message == StoreError::Empty.to_string() {
                StoreError::Empty
            } else {
                StoreError::Storage(format!("{message} (HTTP {status})"))
            }
        }
        Some(ErrorKind::Conflict) => StoreError::Conflict(message),
        _ => StoreError::Storage(format!("{message} (HTTP {status}, {code})")),
    }
}

impl Store for RemoteStore {
    fn versions(&self) -> Result<Vec<VersionInfo>, StoreError> {
        self.client.versions().map_err(store_error)
    }

    fn snapshot(&self, version: Option<u64>) -> Result<Snapshot, StoreError> {
        self.client.snapshot(version).map_err(store_error)
    }

    fn changes(&self, from: u64, to: u64) -> Result<Changes, StoreError> {
        self.client.changes(from, to).map_err(store_error)
    }

    fn plan(&self, ir: &Ir, partial: Option<&PartialRequest>) -> Result<modelc_store::plan::Plan, StoreError> {
        self.client.plan(&PlanRequest { ir: Cow::Borrowed(ir), partial: partial.cloned() }).map_err(store_error)
    }

    fn export_full_with(
        &mut self,
        ir: &Ir,
        metadata: &Metadata,
        force: bool,
        _prefetched: Option<Prefetched>,
    ) -> Result<ExportOutcome, StoreError> {
        self.export(&ExportRequest {
            ir: Cow::Borrowed(ir),
            partial: None,
            metadata: metadata.clone(),
            force,
            release: self.released.is_some(),
        })
    }

    fn export_partial_with(
        &mut self,
        ir: &Ir,
        request: &PartialRequest,
        metadata: &Metadata,
        force: bool,
    ) -> Result<ExportOutcome, StoreError> {
        self.export(&ExportRequest {
            ir: Cow::Borrowed(ir),
            partial: Some(request.clone()),
            metadata: metadata.clone(),
            force,
            release: self.released.is_some(),
        })
    }

    fn prune(&mut self, _keep: u64, _dry_run: bool) -> Result<PruneReport, StoreError> {
        Err(StoreError::Storage(format!(
            "a server prunes its store itself (`modelc server --keep N`), or `modelc prune --store URL` does ({})",
            self.client.url()
        )))
    }

    fn contents(&self, hashes: &[String]) -> Result<HashMap<String, Vec<u8>>, StoreError> {
        let found = self.client.contents(hashes).map_err(store_error)?;
        Ok(found.contents.into_iter().map(|(hash, text)| (hash, text.into_bytes())).collect())
    }

    fn record_deploy(&mut self, _record: &DeployRecord, _carryover: &Carryover) -> Result<u64, StoreError> {
        Err(self.not_through_a_server("recording a deploy"))
    }

    fn facts(&self) -> Result<Vec<modelc_store::Fact>, StoreError> {
        self.client.facts().map_err(store_error)
    }

    fn last_deploy(&self) -> Result<Option<DeployRecord>, StoreError> {
        Err(self.not_through_a_server("reading the last deploy"))
    }

    fn pending_refreshes(&self, _agents: &[String]) -> Result<Vec<String>, StoreError> {
        Err(self.not_through_a_server("reading a deploy's carryover"))
    }

    fn retry_counts(&self, _agents: &[String]) -> Result<Vec<(String, u32)>, StoreError> {
        Err(self.not_through_a_server("reading a deploy's carryover"))
    }

    fn deployed_purgeable(&self, _agents: &[String]) -> Result<Vec<Resource>, StoreError> {
        Err(self.not_through_a_server("reading a deploy's carryover"))
    }

    fn about(&self) -> Result<About, StoreError> {
        let versions = self.versions()?;
        Ok(About {
            backend: format!("modelc server {}", self.client.url()),
            layout: modelc_store::postgres::SCHEMA_VERSION,
            versions: versions.len() as u64,
            latest: versions.last().map(|v| v.version),
            bytes: 0,
        })
    }

    fn contents_written(&self, _after: Option<u64>, _upto: u64) -> Result<BTreeMap<String, Vec<u8>>, StoreError> {
        Err(self.not_through_a_server("copying a history"))
    }

    fn import(&mut self, _history: &mut dyn modelc_store::copy::History) -> Result<u64, StoreError> {
        Err(self.not_through_a_server("copying a history"))
    }
}
