//! `modelc deploy` over SSH, end to end: the real binary deploys models of the public `fs`,
//! `exec` and `mitogen` modules through a real OpenSSH server the test starts on loopback
//! (`modelc-test-sshd`), into temporary directories; the helper is copied into a temporary
//! cache directory (`--helper-dir`). Without sshd (outside CI) or the module corpus, skipped.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stderr, reason = "test code")]

mod support;

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use modelc_test_sshd::Sshd;
use serde_json::Value;

/// A project in `dir` whose model is `body` after the imports, with `$T` its target directory
/// and `$SSH` a `mitogen::Ssh` context to `server`.
fn project(dir: &Path, body: &str, server: Option<&Sshd>) -> Option<PathBuf> {
    let modules = support::modules()?;
    std::fs::write(dir.join("project.yml"), format!("name: ssh\nmodulepath: {}\n", modules.display())).unwrap();
    let target = dir.join("target");
    std::fs::create_dir_all(&target).unwrap();
    let mut body = body.replace("$T", target.to_str().unwrap());
    if let Some(server) = server {
        body = body.replace("$SSH", &support::ssh_context(server, "s", None));
    }
    std::fs::write(dir.join("main.cf"), format!("import fs\nimport exec\nimport mitogen\n\n{body}")).unwrap();
    Some(target)
}

fn deploy(dir: &Path, cache: &Path, extra: &[&str]) -> (i32, Value, String) {
    let out = deploy_output(dir, cache, extra);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    (out.status.code().unwrap_or(-1), report, stderr)
}

fn deploy_output(dir: &Path, cache: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_modelc"))
        .args(["--format", "json", "--color", "never", "deploy", ".", "--helper-dir"])
        .arg(cache)
        .args(extra)
        .current_dir(dir)
        .env_remove("MODELC_STORE")
        .output()
        .unwrap()
}

/// id → result, with `$T` for the target directory.
fn results(report: &Value, target: &Path) -> BTreeMap<String, String> {
    report["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let id = r["id"].as_str().unwrap().replace(target.to_str().unwrap(), "$T");
            (id, r["result"].as_str().unwrap().to_owned())
        })
        .collect()
}

fn error_of(report: &Value, id_part: &str) -> String {
    let resources = report["resources"].as_array().unwrap();
    let resource = resources.iter().find(|r| r["id"].as_str().unwrap().contains(id_part)).unwrap();
    resource["error"].as_str().unwrap_or_default().to_owned()
}

fn result_of(report: &Value, id_part: &str) -> String {
    let resources = report["resources"].as_array().unwrap();
    let resource = resources.iter().find(|r| r["id"].as_str().unwrap().contains(id_part));
    resource.unwrap_or_else(|| panic!("no {id_part} in {report:#}"))["result"].as_str().unwrap().to_owned()
}

/// Held by the tests that start sudo hops, whose helpers run from a memory file: while one
/// holds it, every such helper is its own.
static SUDO_HOPS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The processes running an executable from `cache` or, with `sudo_hops`, the memory file a
/// sudo hop's helper runs from (a helper left behind).
fn helpers_running(cache: &Path, sudo_hops: bool) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(exe) = std::fs::read_link(entry.path().join("exe"))
            && (exe.starts_with(cache) || (sudo_hops && exe.to_string_lossy().starts_with("/memfd:modelc-helper")))
        {
            found.push(format!("{} {}", entry.file_name().to_string_lossy(), exe.display()));
        }
    }
    found
}

/// Waits a moment for helpers to end (they end as their connection closes, which the deploy
/// waits for; a sudo hop's helper a moment later at most).
fn assert_no_helper_left(cache: &Path) {
    assert_no_helper_left_with(cache, false);
}

/// [`assert_no_helper_left`], sudo hops' helpers included (hold [`SUDO_HOPS`]).
fn assert_no_helper_left_with(cache: &Path, sudo_hops: bool) {
    for _ in 0..100 {
        if helpers_running(cache, sudo_hops).is_empty() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("helpers still running: {:?}", helpers_running(cache, sudo_hops));
}

/// A site: a directory, a file in it, a link to it, a command run once (`creates`) and a
/// reload-only command refreshed when the file changes.
const SITE: &str = r#"
host = std::Host(name="localhost", os=std::linux, via=$VIA)
root = fs::Directory(host=host, path="$T/site", mode=755)
conf = fs::File(host=host, path="$T/site/app.conf", content="port = 80\n", mode=640)
fs::Symlink(host=host, src="$T/site/app.conf", dst="$T/current.conf")
exec::Run(host=host, command="sh -c 'echo once >> $T/site/log'", creates="$T/site/log", requires=[root])
exec::Run(host=host, command="sh -c 'echo reload >> $T/reloads'", reload_only=true, requires=[conf])
"#;

/// Each run of the scenario, as (results, tree) with paths relative to the target.
fn scenario(dir: &Path, via: &str, server: &Sshd) -> Vec<(BTreeMap<String, String>, Vec<String>)> {
    let Some(target) = project(dir, &SITE.replace("$VIA", via), Some(server)) else { return Vec::new() };
    let cache = dir.join("cache");
    let mut runs = Vec::new();
    let mut run = |extra: &[&str], expected: i32| {
        let (code, report, stderr) = deploy(dir, &cache, extra);
        assert_eq!(code, expected, "{report:#}\n{stderr}");
        let results = results(&report, &target);
        runs.push((results, support::tree(&target)));
        report
    };
    // First: everything changes, the reload runs once.
    run(&[], 0);
    // Second: nothing changes.
    run(&[], 0);
    // Drift: a dry run sees it and changes nothing; a real run repairs it and reloads.
    std::fs::write(target.join("site/app.conf"), "port = 8080\n").unwrap();
    let before = support::tree(&target);
    let dry = run(&["--dry-run"], 0);
    assert_eq!(support::tree(&target), before, "a dry run changed the target");
    assert_eq!(result_of(&dry, "app.conf"), "would-change");
    run(&[], 0);
    assert_eq!(std::fs::read_to_string(target.join("site/app.conf")).unwrap(), "port = 80\n");
    assert_eq!(std::fs::read_to_string(target.join("reloads")).unwrap(), "reload\nreload\n");
    assert_eq!(std::fs::read_to_string(target.join("site/log")).unwrap(), "once\n", "the guard held");
    runs
}

#[test]
fn a_site_deploys_over_ssh_exactly_as_locally() {
    let Some(server) = Sshd::start("deploying over ssh") else { return };
    let local_dir = support::scratch("ssh", "site-local");
    let ssh_dir = support::scratch("ssh", "site-ssh");
    let local = scenario(&local_dir, "mitogen::Local()", &server);
    let over_ssh = scenario(&ssh_dir, "$SSH", &server);
    if local.is_empty() {
        return;
    }
    assert_eq!(local.len(), 4);
    assert!(local[0].0.values().all(|r| r == "changed"), "{:?}", local[0].0);
    assert!(local[1].0.values().all(|r| r == "unchanged"), "{:?}", local[1].0);
    // Same results, same trees (modes, owners, contents), run after run: only the context differs.
    assert_eq!(over_ssh, local);
    assert!(ssh_dir.join("cache").read_dir().unwrap().count() == 1, "one cached helper");
    assert_no_helper_left(&ssh_dir.join("cache"));
    for dir in [local_dir, ssh_dir] {
        std::fs::remove_dir_all(dir).unwrap();
    }
}

/// For a test that starts sudo hops to `nobody`: the server, [`SUDO_HOPS`] held, and the
/// test's directory (open to all, so that nobody reaches what is in it); `None` when the test is
/// skipped (no sshd, or not root: only root sudoes to nobody without a password).
fn sudo_test(what: &str, name: &str) -> Option<(Sshd, std::sync::MutexGuard<'static, ()>, PathBuf)> {
    let server = Sshd::start(what)?;
    if !nix::unistd::geteuid().is_root() {
        modelc_test_skip::skip(format!("{what}: sudo to nobody without a password needs the tests to run as root"));
        return None;
    }
    let held = SUDO_HOPS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = support::scratch("ssh", name);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    Some((server, held, dir))
}

/// `shared` under `target`, a directory only nobody may write in; nobody's uid.
fn nobodys_dir(target: &Path) -> (PathBuf, nix::unistd::Uid) {
    let shared = target.join("shared");
    std::fs::create_dir(&shared).unwrap();
    let nobody = nix::unistd::User::from_name("nobody").unwrap().unwrap().uid;
    nix::unistd::chown(&shared, Some(nobody), None).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o700)).unwrap();
    (shared, nobody)
}

#[test]
fn sudo_writes_as_its_user_and_a_jump_host_reaches_through() {
    let Some((server, _sudo_hops, dir)) = sudo_test("sudo and jump hosts over ssh", "chains") else { return };
    let ssh = support::ssh_context(&server, "s", None);
    let jump = support::ssh_context(&server, "j", Some(&ssh));
    let body = format!(
        r#"
host = std::Host(name="localhost", os=std::linux, via=mitogen::Local())
nobody = mitogen::Sudo(name="n", username="nobody", via={ssh})
local_sudo = mitogen::Sudo(name="l", username="nobody")
fs::File(host=host, path="$T/shared/by-sudo-over-ssh", content="a\n", via=nobody)
fs::File(host=host, path="$T/shared/by-local-sudo", content="b\n", via=local_sudo)
fs::File(host=host, path="$T/jumped", content="c\n", via={jump})
# Guards run where the resource is deployed: as nobody, this one does not hold.
not_root = std::Meta(not_if="sh -c 'test $(id -u) = 0'")
fs::File(host=host, path="$T/shared/guarded-as-root", content="d\n", via=nobody, meta=not_root)
fs::File(host=host, path="$T/guarded-here", content="e\n", meta=not_root)
"#
    );
    let Some(target) = project(&dir, &body, None) else { return };
    let (shared, nobody) = nobodys_dir(&target);
    let cache = dir.join("cache");
    let log_before = server.log().matches("Accepted publickey").count();
    let (code, report, stderr) = deploy(&dir, &cache, &[]);
    assert_eq!(code, 0, "{report:#}\n{stderr}");
    for name in ["by-sudo-over-ssh", "by-local-sudo"] {
        let meta = std::fs::metadata(shared.join(name)).unwrap();
        assert_eq!(meta.uid(), nobody.as_raw(), "{name} was written by nobody");
    }
    assert_eq!(std::fs::read_to_string(target.join("jumped")).unwrap(), "c\n");
    assert_eq!(result_of(&report, "guarded-as-root"), "changed", "the guard ran as nobody");
    assert_eq!(result_of(&report, "guarded-here"), "guarded", "the same guard, run here as root");
    // Two connections: the jump host and, through it, the host (the sudo chain shares neither).
    let logins = server.log().matches("Accepted publickey").count() - log_before;
    assert_eq!(logins, 3, "the sudo chain, the jump host and the host behind it:\n{}", server.log());
    let (code, again, _) = deploy(&dir, &cache, &[]);
    assert_eq!(code, 0);
    assert!(results(&again, &target).values().all(|r| r == "unchanged" || r == "guarded"), "{again:#}");
    assert_no_helper_left_with(&cache, true);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn an_unreachable_host_fails_only_its_own_resources() {
    let Some(server) = Sshd::start("failures over ssh") else { return };
    let dir = support::scratch("ssh", "failures");
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let good = support::ssh_context(&server, "good", None);
    let wrong_port = good.replace(&format!("port={}", server.port()), &format!("port={closed_port}"));
    let empty_known_hosts = dir.join("empty_known_hosts");
    std::fs::write(&empty_known_hosts, "").unwrap();
    let unknown_key = good.replace(server.known_hosts().to_str().unwrap(), empty_known_hosts.to_str().unwrap());
    let body = format!(
        r#"
host = std::Host(name="localhost", os=std::linux, via=mitogen::Local())
a = fs::File(host=host, path="$T/wrong-port", content="x", via={wrong_port})
fs::File(host=host, path="$T/after-wrong-port", content="x", via={wrong_port}, requires=[a])
fs::File(host=host, path="$T/unknown-key", content="x", via={unknown_key})
fs::File(host=host, path="$T/good", content="x", via={good})
fs::File(host=host, path="$T/good-2", content="x", via={good})
"#
    );
    let Some(target) = project(&dir, &body, None) else { return };
    let cache = dir.join("cache");
    let (code, report, _) = deploy(&dir, &cache, &[]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(result_of(&report, "/wrong-port"), "failed");
    assert!(error_of(&report, "/wrong-port").contains("Connection refused"), "{}", error_of(&report, "/wrong-port"));
    assert_eq!(result_of(&report, "after-wrong-port"), "blocked");
    assert_eq!(result_of(&report, "unknown-key"), "failed");
    let unknown = error_of(&report, "unknown-key");
    assert!(unknown.contains("Host key verification failed"), "{unknown}");
    assert!(unknown.contains(&format!("ssh {}@127.0.0.1:{}", server.user(), server.port())), "{unknown}");
    assert_eq!(result_of(&report, "/good]"), "changed");
    assert_eq!(result_of(&report, "good-2"), "changed");
    assert!(target.join("good").exists() && !target.join("unknown-key").exists());
    assert_no_helper_left(&cache);
    std::fs::remove_dir_all(dir).unwrap();
}

/// A model's passwords reach ssh and sudo only through their askpass programs: stub `ssh_path`
/// and `sudo_path` scripts record their arguments and environment, ask the askpass program as
/// ssh and sudo would, and go on with the real programs.
#[test]
fn passwords_reach_ssh_and_sudo_only_through_askpass() {
    let Some((server, _sudo_hops, dir)) = sudo_test("passwords over ssh", "passwords") else { return };
    for (name, program, variable) in [("ssh", "ssh", "SSH_ASKPASS"), ("sudo", "sudo", "SUDO_ASKPASS")] {
        let script = format!(
            "#!/bin/sh\n{{ echo \"ARGV $*\"; env; }} >> {d}/{name}.log\n\
             if [ -n \"${variable}\" ]; then \"${variable}\" 'Password:' > {d}/{name}-asked; fi\n\
             exec {program} \"$@\"\n",
            d = dir.display()
        );
        let path = dir.join(format!("stub-{name}"));
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let ssh = support::ssh_context(&server, "s", None).replacen(
        "mitogen::Ssh(",
        &format!("mitogen::Ssh(password=\"ssh-pw-1234\", ssh_path=\"{}/stub-ssh\", ", dir.display()),
        1,
    );
    let body = format!(
        r#"
host = std::Host(name="localhost", os=std::linux, via=mitogen::Local())
nobody = mitogen::Sudo(name="n", username="nobody", password="sudo-pw-5678", sudo_path="{d}/stub-sudo", via={ssh})
fs::File(host=host, path="$T/shared/file", content="a\n", via=nobody)
"#,
        d = dir.display()
    );
    let Some(target) = project(&dir, &body, None) else { return };
    let (shared, nobody) = nobodys_dir(&target);
    let cache = dir.join("cache");
    let (code, report, stderr) = deploy(&dir, &cache, &[]);
    assert_eq!(code, 0, "{report:#}\n{stderr}");
    assert_eq!(std::fs::metadata(shared.join("file")).unwrap().uid(), nobody.as_raw());
    assert_eq!(std::fs::read_to_string(dir.join("ssh-asked")).unwrap(), "ssh-pw-1234\n");
    assert_eq!(std::fs::read_to_string(dir.join("sudo-asked")).unwrap(), "sudo-pw-5678\n");
    let ssh_log = std::fs::read_to_string(dir.join("ssh.log")).unwrap();
    let sudo_log = std::fs::read_to_string(dir.join("sudo.log")).unwrap();
    assert!(ssh_log.contains("BatchMode=no") && sudo_log.contains("ARGV -A -u nobody"), "{ssh_log}\n{sudo_log}");
    for text in [&ssh_log, &sudo_log, &stderr, &report.to_string()] {
        assert!(!text.contains("ssh-pw-1234") && !text.contains("sudo-pw-5678"), "a password leaked: {text}");
    }
    assert_no_helper_left_with(&cache, true);
    std::fs::remove_dir_all(dir).unwrap();
}

/// A connection dropped mid-run (its sshd session killed) fails only the resources that were
/// running, blocks what requires them, and stops the commands they ran on the target; one with
/// retries is retried over a new connection; every other resource goes on, and the next run
/// converges.
#[test]
fn a_dropped_connection_fails_only_what_was_running() {
    let Some(server) = Sshd::start("a dropped ssh connection") else { return };
    let dir = support::scratch("ssh", "dropped");
    let body = r#"
host = std::Host(name="localhost", os=std::linux, via=mitogen::Local())
slow = exec::Run(host=host, command="sh -c 'touch $T/started; sleep 3; touch $T/slow'", creates="$T/slow", via=$SSH)
fs::File(host=host, path="$T/after-slow", content="x", requires=[slow], via=$SSH)
again = std::Meta(retry=2, delay=1.0)
exec::Run(host=host, command="sh -c 'touch $T/started-2; sleep 3; touch $T/retried'", creates="$T/retried", via=$SSH, meta=again)
fs::File(host=host, path="$T/local", content="x")
"#;
    let Some(target) = project(&dir, body, Some(&server)) else { return };
    let cache = dir.join("cache");
    let child = Command::new(env!("CARGO_BIN_EXE_modelc"))
        .args(["--format", "json", "deploy", ".", "-j", "4", "--helper-dir"])
        .arg(&cache)
        .current_dir(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(|| target.join("started").exists() && target.join("started-2").exists(), "the slow commands to start");
    for session in server.sessions() {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(session as i32), nix::sys::signal::Signal::SIGKILL);
    }
    let out = child.wait_with_output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    assert_eq!(result_of(&report, "/slow'"), "failed");
    let error = error_of(&report, "/slow'");
    assert!(error.contains(&format!("ssh {}@127.0.0.1:{}", server.user(), server.port())), "{error}");
    assert!(error.contains("connection"), "{error}");
    assert_eq!(result_of(&report, "after-slow"), "blocked");
    assert_eq!(result_of(&report, "/local]"), "changed");
    let retried =
        report["resources"].as_array().unwrap().iter().find(|r| r["id"].as_str().unwrap().contains("retried"));
    assert_eq!(retried.unwrap()["result"], "changed", "retried over a new connection: {report:#}");
    assert_eq!(retried.unwrap()["attempts"], 2);
    assert_no_helper_left(&cache);
    std::thread::sleep(std::time::Duration::from_secs(4));
    assert!(!target.join("slow").exists(), "the command of the dropped connection was stopped");
    let (code, again, stderr) = deploy(&dir, &cache, &[]);
    assert_eq!(code, 0, "{again:#}\n{stderr}");
    assert_eq!(result_of(&again, "/slow'"), "changed");
    assert_eq!(result_of(&again, "after-slow"), "changed");
    std::fs::remove_dir_all(dir).unwrap();
}

fn wait_for(condition: impl Fn() -> bool, what: &str) {
    for _ in 0..3000 {
        if condition() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("waited 30 s for {what}");
}

/// The helper is copied once per content: a second run finds it in the cache; a damaged copy
/// is found by its hash and replaced.
#[test]
fn the_helper_is_copied_once_and_a_damaged_copy_replaced() {
    let Some(server) = Sshd::start("the helper's cache") else { return };
    let dir = support::scratch("ssh", "cache");
    let body = "host = std::Host(name=\"localhost\", os=std::linux, via=$SSH)\nfs::File(host=host, path=\"$T/f\", content=\"x\")\n";
    if project(&dir, body, Some(&server)).is_none() {
        return;
    }
    let cache = dir.join("cache");
    let cached = || -> (PathBuf, u64) {
        let entries: Vec<PathBuf> = cache.read_dir().unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(entries.len(), 1, "{entries:?}");
        let inode = std::fs::metadata(&entries[0]).unwrap().ino();
        (entries[0].clone(), inode)
    };
    assert_eq!(deploy(&dir, &cache, &[]).0, 0);
    let (copy, first) = cached();
    assert_eq!(std::fs::metadata(&cache).unwrap().permissions().mode() & 0o777, 0o700);
    assert_eq!(deploy(&dir, &cache, &[]).0, 0);
    assert_eq!(cached().1, first, "a second run did not copy the helper again");

    // Same size, other bytes: only the hash tells.
    let mut bytes = std::fs::read(&copy).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&copy, &bytes).unwrap();
    let (code, report, stderr) = deploy(&dir, &cache, &[]);
    assert_eq!(code, 0, "{report:#}\n{stderr}");
    let (replaced, inode) = cached();
    assert_ne!(inode, first, "the damaged copy was replaced");
    let name = replaced.file_name().unwrap().to_str().unwrap().to_owned();
    let sum = Command::new("sha256sum").arg(&replaced).output().unwrap();
    assert!(String::from_utf8_lossy(&sum.stdout).starts_with(&name), "the copy is named by its hash");
    assert_no_helper_left(&cache);
    std::fs::remove_dir_all(dir).unwrap();
}

/// A target on another CPU, or with an older C library, is refused with a message that says so.
/// The targets are this machine seen through a stub `ssh_path` that runs the remote command
/// here with a `uname` or a `getconf` that says otherwise.
#[test]
fn a_target_this_modelc_cannot_run_on_is_refused() {
    let dir = support::scratch("ssh", "refused");
    let fake = dir.join("fake");
    for (name, says) in [("arm/uname", "aarch64"), ("old/getconf", "glibc 2.17")] {
        let path = fake.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("#!/bin/sh\necho '{says}'\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let kind = name.split('/').next().unwrap();
        let stub = fake.join(format!("ssh-{kind}"));
        let script = format!(
            "#!/bin/sh\nfor last; do :; done\nPATH={}:$PATH exec sh -c \"$last\"\n",
            path.parent().unwrap().display()
        );
        std::fs::write(&stub, script).unwrap();
        std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let body = format!(
        r#"
host = std::Host(name="localhost", os=std::linux, via=mitogen::Local())
fs::File(host=host, path="$T/arm", content="x", via=mitogen::Ssh(name="a", hostname="arm-box", ssh_path="{f}/ssh-arm"))
fs::File(host=host, path="$T/old", content="x", via=mitogen::Ssh(name="o", hostname="old-box", ssh_path="{f}/ssh-old"))
"#,
        f = fake.display()
    );
    let Some(target) = project(&dir, &body, None) else { return };
    let (code, report, _) = deploy(&dir, &dir.join("cache"), &[]);
    assert_eq!(code, 1, "{report:#}");
    let arm = error_of(&report, "/arm]");
    assert!(arm.contains("cannot deploy through ssh arm-box: modelc: refused: this host is aarch64, and this modelc runs on x86_64 only"), "{arm}");
    let old = error_of(&report, "/old]");
    assert!(old.contains("this host has glibc 2.17; this modelc needs glibc 2."), "{old}");
    assert!(!target.join("arm").exists() && !dir.join("cache").exists(), "nothing was copied");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Ctrl-C lets the resource that runs finish and starts no other; the connections close, and
/// no helper is left on the target. `--hosts 1` with two targets: one connection at a time,
/// both reached.
#[test]
fn ctrl_c_leaves_no_helper_behind_and_hosts_limits_connections() {
    let Some(server) = Sshd::start("ctrl-c over ssh") else { return };
    let dir = support::scratch("ssh", "interrupt");
    let other = support::ssh_context(&server, "other", None).replace("compression=false", "compression=true");
    let body = format!(
        r#"
host = std::Host(name="localhost", os=std::linux, via=mitogen::Local())
slow = exec::Run(host=host, command="sh -c 'touch $T/started; sleep 2; touch $T/slow'", creates="$T/slow", via=$SSH)
fs::File(host=host, path="$T/after", content="x", requires=[slow], via=$SSH)
fs::File(host=host, path="$T/other", content="x", via={other})
"#
    );
    let Some(target) = project(&dir, &body, Some(&server)) else { return };
    let cache = dir.join("cache");
    let child = Command::new(env!("CARGO_BIN_EXE_modelc"))
        .args(["--format", "json", "deploy", ".", "--hosts", "1", "-j", "1", "--helper-dir"])
        .arg(&cache)
        .current_dir(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(|| target.join("started").exists(), "the slow command to start");
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result_of(&report, "sleep 2"), "changed", "the running resource finished: {report:#}");
    assert_eq!(result_of(&report, "/after]"), "interrupted");
    assert!(target.join("slow").exists());
    assert_no_helper_left(&cache);

    let logins = server.log().matches("Accepted publickey").count();
    let (code, again, stderr) = deploy(&dir, &cache, &["--hosts", "1"]);
    assert_eq!(code, 0, "{again:#}\n{stderr}");
    assert_eq!(result_of(&again, "/after]"), "changed");
    assert!(target.join("other").exists());
    assert_eq!(server.log().matches("Accepted publickey").count() - logins, 2, "one connection per target");
    std::fs::remove_dir_all(dir).unwrap();
}
