//! `modelc deploy` as a separate process: the machine-wide lock, and deploys killed at any
//! moment that are run again.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stderr, reason = "test code")]

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};

mod support;

use support::modules;

fn scratch(name: &str) -> PathBuf {
    support::scratch("deploy", name)
}

/// `modelc` in `dir`, with its own deploy lock file.
fn modelc(dir: &Path, lock: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_modelc"));
    command.current_dir(dir).env("MODELC_DEPLOY_LOCK", lock).env_remove("NO_COLOR");
    command
}

#[test]
fn a_second_deploy_waits_for_the_first_and_says_so() {
    let dir = scratch("lock");
    let lock = dir.join("deploy.lock");
    fs::write(
        dir.join("main.cf"),
        "import std::testing\nstd::testing::NullResource(name=\"a\", agentname=\"localhost\")\n",
    )
    .unwrap();
    // This test plays the first deploy: it holds the lock.
    let held = Flock::lock(File::create(&lock).unwrap(), FlockArg::LockExclusive).unwrap();
    let mut second =
        modelc(&dir, &lock).args(["deploy", "main.cf"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(700));
    assert!(second.try_wait().unwrap().is_none(), "the second deploy ran while the lock was held");
    drop(held);
    let output = second.wait_with_output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("waiting for another deploy on this machine to finish"), "{stderr}");
}

/// Issue 30: any local user could hold the deploy lock (then in `/tmp`) and make every deploy
/// wait for ever. A lock held by another user is reported with that user and pid, at once.
/// Needs root, to hold the lock as `nobody`; skipped otherwise.
#[test]
fn a_lock_held_by_another_user_is_reported_not_waited_on() {
    use std::os::unix::fs::PermissionsExt;
    if !nix::unistd::geteuid().is_root() {
        modelc_test_skip::skip("holding a lock as another user needs root");
        return;
    }
    let dir = scratch("foreign-lock");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    let lock = dir.join("deploy.lock");
    File::create(&lock).unwrap();
    fs::set_permissions(&lock, fs::Permissions::from_mode(0o666)).unwrap();
    fs::write(
        dir.join("main.cf"),
        "import std::testing\nstd::testing::NullResource(name=\"a\", agentname=\"localhost\")\n",
    )
    .unwrap();
    let mut holder = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "flock", "-x"])
        .arg(&lock)
        .args(["sleep", "30"])
        .spawn()
        .unwrap();
    // Until the holder has the lock.
    let started = Instant::now();
    while fs::read_to_string("/proc/locks").unwrap().lines().all(|l| !l.contains(&holder.id().to_string())) {
        assert!(started.elapsed() < Duration::from_secs(10), "the holder never took the lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = modelc(&dir, &lock).args(["deploy", "main.cf"]).output().unwrap();
    let _ = holder.kill();
    let _ = holder.wait();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is held by user `nobody`"), "{stderr}");
    assert!(stderr.contains(&format!("(pid {})", holder.id())), "{stderr}");
}

/// Without `MODELC_DEPLOY_LOCK`, the lock lives in a directory of the deploying user's that no
/// one else can write; one that someone else could write is refused, saying why.
#[test]
fn the_default_lock_directory_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("lock-dir");
    fs::write(
        dir.join("main.cf"),
        "import std::testing\nstd::testing::NullResource(name=\"a\", agentname=\"localhost\")\n",
    )
    .unwrap();
    let runtime = dir.join("runtime");
    fs::create_dir_all(&runtime).unwrap();
    let deploy = |dir: &Path| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_modelc"));
        command.current_dir(dir).env_remove("MODELC_DEPLOY_LOCK").env("XDG_RUNTIME_DIR", &runtime);
        command.args(["deploy", "main.cf"]).output().unwrap()
    };
    if nix::unistd::geteuid().is_root() {
        // Root's is /run/modelc, outside any temporary directory; the directory checks are
        // unit tests of the lock module.
        modelc_test_skip::skip("root's deploy lock directory is /run/modelc, outside any temporary directory");
        return;
    }
    let output = deploy(&dir);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let made = runtime.join("modelc");
    assert_eq!(fs::metadata(&made).unwrap().permissions().mode() & 0o777, 0o700);
    assert!(made.join("deploy.lock").exists());
    fs::set_permissions(&made, fs::Permissions::from_mode(0o777)).unwrap();
    let output = deploy(&dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("can be written by others (mode 777)"), "{stderr}");
}

/// 60 files of 20 KB, then a slow command, then 20 more files: a deploy takes a while, and is
/// killed at moments spread over it. After each kill, every file is absent or whole (never
/// half written); a deploy run again converges and leaves no temporary file.
#[test]
fn a_deploy_killed_at_any_moment_converges_when_run_again() {
    let Some(modules) = modules() else { return };
    let dir = scratch("killed");
    let lock = dir.join("deploy.lock");
    let target = dir.join("target");
    fs::create_dir_all(&target).unwrap();
    fs::write(dir.join("project.yml"), format!("name: killed\nmodulepath: {}\n", modules.display())).unwrap();
    let content = |i: usize| format!("{i:04} ").repeat(4000);
    let mut model = String::from(
        "import fs\nimport exec\nimport mitogen\nhost = std::Host(name=\"localhost\", os=std::linux, via=mitogen::Local())\n",
    );
    model.push_str(&format!("d = fs::Directory(host=host, path=\"{}/d\")\n", target.display()));
    for i in 0..60 {
        model.push_str(&format!(
            "fs::File(host=host, path=\"{}/d/f{i}\", content=\"{}\")\n",
            target.display(),
            content(i)
        ));
    }
    model.push_str("slow = exec::Run(host=host, command=\"sleep 0.3\", requires=[d])\n");
    for i in 60..80 {
        model.push_str(&format!(
            "fs::File(host=host, path=\"{}/d/f{i}\", content=\"{}\", requires=[slow])\n",
            target.display(),
            content(i)
        ));
    }
    fs::write(dir.join("main.cf"), model).unwrap();
    // Compile once, so the kills land in the deploy and not in the compile.
    let ir = dir.join("ir.json");
    let compiled = modelc(&dir, &lock).args(["compile", ".", "-o", ir.to_str().unwrap()]).output().unwrap();
    assert!(compiled.status.success(), "{}", String::from_utf8_lossy(&compiled.stderr));
    let deploy = || {
        let mut command = modelc(&dir, &lock);
        command
            .args(["deploy", "--ir", ir.to_str().unwrap(), "--jobs", "2"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    };
    let check_whole = || {
        for i in 0..80 {
            if let Ok(text) = fs::read_to_string(target.join(format!("d/f{i}"))) {
                assert_eq!(text, content(i), "f{i} is half written");
            }
        }
    };
    // How long a whole deploy takes here, to spread the kills over it.
    let started = Instant::now();
    assert!(deploy().status().unwrap().success());
    let whole = started.elapsed();
    for k in 1..=6 {
        fs::remove_dir_all(target.join("d")).unwrap();
        let mut child = deploy().spawn().unwrap();
        std::thread::sleep(whole.mul_f64(f64::from(k) / 7.0));
        let _ = child.kill();
        let _ = child.wait();
        check_whole();
        let again = deploy().stdout(Stdio::piped()).stderr(Stdio::piped()).output().unwrap();
        assert!(
            again.status.success(),
            "run {k} again:\n{}\n{}",
            String::from_utf8_lossy(&again.stdout),
            String::from_utf8_lossy(&again.stderr)
        );
        check_whole();
        let names: Vec<String> = fs::read_dir(target.join("d"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 80, "temporary files were left: {names:?}");
    }
}

/// The local-site example, deployed as its README says: converges, then is unchanged, then
/// repairs a page edited by hand and runs its listing command again.
#[test]
fn the_local_site_example_deploys_into_the_directory_it_is_given() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/local-site");
    if !example.join("../../../shared/corpus/inmanta-modules/fs").is_dir() && !example.join("libs/fs").is_dir() {
        modelc_test_skip::skip(modelc_test_skip::NO_REFERENCE_MATERIAL);
        return;
    }
    let dir = scratch("local-site");
    let (root, store, lock) = (dir.join("site"), dir.join("store.sqlite"), dir.join("deploy.lock"));
    fs::create_dir_all(&root).unwrap();
    let deploy = |extra: &[&str]| {
        let mut command = modelc(&dir, &lock);
        command.args(["--format", "json", "deploy"]).arg(&example).arg("--store").arg(&store).args(extra);
        let output = command.env("SITE_ROOT", &root).output().unwrap();
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        (output.status.code(), report)
    };
    let results = |report: &serde_json::Value, result: &str| {
        report["resources"].as_array().unwrap().iter().filter(|r| r["result"] == result).count()
    };
    let (code, first) = deploy(&[]);
    assert_eq!((code, results(&first, "changed")), (Some(0), 7), "{first:#}");
    assert_eq!(fs::read_to_string(root.join("contents.txt")).unwrap(), "deploy.html\nindex.html\ninstall.html\n");
    assert_eq!(fs::read_link(root.join("current")).unwrap(), root.join("releases/v1"));
    let (code, second) = deploy(&[]);
    assert_eq!((code, results(&second, "unchanged")), (Some(0), 7), "{second:#}");

    fs::write(root.join("current/index.html"), "drift").unwrap();
    fs::remove_file(root.join("contents.txt")).unwrap();
    let (_, dry) = deploy(&["--dry-run"]);
    assert_eq!((results(&dry, "would-change"), results(&dry, "not-evaluated")), (1, 1), "{dry:#}");
    assert_eq!(fs::read_to_string(root.join("current/index.html")).unwrap(), "drift");
    let (code, repair) = deploy(&[]);
    assert_eq!((code, results(&repair, "changed")), (Some(0), 2), "the page and the listing: {repair:#}");
    assert!(fs::read_to_string(root.join("current/index.html")).unwrap().contains("<h1>modelc</h1>"));
    assert!(root.join("contents.txt").exists());
}
