//! Modules' own Python handlers run by `modelc deploy` (`@provider` classes, with modelc's
//! handler API and no inmanta-core), with a module of the test's own whose handler misbehaves on
//! demand; everything is deployed into temporary directories and checked on disk. (The public
//! `files` module's handlers, locally and over SSH: `compiler/cli/tests/module_handlers.rs`.)
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use modelc_tests::{modelc, scratch_dir};
use serde_json::Value;

/// Writes each `(path, text)` under `dir`.
fn write_files(dir: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        fs::create_dir_all(dir.join(path).parent().unwrap()).unwrap();
        fs::write(dir.join(path), text).unwrap();
    }
}

/// `modelc --format json deploy . ARGS` in `dir`: the exit code and the report.
fn deploy(dir: &Path, python: &str, extra: &[&str]) -> (u8, Value, String) {
    let mut args = vec!["--python", python, "--format", "json", "deploy", "."];
    args.extend_from_slice(extra);
    let out = modelc(&args, dir);
    let report: Value =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", out.stdout, out.stderr));
    (out.code, report, out.stderr)
}

fn resource<'a>(report: &'a Value, id_part: &str) -> &'a Value {
    report["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"].as_str().unwrap().contains(id_part))
        .unwrap_or_else(|| panic!("no {id_part} in {report:#}"))
}

fn result_of(report: &Value, id_part: &str) -> String {
    resource(report, id_part)["result"].as_str().unwrap().to_owned()
}

/// A module whose handler does what each resource's `behaviour` says: write its content, raise,
/// skip, crash its interpreter, hang, or run a command past its timeout.
const PROBE_MODEL: &str = "\
entity Probe extends std::PurgeableResource:
    string name
    string path
    string content
    string behaviour = \"write\"
end
index Probe(name)
Probe.host [1] -- std::Host
implement Probe using std::none
";

const PROBE_PYTHON: &str = r#"
import os
import subprocess
import time

from inmanta.agent import handler
from inmanta.resources import PurgeableResource, resource


@resource("probe::Probe", agent="host.name", id_attribute="name")
class Probe(PurgeableResource):
    fields = ("name", "path", "content", "behaviour")


@handler.provider("probe::Probe", name="probe")
class ProbeHandler(handler.CRUDHandler):
    def read_resource(self, ctx, resource):
        if resource.behaviour == "raise":
            raise RuntimeError("the probe broke")
        if resource.behaviour == "skip":
            raise handler.SkipResource("not now")
        if resource.behaviour == "crash":
            os._exit(3)
        if resource.behaviour == "hang":
            time.sleep(3600)
        if resource.behaviour == "slow-command":
            try:
                self._io.run("sleep", ["5"], timeout=0.2)
            except subprocess.TimeoutExpired as stopped:
                raise RuntimeError("stopped: %r after %s s" % (stopped.cmd, stopped.timeout))
        if not self._io.file_exists(resource.path):
            raise handler.ResourcePurged()
        resource.content = self._io.read(resource.path)

    def create_resource(self, ctx, resource):
        self._io.put(resource.path, resource.content.encode())
        ctx.info("wrote %(path)s", path=resource.path)
        ctx.set_fact("created_by", "probe")
        ctx.set_created()

    def update_resource(self, ctx, changes, resource):
        self._io.put(resource.path, resource.content.encode())
        ctx.set_updated()

    def delete_resource(self, ctx, resource):
        self._io.remove(resource.path)
        ctx.set_purged()

    def facts(self, ctx, resource):
        return {"size": len(self._io.read(resource.path))}

    def can_reload(self):
        return True

    def do_reload(self, ctx, resource):
        reloads = resource.path + ".reloads"
        done = self._io.read(reloads) if self._io.file_exists(reloads) else ""
        self._io.put(reloads, (done + "reload\n").encode())
"#;

fn probe_project(name: &str, body: &str) -> PathBuf {
    let dir = scratch_dir(&format!("module-handlers-{name}"));
    fs::create_dir_all(dir.join("out")).unwrap();
    let out = dir.join("out").display().to_string();
    let main =
        format!("import probe\nhost = std::Host(name=\"localhost\", os=std::linux)\n{}", body.replace("$T", &out));
    write_files(
        &dir,
        &[
            ("project.yml", "name: p\nmodulepath: libs\n"),
            ("libs/probe/module.yml", "name: probe\nversion: 1.0.0\n"),
            ("libs/probe/model/_init.cf", PROBE_MODEL),
            ("libs/probe/plugins/__init__.py", PROBE_PYTHON),
            ("main.cf", &main),
        ],
    );
    dir
}

/// What a handler learns about its resources (`set_fact` while it creates one, `facts` after
/// each deploy) is kept by the store: the next compile's `std::getfact` reads it. A dry run
/// learns nothing.
#[test]
fn facts_a_handler_learns_are_read_by_the_next_compiles_getfact() {
    let Some(python) = modelc_tests::python3("the module handler tests") else { return };
    let python = python.display().to_string();
    let body = "\
a = probe::Probe(host=host, name=\"a\", path=\"$T/a\", content=\"alpha\\n\")
size = std::getfact(a, \"size\", \"?\")
by = std::getfact(a, \"created_by\", \"?\")
probe::Probe(host=host, name=\"b\", path=\"$T/b\", content=\"{{size}} by {{by}}\", requires=a)
";
    let dir = probe_project("facts", body);
    let out = dir.join("out");
    let (code, first, stderr) = deploy(&dir, &python, &[]);
    assert_eq!(code, 0, "{first:#}\n{stderr}");
    assert_eq!(fs::read_to_string(out.join("b")).unwrap(), "? by ?", "no fact before the first deploy");
    // The facts of the first deploy: `size` from `facts`, `created_by` set while creating.
    let (code, second, _) = deploy(&dir, &python, &[]);
    assert_eq!(code, 0, "{second:#}");
    assert_eq!(result_of(&second, "name=a"), "unchanged");
    assert_eq!(resource(&second, "name=a")["facts"]["size"], "6", "{second:#}");
    assert_eq!(fs::read_to_string(out.join("b")).unwrap(), "6 by probe");
    // A dry run learns nothing: had it kept the tampered file's size, `b` would change.
    fs::write(out.join("a"), "tampered, longer\n").unwrap();
    let (code, dry, _) = deploy(&dir, &python, &["--dry-run"]);
    assert_eq!(code, 0, "{dry:#}");
    assert_eq!(result_of(&dry, "name=a"), "would-change", "{dry:#}");
    assert!(resource(&dry, "name=a").get("facts").is_none(), "{dry:#}");
    let (code, repaired, _) = deploy(&dir, &python, &[]);
    assert_eq!(code, 0, "{repaired:#}");
    assert_eq!(result_of(&repaired, "name=a"), "changed");
    assert_eq!(result_of(&repaired, "name=b"), "unchanged");
    // `created_by`, learnt once, is kept.
    assert_eq!(fs::read_to_string(out.join("b")).unwrap(), "6 by probe");
}

/// A module's handler deploys its resources: created, then unchanged, a dry run reports the
/// handler's own diff and changes nothing, drift is repaired; what the handler logs is in the
/// report, and it reloads its resource when one it requires changed. One that raises fails with its traceback, one that crashes its interpreter or hangs
/// past its timeout fails alone (the next resource gets a new interpreter), one that skips is
/// `skipped`; the others converge.
#[test]
fn a_modules_own_handler_converges_and_its_failures_stay_its_own() {
    let Some(python) = modelc_tests::python3("the module handler tests") else { return };
    let python = python.display().to_string();
    let body = "\
a = probe::Probe(host=host, name=\"a\", path=\"$T/a\", content=\"alpha\\n\", send_event=true)
probe::Probe(host=host, name=\"b\", path=\"$T/b\", content=\"beta\\n\", requires=a)
";
    let dir = probe_project("converge", body);
    let out = dir.join("out");
    let (code, first, stderr) = deploy(&dir, &python, &[]);
    assert_eq!(code, 0, "{first:#}\n{stderr}");
    assert_eq!(result_of(&first, "name=a"), "changed");
    assert_eq!(fs::read_to_string(out.join("a")).unwrap(), "alpha\n");
    assert_eq!(fs::read_to_string(out.join("b")).unwrap(), "beta\n");
    let a = resource(&first, "name=a");
    assert_eq!(a["changes"][0]["field"], "purged", "{a:#}");
    let logged: Vec<&str> = a["logs"].as_array().unwrap().iter().map(|l| l["message"].as_str().unwrap()).collect();
    assert!(logged.iter().any(|m| m.starts_with("wrote ") && m.ends_with("/a")), "{logged:?}");
    // `b` requires `a`, which changed and sends events: its handler reloads it.
    assert_eq!(resource(&first, "name=b")["refreshed"], true, "{first:#}");
    assert_eq!(fs::read_to_string(out.join("b.reloads")).unwrap(), "reload\n");

    let (code, second, _) = deploy(&dir, &python, &[]);
    assert_eq!(code, 0);
    assert_eq!(result_of(&second, "name=a"), "unchanged");
    assert_eq!(result_of(&second, "name=b"), "unchanged");

    fs::write(out.join("a"), "tampered\n").unwrap();
    let before = file_tree(&out);
    let (code, dry, _) = deploy(&dir, &python, &["--dry-run"]);
    assert_eq!(code, 0, "{dry:#}");
    assert_eq!(result_of(&dry, "name=a"), "would-change");
    let change = &resource(&dry, "name=a")["changes"][0];
    assert_eq!(
        (change["field"].as_str(), change["old"].as_str(), change["new"].as_str()),
        (Some("content"), Some("tampered\n"), Some("alpha\n"))
    );
    assert_eq!(file_tree(&out), before, "a dry run changed the machine");

    let (code, repaired, _) = deploy(&dir, &python, &[]);
    assert_eq!(code, 0);
    assert_eq!(result_of(&repaired, "name=a"), "changed");
    assert_eq!(fs::read_to_string(out.join("a")).unwrap(), "alpha\n");
    // Reloaded when `a` changed, not when nothing did.
    assert_eq!(fs::read_to_string(out.join("b.reloads")).unwrap(), "reload\nreload\n");
}

/// With two resources at once, the second interpreter is forked from the first (its modules
/// imported already): a handler that hangs in one and one that crashes the other each fail
/// alone, with the same words as in a started interpreter (the forked one's exit code is
/// told by the one it was forked from), and the next resources get new interpreters.
#[test]
fn in_forked_interpreters_a_hang_and_a_crash_fail_only_their_resources() {
    let Some(python) = modelc_tests::python3("the module handler tests") else { return };
    let python = python.display().to_string();
    let body = "\
probe::Probe(host=host, name=\"hang\", path=\"$T/h\", content=\"x\", behaviour=\"hang\", meta=std::Meta(timeout=1.0))
probe::Probe(host=host, name=\"crash\", path=\"$T/c\", content=\"x\", behaviour=\"crash\")
for i in [0, 1, 2, 3]:
    probe::Probe(host=host, name=\"ok{{i}}\", path=\"$T/ok{{i}}\", content=\"fine\")
end
";
    let dir = probe_project("forked-failures", body);
    let (code, report, stderr) = deploy(&dir, &python, &["--jobs", "2"]);
    assert_eq!(code, 1, "{report:#}\n{stderr}");
    let crashed = resource(&report, "name=crash");
    assert!(crashed["error"].as_str().unwrap().contains("stopped while the handler ran (exit code 3)"), "{crashed:#}");
    let hung = resource(&report, "name=hang");
    assert!(hung["error"].as_str().unwrap().contains("within its timeout of 1 s"), "{hung:#}");
    for i in 0..4 {
        assert_eq!(result_of(&report, &format!("name=ok{i}]")), "changed", "{report:#}");
    }
}

#[test]
fn a_handler_that_raises_crashes_hangs_or_skips_fails_only_its_resource() {
    let Some(python) = modelc_tests::python3("the module handler tests") else { return };
    let python = python.display().to_string();
    let body = "\
raised = probe::Probe(host=host, name=\"raise\", path=\"$T/r\", content=\"x\", behaviour=\"raise\")
probe::Probe(host=host, name=\"crash\", path=\"$T/c\", content=\"x\", behaviour=\"crash\")
probe::Probe(host=host, name=\"hang\", path=\"$T/h\", content=\"x\", behaviour=\"hang\", meta=std::Meta(timeout=1.0))
probe::Probe(host=host, name=\"skip\", path=\"$T/s\", content=\"x\", behaviour=\"skip\")
probe::Probe(host=host, name=\"slow\", path=\"$T/slow\", content=\"x\", behaviour=\"slow-command\")
probe::Probe(host=host, name=\"after\", path=\"$T/after\", content=\"x\", requires=[raised])
for i in [0, 1, 2, 3]:
    probe::Probe(host=host, name=\"ok{{i}}\", path=\"$T/ok{{i}}\", content=\"fine\")
end
";
    let dir = probe_project("failures", body);
    let out = dir.join("out");
    let started = Instant::now();
    let (code, report, stderr) = deploy(&dir, &python, &["--jobs", "1"]);
    assert!(started.elapsed() < Duration::from_secs(60), "the hang was not stopped at its timeout");
    assert_eq!(code, 1, "{report:#}\n{stderr}");
    let raised = resource(&report, "name=raise");
    assert_eq!(raised["result"], "failed");
    let error = raised["error"].as_str().unwrap();
    assert!(error.contains("RuntimeError('the probe broke')") && error.contains("Traceback"), "{error}");
    assert!(error.contains("plugins/__init__.py"), "the traceback names the module's file: {error}");
    let crashed = resource(&report, "name=crash");
    assert_eq!(crashed["result"], "failed");
    assert!(crashed["error"].as_str().unwrap().contains("stopped while the handler ran (exit code 3)"), "{crashed:#}");
    let hung = resource(&report, "name=hang");
    assert_eq!(hung["result"], "failed");
    assert!(hung["error"].as_str().unwrap().contains("within its timeout of 1 s"), "{hung:#}");
    let skipped = resource(&report, "name=skip");
    assert_eq!(skipped["result"], "skipped");
    assert!(skipped["error"].as_str().unwrap().contains("not now"), "{skipped:#}");
    // A command past its timeout is Python's `TimeoutExpired`, with the command and the limit.
    let slow = resource(&report, "name=slow");
    assert!(slow["error"].as_str().unwrap().contains("stopped: ['sleep', '5'] after 0.2 s"), "{slow:#}");
    assert_eq!(result_of(&report, "name=after"), "blocked");
    for i in 0..4 {
        assert_eq!(result_of(&report, &format!("name=ok{i}]")), "changed", "{report:#}");
        assert_eq!(fs::read_to_string(out.join(format!("ok{i}"))).unwrap(), "fine");
    }
}

/// The public `rest` module 1.0.1 with what it imports, from the registry; no inmanta-core.
const REST: [&str; 7] = [
    "inmanta-module-rest==1.0.1",
    "requests==2.34.2",
    "urllib3==2.8.0",
    "idna==3.20",
    "charset-normalizer==3.5.3",
    "certifi==2026.10.19.post1",
    "jq==1.13.0",
];

/// An HTTP server on loopback that answers `/ok` with `{"ok": true}`, `/invalid` with
/// `{"ok": false}` and `/fail` with status 500, and keeps each request's method, path and body.
struct Api {
    port: u16,
    requests: std::sync::Arc<std::sync::Mutex<Vec<(String, String, String)>>>,
}

impl Api {
    fn start() -> Api {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = std::sync::Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let mut parts = line.split_whitespace();
                let (method, path) = (parts.next().unwrap_or("").to_owned(), parts.next().unwrap_or("").to_owned());
                let mut length = 0;
                loop {
                    let mut header = String::new();
                    reader.read_line(&mut header).unwrap();
                    if header.trim().is_empty() {
                        break;
                    }
                    if let Some((name, value)) = header.split_once(':')
                        && name.eq_ignore_ascii_case("content-length")
                    {
                        length = value.trim().parse().unwrap();
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                kept.lock().unwrap().push((method, path.clone(), String::from_utf8_lossy(&body).into_owned()));
                let (status, answer) = match path.as_str() {
                    "/ok" => ("200 OK", "{\"ok\": true}"),
                    "/invalid" => ("200 OK", "{\"ok\": false}"),
                    _ => ("500 Internal Server Error", "{\"ok\": false}"),
                };
                let response = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                    answer.len()
                );
                let _ = stream.write_all(response.as_bytes());
            }
        });
        Api { port, requests }
    }

    fn calls_to(&self, path: &str) -> Vec<(String, String)> {
        let requests = self.requests.lock().unwrap();
        requests.iter().filter(|(_, p, _)| p == path).map(|(m, _, b)| (m.clone(), b.clone())).collect()
    }
}

/// rest 1.0.1's own handler (a `ResourceHandler` that calls an API with `requests` and checks
/// the answer with `jq`) against a server the test runs: every deploy makes its call (the
/// handler lists no changes: unchanged, as in the reference), a dry run makes none, a status
/// the resource does not accept fails it (and blocks what requires it), an answer its `jq`
/// expression refuses fails it, and `skip_on_fail` skips it, tried again by its retries.
#[test]
fn the_rest_modules_own_handler_calls_the_api_and_its_failures_stay_its_own() {
    let Some(env) = modelc_tests::pyenv::registry_env(Path::new(env!("CARGO_TARGET_TMPDIR")), "rest-handlers", &REST)
    else {
        return;
    };
    let python = env.join("bin/python").display().to_string();
    let api = Api::start();
    let url = |path: &str| format!("http://127.0.0.1:{}{path}", api.port);
    let main = format!(
        "import rest\n\
         ok = rest::RESTCall(url=\"{ok}\", method=\"POST\", body={{\"name\": \"web\"}}, validate_return=\".ok\")\n\
         failed = rest::RESTCall(url=\"{fail}\", method=\"PUT\", body={{}})\n\
         rest::RESTCall(url=\"{ok}\", method=\"PUT\", body={{\"after\": true}}, requires=failed)\n\
         rest::RESTCall(url=\"{invalid}\", method=\"POST\", body={{}}, validate_return=\".ok\")\n\
         rest::RESTCall(url=\"{fail}\", method=\"POST\", body={{}}, skip_on_fail=true,\n    \
             meta=std::Meta(retry=2, delay=0.1))\n",
        ok = url("/ok"),
        fail = url("/fail"),
        invalid = url("/invalid"),
    );
    let dir = scratch_dir("module-handlers-rest");
    write_files(&dir, &[("project.yml", "name: p\n"), ("main.cf", &main)]);

    let (code, report, stderr) = deploy(&dir, &python, &["--agent", "internal"]);
    assert_eq!(code, 1, "{report:#}\n{stderr}");
    assert_eq!(result_of(&report, "POST_http://127.0.0.1"), "unchanged", "{report:#}");
    assert_eq!(api.calls_to("/ok"), [("POST".to_owned(), "{\"name\": \"web\"}".to_owned())]);
    let failed = resource(&report, &format!("url_id=PUT_{}", url("/fail")));
    assert_eq!(failed["result"], "failed");
    assert!(failed["error"].as_str().unwrap().contains("Invalid status code returned 500"), "{failed:#}");
    assert_eq!(result_of(&report, &format!("url_id=PUT_{}", url("/ok"))), "blocked");
    let invalid = resource(&report, &format!("url_id=POST_{}", url("/invalid")));
    assert_eq!(invalid["result"], "failed");
    assert!(invalid["error"].as_str().unwrap().contains("Returned result not valid."), "{invalid:#}");
    let skipped = resource(&report, &format!("url_id=POST_{}", url("/fail")));
    assert_eq!(skipped["result"], "skipped", "{skipped:#}");
    assert_eq!(skipped["attempts"], 3, "skipped, then tried again by its two retries: {skipped:#}");
    assert_eq!(api.calls_to("/fail").iter().filter(|(m, _)| m == "POST").count(), 3);

    let before = api.requests.lock().unwrap().len();
    let (_, dry, _) = deploy(&dir, &python, &["--agent", "internal", "--dry-run"]);
    assert_eq!(result_of(&dry, "POST_http://127.0.0.1"), "unchanged", "{dry:#}");
    assert_eq!(api.requests.lock().unwrap().len(), before, "a dry run calls nothing");

    let (_, again, _) = deploy(&dir, &python, &["--agent", "internal"]);
    assert_eq!(result_of(&again, &format!("url_id=POST_{}", url("/ok"))), "unchanged");
    assert_eq!(api.calls_to("/ok").len(), 2, "the second deploy makes its call again");
}

/// What the reference's handler context said of a resource, as modelc's report says it.
fn reference_result(recorded: &Value) -> &'static str {
    let changes = recorded["changes"].as_array().is_some_and(|c| !c.is_empty());
    match (recorded["status"].as_str().unwrap(), recorded["change"].as_str().unwrap()) {
        ("deployed", "nochange") => "unchanged",
        ("deployed", _) => "changed",
        ("dry", _) if changes => "would-change",
        ("dry", _) => "unchanged",
        ("failed", _) => "failed",
        ("skipped", _) => "skipped",
        (other, _) => panic!("a status the comparison does not know: {other}"),
    }
}

/// The tree under `root` as `scripts/record-handlers` writes it: path, kind, mode, and content
/// or target (`$T` for `root`).
fn file_tree(root: &Path) -> Vec<Value> {
    use std::os::unix::fs::MetadataExt;
    let mut entries = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            let relative = path.strip_prefix(root).unwrap().display().to_string();
            let mode = format!("{:04o}", meta.mode() & 0o7777);
            entries.push(if meta.file_type().is_symlink() {
                let target = fs::read_link(&path).unwrap().display().to_string().replace(root.to_str().unwrap(), "$T");
                serde_json::json!({"path": relative, "kind": "link", "mode": mode, "target": target})
            } else if meta.is_dir() {
                stack.push(path.clone());
                serde_json::json!({"path": relative, "kind": "dir", "mode": mode})
            } else {
                let content = fs::read_to_string(&path).unwrap();
                serde_json::json!({"path": relative, "kind": "file", "mode": mode, "content": content})
            });
        }
    }
    entries.sort_by(|a, b| a["path"].as_str().cmp(&b["path"].as_str()));
    entries
}

/// A differential against the reference's own handler code: each case of `tests/handlers` was
/// deployed by pytest-inmanta's `deploy_resource_v2` and `dryrun_resource_v2` (inmanta-core 14,
/// files 2.1.1; `scripts/record-handlers`): a first deploy, a second, a dry run after the drift
/// `drift.json` writes, and the repair. modelc runs the same steps with the same module code:
/// the same result per resource, the same changed attributes (and desired content), the same
/// tree after every step.
#[test]
fn files_handlers_do_what_they_do_under_the_reference() {
    let Some(env) = modelc_test_pyenv::files_handlers_env(Path::new(env!("CARGO_TARGET_TMPDIR"))) else { return };
    let python = env.join("bin/python").display().to_string();
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("handlers");
    let mut names: Vec<String> = fs::read_dir(&cases)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("reference.json").is_file())
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 3, "the recorded cases are missing: {names:?}");
    let mut compared = 0;
    for name in names {
        let case = cases.join(&name);
        let reference: Value = serde_json::from_str(&fs::read_to_string(case.join("reference.json")).unwrap()).unwrap();
        let drift: Value = serde_json::from_str(&fs::read_to_string(case.join("drift.json")).unwrap()).unwrap();
        let dir = scratch_dir(&format!("handlers-differential-{name}"));
        let target = dir.join("target");
        fs::create_dir_all(&target).unwrap();
        let model = fs::read_to_string(case.join("main.cf")).unwrap().replace("$T", target.to_str().unwrap());
        write_files(&dir, &[("project.yml", "name: p\n"), ("main.cf", &model)]);
        for step in reference["steps"].as_array().unwrap() {
            let step_name = step["name"].as_str().unwrap();
            let extra: &[&str] = if step_name == "dry" { &["--dry-run"] } else { &[] };
            if step_name == "dry" {
                for write in drift.as_array().unwrap() {
                    fs::write(target.join(write["path"].as_str().unwrap()), write["content"].as_str().unwrap())
                        .unwrap();
                }
            }
            let (_, report, stderr) = deploy(&dir, &python, extra);
            let at = format!("{name}, step {step_name}");
            let ours = report["resources"].as_array().unwrap_or_else(|| panic!("{at}: {report:#}\n{stderr}"));
            let theirs = step["resources"].as_object().unwrap();
            assert_eq!(ours.len(), theirs.len(), "{at}: {report:#}");
            for resource in ours {
                let id = resource["id"].as_str().unwrap().replace(target.to_str().unwrap(), "$T");
                let recorded = theirs.get(&id).unwrap_or_else(|| panic!("{at}: the reference has no {id}"));
                assert_eq!(resource["result"], reference_result(recorded), "{at}: {id}: {resource:#} vs {recorded:#}");
                let changes = resource["changes"].as_array().map(Vec::as_slice).unwrap_or_default();
                let mut fields: Vec<&str> = changes.iter().map(|c| c["field"].as_str().unwrap()).collect();
                fields.sort_unstable();
                let expected: Vec<&str> =
                    recorded["changes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
                assert_eq!(fields, expected, "{at}: {id}: the changed attributes");
                if let Some(desired) = recorded.get("content_desired") {
                    let content = changes.iter().find(|c| c["field"] == "content").unwrap();
                    assert_eq!(&content["new"], desired, "{at}: {id}: the desired content");
                }
                compared += 1;
            }
            assert_eq!(file_tree(&target), step["tree"].as_array().unwrap().clone(), "{at}: the tree");
        }
    }
    assert!(compared >= 20, "only {compared} results compared");
}
