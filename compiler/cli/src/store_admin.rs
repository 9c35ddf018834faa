//! `modelc store migrate`, `store info` and `store copy`: a store as a whole, whatever its
//! backend.

use modelc_store::{Access, Locator};

use crate::export::{store_failure, store_locator};
use crate::{EXIT_OK, Format, Io};

/// `modelc store migrate`: lays out (or upgrades) a PostgreSQL store; the embedded store lays
/// itself out when it is first written.
pub(crate) fn migrate(store: Option<&Locator>, format: Format, color: bool, io: &mut Io<'_>) -> u8 {
    let store = store_locator(store, None, &io.cwd);
    let said = match &store {
        Locator::Postgres(url) => match modelc_store::migrate(url) {
            Ok(modelc_store::Migrated::Created(layout)) => {
                format!("laid out {store} as a store (layout version {layout})")
            }
            Ok(modelc_store::Migrated::Upgraded(from, to)) => {
                format!("upgraded {store} from layout version {from} to {to}")
            }
            Ok(modelc_store::Migrated::Current(layout)) => format!("{store} already has layout version {layout}"),
            Err(error) => return store_failure(io, format, color, &error, &store),
        },
        Locator::Embedded(_) => match modelc_store::open(&store, Access::Create).and_then(|s| s.about()) {
            Ok(about) => format!("{store} has layout version {} (the embedded store migrates itself)", about.layout),
            Err(error) => return store_failure(io, format, color, &error, &store),
        },
    };
    if format.json_diagnostics() {
        let _ = writeln!(io.stdout, "{}", serde_json::json!({ "store": store.describe(), "done": said }));
    } else {
        let _ = writeln!(io.stdout, "{said}");
    }
    EXIT_OK
}

/// `modelc store info`.
pub(crate) fn info(store: Option<&Locator>, format: Format, color: bool, io: &mut Io<'_>) -> u8 {
    let store = store_locator(store, None, &io.cwd);
    let about = match modelc_store::open(&store, Access::Read).and_then(|s| s.about()) {
        Ok(about) => about,
        Err(error) => return store_failure(io, format, color, &error, &store),
    };
    if format.json_diagnostics() {
        let mut value = serde_json::to_value(&about).unwrap_or_default();
        value["store"] = serde_json::Value::String(store.describe());
        let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(&value).unwrap_or_default());
        return EXIT_OK;
    }
    let latest = about.latest.map_or_else(|| "none".to_owned(), |v| v.to_string());
    let _ = writeln!(io.stdout, "store:    {store}");
    let _ = writeln!(io.stdout, "backend:  {}", about.backend);
    let _ = writeln!(io.stdout, "layout:   version {}", about.layout);
    let _ = writeln!(io.stdout, "versions: {} (latest: {latest})", about.versions);
    let _ = writeln!(io.stdout, "size:     {:.1} MiB", about.bytes as f64 / 1_048_576.0);
    EXIT_OK
}

/// `modelc store copy --from A --to B`: every version of A, with its number, time and message,
/// into B (which holds none), verified version by version; B is unchanged if the copy fails.
pub(crate) fn copy(from: &Locator, to: &Locator, format: Format, color: bool, io: &mut Io<'_>) -> u8 {
    let from = store_locator(Some(from), None, &io.cwd);
    let to = store_locator(Some(to), None, &io.cwd);
    let source = match modelc_store::open(&from, Access::Existing) {
        Ok(source) => source,
        Err(error) => return store_failure(io, format, color, &error, &from),
    };
    match source.versions() {
        Ok(versions) if versions.is_empty() => {
            return store_failure(io, format, color, &modelc_store::StoreError::Empty, &from);
        }
        Ok(_) => {}
        Err(error) => return store_failure(io, format, color, &error, &from),
    }
    let report = match modelc_store::open(&to, Access::Full)
        .and_then(|mut target| modelc_store::copy(source.as_ref(), target.as_mut()))
    {
        Ok(report) => report,
        Err(error) => return store_failure(io, format, color, &error, &to),
    };
    if format.json_diagnostics() {
        let mut value = serde_json::to_value(&report).unwrap_or_default();
        value["from"] = serde_json::Value::String(from.describe());
        value["to"] = serde_json::Value::String(to.describe());
        let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(&value).unwrap_or_default());
        return EXIT_OK;
    }
    let versions = match (report.versions.first(), report.versions.last()) {
        (Some(first), Some(last)) if first == last => format!("version {first}"),
        (Some(first), Some(last)) => format!("{} versions ({first}–{last})", report.versions.len()),
        _ => "no version".to_owned(),
    };
    let _ = writeln!(
        io.stdout,
        "copied {versions} from {from} to {to}: {}, {}; each version reads back as in {from}",
        modelc_diagnostics::count(report.resources, "resource"),
        modelc_diagnostics::count(report.contents, "file content"),
    );
    EXIT_OK
}
