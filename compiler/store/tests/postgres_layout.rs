//! The PostgreSQL store's layout, frozen: what `migrate` creates is compared with the fixture of
//! its version (`fixtures/postgres-layout-<N>.txt`), so that a change to the layout cannot go
//! unnoticed, and comes with a new version and its upgrade (`MODELC_BLESS_LAYOUT=1` writes the
//! fixture of the current version). A store of the previous layout is upgraded by `migrate` and
//! reads exactly as before; a newer layout is refused, untouched.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

mod support;

use modelc_store::{Migrated, Store};
use support::{ir, meta, resource};

use modelc_test_postgres::{PASSWORD, Postgres, USER};

fn url(server: &Postgres, database: &str) -> String {
    format!("postgresql://{USER}:{PASSWORD}@127.0.0.1:{}/{database}", server.port())
}

/// The tables with their columns, the indexes and `meta`, as text.
fn describe(client: &mut postgres::Client) -> String {
    let mut text = String::new();
    for row in client
        .query(
            "SELECT table_name::text, column_name::text, data_type::text, is_nullable::text, COALESCE(column_default, '')
             FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position",
            &[],
        )
        .unwrap()
    {
        let (table, column, kind, nullable, default): (String, String, String, String, String) =
            (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4));
        let nullable = if nullable == "YES" { "" } else { " not null" };
        let default = if default.is_empty() { String::new() } else { format!(" default {default}") };
        text.push_str(&format!("column {table}.{column} {kind}{nullable}{default}\n"));
    }
    for row in client
        .query("SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname", &[])
        .unwrap()
    {
        let definition: String = row.get(0);
        text.push_str(&format!("index {}\n", definition.replace("public.", "")));
    }
    for row in client.query("SELECT key, value FROM meta ORDER BY key", &[]).unwrap() {
        text.push_str(&format!("meta {} = {}\n", row.get::<_, String>(0), row.get::<_, i64>(1)));
    }
    text
}

fn fixture(version: i64) -> String {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/postgres-layout-{version}.txt"));
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn the_first_layout_is_still_made_as_it_was_frozen() {
    let Some(server) = Postgres::start("the PostgreSQL layout test") else { return };
    server.create_database("first").unwrap();
    assert_eq!(modelc_store::postgres::migrate_to(&url(&server, "first"), 1).unwrap(), Migrated::Created(1));
    assert_eq!(describe(&mut server.connect("first").unwrap()), fixture(1));
}

/// Everything a reader sees of a store: versions, every version, the changes between each two
/// neighbours, and the file contents the versions name.
fn everything(store: &dyn Store) -> String {
    let versions = store.versions().unwrap();
    let mut text = format!("{versions:?}\n");
    let mut hashes = Vec::new();
    for info in &versions {
        let resources = store.snapshot(Some(info.version)).unwrap().resources;
        hashes.extend(resources.iter().filter_map(|r| r.attributes.get("hash")?.as_str().map(str::to_owned)));
        text.push_str(&serde_json::to_string(&resources).unwrap());
    }
    for pair in versions.windows(2) {
        let changes = store.changes(pair[0].version, pair[1].version).unwrap();
        text.push_str(&serde_json::to_string(&(changes.before, changes.after)).unwrap());
    }
    hashes.sort();
    hashes.dedup();
    let contents: std::collections::BTreeMap<_, _> = store.contents(&hashes).unwrap().into_iter().collect();
    text.push_str(&format!("{contents:?}"));
    text
}

/// `name` naming file content `text` by its hash, as `fs::File` does.
fn file(name: &str, text: &str) -> (modelc_ir::Resource, String) {
    let hash = format!("{:040x}", text.bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b))));
    let mut r = resource(name, Some("files"), 0, &[]);
    r.attributes.insert("hash".to_owned(), serde_json::json!(hash));
    (r, hash)
}

#[test]
fn a_store_of_the_previous_layout_is_upgraded_by_migrate_and_reads_exactly_as_before() {
    let Some(server) = Postgres::start("the PostgreSQL layout test") else { return };
    server.create_database("old").unwrap();
    let url = url(&server, "old");
    // A history with file contents, full and partial exports.
    modelc_store::migrate(&url).unwrap();
    let mut store = modelc_store::PgStore::open(&url).unwrap();
    for step in 0..4 {
        let (a, hash) = file("a", &format!("text {step}"));
        let mut model = ir(vec![a, resource("b", Some("other"), step, &[]), resource("shared", None, 0, &[])], &[]);
        model.files.insert(hash, format!("text {step}"));
        if step % 2 == 0 {
            store.export_full(&model, &meta("full")).unwrap();
        } else {
            store.export_partial(&model, &modelc_store::PartialRequest::default(), &meta("partial")).unwrap();
        }
    }
    let before = everything(&store);
    drop(store);
    // Laid out as the previous layout had it: what the previous modelc leaves.
    let mut admin = server.connect("old").unwrap();
    admin
        .batch_execute(
            "DROP INDEX rows_by_content; ALTER TABLE resources DROP COLUMN content;
             DROP TABLE releases, agent_releases, tokens, agents, actions, resource_states, facts;
             ALTER TABLE resources DROP COLUMN agent;
             UPDATE meta SET value = 1 WHERE key = 'schema'; DELETE FROM schema_history WHERE version > 1",
        )
        .unwrap();
    assert_eq!(describe(&mut admin), fixture(1), "the store is laid out as layout 1 was frozen");

    let refused = modelc_store::PgStore::open(&url).err().unwrap();
    let latest = modelc_store::postgres::SCHEMA_VERSION;
    let upgrade = format!("run `modelc store migrate --store URL` to upgrade it to {latest}");
    assert!(refused.to_string().contains(&upgrade), "{refused}");
    assert_eq!(modelc_store::migrate(&url).unwrap(), Migrated::Upgraded(1, latest));
    assert_eq!(
        describe(&mut admin),
        fixture(modelc_store::postgres::SCHEMA_VERSION),
        "an upgraded store is laid out as a new one"
    );
    let history: i64 = admin.query_one("SELECT COUNT(*) FROM schema_history", &[]).unwrap().get(0);
    assert_eq!(history, modelc_store::postgres::SCHEMA_VERSION, "each layout the store had is recorded");
    let mut store = modelc_store::PgStore::open(&url).unwrap();
    assert_eq!(everything(&store), before, "the upgraded store reads exactly as before");
    // Each row's agent was carried into its column: an agent reads its own rows.
    let own = store.agent_resources(&["internal".to_owned()], 4).unwrap();
    assert_eq!(own, store.snapshot(Some(4)).unwrap().resources);
    // What rows name was carried into the new column: prune keeps exactly the contents the kept
    // version names.
    let report = store.prune(1, false).unwrap();
    assert_eq!(report.contents, 3, "the texts of steps 0, 1 and 2");
    let latest = store.snapshot(None).unwrap().resources;
    let named: Vec<String> =
        latest.iter().filter_map(|r| r.attributes.get("hash")?.as_str().map(str::to_owned)).collect();
    assert_eq!(store.contents(&named).unwrap().len(), 1);
    // And the upgraded store takes exports.
    let (a, hash) = file("a", "after");
    let mut model = ir(vec![a], &[]);
    model.files.insert(hash, "after".to_owned());
    assert_eq!(store.export_full(&model, &meta("after")).unwrap().version, 5);
}

#[test]
fn the_layout_is_the_frozen_one_of_its_version() {
    let Some(server) = Postgres::start("the PostgreSQL layout test") else { return };
    server.create_database("layout").unwrap();
    assert_eq!(
        modelc_store::migrate(&url(&server, "layout")).unwrap(),
        modelc_store::Migrated::Created(modelc_store::postgres::SCHEMA_VERSION)
    );
    let described = describe(&mut server.connect("layout").unwrap());
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/fixtures/postgres-layout-{}.txt", modelc_store::postgres::SCHEMA_VERSION));
    if std::env::var_os("MODELC_BLESS_LAYOUT").is_some() {
        std::fs::write(&fixture, &described).unwrap();
    }
    let frozen = std::fs::read_to_string(&fixture).unwrap_or_default();
    assert_eq!(
        described, frozen,
        "the layout changed: give it a new version with its upgrade in `store migrate`, and freeze it \
         (MODELC_BLESS_LAYOUT=1)"
    );
}

#[test]
fn a_newer_layout_is_refused_untouched() {
    let Some(server) = Postgres::start("the PostgreSQL layout test") else { return };
    server.create_database("newer").unwrap();
    let url = url(&server, "newer");
    modelc_store::migrate(&url).unwrap();
    let mut admin = server.connect("newer").unwrap();
    admin.batch_execute("UPDATE meta SET value = value + 1 WHERE key = 'schema'").unwrap();
    let before = describe(&mut admin);
    let newer = modelc_store::postgres::SCHEMA_VERSION + 1;
    for error in [modelc_store::PgStore::open(&url).err().unwrap(), modelc_store::migrate(&url).unwrap_err()] {
        assert!(error.to_string().contains(&format!("layout version {newer}, newer than this modelc's")), "{error}");
    }
    assert_eq!(describe(&mut admin), before, "nothing was changed");
}
