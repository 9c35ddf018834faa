//! The PostgreSQL store's layout, frozen: what `migrate` creates is compared with the fixture of
//! its version (`fixtures/postgres-layout-<N>.txt`), so that a change to the layout cannot go
//! unnoticed, and comes with a new version and its upgrade (`MODELC_BLESS_LAYOUT=1` writes the
//! fixture of the current version). A newer layout is refused, untouched.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

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
