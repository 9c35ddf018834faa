//! What the store's tests share: small resources and IRs, a store in a temporary directory,
//! and a version's contents in a form easy to compare.
#![allow(dead_code, reason = "each test file uses some of these")]

use modelc_ir::{Ir, Resource, ResourceSet, ResourceState, Source};
use modelc_store::{Metadata, PartialRequest, SqliteStore, Store, StoreError};
use serde_json::json;

/// `R[internal,name=NAME]` in `set` (None: shared) with a `value` attribute.
pub(crate) fn resource(name: &str, set: Option<&str>, value: i64, requires: &[&str]) -> Resource {
    Resource {
        id: id(name),
        entity_type: "test::R".into(),
        agent: "internal".into(),
        attributes: [("name".to_owned(), json!(name)), ("value".to_owned(), json!(value))].into_iter().collect(),
        requires: requires.iter().map(|r| id(r)).collect(),
        send_event: false,
        receive_events: true,
        resource_set: set.map(str::to_owned),
        state: ResourceState::Available,
        source: Source { entity: "test::R".into(), file: "main.cf".into(), line: 1 }.into(),
        meta: Default::default(),
        notify: Vec::new(),
    }
}

pub(crate) fn id(name: &str) -> String {
    format!("test::R[internal,name={name}]")
}

/// An IR of `resources`, with their sets plus the `empty` ones.
pub(crate) fn ir(resources: Vec<Resource>, empty: &[&str]) -> Ir {
    let mut sets: Vec<ResourceSet> = Vec::new();
    for r in &resources {
        let Some(name) = &r.resource_set else { continue };
        match sets.iter_mut().find(|s| &s.name == name) {
            Some(set) => set.resources.push(r.id.clone()),
            None => sets.push(ResourceSet { name: name.clone(), resources: vec![r.id.clone()], source: source() }),
        }
    }
    sets.extend(empty.iter().map(|name| ResourceSet {
        name: (*name).to_owned(),
        resources: Vec::new(),
        source: source(),
    }));
    Ir::new(resources, sets)
}

pub(crate) fn source() -> Source {
    Source { entity: "std::ResourceSet".into(), file: "main.cf".into(), line: 2 }
}

/// An embedded store in a new temporary directory (`store.sqlite`).
pub(crate) fn embedded_store() -> (SqliteStore, tempdir::Dir) {
    let dir = tempdir::Dir::new();
    (SqliteStore::open(&dir.path.join("store.sqlite")).unwrap(), dir)
}

#[allow(unused_imports, reason = "the store suites use it; the other test files do not")]
pub(crate) use backends::store;

pub(crate) fn meta(message: &str) -> Metadata {
    Metadata { created: "2026-11-24T00:00:00Z".into(), source_hash: "0".into(), message: message.into() }
}

pub(crate) fn partial(store: &mut dyn Store, resources: Vec<Resource>) -> Result<u64, StoreError> {
    store.export_partial(&ir(resources, &[]), &PartialRequest::default(), &meta("partial")).map(|v| v.version)
}

/// (id, set, value, requires) of every resource of a version, sorted by id.
pub(crate) fn contents(store: &dyn Store, version: u64) -> Vec<(String, Option<String>, i64, Vec<String>)> {
    summarise(&store.snapshot(Some(version)).unwrap().resources)
}

/// (id, set, value, requires) of resources, sorted by id.
pub(crate) fn summarise(resources: &[Resource]) -> Vec<(String, Option<String>, i64, Vec<String>)> {
    let short = |id: &str| id.trim_start_matches("test::R[internal,name=").trim_end_matches(']').to_owned();
    let mut rows: Vec<_> = resources
        .iter()
        .map(|r| {
            let value = r.attributes["value"].as_i64().unwrap();
            (short(&r.id), r.resource_set.clone(), value, r.requires.iter().map(|r| short(r)).collect())
        })
        .collect();
    rows.sort();
    rows
}

pub(crate) fn row(
    name: &str,
    set: Option<&str>,
    value: i64,
    requires: &[&str],
) -> (String, Option<String>, i64, Vec<String>) {
    (name.to_owned(), set.map(str::to_owned), value, requires.iter().map(|r| (*r).to_owned()).collect())
}

/// One store suite, two backends: each test of [`on_both_backends!`] runs on the embedded
/// store and on a PostgreSQL store (a database of its own on a server the test binary's tests
/// share, stopped when the last of them ends; skipped where there is no PostgreSQL, except in
/// CI).
pub(crate) mod backends {
    use std::cell::Cell;
    use std::sync::Mutex;

    use modelc_store::{Locator, PgStore, SqliteStore, Store};
    use modelc_test_postgres::Postgres;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum Backend {
        Embedded,
        Postgres,
    }

    thread_local! {
        static BACKEND: Cell<Backend> = const { Cell::new(Backend::Embedded) };
    }

    /// Runs `test` with [`store`] giving stores of `backend`; nothing where that backend cannot
    /// run here.
    pub(crate) fn on(backend: Backend, test: impl FnOnce()) {
        let _server = match backend {
            Backend::Embedded => None,
            Backend::Postgres => match ServerUse::begin() {
                Some(server) => Some(server),
                None => return,
            },
        };
        BACKEND.with(|b| b.set(backend));
        test();
    }

    /// The server, how many tests are using it, and how many databases it has been given.
    static SERVER: Mutex<(Option<Postgres>, usize, usize)> = Mutex::new((None, 0, 0));

    /// A test using the shared server: the last one to end stops it (even when it panics), so
    /// no server outlives the tests.
    struct ServerUse;

    impl ServerUse {
        fn begin() -> Option<ServerUse> {
            let mut server = SERVER.lock().unwrap_or_else(|e| e.into_inner());
            if server.0.is_none() {
                server.0 = Some(Postgres::start("the store suite on PostgreSQL")?);
            }
            server.1 += 1;
            Some(ServerUse)
        }
    }

    impl Drop for ServerUse {
        fn drop(&mut self) {
            let mut server = SERVER.lock().unwrap_or_else(|e| e.into_inner());
            server.1 -= 1;
            if server.1 == 0 {
                server.0 = None;
            }
        }
    }

    /// A store of the test's backend, with what the tests look at beneath the interface.
    pub(crate) struct TestStore {
        store: Box<dyn Store>,
        place: Place,
    }

    enum Place {
        Embedded(super::tempdir::Dir),
        Postgres { url: String, admin: Box<postgres::Client> },
    }

    /// A new, empty store of the backend the test runs on.
    pub(crate) fn store() -> TestStore {
        match BACKEND.with(Cell::get) {
            Backend::Embedded => {
                let (store, dir) = super::embedded_store();
                TestStore { store: Box::new(store), place: Place::Embedded(dir) }
            }
            Backend::Postgres => {
                let mut server = SERVER.lock().unwrap_or_else(|e| e.into_inner());
                server.2 += 1;
                let database = format!("suite{}", server.2);
                let postgres = server.0.as_ref().expect("`on` keeps the server running");
                postgres.create_database(&database).unwrap();
                let url = postgres.url_with_password(&database);
                let admin = Box::new(postgres.connect(&database).unwrap());
                drop(server);
                modelc_store::migrate(&url).unwrap();
                let store = PgStore::open(&url).unwrap();
                TestStore { store: Box::new(store), place: Place::Postgres { url, admin } }
            }
        }
    }

    impl TestStore {
        /// Where it is.
        pub(crate) fn locator(&self) -> Locator {
            match &self.place {
                Place::Embedded(dir) => Locator::Embedded(dir.path.join("store.sqlite")),
                Place::Postgres { url, .. } => Locator::Postgres(url.clone()),
            }
        }

        /// The number of rows of `table` (`resources`, `contents`, …), open or closed.
        pub(crate) fn count(&mut self, table: &str) -> i64 {
            self.query_one(&format!("SELECT COUNT(*) FROM {table}"))
        }

        /// One number a query of the store's tables gives (the same SQL on both backends).
        pub(crate) fn query_one(&mut self, sql: &str) -> i64 {
            match &mut self.place {
                Place::Embedded(dir) => {
                    let db = rusqlite::Connection::open(dir.path.join("store.sqlite")).unwrap();
                    db.query_row(sql, [], |r| r.get(0)).unwrap()
                }
                Place::Postgres { admin, .. } => admin.query_one(sql, &[]).unwrap().get::<_, i64>(0),
            }
        }

        /// The strings a query of the store's tables gives, in its order.
        pub(crate) fn query_strings(&mut self, sql: &str) -> Vec<String> {
            match &mut self.place {
                Place::Embedded(dir) => {
                    let db = rusqlite::Connection::open(dir.path.join("store.sqlite")).unwrap();
                    let mut query = db.prepare(sql).unwrap();
                    query.query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
                }
                Place::Postgres { admin, .. } => admin.query(sql, &[]).unwrap().iter().map(|r| r.get(0)).collect(),
            }
        }

        /// The embedded store's database file.
        pub(crate) fn file(&self) -> Option<std::path::PathBuf> {
            match &self.place {
                Place::Embedded(dir) => Some(dir.path.join("store.sqlite")),
                Place::Postgres { .. } => None,
            }
        }

        /// The embedded store's file, for the tests that look at it.
        pub(crate) fn sqlite(&self) -> Option<SqliteStore> {
            match &self.place {
                Place::Embedded(dir) => Some(SqliteStore::open(&dir.path.join("store.sqlite")).unwrap()),
                Place::Postgres { .. } => None,
            }
        }
    }

    impl std::ops::Deref for TestStore {
        type Target = dyn Store;
        fn deref(&self) -> &(dyn Store + 'static) {
            self.store.as_ref()
        }
    }

    impl std::ops::DerefMut for TestStore {
        fn deref_mut(&mut self) -> &mut (dyn Store + 'static) {
            self.store.as_mut()
        }
    }
}

/// Tests run on both backends: `fn name() { … }` becomes a module `name` with the tests
/// `embedded` and `postgres`, each calling [`store`] for stores of its backend.
#[macro_export]
macro_rules! on_both_backends {
    ($($(#[doc = $doc:literal])* fn $name:ident() $body:block)*) => {$(
        $(#[doc = $doc])*
        mod $name {
            #[allow(unused_imports, reason = "each test uses some")]
            use super::*;

            fn body() $body

            #[test]
            fn embedded() {
                $crate::support::backends::on($crate::support::backends::Backend::Embedded, body);
            }

            #[test]
            fn postgres() {
                $crate::support::backends::on($crate::support::backends::Backend::Postgres, body);
            }
        }
    )*};
}

/// A directory removed when dropped.
pub(crate) mod tempdir {
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};

    pub(crate) struct Dir {
        pub(crate) path: PathBuf,
    }

    impl Dir {
        pub(crate) fn new() -> Dir {
            static COUNTER: AtomicUsize = AtomicUsize::new(0);
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = std::env::temp_dir().join(format!("modelc-store-test-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&path);
            std::fs::create_dir_all(&path).unwrap();
            Dir { path }
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}
