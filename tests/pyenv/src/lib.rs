//! Python for modelc's tests: `python3` on `PATH`, and throwaway environments with real packages
//! from the registry, for the tests of modules' Python plugins and handlers. Each environment
//! is made once, under the test target's temporary directory, and kept while its package list
//! is the same; without Python or the registry the tests skip (and fail under `CI=true`).
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stderr, reason = "test support")]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The public `files` module 2.1.1 with what its handlers import, from the registry (no
/// inmanta-core): the environment `files-handlers` the handler tests share.
pub const FILES_HANDLERS: [&str; 4] =
    ["inmanta-module-files==2.1.1", "inmanta-module-mitogen==0.2.5", "mitogen==0.3.54", "PyYAML==6.0.3"];

/// The environment of [`FILES_HANDLERS`], made once under `cache` (a test's
/// `CARGO_TARGET_TMPDIR`); `None` when skipped.
pub fn files_handlers_env(cache: &Path) -> Option<PathBuf> {
    registry_env(cache, "files-handlers", &FILES_HANDLERS)
}

/// `python3` on `PATH`, when there is one that runs; otherwise `None`, with a message that
/// `what` is skipped.
pub fn python3(what: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .and_then(|path| std::env::split_paths(&path).map(|dir| dir.join("python3")).find(|p| p.is_file()));
    let runs = found.filter(|python| {
        std::process::Command::new(python).args(["-c", "pass"]).output().is_ok_and(|o| o.status.success())
    });
    if runs.is_none() {
        eprintln!("{what} needs python3");
        modelc_test_skip::skip("no python3 on PATH");
    }
    runs
}

/// An environment called `name` under `cache` with `packages` installed (`pip install --no-deps`:
/// every dependency is listed), or `None` with a message that the test is skipped.
pub fn registry_env(cache: &Path, name: &str, packages: &[&str]) -> Option<PathBuf> {
    let python = python3(&format!("the tests with the `{name}` environment"))?;
    let dir = cache.join(format!("pyenv-{name}"));
    let wanted = packages.join("\n");
    let ready = |dir: &Path| std::fs::read_to_string(dir.join(".modelc-packages")).ok().as_deref() == Some(&wanted);
    if ready(&dir) {
        return Some(dir);
    }
    // The tests of one process build it one at a time (their building directory is the
    // process's): the others wait, then find it ready.
    static BUILDING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _building = BUILDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if ready(&dir) {
        return Some(dir);
    }
    // Built beside and moved into place, so a test process never sees half an environment.
    let building = cache.join(format!("pyenv-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&building);
    let run = |command: &mut Command| match command.output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or_default().to_owned()),
        Err(error) => Err(error.to_string()),
    };
    let made = run(Command::new(&python).arg("-m").arg("venv").arg(&building)).and_then(|()| {
        run(Command::new(building.join("bin/python"))
            .args(["-m", "pip", "install", "--no-deps", "--disable-pip-version-check", "--no-input", "--quiet"])
            .args(packages))
    });
    if let Err(why) = made {
        let _ = std::fs::remove_dir_all(&building);
        modelc_test_skip::skip(format!(
            "the tests with the `{name}` environment: could not install {packages:?}: {why}"
        ));
        return None;
    }
    std::fs::write(building.join(".modelc-packages"), &wanted).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    if std::fs::rename(&building, &dir).is_err() {
        // Another test process put one there first.
        let _ = std::fs::remove_dir_all(&building);
    }
    ready(&dir).then_some(dir)
}

/// The site-packages directory of an environment made by [`registry_env`] or `python -m venv`.
pub fn site_packages(env: &Path) -> PathBuf {
    let lib = env.join("lib");
    let version = std::fs::read_dir(&lib)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("python3")))
        .unwrap();
    version.join("site-packages")
}
