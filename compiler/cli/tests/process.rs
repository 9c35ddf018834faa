//! The real binary, as a separate process: exit statuses and streams.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::process::Command;

fn modelc() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_modelc"));
    command.env_remove("NO_COLOR").env_remove("MODELC_STORE");
    command
}

#[test]
fn the_binary_reports_errors_and_exit_statuses() {
    let dir = std::env::temp_dir().join(format!("modelc-process-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bad.cf"), "x = = 1\n").unwrap();
    std::fs::write(dir.join("good.cf"), "x = 1\n").unwrap();

    let bad = modelc().args(["parse", "bad.cf"]).current_dir(&dir).output().unwrap();
    assert_eq!(bad.status.code(), Some(1));
    let stderr = String::from_utf8(bad.stderr).unwrap();
    assert!(stderr.contains("E0006") && !stderr.contains('\u{1b}'), "piped stderr is not coloured: {stderr}");

    let good = modelc().args(["parse", "good.cf"]).current_dir(&dir).output().unwrap();
    assert_eq!(good.status.code(), Some(0));

    let usage = modelc().arg("--frobnicate").output().unwrap();
    assert_eq!(usage.status.code(), Some(2));

    let version = modelc().arg("--version").output().unwrap();
    assert!(String::from_utf8(version.stdout).unwrap().starts_with("modelc "));
}

#[test]
fn a_closed_pipe_is_not_a_crash() {
    // `modelc completions bash | head -1`: the reader is gone before modelc writes.
    for args in [&["completions", "bash"][..], &["explain", "--list"][..], &["doc"][..]] {
        let mut child = modelc()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
}

/// `MODELC_STORE` names the store as `--store` does (which wins over it), a path or a
/// PostgreSQL URL.
#[test]
fn the_store_is_named_by_modelc_store_or_store() {
    let dir = std::env::temp_dir().join(format!("modelc-process-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("main.cf"), "import std::testing\nstd::testing::NullResource(name=\"a\")\n").unwrap();
    let export = |env: Option<&str>, args: &[&str]| {
        let mut command = modelc();
        command.args(["export", "main.cf"]).args(args).current_dir(&dir);
        if let Some(store) = env {
            command.env("MODELC_STORE", store);
        }
        command.output().unwrap()
    };
    assert_eq!(export(Some("from-env.sqlite"), &[]).status.code(), Some(0));
    assert!(dir.join("from-env.sqlite").is_file());
    assert_eq!(export(Some("from-env.sqlite"), &["--store", "from-flag.sqlite"]).status.code(), Some(0));
    assert!(dir.join("from-flag.sqlite").is_file(), "--store wins over MODELC_STORE");
    let versions =
        modelc().args(["versions"]).env("MODELC_STORE", "from-env.sqlite").current_dir(&dir).output().unwrap();
    assert_eq!(
        String::from_utf8(versions.stdout).unwrap().lines().count(),
        2,
        "one version in the store MODELC_STORE names"
    );

    // A URL names a PostgreSQL store: one that does not parse is refused before anything is
    // compiled; one that cannot be reached (nothing listens on port 1) is an I/O error.
    let bad = export(Some("postgresql://db.example:notaport/x"), &[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8(bad.stderr).unwrap().contains("the store's URL does not parse"));
    let unreachable = export(Some("POSTGRES://modelc@127.0.0.1:1/db"), &[]);
    assert_eq!(unreachable.status.code(), Some(2));
    let stderr = String::from_utf8(unreachable.stderr).unwrap();
    assert!(stderr.contains("cannot connect to the PostgreSQL store"), "{stderr}");
    assert!(!dir.join(".modelc").exists(), "no default store was created");
    std::fs::remove_dir_all(&dir).unwrap();
}
