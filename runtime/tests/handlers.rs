//! The shipped handlers on real files in temporary directories, driven through the engine with
//! resources shaped as the reference exports them.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use modelc_ir::{Resource, ResourceState, Source};
use modelc_runtime::{AgentSelection, Handlers, MemoryContent, Options, Outcome, Plan, RunReport, Silent};
use serde_json::{Value, json};
use sha1::{Digest, Sha1};

fn sha1(text: &str) -> String {
    Sha1::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

fn local_via() -> Value {
    json!({"method_name": "local", "name": ""})
}

fn resource(entity_type: &str, key: &str, value: &str, attributes: Value, requires: &[&Resource]) -> Resource {
    let mut all = serde_json::Map::new();
    all.insert(key.into(), json!(value));
    all.extend(attributes.as_object().cloned().unwrap_or_default());
    all.entry("purged").or_insert(json!(false));
    all.entry("via").or_insert(local_via());
    Resource {
        id: format!("{entity_type}[h,{key}={value}]"),
        entity_type: entity_type.into(),
        agent: "h".into(),
        attributes: all.into_iter().collect(),
        requires: requires.iter().map(|r| r.id.clone()).collect(),
        send_event: true,
        receive_events: true,
        resource_set: None,
        state: ResourceState::Available,
        source: Source { entity: entity_type.into(), file: "main.cf".into(), line: 3 }.into(),
        meta: Default::default(),
        notify: Vec::new(),
    }
}

/// An `fs::File` and its content.
fn file(path: &Path, content: &str, attributes: Value, requires: &[&Resource]) -> (Resource, (String, Vec<u8>)) {
    let mut attributes = attributes;
    attributes["hash"] = json!(sha1(content));
    for field in ["owner", "group", "permissions"] {
        attributes.as_object_mut().unwrap().entry(field).or_insert(Value::Null);
    }
    let r = resource("fs::File", "path", path.to_str().unwrap(), attributes, requires);
    (r, (sha1(content), content.as_bytes().to_vec()))
}

fn directory(path: &Path, attributes: Value, requires: &[&Resource]) -> Resource {
    let mut attributes = attributes;
    for field in ["owner", "group", "permissions"] {
        attributes.as_object_mut().unwrap().entry(field).or_insert(Value::Null);
    }
    resource("fs::Directory", "path", path.to_str().unwrap(), attributes, requires)
}

fn run_command(command: &str, attributes: Value, requires: &[&Resource]) -> Resource {
    let defaults = json!({"creates": "", "cwd": "", "environment": {}, "onlyif": "", "path": "", "reload": "",
        "reload_only": false, "returns": [0], "timeout": 300, "unless": "", "skip_on_fail": false});
    let mut all = defaults.as_object().unwrap().clone();
    all.extend(attributes.as_object().cloned().unwrap_or_default());
    resource("exec::Run", "command", command, Value::Object(all), requires)
}

struct Deploy {
    resources: Vec<Resource>,
    content: MemoryContent,
}

impl Deploy {
    fn new() -> Deploy {
        Deploy { resources: Vec::new(), content: MemoryContent(HashMap::new()) }
    }

    fn add(&mut self, r: Resource) -> Resource {
        self.resources.push(r.clone());
        r
    }

    fn add_file(&mut self, (r, (hash, bytes)): (Resource, (String, Vec<u8>))) -> Resource {
        self.content.0.insert(hash, bytes);
        self.add(r)
    }

    fn run(&self, dry_run: bool) -> RunReport {
        let handlers = Handlers::builtin();
        let plan = Plan::new(self.resources.clone(), &[], &AgentSelection::Named(vec!["h".into()]), &handlers, &[]);
        modelc_runtime::run(
            &plan,
            &handlers,
            &self.content,
            &Options { jobs: 2, dry_run, ..Options::default() },
            &Silent,
        )
    }
}

fn outcome(report: &RunReport, r: &Resource) -> Outcome {
    report.get(&r.id).unwrap().result
}

fn error(report: &RunReport, r: &Resource) -> String {
    report.get(&r.id).unwrap().error.clone().unwrap_or_default()
}

/// Every path under `root` with its kind, mode and content (or link target).
fn tree(root: &Path) -> Vec<(String, String)> {
    let mut entries = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let mut names: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        names.sort();
        for path in names {
            let meta = fs::symlink_metadata(&path).unwrap();
            let mode = meta.mode() & 0o7777;
            let what = if meta.file_type().is_symlink() {
                format!("link {}", fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                stack.push(path.clone());
                format!("dir {mode:o}")
            } else {
                format!("file {mode:o} {}", sha1(&String::from_utf8_lossy(&fs::read(&path).unwrap())))
            };
            entries.push((path.display().to_string(), what));
        }
    }
    entries.sort();
    entries
}

#[test]
fn a_first_deploy_converges_and_a_second_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let mut d = Deploy::new();
    let app = d.add(directory(&root.join("app"), json!({"permissions": 750}), &[]));
    let conf = d.add(directory(&root.join("app/conf"), json!({}), &[&app]));
    let main = d.add_file(file(&root.join("app/conf/main.conf"), "port = 80\n", json!({"permissions": 640}), &[&conf]));
    let link = d.add(resource(
        "fs::Symlink",
        "dst",
        root.join("app/current").to_str().unwrap(),
        json!({"src": root.join("app/conf").to_str().unwrap()}),
        &[&conf],
    ));
    let marker = root.join("app/initialised");
    let init = d.add(run_command(
        &format!("touch {}", marker.display()),
        json!({"creates": marker.to_str().unwrap()}),
        &[&main],
    ));

    let first = d.run(false);
    assert!(first.converged(), "{first:#?}");
    for r in [&app, &conf, &main, &link, &init] {
        assert_eq!(outcome(&first, r), Outcome::Changed, "{}", r.id);
    }
    assert_eq!(fs::read_to_string(root.join("app/conf/main.conf")).unwrap(), "port = 80\n");
    assert_eq!(fs::metadata(root.join("app/conf/main.conf")).unwrap().mode() & 0o7777, 0o640);
    assert_eq!(fs::metadata(root.join("app")).unwrap().mode() & 0o7777, 0o750);
    assert_eq!(fs::read_link(root.join("app/current")).unwrap(), root.join("app/conf"));
    assert!(marker.exists());

    let second = d.run(false);
    for r in &d.resources {
        assert_eq!(outcome(&second, r), Outcome::Unchanged, "{}", r.id);
    }
}

#[test]
fn drift_is_repaired() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let mut d = Deploy::new();
    let edited = d.add_file(file(&root.join("edited"), "desired\n", json!({}), &[]));
    let removed = d.add_file(file(&root.join("removed"), "here\n", json!({}), &[]));
    let chmodded = d.add_file(file(&root.join("chmodded"), "x", json!({"permissions": 600}), &[]));
    let relinked = d.add(resource(
        "fs::Symlink",
        "dst",
        root.join("link").to_str().unwrap(),
        json!({"src": "/etc/hostname"}),
        &[],
    ));
    assert!(d.run(false).converged());

    fs::write(root.join("edited"), "someone else's\n").unwrap();
    fs::remove_file(root.join("removed")).unwrap();
    fs::set_permissions(root.join("chmodded"), fs::Permissions::from_mode(0o666)).unwrap();
    fs::remove_file(root.join("link")).unwrap();
    std::os::unix::fs::symlink("/elsewhere", root.join("link")).unwrap();

    let dry = d.run(true);
    let edit = &dry.get(&edited.id).unwrap().changes[0];
    assert_eq!(edit.field, "hash");
    let diff = edit.diff.as_deref().unwrap();
    assert!(diff.contains("-someone else's") && diff.contains("+desired"), "{diff}");
    let chmod = &dry.get(&chmodded.id).unwrap().changes[0];
    assert_eq!((chmod.field.as_str(), &chmod.old, &chmod.new), ("permissions", &json!(666), &json!(600)));

    let repair = d.run(false);
    for r in [&edited, &removed, &chmodded, &relinked] {
        assert_eq!(outcome(&repair, r), Outcome::Changed, "{}", r.id);
    }
    assert_eq!(fs::read_to_string(root.join("edited")).unwrap(), "desired\n");
    assert_eq!(fs::read_to_string(root.join("removed")).unwrap(), "here\n");
    assert_eq!(fs::metadata(root.join("chmodded")).unwrap().mode() & 0o7777, 0o600);
    assert_eq!(fs::read_link(root.join("link")).unwrap(), Path::new("/etc/hostname"));
    assert!(d.run(false).resources.iter().all(|r| r.result == Outcome::Unchanged));
}

#[test]
fn a_dry_run_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    fs::write(root.join("existing"), "old\n").unwrap();
    fs::create_dir(root.join("doomed")).unwrap();
    fs::write(root.join("doomed/inside"), "x").unwrap();
    let mut d = Deploy::new();
    let dir = d.add(directory(&root.join("new"), json!({}), &[]));
    let inside = d.add_file(file(&root.join("new/file"), "a", json!({}), &[&dir]));
    let existing = d.add_file(file(&root.join("existing"), "new\n", json!({"permissions": 600}), &[]));
    let doomed = d.add(directory(&root.join("doomed"), json!({"purged": true}), &[]));
    let command = d.add(run_command(&format!("touch {}", root.join("ran").display()), json!({}), &[]));
    let before = tree(root);

    let report = d.run(true);
    assert_eq!(tree(root), before, "a dry run changed the tree");
    assert_eq!(outcome(&report, &dir), Outcome::WouldChange);
    // Predicted from the desired state: the directory it sits in would be created first.
    assert_eq!(outcome(&report, &inside), Outcome::WouldChange);
    let content = &report.get(&inside.id).unwrap().changes[0];
    assert_eq!((content.field.as_str(), content.old.is_null()), ("hash", true));
    assert!(content.diff.as_deref().is_some_and(|d| d.contains("--- /dev/null") && d.contains("+a")), "{content:?}");
    assert_eq!(content.summary(false), "content (1 line)");
    assert_eq!(outcome(&report, &existing), Outcome::WouldChange);
    assert_eq!(outcome(&report, &doomed), Outcome::WouldChange);
    assert_eq!(outcome(&report, &command), Outcome::WouldChange);
    assert!(report.converged());
}

/// What a real run would fail on, a dry run reports as `would-fail` with the reason, and the
/// run would not converge: a file in a directory that neither exists nor is managed, a file
/// owned by a user the machine does not have. A command after a change is not predicted.
#[test]
fn a_dry_run_predicts_failures_and_leaves_commands_after_changes_unevaluated() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let mut d = Deploy::new();
    let orphan = d.add_file(file(&root.join("missing/file"), "a", json!({}), &[]));
    let stranger = d.add_file(file(&root.join("owned"), "a", json!({"owner": "no-such-user-here"}), &[]));
    let dir = d.add(directory(&root.join("new"), json!({}), &[]));
    let command = d.add(run_command("true", json!({}), &[&dir]));
    let report = d.run(true);
    assert_eq!(outcome(&report, &orphan), Outcome::WouldFail);
    assert!(error(&report, &orphan).contains("missing does not exist, and the model does not manage it"));
    assert_eq!(outcome(&report, &stranger), Outcome::WouldFail);
    assert!(error(&report, &stranger).contains("no user `no-such-user-here`"), "{}", error(&report, &stranger));
    assert_eq!(outcome(&report, &command), Outcome::NotEvaluated);
    assert!(!report.converged(), "a real run would not converge");
    assert_eq!(tree(root), Vec::new(), "a dry run changed the tree");
}

#[test]
fn purged_files_directories_and_links_are_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    fs::create_dir_all(root.join("old/deep")).unwrap();
    fs::write(root.join("old/deep/f"), "x").unwrap();
    fs::write(root.join("stale"), "x").unwrap();
    std::os::unix::fs::symlink("/nowhere", root.join("dangling")).unwrap();
    let mut d = Deploy::new();
    let f = d.add_file(file(&root.join("stale"), "", json!({"purged": true}), &[]));
    let dir = d.add(directory(&root.join("old"), json!({"purged": true}), &[]));
    let link = d.add(resource(
        "fs::Symlink",
        "dst",
        root.join("dangling").to_str().unwrap(),
        json!({"src": "/nowhere", "purged": true}),
        &[],
    ));
    let report = d.run(false);
    for r in [&f, &dir, &link] {
        assert_eq!(outcome(&report, r), Outcome::Changed);
    }
    assert!(tree(root).is_empty());
    assert!(d.run(false).resources.iter().all(|r| r.result == Outcome::Unchanged));
}

#[test]
fn bad_input_fails_only_its_resource_with_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::os::unix::fs::symlink(root.join("loop-b"), root.join("loop-a")).unwrap();
    std::os::unix::fs::symlink(root.join("loop-a"), root.join("loop-b")).unwrap();
    fs::create_dir(root.join("locked")).unwrap();
    fs::set_permissions(root.join("locked"), fs::Permissions::from_mode(0o500)).unwrap();
    let mut d = Deploy::new();
    let relative = d.add_file(file(Path::new("etc/app.conf"), "x", json!({}), &[]));
    let orphan = d.add_file(file(&root.join("missing/dir/f"), "x", json!({}), &[]));
    let looped = d.add_file(file(&root.join("loop-a/f"), "x", json!({}), &[]));
    let hangs = d.add(run_command("sleep 30", json!({"timeout": 1}), &[]));
    let no_such = d.add(run_command("/no/such/binary --flag", json!({}), &[]));
    let exits = d.add(run_command("false", json!({}), &[]));
    let skipped = d.add(run_command("sh -c 'exit 3'", json!({"skip_on_fail": true}), &[]));
    let fine = d.add_file(file(&root.join("fine"), "ok", json!({}), &[]));
    let unknown_user = d.add_file(file(&root.join("owned"), "x", json!({"owner": "no-such-user-modelc"}), &[]));
    let bad_mode = d.add_file(file(&root.join("mode"), "x", json!({"permissions": 698}), &[]));
    let denied = d.add_file(file(&root.join("locked/f"), "x", json!({}), &[]));
    let report = d.run(false);

    assert!(error(&report, &relative).contains("`etc/app.conf` is a relative path"));
    assert!(error(&report, &orphan).contains("does not exist, and the model does not manage it"));
    assert!(error(&report, &looped).contains("symbolic link loop"), "{}", error(&report, &looped));
    assert!(error(&report, &hangs).contains("timeout of 1 s; its process group was killed"));
    assert!(error(&report, &no_such).contains("`/no/such/binary` was not found"));
    assert!(error(&report, &exits).contains("`false` exited with 1"));
    assert_eq!(outcome(&report, &skipped), Outcome::Skipped);
    assert!(error(&report, &unknown_user).contains("no user `no-such-user-modelc`"));
    assert!(error(&report, &bad_mode).contains("698 are not an octal mode"));
    assert_eq!(outcome(&report, &fine), Outcome::Changed);
    assert!(!root.join("owned").exists(), "a file with an unknown owner is not written");
    if !nix::unistd::Uid::effective().is_root() {
        assert!(error(&report, &denied).contains("permission denied"), "{}", error(&report, &denied));
    }
    for failed in [&relative, &orphan, &looped, &hangs, &no_such, &exits, &unknown_user, &bad_mode] {
        assert_eq!(outcome(&report, failed), Outcome::Failed, "{}", failed.id);
    }
    assert_eq!(report.get(&relative.id).unwrap().source, "main.cf:3");
    fs::set_permissions(root.join("locked"), fs::Permissions::from_mode(0o700)).unwrap();
}

#[test]
fn owner_and_group_are_set_by_name_or_the_need_for_root_is_explained() {
    let tmp = tempfile::tempdir().unwrap();
    let mut d = Deploy::new();
    let root_user = nix::unistd::Uid::effective().is_root();
    // As root the file is given away; as anyone else the error says what it needs.
    let owner = if root_user { "nobody" } else { "root" };
    let r = d.add_file(file(&tmp.path().join("f"), "x", json!({"owner": owner}), &[]));
    let report = d.run(false);
    if root_user {
        assert_eq!(outcome(&report, &r), Outcome::Changed);
        let nobody = nix::unistd::User::from_name("nobody").unwrap().unwrap();
        assert_eq!(fs::metadata(tmp.path().join("f")).unwrap().uid(), nobody.uid.as_raw());
        assert_eq!(outcome(&d.run(false), &r), Outcome::Unchanged);
    } else {
        assert!(error(&report, &r).contains("changing the owner needs root"), "{}", error(&report, &r));
    }
}

#[test]
fn run_guards_decide_whether_the_command_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let log = root.join("log");
    let append = |word: &str| format!("sh -c 'echo {word} >> {}'", log.display());
    fs::write(root.join("exists"), "").unwrap();
    let mut d = Deploy::new();
    d.add(run_command(&append("creates-blocks"), json!({"creates": root.join("exists").to_str().unwrap()}), &[]));
    d.add(run_command(&append("creates-allows"), json!({"creates": root.join("absent").to_str().unwrap()}), &[]));
    d.add(run_command(&append("unless-true"), json!({"unless": "true"}), &[]));
    d.add(run_command(&append("unless-missing"), json!({"unless": "/no/such/guard"}), &[]));
    d.add(run_command(&append("onlyif-false"), json!({"onlyif": "false"}), &[]));
    d.add(run_command(&append("onlyif-true"), json!({"onlyif": "true"}), &[]));
    d.add(run_command(
        &append("env"),
        json!({"onlyif": "sh -c 'test \"$GUARD\" = yes'", "environment": {"GUARD": "yes"}}),
        &[],
    ));
    d.add(run_command(&append("returns-3"), json!({}), &[]));
    let report = d.run(false);
    assert!(report.converged(), "{report:#?}");
    let mut ran: Vec<String> = fs::read_to_string(&log).unwrap().lines().map(str::to_owned).collect();
    ran.sort();
    assert_eq!(ran, ["creates-allows", "env", "onlyif-true", "returns-3", "unless-missing"]);

    let mut d = Deploy::new();
    let cwd = d.add(run_command(
        &format!("sh -c 'pwd > {}'", root.join("cwd").display()),
        json!({"cwd": "/tmp", "returns": [0, 3]}),
        &[],
    ));
    let accepted = d.add(run_command("sh -c 'exit 3'", json!({"returns": [0, 3]}), &[]));
    let report = d.run(false);
    assert_eq!(outcome(&report, &cwd), Outcome::Changed);
    assert_eq!(fs::read_to_string(root.join("cwd")).unwrap().trim(), "/tmp");
    assert_eq!(outcome(&report, &accepted), Outcome::Changed);
}

#[test]
fn a_changed_file_reloads_the_run_that_requires_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let log = root.join("log");
    let append = |word: &str| format!("sh -c 'echo {word} >> {}'", log.display());
    let mut d = Deploy::new();
    let conf = d.add_file(file(&root.join("app.conf"), "v1", json!({}), &[]));
    let service = d.add(run_command(&append("reload-only"), json!({"reload_only": true}), &[&conf]));
    let both = d.add(run_command(&append("command"), json!({"reload": append("reload")}), &[&conf]));
    // Its guard holds once the others have written the log: neither its command nor its reload
    // runs (the module gates reloads on the guards too).
    let guarded = d.add(run_command(
        &append("guarded"),
        json!({"reload": append("guarded-reload"), "creates": log.to_str().unwrap()}),
        &[&service, &both],
    ));
    let report = d.run(false);
    assert_eq!(outcome(&report, &service), Outcome::Changed);
    assert!(report.get(&service.id).unwrap().refreshed);
    assert_eq!(outcome(&report, &both), Outcome::Changed);
    assert_eq!(outcome(&report, &guarded), Outcome::Unchanged);
    let mut lines: Vec<String> = fs::read_to_string(&log).unwrap().lines().map(str::to_owned).collect();
    lines.sort();
    assert_eq!(lines, ["command", "reload", "reload-only"]);

    // Unchanged file: nothing reloads.
    fs::remove_file(&log).unwrap();
    let report = d.run(false);
    assert_eq!(outcome(&report, &service), Outcome::Unchanged);
    assert!(!log.exists() || !fs::read_to_string(&log).unwrap().contains("reload-only"));
}

#[test]
fn purging_the_root_directory_is_refused() {
    // A dry run, so that a regression reports instead of removing anything.
    let mut d = Deploy::new();
    let root = d.add(directory(Path::new("/"), json!({"purged": true}), &[]));
    let report = d.run(true);
    assert_eq!(outcome(&report, &root), Outcome::WouldFail);
    assert!(error(&report, &root).contains("refuses to remove it"));
}

#[test]
fn many_files_written_at_once_into_one_directory_all_land() {
    // Workers writing into one directory at the same time: one worker's look for leftovers of
    // a killed run must not take another's file in progress for one.
    let tmp = tempfile::tempdir().unwrap();
    // A full directory makes the first look for leftovers long, while the others write.
    for i in 0..5000 {
        fs::write(tmp.path().join(format!("other-{i}")), "").unwrap();
    }
    let mut d = Deploy::new();
    let files: Vec<Resource> = (0..200)
        .map(|i| d.add_file(file(&tmp.path().join(format!("f{i}")), &format!("{i}\n"), json!({}), &[])))
        .collect();
    let handlers = Handlers::builtin();
    let plan = Plan::new(d.resources.clone(), &[], &AgentSelection::Named(vec!["h".into()]), &handlers, &[]);
    let report = modelc_runtime::run(
        &plan,
        &handlers,
        &d.content,
        &Options { jobs: 8, dry_run: false, ..Options::default() },
        &Silent,
    );
    for r in &files {
        assert_eq!(outcome(&report, r), Outcome::Changed, "{}: {}", r.id, error(&report, r));
    }
    assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 5200, "no temporary is left");
}

/// New content keeps the owner and group of the file it replaces when the model names none
/// (the content is written as whoever deploys, then renamed over the file). Only root can
/// give a file away, so this runs as root only.
#[test]
fn new_content_keeps_the_files_owner() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("owned");
    fs::write(&path, "old\n").unwrap();
    let daemon = (nix::unistd::Uid::from_raw(1), nix::unistd::Gid::from_raw(1));
    nix::unistd::chown(&path, Some(daemon.0), Some(daemon.1)).unwrap();
    let mut d = Deploy::new();
    d.add_file(file(&path, "new\n", json!({}), &[]));
    assert!(d.run(false).converged());
    assert_eq!(fs::read_to_string(&path).unwrap(), "new\n");
    let meta = fs::metadata(&path).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (1, 1), "the owner and group stay");
}
