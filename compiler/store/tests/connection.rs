//! The connection parameters of a PostgreSQL store's URL, each against a real server: host,
//! port, user, dbname, password, sslmode (disable, prefer, require, verify-ca, verify-full),
//! sslrootcert, application_name and connect_timeout. TLS runs against a server whose
//! certificate comes from a certificate authority the test makes: `verify-full` succeeds for
//! the name on the certificate and fails for another name or another authority. (The password
//! from `PGPASSWORD` or a password file, and `PGSSLMODE`/`PGSSLROOTCERT`, are read from the
//! environment: `compiler/cli/tests/process.rs` tests them on child processes.)
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::time::{Duration, Instant};

use modelc_store::{Access, Locator, Store, StoreError};
use modelc_test_postgres::certificates::Authority;
use modelc_test_postgres::{PASSWORD, Postgres, USER};

fn open(url: &str) -> Result<Box<dyn Store>, StoreError> {
    modelc_store::open(&Locator::parse(url)?, Access::Existing)
}

fn failure(url: &str) -> String {
    match open(url) {
        Ok(_) => panic!("{url} connected"),
        Err(error) => error.to_string(),
    }
}

/// Whether the connection of `application` is encrypted, as the server sees it.
fn encrypted(server: &Postgres, application: &str) -> bool {
    server
        .connect("postgres")
        .unwrap()
        .query_one(
            "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name = $1",
            &[&application],
        )
        .unwrap()
        .get(0)
}

struct Tls {
    server: Postgres,
    ca_file: tempfile::NamedTempFile,
    other_ca_file: tempfile::NamedTempFile,
}

fn tls_server() -> Option<Tls> {
    let authority = Authority::new("modelc test CA");
    let (certificate, key) = authority.server(&["127.0.0.1", "db.test"]);
    let server = Postgres::start_with_tls("the TLS connection test", &certificate, &key)?;
    server.create_database("store").unwrap();
    modelc_store::migrate(&server.url_with_password("store")).unwrap();
    let ca_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(ca_file.path(), authority.certificate()).unwrap();
    let other_ca_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(other_ca_file.path(), Authority::new("another CA").certificate()).unwrap();
    Some(Tls { server, ca_file, other_ca_file })
}

#[test]
fn verify_full_connects_to_the_name_on_the_certificate_and_to_no_other() {
    let Some(Tls { server, ca_file, other_ca_file }) = tls_server() else { return };
    let port = server.port();
    let url = |host: &str, query: &str| format!("postgresql://{USER}:{PASSWORD}@{host}:{port}/store?{query}");
    let ca = ca_file.path().display().to_string();

    let store =
        open(&url("127.0.0.1", &format!("sslmode=verify-full&sslrootcert={ca}&application_name=full"))).unwrap();
    assert!(store.versions().unwrap().is_empty());
    assert!(encrypted(&server, "full"), "verify-full speaks TLS");

    // `localhost` reaches the same server, but it is not the name on the certificate.
    let wrong_name = failure(&url("localhost", &format!("sslmode=verify-full&sslrootcert={ca}")));
    assert!(wrong_name.contains("not valid for name"), "{wrong_name}");
    // verify-ca checks the authority, not the name.
    let store = open(&url("localhost", &format!("sslmode=verify-ca&sslrootcert={ca}&application_name=ca"))).unwrap();
    assert!(encrypted(&server, "ca"));
    drop(store);
    // A certificate from another authority is refused by both.
    let other = other_ca_file.path().display();
    for mode in ["verify-full", "verify-ca"] {
        let refused = failure(&url("127.0.0.1", &format!("sslmode={mode}&sslrootcert={other}")));
        assert!(refused.contains("UnknownIssuer") || refused.contains("unknown issuer"), "{mode}: {refused}");
    }
    // verify-full without the authority's certificate says what is missing.
    let missing = failure(&url("127.0.0.1", "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem"));
    assert!(missing.contains("/nonexistent/ca.pem"), "{missing}");

    // require: encrypted, with the authority checked when a root certificate is named.
    let _require = open(&url("127.0.0.1", "sslmode=require&application_name=require")).unwrap();
    assert!(encrypted(&server, "require"));
    let refused = failure(&url("127.0.0.1", &format!("sslmode=require&sslrootcert={other}")));
    assert!(refused.contains("UnknownIssuer") || refused.contains("unknown issuer"), "{refused}");
    // prefer (the default) takes TLS when it is offered; disable does not.
    let _prefer = open(&url("127.0.0.1", "application_name=prefer")).unwrap();
    assert!(encrypted(&server, "prefer"));
    let _plain = open(&url("127.0.0.1", "sslmode=disable&application_name=plain")).unwrap();
    assert!(!encrypted(&server, "plain"));
}

#[test]
fn a_server_without_tls_is_refused_by_require_and_used_plainly_by_prefer() {
    let Some(server) = Postgres::start("the connection parameter test") else { return };
    server.create_database("store").unwrap();
    modelc_store::migrate(&server.url_with_password("store")).unwrap();
    let url = |query: &str| format!("{}?{query}", server.url_with_password("store"));
    let refused = failure(&url("sslmode=require"));
    assert!(refused.contains("cannot connect") && refused.contains("TLS"), "{refused}");
    let _store = open(&url("application_name=plain")).unwrap();
    assert!(!encrypted(&server, "plain"));
}

#[test]
fn host_port_user_dbname_and_application_name_are_those_of_the_url() {
    let Some(server) = Postgres::start("the connection parameter test") else { return };
    let port = server.port();
    for database in ["store", "other"] {
        server.create_database(database).unwrap();
        modelc_store::migrate(&server.url_with_password(database)).unwrap();
    }
    // dbname: each URL reaches its own database.
    let mut other = open(&format!("postgresql://{USER}:{PASSWORD}@127.0.0.1:{port}/other")).unwrap();
    let model = modelc_ir::Ir::new(Vec::new(), Vec::new());
    other.export_full(&model, &modelc_store::Metadata::default()).unwrap();
    assert_eq!(
        open(&format!("postgresql://{USER}:{PASSWORD}@127.0.0.1:{port}/other")).unwrap().versions().unwrap().len(),
        1
    );
    assert!(
        open(&format!("postgresql://{USER}:{PASSWORD}@127.0.0.1:{port}/store")).unwrap().versions().unwrap().is_empty()
    );
    // host by name, and the application name the server sees (modelc's own by default).
    let _named =
        open(&format!("postgresql://{USER}:{PASSWORD}@localhost:{port}/store?application_name=by-name")).unwrap();
    assert!(!encrypted(&server, "by-name"));
    let _default = open(&format!("postgresql://{USER}:{PASSWORD}@127.0.0.1:{port}/store")).unwrap();
    let applications: Vec<String> = server
        .connect("postgres")
        .unwrap()
        .query("SELECT application_name FROM pg_stat_activity WHERE datname = 'store'", &[])
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert!(applications.contains(&"modelc".to_owned()), "{applications:?}");
    // user and password: the server's answer names the cause.
    let stranger = failure(&format!("postgresql://stranger:{PASSWORD}@127.0.0.1:{port}/store"));
    assert!(stranger.contains("password authentication failed for user \"stranger\""), "{stranger}");
    let wrong = failure(&format!("postgresql://{USER}:wrong@127.0.0.1:{port}/store"));
    assert!(wrong.contains("password authentication failed"), "{wrong}");
    // port: nothing listens on port 1.
    let closed = failure(&format!("postgresql://{USER}:{PASSWORD}@127.0.0.1:1/store"));
    assert!(closed.contains("cannot connect") && closed.contains("refused"), "{closed}");
}

#[test]
fn connect_timeout_gives_up_on_a_server_that_never_answers() {
    // A socket that accepts connections (the kernel does, into its backlog) and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let started = Instant::now();
    let error = failure(&format!("postgresql://{USER}:{PASSWORD}@127.0.0.1:{port}/store?connect_timeout=1"));
    let waited = started.elapsed();
    assert!(error.contains("cannot connect") && error.contains("timed out"), "{error}");
    assert!(waited >= Duration::from_millis(900) && waited < Duration::from_secs(8), "gave up after {waited:?}");
    drop(silent);
}
