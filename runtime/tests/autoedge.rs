//! Autoedges: the order resources imply is added at deploy time — on real files, a file listed
//! before the directory that holds it still deploys after it — never closing a cycle, never
//! duplicating a stated edge, and not for resources with `autoedge` off.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use modelc_ir::{Meta, Resource};
use modelc_runtime::{AgentSelection, Handlers, MemoryContent, Options, Outcome, Plan, Silent};
use serde_json::json;

mod support;

use support::keyed as resource;

fn directory(path: &str) -> Resource {
    resource("fs::Directory", "path", path, json!({ "owner": null, "group": null, "permissions": null }))
}

fn file(path: &str, content: &str) -> (Resource, (String, Vec<u8>)) {
    use sha1::Digest as _;
    let hash = format!("{:x}", sha1::Sha1::digest(content.as_bytes()));
    let r =
        resource("fs::File", "path", path, json!({ "hash": hash, "owner": null, "group": null, "permissions": null }));
    (r, (hash, content.as_bytes().to_vec()))
}

fn plan(resources: Vec<Resource>, autoedges: bool) -> Plan {
    let handlers = Handlers::builtin();
    let mut plan = Plan::new(resources, &[], &AgentSelection::Named(vec!["local".into()]), &handlers, &[]);
    if autoedges {
        plan.add_autoedges();
    }
    plan
}

#[test]
fn a_file_listed_before_its_directory_deploys_after_it() {
    let root = std::env::temp_dir().join(format!("modelc-autoedge-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let dir = root.join("conf");
    let (f, content) = file(&format!("{}/app.conf", dir.display()), "x = 1\n");
    let d = directory(&dir.display().to_string());
    let mut content_map = MemoryContent::default();
    content_map.0.insert(content.0, content.1);
    let handlers = Handlers::builtin();
    let one = Options { jobs: 1, ..Options::default() };
    // Without autoedges the file goes first and its directory is not there yet.
    let without = plan(vec![f.clone(), d.clone()], false);
    let report = modelc_runtime::run(&without, &handlers, &content_map, &one, &Silent);
    assert_eq!(report.resources[0].result, Outcome::Failed, "{report:?}");
    let _ = std::fs::remove_dir_all(&dir);
    // With them, the directory comes first.
    let with = plan(vec![f, d], true);
    assert_eq!(with.autoedges, [(0, 1)]);
    let report = modelc_runtime::run(&with, &handlers, &content_map, &one, &Silent);
    assert!(report.converged(), "{report:?}");
    assert_eq!(std::fs::read_to_string(dir.join("app.conf")).unwrap(), "x = 1\n");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn implied_edges_follow_symlinks_commands_and_the_nearest_directory() {
    let mut link = resource("fs::Symlink", "dst", "/srv/link", json!({ "src": "/srv/app/bin/tool" }));
    link.meta = Meta::default().into();
    let run = resource("exec::Run", "command", "/srv/app/bin/tool --init", json!({ "cwd": "/srv/app" }));
    let resources = vec![
        link,
        run,
        resource("fs::File", "path", "/srv/app/bin/tool", json!({})),
        directory("/srv"),
        directory("/srv/app"),
    ];
    let plan = plan(resources, true);
    let mut edges = plan.autoedges.clone();
    edges.sort_unstable();
    // The link after /srv and after what it points to; the command after its cwd and its
    // program; the program after /srv/app (its nearest managed directory, not /srv/app/bin);
    // /srv/app after /srv.
    assert_eq!(edges, [(0, 2), (0, 3), (1, 2), (1, 4), (2, 4), (4, 3)]);
}

#[test]
fn no_autoedge_closes_a_cycle_duplicates_a_stated_edge_or_touches_a_resource_that_opts_out() {
    let mut d = directory("/data");
    let f = resource("fs::File", "path", "/data/f", json!({}));
    // The directory (strangely) requires the file: the implied file-after-directory edge
    // would close a cycle.
    d.requires = vec![f.id.clone()];
    let plan1 = plan(vec![d, f], true);
    assert!(plan1.autoedges.is_empty());
    // Stated already: not added twice.
    let mut g = resource("fs::File", "path", "/data/g", json!({}));
    g.requires = vec![directory("/data").id];
    let plan2 = plan(vec![directory("/data"), g], true);
    assert!(plan2.autoedges.is_empty());
    assert_eq!(plan2.requires[1], [0]);
    // Opted out.
    let mut h = resource("fs::File", "path", "/data/h", json!({}));
    h.meta.autoedge = false;
    let plan3 = plan(vec![directory("/data"), h], true);
    assert!(plan3.autoedges.is_empty());
}
