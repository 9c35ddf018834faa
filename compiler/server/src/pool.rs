//! Database connections for the handlers: the store is synchronous, so each call runs on
//! tokio's blocking pool with a connection taken from here and put back after. A connection
//! found closed is dropped (the next call opens a new one), and a call that cannot get one, or
//! lost its connection, is 503: the database is away, and the client should come back.

use std::sync::{Arc, Mutex};

use modelc_store::{PgStore, StoreError};
use tokio::sync::Semaphore;

use crate::error::{ApiError, ApiResult};

pub(crate) struct Pool {
    url: String,
    idle: Mutex<Vec<PgStore>>,
    /// Connections in use at most.
    permits: Semaphore,
}

impl Pool {
    pub(crate) fn new(url: String, size: usize) -> Arc<Pool> {
        Arc::new(Pool { url, idle: Mutex::new(Vec::new()), permits: Semaphore::new(size.max(1)) })
    }

    /// Runs `f` with a connection, off the async threads.
    pub(crate) async fn run<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&mut PgStore) -> Result<T, StoreError> + Send + 'static,
    ) -> ApiResult<T> {
        let _permit = self.permits.acquire().await.map_err(|_| ApiError::internal("the server is stopping"))?;
        let pool = Arc::clone(self);
        tokio::task::spawn_blocking(move || pool.run_blocking(f))
            .await
            .map_err(|e| ApiError::internal(format!("a store call failed: {e}")))?
    }

    fn run_blocking<T>(&self, f: impl FnOnce(&mut PgStore) -> Result<T, StoreError>) -> ApiResult<T> {
        let idle = self.idle.lock().map(|mut idle| idle.pop()).unwrap_or(None);
        let mut store = match idle {
            Some(store) => store,
            None => PgStore::open(&self.url).map_err(|e| match e {
                // Not laid out, or another layout: a fault of the setup, not of the network.
                StoreError::Storage(ref message)
                    if message.contains("layout") || message.contains("not a modelc store") =>
                {
                    ApiError::internal(e.to_string())
                }
                other => ApiError::unavailable(other),
            })?,
        };
        let result = f(&mut store);
        if store.is_closed() {
            return result.map_err(ApiError::unavailable);
        }
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(store);
        }
        result.map_err(ApiError::from_store)
    }
}
