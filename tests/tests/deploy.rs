//! `modelc deploy` and `modelc status` end to end, in-process: models using the public `fs` and
//! `exec` modules (from the shared corpus; skipped without it) deployed into temporary
//! directories, then checked on disk and in the store.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::fs;
use std::path::{Path, PathBuf};

use modelc_tests::{Output, modelc};
use serde_json::Value;

/// A project in a scratch directory whose module path is the shared corpus, with `body` after
/// the imports and a local host `host`; `None` (and a message) without the corpus.
fn project(name: &str, body: &str) -> Option<PathBuf> {
    let shared = modelc_tests::shared_dir(&format!("deploy test {name}"))?;
    let dir = modelc_tests::scratch_dir(&format!("deploy-{name}"));
    let modules = shared.join("corpus/inmanta-modules");
    fs::write(dir.join("project.yml"), format!("name: {name}\nmodulepath: {}\n", modules.display())).unwrap();
    write_model(&dir, body);
    fs::create_dir_all(dir.join("target")).unwrap();
    Some(dir)
}

fn write_model(dir: &Path, body: &str) {
    let target = dir.join("target");
    let body = body.replace("$T", target.to_str().unwrap());
    let header = "import fs\nimport exec\nimport mitogen\n\nhost = std::Host(name=\"localhost\", os=std::linux, via=mitogen::Local())\n";
    fs::write(dir.join("main.cf"), format!("{header}{body}")).unwrap();
}

fn deploy(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["--color", "never", "deploy", "."];
    args.extend_from_slice(extra);
    modelc(&args, dir)
}

fn deploy_json(dir: &Path, extra: &[&str]) -> (u8, Value) {
    let mut args = vec!["--format", "json", "deploy"];
    args.extend_from_slice(extra);
    if !extra.iter().any(|a| *a == "--version" || *a == "--ir") {
        args.push(".");
    }
    let out = modelc(&args, dir);
    let value: Value =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", out.stdout, out.stderr));
    (out.code, value)
}

/// id → result of a JSON report.
fn results(report: &Value) -> Vec<(String, String)> {
    report["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_owned(), r["result"].as_str().unwrap().to_owned()))
        .collect()
}

fn error_of(report: &Value, id_part: &str) -> String {
    let resources = report["resources"].as_array().unwrap();
    let resource = resources.iter().find(|r| r["id"].as_str().unwrap().contains(id_part));
    resource.unwrap_or_else(|| panic!("no {id_part}"))["error"].as_str().unwrap_or_default().to_owned()
}

fn result_of(report: &Value, id_part: &str) -> String {
    results(report).into_iter().find(|(id, _)| id.contains(id_part)).unwrap_or_else(|| panic!("no {id_part}")).1
}

/// Every path under `root` with its kind, mode, content or target: what a deploy may change.
fn snapshot(root: &Path) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            let detail = if meta.file_type().is_symlink() {
                format!("-> {}", fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                stack.push(path.clone());
                String::new()
            } else {
                format!("{:?}", fs::read(&path).unwrap())
            };
            out.push(format!("{} {:o} {}:{} {detail}", path.display(), meta.mode(), meta.uid(), meta.gid()));
        }
    }
    out.sort();
    out
}

const SITE: &str = r#"
root = fs::Directory(host=host, path="$T/site", mode=755)
conf = fs::File(host=host, path="$T/site/app.conf", content="port = 80\n", mode=640)
fs::Symlink(host=host, src="$T/site/app.conf", dst="$T/current.conf")
exec::Run(host=host, command="touch $T/site/reloaded", reload_only=true, requires=[conf])
"#;

#[test]
fn a_first_deploy_converges_and_a_second_reports_everything_unchanged() {
    let Some(dir) = project("converge", SITE) else { return };
    let target = dir.join("target");
    let (code, first) = deploy_json(&dir, &[]);
    assert_eq!(code, 0, "{first:#}");
    assert!(results(&first).iter().all(|(_, r)| r == "changed"), "{first:#}");
    assert_eq!(fs::read_to_string(target.join("site/app.conf")).unwrap(), "port = 80\n");
    assert!(target.join("site/reloaded").exists(), "the changed file refreshed the reload-only run");
    assert!(results(&first).iter().all(|(id, _)| !id.contains(",v=")));

    fs::remove_file(target.join("site/reloaded")).unwrap();
    let (code, second) = deploy_json(&dir, &[]);
    assert_eq!(code, 0);
    assert!(results(&second).iter().all(|(_, r)| r == "unchanged"), "{second:#}");
    assert!(!target.join("site/reloaded").exists(), "nothing changed, so nothing was refreshed");

    let status = modelc(&["status"], &dir);
    assert_eq!(status.code, 0);
    assert!(status.stdout.contains("run 2 of compile of") && status.stdout.contains("converged"), "{}", status.stdout);
}

#[test]
fn a_dry_run_changes_nothing_and_reports_differences() {
    let Some(dir) = project("dry-run", SITE) else { return };
    let target = dir.join("target");
    let before = snapshot(&dir);
    let (code, report) = deploy_json(&dir, &["--dry-run"]);
    assert_eq!(snapshot(&dir), before, "a dry run changed files (or created a store)");
    assert_eq!(code, 0);
    assert_eq!(result_of(&report, "fs::Directory"), "would-change");
    // The file is predicted inside the directory the run would create; the command after it
    // reads the machine, so it is not evaluated.
    assert_eq!(result_of(&report, "fs::File"), "would-change");
    assert_eq!(result_of(&report, "exec::Run"), "not-evaluated");
    let out = deploy(&dir, &["--dry-run"]);
    assert!(out.stdout.contains("              created\n"), "{}", out.stdout);
    assert!(out.stdout.contains("content (1 line)") && out.stdout.contains("+port = 80"), "{}", out.stdout);
    assert_eq!(out.code, 0, "{}", out.stderr);

    // With the directory in place, the file's diff is from what is there.
    fs::create_dir_all(target.join("site")).unwrap();
    fs::set_permissions(target.join("site"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    fs::write(target.join("site/app.conf"), "port = 8080\n").unwrap();
    let before = snapshot(&dir);
    let out = deploy(&dir, &["--dry-run"]);
    assert_eq!(snapshot(&dir), before);
    assert!(out.stdout.contains("-port = 8080") && out.stdout.contains("+port = 80"), "{}", out.stdout);
    assert!(out.stdout.contains("would-change  fs::File"), "{}", out.stdout);
    assert!(out.stderr.contains("dry run, nothing changed"));
    assert_eq!(fs::read_to_string(target.join("site/app.conf")).unwrap(), "port = 8080\n");
}

#[test]
fn a_failure_blocks_only_its_dependents_and_the_exit_status_says_so() {
    let model = r#"
bad = exec::Run(host=host, command="false")
after = fs::File(host=host, path="$T/after-bad", content="x", requires=[bad])
fs::File(host=host, path="$T/after-after-bad", content="x", requires=[after])
fs::File(host=host, path="$T/independent", content="x")
fs::File(host=host, path="relative/path", content="x")
"#;
    let Some(dir) = project("isolation", model) else { return };
    let (code, report) = deploy_json(&dir, &[]);
    assert_eq!(code, 1);
    assert_eq!(result_of(&report, "command=false"), "failed");
    assert_eq!(result_of(&report, "after-bad]"), "blocked");
    assert_eq!(result_of(&report, "after-after-bad"), "blocked");
    assert_eq!(result_of(&report, "independent"), "changed");
    let relative = report["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"].as_str().unwrap().contains("relative"))
        .unwrap();
    assert_eq!(relative["result"], "failed");
    assert!(relative["error"].as_str().unwrap().contains("relative path"));
    assert!(relative["source"].as_str().unwrap().ends_with("main.cf:11"), "{relative}");
    assert!(dir.join("target/independent").exists() && !dir.join("target/after-bad").exists());

    let status = modelc(&["status", "--format", "json"], &dir);
    assert_eq!(status.code, 1);
    let status: Value = serde_json::from_str(&status.stdout).unwrap();
    let not_converged: Vec<&str> =
        status["not_converged"].as_array().unwrap().iter().map(|r| r["result"].as_str().unwrap()).collect();
    assert_eq!(not_converged, ["failed", "blocked", "blocked", "failed"]);
    // The shape a server's status has: `{version, agents, resources}`, times in RFC 3339.
    let resources = status["resources"].as_array().unwrap();
    assert!(resources.iter().any(|r| r["result"] == "failed" && r["error"].is_string()));
    assert!(resources.iter().all(|r| r["started"].as_str().unwrap().ends_with('Z') && r["agent"].is_string()));
    assert!(status["agents"][0]["name"].is_string() && status.as_object().unwrap().contains_key("version"));
}

#[test]
fn a_refresh_missed_by_a_failing_receiver_is_done_by_the_next_run() {
    let model = r#"
conf = fs::File(host=host, path="$T/app.conf", content="v1")
exec::Run(host=host, command="sh -c 'test -f $T/ok && touch $T/restarted'", reload_only=true, requires=[conf])
"#;
    let Some(dir) = project("refresh", model) else { return };
    let target = dir.join("target");
    let (code, first) = deploy_json(&dir, &[]);
    assert_eq!(code, 1, "the reload fails while $T/ok is missing");
    assert_eq!(result_of(&first, "exec::Run"), "failed");
    assert_eq!(first["pending_refreshes"].as_array().unwrap().len(), 1);

    fs::write(target.join("ok"), "").unwrap();
    let (code, second) = deploy_json(&dir, &[]);
    assert_eq!(code, 0);
    assert_eq!(result_of(&second, "fs::File"), "unchanged");
    assert_eq!(result_of(&second, "exec::Run"), "changed", "the refresh was kept for this run");
    assert!(target.join("restarted").exists());

    fs::remove_file(target.join("restarted")).unwrap();
    let (_, third) = deploy_json(&dir, &[]);
    assert_eq!(result_of(&third, "exec::Run"), "unchanged", "the refresh was done once");
    assert!(!target.join("restarted").exists());
}

#[test]
fn a_stored_version_deploys_after_the_model_is_gone_and_removed_resources_are_purged() {
    let model = r#"
fs::File(host=host, path="$T/kept", content="kept\n")
fs::File(host=host, path="$T/dropped", content="dropped\n", purge_on_delete=true)
"#;
    let Some(dir) = project("stored", model) else { return };
    let target = dir.join("target");
    assert_eq!(modelc(&["export", "."], &dir).code, 0);
    write_model(&dir, "fs::File(host=host, path=\"$T/kept\", content=\"kept\\n\")\n");
    assert_eq!(modelc(&["export", "."], &dir).code, 0);
    // The model is gone: the versions carry everything, file content included.
    fs::remove_file(dir.join("main.cf")).unwrap();
    fs::remove_file(dir.join("project.yml")).unwrap();
    let store = dir.join(".modelc/store.sqlite");
    let store = store.to_str().unwrap();

    let (code, first) = deploy_json(&dir, &["--version", "1", "--store", store]);
    assert_eq!(code, 0, "{first:#}");
    assert_eq!(first["version"], 1);
    assert_eq!(fs::read_to_string(target.join("dropped")).unwrap(), "dropped\n");

    let (code, second) = deploy_json(&dir, &["--version", "2", "--store", store]);
    assert_eq!(code, 0, "{second:#}");
    assert_eq!(result_of(&second, "dropped"), "changed", "{second:#}");
    assert!(!target.join("dropped").exists(), "a purge_on_delete resource gone from the version is purged");
    assert_eq!(result_of(&second, "kept"), "unchanged");

    let (_, third) = deploy_json(&dir, &["--version", "2", "--store", store]);
    assert!(results(&third).iter().all(|(id, _)| !id.contains("dropped")), "purged once, then forgotten");
}

/// Other agents' resources are listed and left alone; this machine's resources whose context is
/// another host are deployed through it (here: a port where nothing listens, so they fail with
/// ssh's own words; `compiler/cli/tests/ssh.rs` deploys through a real sshd). A context modelc
/// cannot follow is undeployable.
#[test]
fn other_agents_are_listed_and_remote_contexts_are_reached_through() {
    let model = r#"
other = std::Host(name="elsewhere-host", os=std::linux, via=mitogen::Local())
remote = std::Host(name="localhost-but-ssh", os=std::linux, ip="127.0.0.1", remote_port=1)
fs::File(host=other, path="$T/other", content="x")
fs::File(host=host, path="$T/mine", content="x")
fs::File(host=host, path="$T/via-ssh", content="x", via=mitogen::Ssh(name="s", hostname="127.0.0.1", port=1))
std::AgentConfig(agentname="localhost-but-ssh", autostart=true, uri="local:")
fs::File(host=remote, path="$T/remote", content="x")
fs::File(host=host, path="$T/ssh-after-sudo", content="x",
         via=mitogen::Ssh(name="b", hostname="b", via=mitogen::Sudo(name="u", via=mitogen::Ssh(name="a", hostname="a"))))
"#;
    let Some(dir) = project("agents", model) else { return };
    let (code, report) = deploy_json(&dir, &[]);
    assert_eq!(code, 1, "a failed resource fails the deploy");
    assert_eq!(result_of(&report, "elsewhere-host"), "not-handled");
    assert_eq!(result_of(&report, "/mine"), "changed");
    assert_eq!(result_of(&report, "via-ssh"), "failed");
    let error = error_of(&report, "via-ssh");
    assert!(error.contains("ssh 127.0.0.1:1") && error.contains("Connection refused"), "{error}");
    assert_eq!(result_of(&report, "/remote"), "failed", "an agent config with uri local: makes it ours");
    // The mitogen module's context for a host with only an ip: ssh as its remote_user (root).
    assert!(error_of(&report, "/remote").contains("cannot reach ssh root@127.0.0.1:1: ssh failed"), "{report:#}");
    assert_eq!(result_of(&report, "ssh-after-sudo"), "undeployable");
    assert!(!dir.join("target/other").exists() && !dir.join("target/via-ssh").exists());

    let misspelt = modelc(&["deploy", ".", "--agent", "elsewhere"], &dir);
    assert!(misspelt.stderr.contains("no resource belongs to agent `elsewhere`"), "{}", misspelt.stderr);
    assert!(misspelt.stderr.contains("`elsewhere-host`"), "the warning lists the agents there are");

    let (code, only) = deploy_json(&dir, &["--agent", "elsewhere-host"]);
    assert_eq!(code, 0, "{only:#}");
    assert_eq!(result_of(&only, "elsewhere-host"), "changed");
    assert_eq!(result_of(&only, "/mine"), "not-handled");
    assert!(dir.join("target/other").exists());
}

#[test]
fn an_ir_file_deploys_like_the_model_it_came_from() {
    let Some(dir) = project("ir", SITE) else { return };
    let ir = dir.join("resources.json");
    assert_eq!(modelc(&["compile", ".", "-o", ir.to_str().unwrap()], &dir).code, 0);
    let (code, report) = deploy_json(&dir, &["--ir", ir.to_str().unwrap(), "--jobs", "1"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(fs::read_to_string(dir.join("target/site/app.conf")).unwrap(), "port = 80\n");
}

#[test]
fn null_resources_need_no_module() {
    let dir = modelc_tests::scratch_dir("deploy-null");
    fs::write(
        dir.join("main.cf"),
        "import std::testing\n\
         a = std::testing::NullResource(name=\"a\", agentname=\"localhost\")\n\
         b = std::testing::NullResource(name=\"b\", agentname=\"localhost\", fail=true, requires=[a])\n\
         std::testing::NullResource(name=\"c\", agentname=\"localhost\", requires=[b])\n\
         std::testing::NullResource(name=\"d\", agentname=\"localhost\", requires=[a])\n",
    )
    .unwrap();
    let out = modelc(&["--format", "json", "deploy", "main.cf"], &dir);
    assert_eq!(out.code, 1);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let got: Vec<(String, String)> = results(&report);
    let expect = |name: &str, result: &str| {
        assert!(
            got.contains(&(format!("std::testing::NullResource[localhost,name={name}]"), result.to_owned())),
            "{got:?}"
        )
    };
    expect("a", "unchanged");
    expect("b", "failed");
    expect("c", "blocked");
    expect("d", "unchanged");
    let out = modelc(&["deploy", "main.cf", "--jobs", "1"], &dir);
    assert!(out.stdout.contains("it is set to fail (`fail = true`) (main.cf:3)"), "{}", out.stdout);
    assert!(out.stderr.contains("not converged: 2 unchanged, 1 failed, 1 blocked"), "{}", out.stderr);
    assert!(!out.stderr.contains('\r'), "no live display when stderr is not a terminal");
    // On a terminal, a status line names the running resource and is cleared as results arrive.
    let live = modelc_tests::modelc_with(&["deploy", "main.cf", "--jobs", "1"], &dir, true, false);
    assert!(live.stderr.contains("\r\x1b[K[0/4] std::testing::NullResource[localhost,name=a]"), "{:?}", live.stderr);
    assert_eq!(live.stdout, out.stdout, "the results are the same lines");
}

#[test]
fn usage_errors_exit_2() {
    let dir = modelc_tests::scratch_dir("deploy-usage");
    assert_eq!(modelc(&["deploy", "--ir", "missing.json"], &dir).code, 2);
    let missing = modelc(&["deploy", "--version", "1", "--store", "nothing.sqlite"], &dir);
    assert_eq!(missing.code, 2, "a store that is not there is a usage error");
    assert!(missing.stderr.contains("there is no store at"), "{}", missing.stderr);
    assert_eq!(modelc(&["deploy", "--jobs", "0", "x.cf"], &dir).code, 2);
}

/// Meta parameters written in the model reach the runtime: a resource with
/// `meta=std::Meta(noop=true)` is reported as it would change and is not written, `--noop` keeps
/// everything unwritten, and a model without meta exports exactly as before (no `meta` key).
#[test]
fn meta_parameters_from_the_model_reach_the_runtime() {
    let body = "quiet = std::Meta(noop=true)\n\
                fs::File(host=host, path=\"$T/quiet.txt\", content=\"q\\n\", mode=644, meta=quiet)\n\
                fs::File(host=host, path=\"$T/loud.txt\", content=\"l\\n\", mode=644)\n";
    let Some(dir) = project("meta", body) else { return };
    let target = dir.join("target");
    let (_, noop) = deploy_json(&dir, &["--noop"]);
    assert!(results(&noop).iter().all(|(_, r)| r == "would-change"), "{noop:#}");
    assert!(!target.join("quiet.txt").exists() && !target.join("loud.txt").exists());
    let (code, report) = deploy_json(&dir, &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(result_of(&report, "quiet.txt"), "would-change");
    assert_eq!(result_of(&report, "loud.txt"), "changed");
    assert!(!target.join("quiet.txt").exists() && target.join("loud.txt").exists());
    // The IR carries meta only where it is not the default.
    let out = modelc(&["compile", ".", "-o", "ir.json"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let ir: Value = serde_json::from_str(&fs::read_to_string(dir.join("ir.json")).unwrap()).unwrap();
    let metas: Vec<bool> = ir["resources"].as_array().unwrap().iter().map(|r| r.get("meta").is_some()).collect();
    assert_eq!(metas.iter().filter(|m| **m).count(), 1, "{metas:?}");
}

/// `modelc graph --autoedges` draws the edges deploy adds, in their own style; the IR and the
/// plain graph do not have them.
#[test]
fn the_graph_shows_autoedges_in_their_own_style() {
    // The fs module states a file's parent directory itself; nothing states a command's cwd.
    let body = "exec::Run(host=host, command=\"/bin/touch ran\", cwd=\"$T/work\", creates=\"$T/work/ran\")\n\
                fs::Directory(host=host, path=\"$T/work\", mode=755)\n";
    let Some(dir) = project("graph-implied", body) else { return };
    let plain = modelc(&["--format", "mermaid", "graph", "."], &dir);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    assert!(!plain.stdout.contains("-.->"), "{}", plain.stdout);
    let with = modelc(&["--format", "mermaid", "graph", ".", "--autoedges"], &dir);
    assert!(with.stdout.contains("r0 -.->|auto| r1"), "{}", with.stdout);
    let dot = modelc(&["graph", ".", "--autoedges"], &dir);
    assert!(dot.stdout.contains("r0 -> r1 [style=dashed, label=\"auto\"];"), "{}", dot.stdout);
    // Deploy follows it: the command, listed first, runs in its directory once that exists.
    let (code, report) = deploy_json(&dir, &["-j", "1"]);
    assert_eq!(code, 0, "{report:#}");
    assert!(dir.join("target/work/ran").exists());
    // Without autoedges, in the stated order, the command finds no directory to run in.
    fs::remove_dir_all(dir.join("target/work")).unwrap();
    let (code, report) = deploy_json(&dir, &["-j", "1", "--no-autoedges"]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(result_of(&report, "exec::Run"), "failed");
}

/// A delayed notification written in the model: a changed configuration file reloads a service
/// once, at the end of the run, even though another resource failed; an unchanged file reloads
/// nothing.
#[test]
fn a_delayed_notification_from_the_model_reloads_once_at_the_end() {
    let body = r#"
service = exec::Run(host=host, command="true", reload="sh -c 'echo reload >> $T/log'")
a = fs::File(host=host, path="$T/a.conf", content="a\n", mode=644)
b = fs::File(host=host, path="$T/b.conf", content="b\n", mode=644)
std::Notify(sender=a, receiver=service)
std::Notify(sender=b, receiver=service, timing="delayed")
exec::Run(host=host, command="false")
"#;
    let Some(dir) = project("notify", body) else { return };
    let target = dir.join("target");
    let (code, report) = deploy_json(&dir, &[]);
    assert_eq!(code, 1, "`false` fails the run: {report:#}");
    let notifications = report["notifications"].as_array().unwrap();
    assert_eq!(notifications.len(), 1, "{report:#}");
    assert_eq!(notifications[0]["timing"], "delayed");
    assert_eq!(notifications[0]["result"], "changed");
    assert_eq!(notifications[0]["senders"].as_array().unwrap().len(), 2);
    assert_eq!(fs::read_to_string(target.join("log")).unwrap(), "reload\n", "one reload for two changed files");

    let (_, again) = deploy_json(&dir, &[]);
    assert!(again.get("notifications").is_none_or(|n| n.as_array().unwrap().is_empty()), "{again:#}");
    assert_eq!(fs::read_to_string(target.join("log")).unwrap(), "reload\n", "nothing changed: no reload");

    let out = modelc(&["compile", ".", "-o", "ir.json"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let ir: Value = serde_json::from_str(&fs::read_to_string(dir.join("ir.json")).unwrap()).unwrap();
    let notify: Vec<&Value> = ir["resources"].as_array().unwrap().iter().filter_map(|r| r.get("notify")).collect();
    assert_eq!(notify.len(), 2, "the two files carry their notification; nothing else has a `notify`");
}

/// Files of one directory are applied as a group, which the report shows on every member;
/// `--no-autogroup` applies each on its own.
#[test]
fn files_of_one_directory_deploy_as_a_group_unless_asked_not_to() {
    let body = r#"
for n in ["a", "b", "c"]:
    fs::File(host=host, path="$T/{{n}}.conf", content="{{n}}\n", mode=644)
end
"#;
    let Some(dir) = project("autogroup", body) else { return };
    let (code, report) = deploy_json(&dir, &["--dry-run"]);
    assert_eq!(code, 0, "{report:#}");
    let groups: Vec<&Value> = report["resources"].as_array().unwrap().iter().map(|r| &r["group"]).collect();
    assert!(groups.iter().all(|g| g.is_string() && *g == groups[0]), "{report:#}");
    let (code, report) = deploy_json(&dir, &["--no-autogroup"]);
    assert_eq!(code, 0, "{report:#}");
    assert!(report["resources"].as_array().unwrap().iter().all(|r| r.get("group").is_none()), "{report:#}");
    for n in ["a", "b", "c"] {
        assert_eq!(fs::read_to_string(dir.join("target").join(format!("{n}.conf"))).unwrap(), format!("{n}\n"));
    }
}

/// `--graph`: a YAML graph merged with the model at a handover vertex deploys both sides in
/// the order each states; an unmatched handover vertex stops the deploy naming it; a graph
/// without handovers deploys alone.
#[test]
fn a_yaml_graph_merges_with_the_model_at_its_handover_vertex() {
    let body = r#"
made = fs::File(host=host, path="$T/from-model", content="model\n", mode=644)
std::Handover(name="app", requires=[made])
"#;
    let Some(dir) = project("graph", body) else { return };
    let target = dir.join("target");
    let graph = format!(
        "graph: other-tool\nresources:\n  - {{kind: file, name: first, fields: {{path: \"{t}/from-graph\", content: \"graph\\n\"}}}}\n  - {{kind: handover, name: app}}\n  - {{kind: exec, name: last, fields: {{command: \"sh -c 'cat {t}/from-graph {t}/from-model > {t}/both'\"}}}}\nedges:\n  - {{from: {{kind: file, name: first}}, to: {{kind: handover, name: app}}}}\n  - {{from: {{kind: handover, name: app}}, to: {{kind: exec, name: last}}}}\n",
        t = target.display()
    );
    fs::write(dir.join("graph.yaml"), &graph).unwrap();
    let (code, report) = deploy_json(&dir, &["--graph", "graph.yaml"]);
    assert_eq!(code, 0, "{report:#}");
    // `last` came after the handover, which came after both files.
    assert_eq!(fs::read_to_string(target.join("both")).unwrap(), "graph\nmodel\n");
    assert!(report["source"].as_str().unwrap().contains("with graph graph.yaml"), "{report:#}");

    fs::write(dir.join("wrong.yaml"), "graph: g\nresources:\n  - {kind: handover, name: db}\n").unwrap();
    let out = deploy(&dir, &["--graph", "wrong.yaml"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("handover vertex `db`"), "{}", out.stderr);
    assert!(out.stderr.contains("std::Handover(name=\"app\") of the model has no match"), "{}", out.stderr);

    let alone = format!(
        "graph: alone\nresources:\n  - {{kind: file, name: a, fields: {{path: \"{}/alone\", content: \"a\"}}}}\n",
        target.display()
    );
    fs::write(dir.join("alone.yaml"), alone).unwrap();
    let out = modelc(&["--color", "never", "deploy", "--graph", "alone.yaml"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(fs::read_to_string(target.join("alone")).unwrap(), "a");
}

/// Each change is said in the user's terms, the raw attributes stay in the JSON report, and a
/// resource taken out of the model that is not purged on delete is named as staying, with how
/// to remove it, by the deploy and by `plan` before it.
#[test]
fn changes_read_in_words_and_removed_resources_that_stay_are_named() {
    let model = r#"
fs::Directory(host=host, path="$T/d", mode=755)
fs::File(host=host, path="$T/d/keep", content="one\ntwo\n", mode=644)
fs::File(host=host, path="$T/d/gone", content="x\n")
"#;
    let Some(dir) = project("words", model) else { return };
    let target = dir.join("target");
    let out = deploy(&dir, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("changed       fs::Directory") && out.stdout.contains("              created\n"));
    assert!(out.stdout.contains("              mode 755\n"), "{}", out.stdout);
    assert!(!out.stdout.contains("purged"), "{}", out.stdout);

    // Another mode and a line more; `gone` is taken out of the model.
    write_model(
        &dir,
        &model
            .replace("mode=644", "mode=600")
            .replace("two\\n", "two\\nthree\\n")
            .replace("fs::File(host=host, path=\"$T/d/gone\", content=\"x\\n\")\n", ""),
    );
    let exported = modelc(&["export"], &dir);
    assert_eq!(exported.code, 0, "{}", exported.stderr);
    let out = deploy(&dir, &["--dry-run"]);
    assert!(out.stdout.contains("              mode 644 → 600\n"), "{}", out.stdout);
    assert!(out.stdout.contains("              content (1 line added)\n"), "{}", out.stdout);
    assert!(out.stdout.contains("+three"), "{}", out.stdout);
    assert!(
        out.stderr.contains("note: 1 resource removed from the model would stay on this machine")
            && out.stderr.contains("fs::File[localhost,path=")
            && out.stderr.contains("purged=true"),
        "{}",
        out.stderr
    );
    let (_, report) = deploy_json(&dir, &[]);
    let left: Vec<&str> = report["left_behind"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(left.len(), 1);
    assert!(left[0].ends_with("/d/gone]"), "{left:?}");
    let keep = report["resources"].as_array().unwrap().iter().find(|r| r["id"].as_str().unwrap().ends_with("/d/keep]"));
    let changes = keep.unwrap()["changes"].as_array().unwrap();
    assert!(changes.iter().any(|c| c["field"] == "permissions" && c["old"] == 644 && c["new"] == 600), "{changes:?}");
    assert!(target.join("d/gone").exists(), "no purge_on_delete: the file stays");
}

/// `--color always` colours the results and the diff lines; `never` does not.
#[test]
fn results_are_coloured_when_asked() {
    let Some(dir) = project("colour", SITE) else { return };
    let coloured = modelc(&["--color", "always", "deploy", ".", "--dry-run"], &dir);
    assert!(coloured.stdout.contains("\x1b[33mwould-change \x1b[0m"), "{:?}", coloured.stdout);
    assert!(coloured.stdout.contains("\x1b[32m+port = 80\x1b[0m"), "{:?}", coloured.stdout);
    let plain = deploy(&dir, &["--dry-run"]);
    assert!(!plain.stdout.contains('\x1b'), "{:?}", plain.stdout);
}

/// `plan`, `diff` and `show --filter` print a file's content as lines, not as two hashes, and
/// mark the removed resources a deploy would leave on the machine.
#[test]
fn plan_diff_and_show_print_file_contents_as_lines() {
    let model = r#"
fs::File(host=host, path="$T/app.conf", content="port = 80\nhost = a\nlog = on\n")
fs::File(host=host, path="$T/old.conf", content="x\n")
"#;
    let Some(dir) = project("contents", model) else { return };
    assert_eq!(modelc(&["export"], &dir).code, 0);
    write_model(
        &dir,
        &model
            .replace("port = 80", "port = 443")
            .replace("fs::File(host=host, path=\"$T/old.conf\", content=\"x\\n\")\n", ""),
    );
    let plan = modelc(&["plan"], &dir);
    assert_eq!(plan.code, 0, "{}", plan.stderr);
    assert!(plan.stdout.contains("    content (sha1 "), "{}", plan.stdout);
    assert!(plan.stdout.contains("      -port = 80\n      +port = 443\n       host = a\n"), "{}", plan.stdout);
    assert!(
        plan.stdout.contains("old.conf] (stays on the machine: it does not set purge_on_delete)"),
        "{}",
        plan.stdout
    );
    assert!(plan.stdout.contains("note: a deploy leaves 1 of the removed resources on the machine"), "{}", plan.stdout);

    assert_eq!(modelc(&["export"], &dir).code, 0);
    let diff = modelc(&["diff", "1", "2"], &dir);
    assert!(diff.stdout.contains("      -port = 80\n      +port = 443\n"), "{}", diff.stdout);
    let show = modelc(&["show", "--filter", "app.conf"], &dir);
    assert!(show.stdout.contains("  content:\n") && show.stdout.contains("    +port = 443\n"), "{}", show.stdout);
    // The JSON view keeps the raw attributes.
    let json = modelc(&["--format", "json", "diff", "1", "2"], &dir);
    let document: Value = serde_json::from_str(&json.stdout).unwrap();
    assert!(document["changed"][0]["attributes"]["hash"].is_array(), "{document:#}");
}
