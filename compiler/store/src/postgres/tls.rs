//! TLS to a PostgreSQL store, through rustls, with libpq's `sslmode` and `sslrootcert` (from the
//! URL, else `PGSSLMODE` and `PGSSLROOTCERT`), which the `postgres` crate does not read itself:
//!
//! - `disable`: no TLS;
//! - `allow`, `prefer` (the default): TLS if the server offers it (the certificate unchecked),
//!   else plain;
//! - `require`: TLS or no connection; the certificate is checked against the root certificate
//!   if there is one (`sslrootcert`, or `~/.postgresql/root.crt`), as libpq does, else not;
//! - `verify-ca`: TLS, and the certificate must chain to the root certificate;
//! - `verify-full`: that, and it must be the certificate of the host the URL names.

use std::path::PathBuf;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};

use crate::StoreError;

/// What the connection asks of TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// The TLS settings of a store's URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Settings {
    pub mode: Mode,
    /// `sslrootcert`, if set.
    pub root_certificate: Option<PathBuf>,
}

/// Takes `sslmode` and `sslrootcert` out of `url`'s query (the `postgres` crate refuses
/// `verify-ca`, `verify-full` and `sslrootcert`); the URL without them, and the settings, with
/// `PGSSLMODE` and `PGSSLROOTCERT` where the URL sets none.
pub(crate) fn split(url: &str) -> Result<(String, Settings), StoreError> {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut kept = Vec::new();
    let (mut mode, mut root) = (None, None);
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "sslmode" => mode = Some(decode(value)?),
            "sslrootcert" => root = Some(decode(value)?),
            _ => kept.push(pair),
        }
    }
    let mode = mode.or_else(|| std::env::var("PGSSLMODE").ok()).unwrap_or_else(|| "prefer".to_owned());
    let mode = match mode.as_str() {
        "disable" => Mode::Disable,
        "allow" | "prefer" => Mode::Prefer,
        "require" => Mode::Require,
        "verify-ca" => Mode::VerifyCa,
        "verify-full" => Mode::VerifyFull,
        other => {
            return Err(StoreError::Storage(format!(
                "the store's URL does not parse: sslmode `{other}` is not one of disable, allow, prefer, require, verify-ca, verify-full"
            )));
        }
    };
    let root = root.or_else(|| std::env::var("PGSSLROOTCERT").ok()).filter(|r| !r.is_empty());
    if root.as_deref() == Some("system") {
        return Err(StoreError::Storage(
            "sslrootcert=system (the system's certificate authorities) is not supported: name the CA certificate's file"
                .to_owned(),
        ));
    }
    let url = if kept.is_empty() { base.to_owned() } else { format!("{base}?{}", kept.join("&")) };
    Ok((url, Settings { mode, root_certificate: root.map(PathBuf::from) }))
}

/// Percent-decoding, as URL query values are written.
fn decode(value: &str) -> Result<String, StoreError> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = value.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
                let byte = hex.ok_or_else(|| {
                    StoreError::Storage(format!("the store's URL does not parse: a bad escape in `{value}`"))
                })?;
                out.push(byte);
                i += 3;
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| StoreError::Storage("the store's URL does not parse: not UTF-8".to_owned()))
}

/// The rustls client configuration for `settings` (not `Disable`).
pub(crate) fn client_config(settings: &Settings) -> Result<rustls::ClientConfig, StoreError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| StoreError::Storage(format!("TLS cannot be set up: {e}")))?;
    let explicit = settings.root_certificate.clone();
    let default_root = std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".postgresql/root.crt"));
    let root = explicit.clone().or_else(|| default_root.filter(|path| path.is_file()));
    let verify = match (settings.mode, root) {
        (Mode::VerifyFull, Some(root)) => Some((root, true)),
        (Mode::VerifyCa, Some(root)) => Some((root, false)),
        (Mode::VerifyFull | Mode::VerifyCa, None) => {
            return Err(StoreError::Storage(
                "sslmode=verify-ca and verify-full need the certificate of the server's CA: set sslrootcert (or PGSSLROOTCERT), or put it in ~/.postgresql/root.crt".to_owned(),
            ));
        }
        // As libpq: `require` with a root certificate checks the chain; `prefer` checks nothing.
        (Mode::Require, Some(root)) => Some((root, false)),
        (Mode::Require | Mode::Prefer | Mode::Disable, _) => None,
    };
    let verifier: Arc<dyn ServerCertVerifier> = match verify {
        Some((root, host_name)) => {
            let roots = roots(&root)?;
            let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| StoreError::Storage(format!("TLS cannot be set up: {e}")))?;
            if host_name { webpki } else { Arc::new(ChainOnly(webpki)) }
        }
        None => Arc::new(Unverified(provider)),
    };
    Ok(builder.dangerous().with_custom_certificate_verifier(verifier).with_no_client_auth())
}

/// The certificates of the PEM file `path`.
fn roots(path: &std::path::Path) -> Result<rustls::RootCertStore, StoreError> {
    let failure =
        |why: String| StoreError::Storage(format!("cannot read the root certificate {}: {why}", path.display()));
    let mut roots = rustls::RootCertStore::empty();
    for certificate in CertificateDer::pem_file_iter(path).map_err(|e| failure(e.to_string()))? {
        roots.add(certificate.map_err(|e| failure(e.to_string()))?).map_err(|e| failure(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(failure("it holds no certificate".to_owned()));
    }
    Ok(roots)
}

/// `verify-ca`: the chain is checked, the host name is not.
#[derive(Debug)]
struct ChainOnly(Arc<rustls::client::WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `require` (and `prefer`) without a root certificate, as libpq: the traffic is encrypted, and
/// the handshake's signatures are checked, but not who signed the certificate.
#[derive(Debug)]
struct Unverified(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmode_and_sslrootcert_are_taken_out_of_the_url() {
        let (url, settings) =
            split("postgresql://me@db/x?application_name=a&sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem").unwrap();
        assert_eq!(url, "postgresql://me@db/x?application_name=a");
        assert_eq!(settings.mode, Mode::VerifyFull);
        assert_eq!(settings.root_certificate, Some(PathBuf::from("/etc/ca.pem")));
        let (url, settings) = split("postgresql://me@db/x?sslmode=disable").unwrap();
        assert_eq!((url.as_str(), settings.mode), ("postgresql://me@db/x", Mode::Disable));
        assert!(split("postgresql://me@db/x?sslmode=sometimes").is_err());
        assert!(split("postgresql://me@db/x?sslrootcert=system").is_err());
    }
}
