//! The public `files` module 2.1.1 deployed by its own Python handlers, from the registry in a
//! throwaway environment with no inmanta-core (skipped without Python or the registry; a failed
//! install fails the run under `CI=true`): on this machine, and over SSH through a real OpenSSH
//! server on loopback (`modelc-test-sshd`), where the mitogen proxy's operations are done by
//! modelc's helper and no Python runs. Everything lands in temporary directories.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stderr, reason = "test code")]

mod support;

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use modelc_test_sshd::Sshd;
use serde_json::Value;

fn files_env() -> Option<PathBuf> {
    modelc_test_pyenv::files_handlers_env(Path::new(env!("CARGO_TARGET_TMPDIR")))
}

/// Every resource type files 2.1.1 ships a handler for that a test can own, on host `host`
/// whose context is `$VIA`, under `$T`.
const FILES_MODEL: &str = "\
import files
import files::json
import files::host
import mitogen

host = std::Host(name=\"localhost\", os=std::linux, via=$VIA)
app = files::Directory(host=host, path=\"$T/app\", permissions=750)
files::TextFile(host=host, path=\"$T/app/motd\", content=\"welcome\\n\", permissions=640, requires=app)
files::Symlink(host=host, path=\"$T/current\", target=\"$T/app\")
files::JsonFile(host=host, path=\"$T/app/config.json\", indent=2, requires=app,
    values=[
        files::json::Object(path=\"people[name=bob]\", value={\"name\": \"bob\", \"age\": 20}),
        files::json::Object(path=\"settings\", operation=\"merge\", value={\"debug\": false}),
    ],
)
files::HostFile(host=host, path=\"$T/hosts\",
    entries=[files::host::Entry(hostname=\"example.com\", address4=\"192.168.10.10\")])
";

/// `modelc --python ENV --format json deploy . ARGS` in `dir`: the exit code and the report.
fn deploy(dir: &Path, python: &Path, extra: &[&str]) -> (i32, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_modelc"))
        .arg("--python")
        .arg(python)
        .args(["--format", "json", "--color", "never", "deploy", ".", "--helper-dir"])
        .arg(dir.join("cache"))
        .args(extra)
        .current_dir(dir)
        .env_remove("MODELC_STORE")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap_or(-1), report)
}

fn resource<'a>(report: &'a Value, id_part: &str) -> &'a Value {
    let resources = report["resources"].as_array().unwrap();
    resources.iter().find(|r| r["id"].as_str().unwrap().contains(id_part)).unwrap_or_else(|| panic!("no {id_part}"))
}

/// id → result, with `$T` for the target directory.
fn results(report: &Value, target: &Path) -> BTreeMap<String, String> {
    let resources = report["resources"].as_array().unwrap();
    resources
        .iter()
        .map(|r| {
            let id = r["id"].as_str().unwrap().replace(target.to_str().unwrap(), "$T");
            (id, r["result"].as_str().unwrap().to_owned())
        })
        .collect()
}

/// The files model through context `via`: converge, nothing to do, drift found by a dry run
/// that changes nothing, drift repaired. Each step's results and the tree after it.
fn scenario(dir: &Path, python: &Path, via: &str) -> Vec<(BTreeMap<String, String>, Vec<String>)> {
    let target = dir.join("target");
    std::fs::create_dir_all(&target).unwrap();
    let model = FILES_MODEL.replace("$VIA", via).replace("$T", target.to_str().unwrap());
    std::fs::write(dir.join("project.yml"), "name: files_handlers\n").unwrap();
    std::fs::write(dir.join("main.cf"), model).unwrap();
    let mut steps = Vec::new();
    let mut step = |extra: &[&str], code: i32| -> Value {
        let (status, report) = deploy(dir, python, extra);
        assert_eq!(status, code, "{via}: {report:#}");
        steps.push((results(&report, &target), support::tree(&target)));
        report
    };
    step(&[], 0);
    step(&[], 0);
    std::fs::write(target.join("app/motd"), "changed behind its back\n").unwrap();
    std::fs::write(target.join("app/config.json"), "{\"people\": []}").unwrap();
    let before = support::tree(&target);
    let dry = step(&["--dry-run"], 0);
    assert_eq!(support::tree(&target), before, "{via}: a dry run changed the machine");
    let change = &resource(&dry, "files::TextFile[")["changes"][0];
    assert_eq!((change["field"].as_str(), change["new"].as_str()), (Some("content"), Some("welcome\n")), "{via}");
    step(&[], 0);
    steps
}

fn assert_converged(steps: &[(BTreeMap<String, String>, Vec<String>)], target: &Path) {
    let [first, second, dry, repaired] = steps else { panic!("four steps") };
    assert_eq!(first.0.len(), 5, "{first:?}");
    assert!(first.0.values().all(|r| r == "changed"), "{:?}", first.0);
    assert!(second.0.values().all(|r| r == "unchanged"), "{:?}", second.0);
    let changed = |step: &BTreeMap<String, String>, result: &str| -> Vec<String> {
        step.iter().filter(|(_, r)| *r == result).map(|(id, _)| id.split('[').next().unwrap().to_owned()).collect()
    };
    assert_eq!(changed(&dry.0, "would-change"), ["files::JsonFile", "files::TextFile"]);
    assert_eq!(changed(&repaired.0, "changed"), ["files::JsonFile", "files::TextFile"]);
    assert_eq!(repaired.1, first.1, "the repair restored the tree the first deploy made");
    assert_eq!(std::fs::read_to_string(target.join("app/motd")).unwrap(), "welcome\n");
    assert_eq!(std::fs::metadata(target.join("app/motd")).unwrap().mode() & 0o7777, 0o640);
    assert_eq!(std::fs::metadata(target.join("app")).unwrap().mode() & 0o7777, 0o750);
    assert_eq!(std::fs::read_link(target.join("current")).unwrap(), target.join("app"));
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(target.join("app/config.json")).unwrap()).unwrap();
    assert_eq!(config, serde_json::json!({"people": [{"name": "bob", "age": 20}], "settings": {"debug": false}}));
    let hosts = std::fs::read_to_string(target.join("hosts")).unwrap();
    assert!(hosts.lines().any(|l| l.split_whitespace().eq(["192.168.10.10", "example.com"])), "{hosts}");
}

/// files 2.1.1's own handlers (`Directory`, `TextFile`, `Symlink`, `JsonFile`, `HostFile`)
/// converge a tree, find nothing to do the second time, report drift in a dry run without
/// touching it, and repair it; over SSH the same, step by step and tree by tree, with the
/// module's proxy calls served by modelc's helper.
#[test]
fn the_files_modules_own_handlers_converge_locally_and_over_ssh() {
    let Some(env) = files_env() else { return };
    let python = env.join("bin/python");
    let local_dir = support::scratch("module-handlers", "files-local");
    let local = scenario(&local_dir, &python, "mitogen::Local()");
    assert_converged(&local, &local_dir.join("target"));
    let Some(server) = Sshd::start("the files module over ssh") else { return };
    let ssh_dir = support::scratch("module-handlers", "files-ssh");
    let over_ssh = scenario(&ssh_dir, &python, &support::ssh_context(&server, "s", None));
    assert_converged(&over_ssh, &ssh_dir.join("target"));
    assert_eq!(over_ssh, local, "over ssh, the same results and trees as locally");
    assert_eq!(ssh_dir.join("cache").read_dir().unwrap().count(), 1, "the operations went through the helper");
    assert!(local_dir.join("cache").read_dir().map_or(true, |mut d| d.next().is_none()), "no helper locally");
    for dir in [local_dir, ssh_dir] {
        std::fs::remove_dir_all(dir).unwrap();
    }
}

/// An agent of a team deploys the same files with the module's own handlers: exported and
/// released through a real server (in front of PostgreSQL on loopback), converged on disk, each
/// result reported to the server; a new version that changes one file's content is deployed
/// by the module's handler updating it.
#[test]
fn an_agent_deploys_the_files_modules_resources_released_through_a_server() {
    let Some(env) = files_env() else { return };
    let Some(postgres) = modelc_test_postgres::Postgres::start("an agent with modules' handlers") else { return };
    let python = env.join("bin/python").display().to_string();
    let dir = support::scratch("module-handlers", "files-agent");
    let target = dir.join("target");
    std::fs::create_dir_all(&target).unwrap();
    let model = FILES_MODEL.replace("$VIA", "mitogen::Local()").replace("$T", target.to_str().unwrap());
    std::fs::write(dir.join("project.yml"), "name: files_handlers\n").unwrap();
    std::fs::write(dir.join("main.cf"), &model).unwrap();

    let fleet = support::fleet::Fleet::new(&postgres, "module_handlers", &dir);
    let server = fleet.server(&[]);
    let exporter = fleet.token(&server, &["--role", "export"]);
    let token = fleet.token(&server, &["--role", "agent", "--agent", "localhost"]);
    let agent = fleet.agent(&server, &token, &["localhost"], &dir.join("state"), &["--python", &python]);
    // Exports and releases the model; the files' results in `version` once all are in.
    let release = |version: u64| -> Vec<(String, String)> {
        let out = fleet.modelc(&server, &exporter, &["--python", &python, "export", "."], &["--release"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let files = |s: &Value| -> Vec<(String, String)> {
            let resources = s["resources"].as_array().into_iter().flatten();
            resources
                .filter(|r| r["id"].as_str().is_some_and(|id| id.starts_with("files::")) && r["version"] == version)
                .map(|r| (r["id"].as_str().unwrap().to_owned(), r["result"].as_str().unwrap_or_default().to_owned()))
                .collect()
        };
        let expected = if version == 1 { 5 } else { 1 };
        let status = fleet.wait_status(&server, Duration::from_secs(60), |s| {
            let done = files(s);
            done.len() == expected && done.iter().all(|(_, result)| result != "deploying")
        });
        let results = files(&status);
        assert_eq!(results.len(), expected, "{status:#}\nagent: {}", agent.log());
        results
    };
    let first = release(1);
    assert!(first.iter().all(|(_, result)| result == "changed"), "{first:?}");
    assert_eq!(std::fs::read_to_string(target.join("app/motd")).unwrap(), "welcome\n");
    assert_eq!(std::fs::metadata(target.join("app/motd")).unwrap().mode() & 0o7777, 0o640);
    assert_eq!(std::fs::read_link(target.join("current")).unwrap(), target.join("app"));
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(target.join("app/config.json")).unwrap()).unwrap();
    assert_eq!(config, serde_json::json!({"people": [{"name": "bob", "age": 20}], "settings": {"debug": false}}));
    // A new version changes one file: only it is deployed again, updated by its handler.
    std::fs::write(dir.join("main.cf"), model.replace("welcome\\n", "welcome back\\n")).unwrap();
    let second = release(2);
    assert_eq!(second.len(), 1);
    assert!(second[0].0.starts_with("files::TextFile[") && second[0].1 == "changed", "{second:?}");
    assert_eq!(std::fs::read_to_string(target.join("app/motd")).unwrap(), "welcome back\n");
    drop(agent);
    std::fs::remove_dir_all(dir).unwrap();
}
