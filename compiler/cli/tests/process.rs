//! The real binary, as a separate process: exit statuses and streams.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::process::Command;

fn modelc() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_modelc"));
    command.env_remove("NO_COLOR");
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
