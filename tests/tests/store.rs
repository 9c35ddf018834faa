//! The versioned store from the command line: the end-to-end scenario (a catalogue of
//! 1,000 networks exported in full, then network 0 alone with one host exported partially),
//! every rejection rule with its diagnostic and an unchanged store, and the reading commands.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use modelc_tests::catalogue::service_catalogue;
use modelc_tests::{modelc, scratch_dir, store_cases};
use serde_json::Value;

/// Two sites in one set, `a` owned by `owner`, `b` requiring `a`.
fn sites(owner: &str) -> String {
    format!(
        "entity Site extends std::Resource:\n    string name\n    string owner\nend\nindex Site(name)\nimplement Site using std::none\n\
         a = Site(name=\"a\", owner=\"{owner}\")\nb = Site(name=\"b\", owner=\"ops\", requires=a)\n\
         std::ResourceSet(name=\"sites\", resources=[a, b])\n"
    )
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The entries of a `show --format json` list outside `set` (by id), in order.
fn outside(list: &Value, set: &str) -> Vec<Value> {
    list.as_array().unwrap().iter().filter(|r| r["resource_set"] != set).cloned().collect()
}

#[test]
fn a_partial_export_of_one_network_replaces_only_its_set() {
    let dir = scratch_dir("store-scenario");
    std::fs::write(dir.join("full.cf"), service_catalogue(1_000, 5)).unwrap();
    std::fs::write(dir.join("network-0.cf"), service_catalogue(1, 1)).unwrap();
    let store = dir.join("state.sqlite");
    let store = store.to_str().unwrap();

    let full = modelc(&["export", "full.cf", "--store", store, "-m", "all networks"], &dir);
    assert_eq!(full.code, 0, "{}", full.stderr);
    assert!(full.stderr.contains("exported version 1 (full): 5001 resources in 1000 resource sets"), "{}", full.stderr);
    let v1 = json(&modelc(&["--format", "json", "show", "1", "--store", store], &dir).stdout);
    assert_eq!(v1.as_array().unwrap().len(), 5_001);

    let partial = modelc(&["export", "--partial", "network-0.cf", "--store", store, "-m", "network 0"], &dir);
    assert_eq!(partial.code, 0, "{}", partial.stderr);
    assert!(
        partial.stderr.contains("exported version 2 (partial on version 1): 4997 resources in 1000 resource sets"),
        "{}",
        partial.stderr
    );
    let v2 = json(&modelc(&["--format", "json", "show", "--store", store], &dir).stdout);
    let host = |n: usize| format!("__config__::Host[internal,network.id=0,id={n}]");
    let set0: Vec<&Value> = v2.as_array().unwrap().iter().filter(|r| r["resource_set"] == "network-0").collect();
    assert_eq!(set0.len(), 1);
    assert_eq!(set0[0]["id"], host(0));
    assert_eq!(set0[0]["name"], "host-0-0");
    // The other 999 sets and the shared agent config, entry for entry as in version 1.
    assert_eq!(outside(&v2, "network-0"), outside(&v1, "network-0"));
    let shared: Vec<&Value> = v2.as_array().unwrap().iter().filter(|r| r["resource_set"].is_null()).collect();
    assert_eq!(shared.len(), 1);
    assert_eq!(shared[0]["id"], "std::AgentConfig[internal,agentname=host_agent]");

    let versions = json(&modelc(&["--format", "json", "versions", "--store", store], &dir).stdout);
    let fields = ["version", "kind", "base", "resources", "sets", "message"];
    let summary: Vec<Vec<&Value>> =
        versions.as_array().unwrap().iter().map(|v| fields.iter().map(|f| &v[f]).collect()).collect();
    assert_eq!(
        serde_json::json!(summary),
        serde_json::json!([[1, "full", null, 5001, 1000, "all networks"], [2, "partial", 1, 4997, 1000, "network 0"]])
    );

    let diff = json(&modelc(&["--format", "json", "diff", "1", "2", "--store", store], &dir).stdout);
    assert_eq!(diff["added"], serde_json::json!([]));
    assert_eq!(diff["changed"], serde_json::json!([]));
    assert_eq!(diff["removed"], serde_json::json!([host(1), host(2), host(3), host(4)]));
    let human = modelc(&["diff", "1", "2", "--store", store], &dir);
    assert!(human.stdout.ends_with("0 added, 4 removed, 0 changed\n"), "{}", human.stdout);
}

#[test]
fn every_refused_export_says_why_and_leaves_the_store_as_it_was() {
    for case in store_cases::refused_exports() {
        // A store that cannot be used is an I/O error (2); a refused change is 1.
        let expected = if case.output.stderr.contains("[E0507]") { 2 } else { 1 };
        assert_eq!(case.output.code, expected, "{}: {}", case.name, case.output.stderr);
        // `modelc plan` reaches the same verdict with the same code, and writes nothing.
        if let Some(plan) = &case.plan {
            let code = |text: &str| {
                text.match_indices("[E05").map(|(at, _)| text[at + 1..at + 6].to_owned()).collect::<Vec<_>>()
            };
            assert_eq!(
                (plan.code, code(&plan.stderr)),
                (case.output.code, code(&case.output.stderr)),
                "{}: {}",
                case.name,
                plan.stderr
            );
        }
        assert_eq!(case.store_after, case.store_before, "{} changed the store", case.name);
        insta::assert_snapshot!(format!("refused-{}", case.name), case.output.stderr);
    }
}

#[test]
fn versions_show_and_diff_read_the_store() {
    let dir = scratch_dir("store-read");
    std::fs::write(dir.join("project.yml"), "name: sites\n").unwrap();
    let model = sites;
    std::fs::write(dir.join("main.cf"), model("web")).unwrap();
    // No store yet: reading commands say so and create nothing.
    let none = modelc(&["versions"], &dir);
    assert_eq!(none.code, 2, "a missing store is an I/O error");
    assert!(none.stderr.contains("[E0507] Error") && none.stderr.contains("export a model first"), "{}", none.stderr);
    assert!(!dir.join(".modelc").exists());
    // Inside a project, the store is the project's `.modelc/store.sqlite`.
    assert_eq!(modelc(&["export", "-m", "first"], &dir).code, 0);
    assert!(dir.join(".modelc/store.sqlite").is_file());
    std::fs::write(dir.join("main.cf"), model("platform")).unwrap();
    assert_eq!(modelc(&["export"], &dir).code, 0);

    let diff = modelc(&["diff", "1", "2"], &dir);
    insta::assert_snapshot!(diff.stdout);
    let show = modelc(&["show", "1"], &dir);
    let show = show.stdout.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(show, "set sites:\n  __config__::Site[internal,name=a]\n  __config__::Site[internal,name=b]");
    let listed = modelc(&["versions"], &dir).stdout;
    assert_eq!(listed.lines().count(), 3, "{listed}");
    assert!(listed.lines().nth(1).unwrap().trim_end().ends_with("first"), "{listed}");
    let json_list = json(&modelc(&["--format", "json", "show", "2"], &dir).stdout);
    let by_id = |id: &str| json_list.as_array().unwrap().iter().find(|r| r["id"] == id).cloned().unwrap();
    assert_eq!(by_id("__config__::Site[internal,name=a]")["owner"], "platform");
    let b = by_id("__config__::Site[internal,name=b]");
    assert_eq!(b["requires"], serde_json::json!(["__config__::Site[internal,name=a]"]));
    assert_eq!(b["resource_set"], "sites");
    // A model with errors exports nothing.
    std::fs::write(dir.join("main.cf"), "x = = 1\n").unwrap();
    assert_eq!(modelc(&["export"], &dir).code, 1);
    assert_eq!(modelc(&["versions"], &dir).stdout.lines().count(), 3);
    // --delete-resource-set and --soft-delete belong to partial exports.
    assert_eq!(modelc(&["export", "--delete-resource-set", "sites"], &dir).code, 2);
}

#[test]
fn an_exported_ir_file_is_stored_as_compiled() {
    let dir = scratch_dir("store-ir");
    std::fs::write(dir.join("main.cf"), service_catalogue(3, 2)).unwrap();
    assert_eq!(modelc(&["compile", "main.cf", "-o", "resources.json"], &dir).code, 0);
    let exported = modelc(&["export", "--ir", "resources.json", "--store", "s.sqlite"], &dir);
    assert_eq!(exported.code, 0, "{}", exported.stderr);
    // The model compiles to the same resources: exporting it stores nothing, and says so.
    let again = modelc(&["export", "main.cf", "--store", "s.sqlite"], &dir);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stderr.contains("unchanged since version 1: no version stored"), "{}", again.stderr);
    assert_eq!(modelc(&["versions", "--store", "s.sqlite"], &dir).stdout.lines().count(), 2);
    // `--force` stores one anyway.
    assert_eq!(modelc(&["export", "main.cf", "--force", "--store", "s.sqlite"], &dir).code, 0);
    let diff = modelc(&["diff", "1", "2", "--store", "s.sqlite"], &dir);
    assert!(diff.stdout.ends_with("0 added, 0 removed, 0 changed\n"), "{}", diff.stdout);
    let bad = modelc(&["export", "--ir", "main.cf", "--store", "s.sqlite"], &dir);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("not a resource IR document"), "{}", bad.stderr);
}

/// A store of an earlier layout is migrated when a command opens it, and every version reads as
/// it did (each fixture, its versions' `show --format json` and its diffs were written by the
/// modelc of that layout). Layout 4's history has a prune and a partial export.
#[test]
fn stores_of_earlier_layouts_read_the_same_after_migration() {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../compiler/store/tests/fixtures");
    for (layout, versions, diffs) in [(3, &["1", "2"][..], &[][..]), (4, &["2", "3", "4"], &[("2", "4"), ("4", "3")])] {
        let dir = scratch_dir(&format!("store-layout-{layout}"));
        std::fs::copy(format!("{fixtures}/layout-{layout}.sqlite"), dir.join("old.sqlite")).unwrap();
        for version in versions {
            let shown = modelc(&["--format", "json", "show", version, "--store", "old.sqlite"], &dir);
            assert_eq!(shown.code, 0, "{}", shown.stderr);
            let expected =
                std::fs::read_to_string(format!("{fixtures}/layout-{layout}-version-{version}.json")).unwrap();
            assert_eq!(json(&shown.stdout), json(&expected), "layout {layout}, version {version}");
        }
        for (from, to) in diffs {
            let diff = modelc(&["--format", "json", "diff", from, to, "--store", "old.sqlite"], &dir);
            assert_eq!(diff.code, 0, "{}", diff.stderr);
            let expected =
                std::fs::read_to_string(format!("{fixtures}/layout-{layout}-diff-{from}-{to}.json")).unwrap();
            assert_eq!(json(&diff.stdout), json(&expected), "layout {layout}, diff {from} {to}");
        }
    }
}

#[test]
fn prune_keeps_the_latest_versions_and_says_what_it_removed() {
    let dir = scratch_dir("store-prune");
    for networks in 1..=5 {
        std::fs::write(dir.join("main.cf"), service_catalogue(networks, 2)).unwrap();
        assert_eq!(modelc(&["export", "main.cf", "--store", "s.sqlite"], &dir).code, 0);
    }
    let dry = modelc(&["prune", "--keep", "2", "--dry-run", "--store", "s.sqlite"], &dir);
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(dry.stdout.starts_with("would remove 3 versions (1–3)"), "{}", dry.stdout);
    assert_eq!(modelc(&["versions", "--store", "s.sqlite"], &dir).stdout.lines().count(), 6);
    let shown = modelc(&["--format", "json", "show", "5", "--store", "s.sqlite"], &dir).stdout;
    let pruned = json(&modelc(&["--format", "json", "prune", "--keep", "2", "--store", "s.sqlite"], &dir).stdout);
    assert_eq!(pruned["kept"], serde_json::json!([4, 5]));
    assert_eq!(pruned["removed"], serde_json::json!([1, 2, 3]));
    assert_eq!(pruned["dry_run"], false);
    assert_eq!(modelc(&["--format", "json", "show", "5", "--store", "s.sqlite"], &dir).stdout, shown);
    assert_eq!(modelc(&["show", "2", "--store", "s.sqlite"], &dir).code, 2, "version 2 is gone");
    // Keeping none is a usage error; a missing store is refused and not created.
    assert_eq!(modelc(&["prune", "--keep", "0", "--store", "s.sqlite"], &dir).code, 2);
    assert_eq!(modelc(&["prune", "--keep", "1", "--store", "none.sqlite"], &dir).code, 2);
    assert!(!dir.join("none.sqlite").exists());
}

#[test]
fn show_filters_by_id_and_diff_shows_text_as_a_unified_diff() {
    let dir = scratch_dir("store-show-filter");
    let model = |text: &str| {
        format!(
            "import std::testing\nstd::testing::NullResource(name=\"conf\", value=\"{text}\")\n\
             std::testing::NullResource(name=\"other\")\n"
        )
    };
    for text in ["port = 80\\nhost = a\\n", "port = 443\\nhost = a\\n"] {
        std::fs::write(dir.join("main.cf"), model(text)).unwrap();
        assert_eq!(modelc(&["export", "main.cf", "--store", "s.sqlite"], &dir).code, 0);
    }
    let shown = modelc(&["show", "--filter", "name=conf", "--store", "s.sqlite"], &dir);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert!(shown.stdout.starts_with("version 2 (full): 1 resource matching `name=conf`\n"), "{}", shown.stdout);
    assert!(shown.stdout.contains("  value: \"port = 443\\nhost = a\\n\""), "{}", shown.stdout);
    assert!(!shown.stdout.contains("name=other"), "{}", shown.stdout);
    let listed =
        json(&modelc(&["--format", "json", "show", "1", "--filter", "conf", "--store", "s.sqlite"], &dir).stdout);
    assert_eq!(listed.as_array().unwrap().len(), 1);
    let diff = modelc(&["diff", "1", "2", "--store", "s.sqlite"], &dir);
    assert!(
        diff.stdout.contains("    value:\n")
            && diff.stdout.contains("-port = 80\n")
            && diff.stdout.contains("+port = 443\n"),
        "{}",
        diff.stdout
    );
}

/// Issue 30: `versions` printed an export's message raw (`\e[2J` cleared the screen), and
/// `show`, `diff`, `plan`, `deploy` and `status` printed ESC bytes inside resource ids. Every
/// command shows them escaped in text; JSON keeps the exact values.
#[test]
fn terminal_escapes_from_the_model_and_the_store_are_shown_escaped() {
    let dir = scratch_dir("store-escapes");
    std::fs::write(dir.join("project.yml"), "name: escapes\n").unwrap();
    let model = |owner: &str| {
        format!(
            "import std::testing\nentity Site extends std::Resource:\n    string name\n    string owner\nend\n\
             index Site(name)\nimplement Site using std::none\nSite(name=\"a\\x1b[2Jb\", owner=\"{owner}\")\n\
             std::testing::NullResource(name=\"n\\x1b]0;title\\x07\", agentname=\"localhost\")\n"
        )
    };
    std::fs::write(dir.join("main.cf"), model("web")).unwrap();
    assert_eq!(modelc(&["export", "-m", "first \u{1b}]0;pwned\u{7} \u{9b}31m"], &dir).code, 0);
    std::fs::write(dir.join("main.cf"), model("ops")).unwrap();
    assert_eq!(modelc(&["export", "-m", "second"], &dir).code, 0);
    // A change for `plan` to show.
    std::fs::write(dir.join("main.cf"), model("dev")).unwrap();
    let commands: [&[&str]; 7] = [
        &["versions"],
        &["show", "1"],
        &["diff", "1", "2"],
        &["plan"],
        &["deploy", "--dry-run", "--agent", "localhost"],
        &["deploy", "--agent", "localhost"],
        &["status"],
    ];
    for args in commands {
        let out = modelc(args, &dir);
        for (stream, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            assert!(
                !text.contains('\u{1b}') && !text.contains('\u{9b}') && !text.contains('\u{7}'),
                "{args:?} {stream}: {text:?}"
            );
        }
        let all = format!("{}{}", out.stdout, out.stderr);
        // `status` names no resource of a run where nothing failed.
        assert!(args[0] == "status" || all.contains("\\u{1b}"), "{args:?} shows no escaped ESC: {all}");
    }
    let versions = modelc(&["versions"], &dir).stdout;
    assert!(versions.contains("first \\u{1b}]0;pwned\\u{7} \\u{9b}31m"), "{versions}");
    // JSON carries the value itself, escaped as JSON escapes it.
    let json_list = json(&modelc(&["--format", "json", "versions"], &dir).stdout);
    assert_eq!(json_list[0]["message"], "first \u{1b}]0;pwned\u{7} \u{9b}31m", "{json_list}");
}

/// Issue 30: a store path that is a directory was "no store … export a model first", then
/// `export` failed with SQLite's "unable to open database file"; an empty file was taken for an
/// empty store and written to; a store others can read was not mentioned.
#[test]
fn unusable_store_paths_say_what_they_are() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch_dir("store-paths");
    std::fs::write(dir.join("main.cf"), "import std::testing\nstd::testing::NullResource(name=\"a\")\n").unwrap();
    std::fs::create_dir_all(dir.join("a-dir")).unwrap();
    for args in [&["versions", "--store", "a-dir"][..], &["export", "main.cf", "--store", "a-dir"]] {
        let out = modelc(args, &dir);
        assert_eq!(out.code, 2, "{args:?}");
        assert!(out.stderr.contains("is a directory, not a store"), "{args:?}: {}", out.stderr);
    }
    std::fs::write(dir.join("empty.sqlite"), "").unwrap();
    let out = modelc(&["versions", "--store", "empty.sqlite"], &dir);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("is an empty file, not a store"), "{}", out.stderr);
    assert_eq!(std::fs::metadata(dir.join("empty.sqlite")).unwrap().len(), 0, "nothing was written into it");
    // A store others can read: `status` says so.
    assert_eq!(modelc(&["export", "main.cf", "--store", "s.sqlite"], &dir).code, 0);
    std::fs::set_permissions(dir.join("s.sqlite"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let status = modelc(&["status", "--store", "s.sqlite"], &dir);
    assert!(status.stderr.contains("can be read or written by others (mode 644)"), "{}", status.stderr);
}

/// Issue 32: every store command against a real PostgreSQL (the URL holds the password here;
/// users give it through PGPASSWORD or ~/.pgpass): a database not laid out is refused with the
/// command that lays it out; `store migrate` lays it out once; exports, versions, show, diff,
/// plan, prune, status and `store info` work on it as on the embedded store; a refused export
/// changes nothing; connection failures are one diagnostic each, with exit status 2.
#[test]
fn the_store_commands_work_on_a_postgresql_store() {
    use modelc_test_postgres::{PASSWORD, Postgres, USER};
    let Some(server) = Postgres::start("the PostgreSQL store commands") else { return };
    server.create_database("sites").unwrap();
    let url = format!("postgresql://{USER}:{PASSWORD}@127.0.0.1:{}/sites", server.port());
    let dir = scratch_dir("store-postgres");
    std::fs::write(dir.join("project.yml"), "name: sites\n").unwrap();
    let model = sites;
    std::fs::write(dir.join("main.cf"), model("web")).unwrap();
    let run = |args: &[&str]| modelc(&[args, &["--store", &url]].concat(), &dir);

    let unmigrated = run(&["export"]);
    assert_eq!(unmigrated.code, 2, "{}", unmigrated.stderr);
    assert!(unmigrated.stderr.contains("run `modelc store migrate --store URL` first"), "{}", unmigrated.stderr);
    assert!(!unmigrated.stderr.contains(PASSWORD), "the password is never shown: {}", unmigrated.stderr);
    let migrated = run(&["store", "migrate"]);
    assert_eq!(migrated.code, 0, "{}", migrated.stderr);
    assert!(
        migrated.stdout.contains("laid out")
            && migrated.stdout.contains(&format!("layout version {}", modelc_store::postgres::SCHEMA_VERSION)),
        "{}",
        migrated.stdout
    );
    let already = format!("already has layout version {}", modelc_store::postgres::SCHEMA_VERSION);
    assert!(run(&["store", "migrate"]).stdout.contains(&already));

    assert_eq!(run(&["export", "-m", "first"]).code, 0);
    std::fs::write(dir.join("main.cf"), model("platform")).unwrap();
    let plan = run(&["plan"]);
    assert!(plan.stdout.contains("against version 1 would be accepted and change"), "{}", plan.stdout);
    assert_eq!(run(&["export"]).code, 0);
    assert_eq!(run(&["export"]).code, 0, "an unchanged model stores nothing, and says so");
    let listed = run(&["versions"]).stdout;
    assert_eq!(listed.lines().count(), 3, "{listed}");
    assert!(listed.lines().nth(1).unwrap().trim_end().ends_with("first"), "{listed}");
    let diff = run(&["diff", "1", "2"]).stdout;
    assert!(diff.contains("owner") && diff.contains("platform"), "{diff}");
    let show = run(&["show", "1"]).stdout;
    assert!(show.contains("set sites:") && show.contains("__config__::Site[internal,name=b]"), "{show}");

    // A partial export that moves a resource out of its set is refused, and changes nothing.
    std::fs::write(
        dir.join("main.cf"),
        "entity Site extends std::Resource:\n    string name\n    string owner\nend\nindex Site(name)\n\
         implement Site using std::none\na = Site(name=\"a\", owner=\"x\")\nstd::ResourceSet(name=\"other\", resources=[a])\n",
    )
    .unwrap();
    let refused = run(&["export", "--partial"]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(refused.stderr.contains("E0503"), "{}", refused.stderr);
    assert_eq!(run(&["versions"]).stdout.lines().count(), 3);

    let pruned = run(&["prune", "--keep", "1"]);
    assert!(pruned.stdout.contains("removed version 1"), "{}", pruned.stdout);
    let info = run(&["store", "info"]).stdout;
    assert!(info.contains("backend:  PostgreSQL") && info.contains("versions: 1 (latest: 2)"), "{info}");
    assert!(run(&["status"]).stdout.contains("no deploy has been recorded"));

    // What cannot be reached: one diagnostic, exit status 2, nothing written.
    let wrong_password = format!("postgresql://{USER}:wrong@127.0.0.1:{}/sites", server.port());
    let missing_database = format!("postgresql://{USER}:{PASSWORD}@127.0.0.1:{}/nowhere", server.port());
    let closed_port = format!("postgresql://{USER}:{PASSWORD}@127.0.0.1:1/sites");
    for (store, cause) in [
        (wrong_password.as_str(), "password authentication failed"),
        (missing_database.as_str(), "database \"nowhere\" does not exist"),
        (closed_port.as_str(), "cannot connect"),
        ("postgresql://127.0.0.1:notaport/x", "does not parse"),
    ] {
        let out = modelc(&["versions", "--store", store], &dir);
        assert_eq!(out.code, 2, "{store}: {}", out.stderr);
        assert!(out.stderr.contains(cause), "{store}: {}", out.stderr);
    }
    // A database holding other tables is not touched.
    server.create_database("foreign").unwrap();
    server.connect("foreign").unwrap().batch_execute("CREATE TABLE accounts (id int)").unwrap();
    let foreign = format!("postgresql://{USER}:{PASSWORD}@127.0.0.1:{}/foreign", server.port());
    let out = modelc(&["store", "migrate", "--store", &foreign], &dir);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("tables that are not a modelc store's (accounts)"), "{}", out.stderr);
    let tables: i64 = server
        .connect("foreign")
        .unwrap()
        .query_one("SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public'", &[])
        .unwrap()
        .get(0);
    assert_eq!(tables, 1, "nothing was created beside it");
}

#[test]
fn a_project_history_moves_to_postgresql_and_back_with_store_copy() {
    use modelc_test_postgres::Postgres;
    let Some(server) = Postgres::start("modelc store copy") else { return };
    server.create_database("moved").unwrap();
    let url = server.url_with_password("moved");
    let dir = scratch_dir("store-copy");
    std::fs::write(dir.join("project.yml"), "name: sites\n").unwrap();
    for owner in ["web", "platform", "ops"] {
        std::fs::write(dir.join("main.cf"), sites(owner)).unwrap();
        assert_eq!(modelc(&["export", "-m", owner], &dir).code, 0);
    }
    let local = ".modelc/store.sqlite";

    let unmigrated = modelc(&["store", "copy", "--from", local, "--to", &url], &dir);
    assert_eq!(unmigrated.code, 2, "{}", unmigrated.stderr);
    assert!(unmigrated.stderr.contains("modelc store migrate"), "{}", unmigrated.stderr);
    assert_eq!(modelc(&["store", "migrate", "--store", &url], &dir).code, 0);

    let copied = modelc(&["store", "copy", "--from", local, "--to", &url], &dir);
    assert_eq!(copied.code, 0, "{}", copied.stderr);
    assert!(copied.stdout.starts_with("copied 3 versions (1–3) from "), "{}", copied.stdout);
    assert!(!copied.stdout.contains(modelc_test_postgres::PASSWORD), "the password is never shown: {}", copied.stdout);
    let versions = |store: &str| modelc(&["versions", "--store", store], &dir).stdout;
    assert_eq!(versions(&url), versions(local), "the same numbers, times, kinds and messages");
    for version in ["1", "2", "3"] {
        let show = |store: &str| modelc(&["show", version, "--store", store], &dir).stdout;
        assert_eq!(show(&url), show(local), "version {version}");
    }

    let again = modelc(&["store", "copy", "--from", local, "--to", &url], &dir);
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(again.stderr.contains("already holds versions (the latest is 3)"), "{}", again.stderr);
    assert_eq!(versions(&url), versions(local), "a refused copy changes nothing");

    let back = modelc(&["--format", "json", "store", "copy", "--from", &url, "--to", "back.sqlite"], &dir);
    assert_eq!(back.code, 0, "{}", back.stderr);
    let report: serde_json::Value = serde_json::from_str(&back.stdout).unwrap();
    assert_eq!(report["versions"], serde_json::json!([1, 2, 3]), "{}", back.stdout);
    assert_eq!(versions("back.sqlite"), versions(local));

    let nothing = modelc(&["store", "copy", "--from", "none.sqlite", "--to", "elsewhere.sqlite"], &dir);
    assert_eq!(nothing.code, 2, "{}", nothing.stderr);
    assert!(!dir.join("elsewhere.sqlite").exists(), "a failed copy creates nothing");
}
