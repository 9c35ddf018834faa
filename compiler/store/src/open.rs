//! Opening a store from where it is (`--store`, `MODELC_STORE`): the one place that knows the
//! backends. Callers hold a `Box<dyn Store>`, and nothing of SQLite.

use std::path::PathBuf;

use modelc_ir::Ir;

use crate::{PartialRequest, Store, StoreError};

/// Where a store is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Locator {
    /// The embedded store: one SQLite file.
    Embedded(PathBuf),
    /// A PostgreSQL database, by its libpq URL (`postgresql://user@host:port/dbname`).
    Postgres(String),
}

impl Locator {
    /// A store as `--store` and `MODELC_STORE` name it: a `postgresql://` (or `postgres://`)
    /// URL is a PostgreSQL database, anything else the path of the embedded store.
    pub fn parse(text: &str) -> Result<Locator, StoreError> {
        if let Some((scheme, rest)) = text.split_once("://")
            && (scheme.eq_ignore_ascii_case("postgresql") || scheme.eq_ignore_ascii_case("postgres"))
        {
            // The scheme in the case libpq reads; the URL checked now, so a bad one fails before
            // anything is compiled.
            let url = format!("{}://{rest}", scheme.to_ascii_lowercase());
            crate::postgres::parse(&url)?;
            return Ok(Locator::Postgres(url));
        }
        if text.is_empty() {
            return Err(StoreError::Storage("an empty store location".to_owned()));
        }
        Ok(Locator::Embedded(PathBuf::from(text)))
    }

    /// The embedded store's file, when the store is one: others must not be able to read it.
    pub fn file(&self) -> Option<&std::path::Path> {
        match self {
            Locator::Embedded(path) => Some(path),
            Locator::Postgres(_) => None,
        }
    }

    /// How messages name the store.
    pub fn describe(&self) -> String {
        match self {
            Locator::Embedded(path) => path.display().to_string(),
            Locator::Postgres(url) => without_password(url),
        }
    }
}

impl std::fmt::Display for Locator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// What a command does with the store it opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads it: nothing is created, migrated or written. A store that is not there is
    /// [`StoreError::NotFound`].
    Read,
    /// Reads and writes a store that is there (deploys read it, `prune` writes it). A store that
    /// is not there is [`StoreError::NotFound`].
    Existing,
    /// Reads and writes it, created empty when it is not there (a deploy of a fresh compile
    /// records its run).
    Create,
    /// A partial export: a store that is not there has no version to build on (`Rule::NoBase`).
    Partial,
    /// A full export: a store that is not there is created by the export, whole, and not at all
    /// when the export is refused.
    Full,
}

/// Opens the store at `locator` for `access`.
pub fn open(locator: &Locator, access: Access) -> Result<Box<dyn Store>, StoreError> {
    match locator {
        Locator::Embedded(path) => crate::sqlite::open(path, access),
        // A server store is laid out by `modelc store migrate`, never by another command.
        Locator::Postgres(url) => Ok(Box::new(crate::postgres::PgStore::open(url)?)),
    }
}

/// What exporting `ir` into the store at `locator` would change, with the store opened to read
/// and never created: without a store, a full export would add everything, and a partial one
/// has no version to build on.
pub fn plan(locator: &Locator, ir: &Ir, partial: Option<&PartialRequest>) -> Result<crate::plan::Plan, StoreError> {
    match (open(locator, Access::Read), partial) {
        (Ok(store), _) => store.plan(ir, partial),
        (Err(StoreError::NotFound(_)), None) => crate::plan::plan_full(None, ir),
        (Err(StoreError::NotFound(_)), Some(_)) => Err(crate::checks::no_base()),
        (Err(error), _) => Err(error),
    }
}

/// A store's current rows, read ahead of a full export (on another thread while the model
/// compiles): [`Store::export_full_with`] uses them only if the store has not changed since.
pub struct Prefetched(pub(crate) crate::sqlite::Prefetched);

/// Reads the current rows of the store at `locator` ahead of a full export; `None` when there is
/// no store (or it cannot be read: the export then reads them itself).
pub fn prefetch(locator: &Locator) -> Option<Prefetched> {
    match locator {
        Locator::Embedded(path) => crate::sqlite::Prefetched::read(path).map(Prefetched),
        Locator::Postgres(_) => None,
    }
}

/// How `deploy --watch` learns that a store may have a new version: the files to watch (an
/// embedded store's database and its write-ahead log), or, for a server store, a listener that
/// wakes it on each version committed (kept in here: dropping the `Watch` stops it).
pub struct Watch {
    pub files: Vec<PathBuf>,
    _listener: Option<crate::postgres::Listener>,
}

/// Starts watching the store at `locator`. `wake` is called (from another thread) for a server
/// store's new versions; it returns false when no one needs waking any more.
pub fn watch(locator: &Locator, wake: impl Fn() -> bool + Send + 'static) -> Result<Watch, StoreError> {
    match locator {
        Locator::Embedded(path) => {
            let mut wal = path.clone().into_os_string();
            wal.push("-wal");
            Ok(Watch { files: vec![path.clone(), PathBuf::from(wal)], _listener: None })
        }
        Locator::Postgres(url) => {
            Ok(Watch { files: Vec::new(), _listener: Some(crate::postgres::Listener::start(url, wake)?) })
        }
    }
}

/// A URL as messages show it: a password in it is masked.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((credentials, host)) if credentials.contains(':') => {
            let user = credentials.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}{tail}")
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_a_url_is_not_shown() {
        assert_eq!(without_password("postgresql://me:secret@db:5432/x?a=b"), "postgresql://me:***@db:5432/x?a=b");
        assert_eq!(without_password("postgresql://me@db/x"), "postgresql://me@db/x");
        assert_eq!(Locator::parse("postgres://u:p@h/d").unwrap().describe(), "postgres://u:***@h/d");
        assert!(Locator::parse("postgresql://h:notaport/d").is_err());
        assert_eq!(Locator::parse("store.sqlite").unwrap(), Locator::Embedded(PathBuf::from("store.sqlite")));
    }
}
