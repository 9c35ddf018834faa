//! Listening: binds the address, loads the TLS certificate, accepts connections and serves each
//! with the API's router (HTTP/1.1), until the shutdown future resolves.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::events::{self, Events};
use crate::pool::Pool;
use crate::{Config, TlsFiles};

/// What every handler shares.
pub(crate) struct App {
    pub(crate) pool: Arc<Pool>,
    pub(crate) events: Events,
    pub(crate) config: Config,
}

/// Serves `config` until `shutdown` resolves. Prints `modelc server listening on URL` on stderr
/// once listening (with the port chosen, when the configuration says 0).
pub async fn serve(config: Config, shutdown: impl Future<Output = ()>) -> Result<(), String> {
    config.check()?;
    let tls = config.tls.as_ref().map(acceptor).transpose()?;
    let listener =
        TcpListener::bind(config.listen).await.map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    let address = listener.local_addr().map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    let stop = Arc::new(AtomicBool::new(false));
    let state = Arc::new(App {
        pool: Pool::new(config.store.clone(), config.connections),
        events: events::start(config.store.clone(), Arc::clone(&stop)),
        config,
    });
    // Said at once: a store that is not laid out, or not there.
    if let Err(error) = state.pool.run(|store| modelc_store::Store::about(store)).await {
        eprintln!("warning: the store cannot be used yet ({}): calls answer so until it can", error.message());
    }
    let pruning = crate::retention::start(Arc::clone(&state));
    let app = crate::routes::router(Arc::clone(&state));
    let scheme = if tls.is_some() { "https" } else { "http" };
    eprintln!("modelc server listening on {scheme}://{address}");
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of file descriptors, say: the next accept may work.
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let tls = tls.clone();
        tokio::spawn(async move {
            let http = hyper::server::conn::http1::Builder::new();
            match tls {
                Some(acceptor) => {
                    if let Ok(stream) = acceptor.accept(stream).await {
                        let _ = http.serve_connection(TokioIo::new(stream), service).await;
                    }
                }
                None => {
                    let _ = http.serve_connection(TokioIo::new(stream), service).await;
                }
            }
        });
    }
    stop.store(true, Ordering::SeqCst);
    if let Some(pruning) = pruning {
        pruning.abort();
    }
    eprintln!("modelc server stopped");
    Ok(())
}

/// The TLS side of `--tls-cert` and `--tls-key` (PEM), with the store's rustls provider.
fn acceptor(files: &TlsFiles) -> Result<TlsAcceptor, String> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&files.cert)
        .and_then(|certs| certs.collect::<Result<_, _>>())
        .map_err(|e| format!("cannot read the certificate {}: {e}", files.cert.display()))?;
    if certs.is_empty() {
        return Err(format!("{} holds no certificate", files.cert.display()));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| format!("cannot read the private key {}: {e}", files.key.display()))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("the certificate and key do not make a TLS identity: {e}"))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}
