//! `modelc deploy --watch` and Ctrl-C, as separate processes on real files: continuous mode
//! deploys the stored version, swaps in a newly exported one, repairs drift and exits once idle
//! for its converged timeout; Ctrl-C lets the running resource finish, starts no other, records
//! the run and exits with 130.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stderr, reason = "test code")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod support;

use support::modules;

fn modelc(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_modelc"));
    command.current_dir(dir).env("MODELC_DEPLOY_LOCK", dir.join("deploy.lock")).env_remove("NO_COLOR");
    command
}

/// A project using fs and exec with `body` after a local host; `$T` is its target directory.
fn project(name: &str, body: &str) -> Option<PathBuf> {
    let modules = modules()?;
    let dir = support::scratch("watch", name);
    fs::create_dir_all(dir.join("target")).unwrap();
    fs::write(dir.join("project.yml"), format!("name: {name}\nmodulepath: {}\n", modules.display())).unwrap();
    write_model(&dir, body);
    Some(dir)
}

fn write_model(dir: &Path, body: &str) {
    let header = "import fs\nimport exec\nimport mitogen\n\nhost = std::Host(name=\"localhost\", os=std::linux, via=mitogen::Local())\n";
    let body = body.replace("$T", dir.join("target").to_str().unwrap());
    fs::write(dir.join("main.cf"), format!("{header}{body}")).unwrap();
}

fn export(dir: &Path) {
    let out = modelc(dir).args(["--color", "never", "export", "."]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Waits (up to 20 s) until `done` holds; how long it took.
fn wait_for(what: &str, done: impl Fn() -> bool) -> Duration {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(20), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
    start.elapsed()
}

fn text(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_default()
}

fn finish(child: Child) -> (i32, String) {
    let out = child.wait_with_output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn watch_deploys_follows_new_versions_repairs_drift_and_exits_when_idle() {
    let model = "fs::File(host=host, path=\"$T/app.conf\", content=\"v1\\n\", mode=644)\n";
    let Some(dir) = project("follow", model) else { return };
    let conf = dir.join("target/app.conf");
    export(&dir);
    let watch = modelc(&dir)
        .args(["--color", "never", "deploy", ".", "--watch", "--converged-timeout", "3", "--max-runtime", "60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the first deploy", || text(&conf) == "v1\n");

    write_model(&dir, &model.replace("v1", "v2"));
    export(&dir);
    let seen = wait_for("version 2 to be deployed", || text(&conf) == "v2\n");
    eprintln!("a new version was deployed {} ms after its export ended", seen.as_millis());

    fs::write(&conf, "edited by hand\n").unwrap();
    let repaired = wait_for("the drift to be repaired", || text(&conf) == "v2\n");
    eprintln!("drift was repaired after {} ms", repaired.as_millis());

    let (code, stderr) = finish(watch);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("version 2: 0 kept, 1 new or changed"), "{stderr}");
    assert!(stderr.contains("converged: nothing changed"), "{stderr}");
    let status = modelc(&dir).args(["--color", "never", "status"]).output().unwrap();
    assert!(String::from_utf8_lossy(&status.stdout).contains("watch of version 2"), "the steps are recorded");
}

#[test]
fn ctrl_c_lets_the_running_resource_finish_and_starts_no_other() {
    let model = "first = exec::Run(host=host, command=\"sh -c 'sleep 1; touch $T/first'\")\n\
                 exec::Run(host=host, command=\"touch $T/second\", requires=[first])\n";
    let Some(dir) = project("interrupt", model) else { return };
    let deploy = modelc(&dir)
        .args(["--color", "never", "deploy", "."])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the first command runs (its shell is there), interrupt.
    std::thread::sleep(Duration::from_millis(600));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(deploy.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let (code, stderr) = finish(deploy);
    assert_eq!(code, 130, "{stderr}");
    assert!(dir.join("target/first").exists(), "the running resource finished: {stderr}");
    assert!(!dir.join("target/second").exists(), "nothing started after Ctrl-C");
    let status = modelc(&dir).args(["--color", "never", "status"]).output().unwrap();
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(status.contains("interrupted"), "the run is recorded: {status}");
}

#[test]
fn ctrl_c_stops_watching_at_once() {
    let Some(dir) = project("idle", "fs::File(host=host, path=\"$T/a\", content=\"a\", mode=644)\n") else { return };
    export(&dir);
    let watch = modelc(&dir)
        .args(["--color", "never", "deploy", "--watch"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the first deploy", || dir.join("target/a").exists());
    let sent = Instant::now();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(watch.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let (code, stderr) = finish(watch);
    assert_eq!(code, 130, "{stderr}");
    assert!(sent.elapsed() < Duration::from_secs(10));
    assert!(stderr.contains("interrupted"), "{stderr}");
}

#[test]
fn watch_follows_a_postgresql_store_through_its_notifications_and_a_server_restart() {
    let model = "fs::File(host=host, path=\"$T/app.conf\", content=\"v1\\n\", mode=644)\n";
    let Some(dir) = project("postgres", model) else { return };
    let Some(mut server) = modelc_test_postgres::Postgres::start("deploy --watch on PostgreSQL") else { return };
    server.create_database("watched").unwrap();
    let url = server.url_with_password("watched");
    let store = |dir: &Path, args: &[&str]| {
        let out = modelc(dir).args(["--color", "never"]).args(args).args(["--store", &url]).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    store(&dir, &["store", "migrate"]);
    store(&dir, &["export", "."]);
    let conf = dir.join("target/app.conf");
    let watch = modelc(&dir)
        .args(["--color", "never", "deploy", ".", "--watch", "--converged-timeout", "4", "--max-runtime", "90"])
        .args(["--store", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the first deploy", || text(&conf) == "v1\n");
    assert!(!dir.join(".modelc/store.sqlite").exists(), "nothing goes to the embedded store");

    write_model(&dir, &model.replace("v1", "v2"));
    store(&dir, &["export", "."]);
    let seen = wait_for("version 2 to be deployed", || text(&conf) == "v2\n");
    eprintln!("a new version was deployed {} ms after its export ended (LISTEN/NOTIFY)", seen.as_millis());

    // The server goes away at once and comes back: the watch connects again and catches up.
    server.crash();
    server.restart().unwrap();
    write_model(&dir, &model.replace("v1", "v3"));
    store(&dir, &["export", "."]);
    wait_for("version 3 to be deployed after the restart", || text(&conf) == "v3\n");

    let (code, stderr) = finish(watch);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("version 3: 0 kept, 1 new or changed"), "{stderr}");
    let status = store(&dir, &["status"]);
    assert!(status.contains("watch of version 3"), "the steps are recorded in the server store: {status}");
}
