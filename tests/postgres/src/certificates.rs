//! Certificates for TLS tests: a certificate authority made by the test, and server
//! certificates it signs for the names given.

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};

/// A certificate authority of the test's own.
pub struct Authority {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl Authority {
    /// A new authority named `name`.
    pub fn new(name: &str) -> Authority {
        let mut params = CertificateParams::default();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages =
            vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
        let key = KeyPair::generate().expect("a key for the test authority");
        Authority { issuer: CertifiedIssuer::self_signed(params, key).expect("the test authority's certificate") }
    }

    /// Its certificate (PEM): what a client trusts.
    pub fn certificate(&self) -> String {
        self.issuer.pem()
    }

    /// A server certificate for `names` (host names or IP addresses), signed by this authority:
    /// (certificate, key), both PEM.
    pub fn server(&self, names: &[&str]) -> (String, String) {
        let mut params =
            CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>()).expect("server names");
        params.distinguished_name.push(DnType::CommonName, names.first().copied().unwrap_or("server"));
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        let key = KeyPair::generate().expect("a key for the test server");
        let certificate = params.signed_by(&key, &self.issuer).expect("the test server's certificate");
        (certificate.pem(), key.serialize_pem())
    }
}
