//! Connecting to a PostgreSQL store by a libpq URL (`postgresql://user@host:port/dbname?…`).
//! The password is never needed on the command line: it comes from the URL if it has one,
//! else from `PGPASSWORD`, else from the password file (`PGPASSFILE`, or `~/.pgpass`), as libpq
//! reads them.

use std::str::FromStr;
use std::time::Duration;

use crate::StoreError;

/// How long a connection may take when the URL sets no `connect_timeout`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The connection settings of a store's URL, and its TLS settings (`super::tls`).
pub(crate) fn parse(url: &str) -> Result<(postgres::Config, super::tls::Settings), StoreError> {
    let (url, tls) = super::tls::split(url)?;
    let config = postgres::Config::from_str(&url)
        .map_err(|e| StoreError::Storage(format!("the store's URL does not parse: {}", super::describe(&e))))?;
    Ok((config, tls))
}

pub(crate) fn connect(url: &str) -> Result<postgres::Client, StoreError> {
    let (mut config, tls) = parse(url)?;
    if config.get_password().is_none()
        && let Some(password) = password_for(&config)
    {
        config.password(password);
    }
    let timeout = *config.get_connect_timeout().unwrap_or(&CONNECT_TIMEOUT);
    config.connect_timeout(timeout);
    if config.get_application_name().is_none() {
        config.application_name("modelc");
    }
    let connector = match tls.mode {
        super::tls::Mode::Disable => {
            config.ssl_mode(postgres::config::SslMode::Disable);
            None
        }
        mode => {
            let required = mode != super::tls::Mode::Prefer;
            config.ssl_mode(if required {
                postgres::config::SslMode::Require
            } else {
                postgres::config::SslMode::Prefer
            });
            Some(tokio_postgres_rustls::MakeRustlsConnect::new(super::tls::client_config(&tls)?))
        }
    };
    // The client bounds only the TCP connection by `connect_timeout`; libpq bounds the whole of
    // it, startup and authentication included, and so do we. A server that never answers
    // leaves the attempt's thread waiting on its socket until the server closes it.
    let (sender, result) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("store-connect".to_owned())
        .spawn(move || {
            let connected = match connector {
                Some(connector) => config.connect(connector),
                None => config.connect(postgres::NoTls),
            };
            let _ = sender.send(connected);
        })
        .map_err(|e| StoreError::Storage(format!("cannot connect to the PostgreSQL store: {e}")))?;
    match result.recv_timeout(timeout) {
        Ok(connected) => connected.map_err(|e| {
            StoreError::Storage(format!("cannot connect to the PostgreSQL store: {}", super::describe(&e)))
        }),
        Err(_) => Err(StoreError::Storage(format!(
            "cannot connect to the PostgreSQL store: timed out, with no answer within connect_timeout ({} s)",
            timeout.as_secs_f64()
        ))),
    }
}

/// The password libpq would use for `config`'s user, host, port and database.
fn password_for(config: &postgres::Config) -> Option<Vec<u8>> {
    if let Some(password) = std::env::var_os("PGPASSWORD") {
        return Some(password.into_encoded_bytes());
    }
    let file = match std::env::var_os("PGPASSFILE") {
        Some(file) => std::path::PathBuf::from(file),
        None => std::path::PathBuf::from(std::env::var_os("HOME")?).join(".pgpass"),
    };
    let text = std::fs::read_to_string(file).ok()?;
    let host = match config.get_hosts().first()? {
        postgres::config::Host::Tcp(host) => host.clone(),
        postgres::config::Host::Unix(path) => path.display().to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432).to_string();
    let user = config.get_user()?.to_owned();
    let dbname = config.get_dbname().unwrap_or(&user).to_owned();
    pgpass_lookup(&text, [&host, &port, &dbname, &user]).map(String::into_bytes)
}

/// The first line of a password file whose four fields match (`*` matches anything; `\:` and
/// `\\` are escapes), as libpq reads it.
fn pgpass_lookup(text: &str, wanted: [&str; 4]) -> Option<String> {
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_fields(line);
        if fields.len() < 5 {
            continue;
        }
        let matches = fields.iter().zip(wanted).all(|(field, want)| field == "*" || field == want);
        if matches {
            return Some(fields[4..].join(":"));
        }
    }
    None
}

fn split_fields(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => field.extend(chars.next()),
            ':' => fields.push(std::mem::take(&mut field)),
            other => field.push(other),
        }
    }
    fields.push(field);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_file_is_read_as_libpq_reads_it() {
        let text = "# comment\nother:5432:db:me:no\n127.0.0.1:*:db:me:se\\:cret\n*:*:*:*:fallback\n";
        assert_eq!(pgpass_lookup(text, ["127.0.0.1", "6000", "db", "me"]), Some("se:cret".to_owned()));
        assert_eq!(pgpass_lookup(text, ["elsewhere", "1", "x", "y"]), Some("fallback".to_owned()));
        assert_eq!(pgpass_lookup("a:b:c:d:e\n", ["a", "b", "c", "z"]), None);
    }
}
