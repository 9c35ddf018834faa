//! UI tests of `modelc check`: each model in `tests/ui/check` (a `.cf` file, or a `project-*`
//! directory with modules) is checked, and what a user sees is a snapshot. The comment at the
//! top of each input says which diagnostics it is about.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::path::{Path, PathBuf};

use modelc_tests::modelc;

fn inputs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/check");
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cf") || p.join("project.yml").is_file())
        .collect();
    inputs.sort();
    inputs
}

#[test]
fn check_diagnostics_as_users_see_them() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/check");
    let inputs = inputs();
    assert!(inputs.len() >= 10, "the UI inputs are missing");
    for input in inputs {
        let name = input.file_stem().unwrap().to_str().unwrap().to_owned();
        let relative = input.strip_prefix(&dir).unwrap().to_str().unwrap().to_owned();
        let out = modelc(&["--color", "never", "check", &relative], &dir);
        insta::assert_snapshot!(name, format!("exit status {}\n{}", out.code, out.stderr));
    }
}

/// UI tests of `modelc compile`: each model in `tests/ui/compile` is compiled with its instances
/// dumped, and what a user sees (printed lines, instances, diagnostics, summary) is a snapshot.
#[test]
fn compile_results_as_users_see_them() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/compile");
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    inputs.retain(|p| p.extension().is_some_and(|e| e == "cf"));
    inputs.sort();
    assert!(inputs.len() >= 10, "the compile UI inputs are missing");
    for input in inputs {
        let name = input.file_stem().unwrap().to_str().unwrap().to_owned();
        let file = input.file_name().unwrap().to_str().unwrap().to_owned();
        let out = modelc(&["--color", "never", "compile", "--dump-instances", &file], &dir);
        // The summary's timing changes from run to run.
        let stderr: Vec<String> = out
            .stderr
            .lines()
            .map(|l| match l.split_once(" instances in ") {
                Some((count, _)) => format!("{count} instances in [time]"),
                None => l.to_owned(),
            })
            .collect();
        insta::assert_snapshot!(
            format!("compile-{name}"),
            format!("exit status {}\n--- stdout\n{}--- stderr\n{}\n", out.code, out.stdout, stderr.join("\n"))
        );
    }
}

/// UI tests of refinement: each model in `tests/ui/resources` is compiled to the resource IR
/// (`partial-*.cf` as partial compiles). A model with errors shows its diagnostics (one input
/// per validation rule); a valid one shows its IR, which holds every resource's id, attributes,
/// requires and set.
#[test]
fn resources_as_users_see_them() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/resources");
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    inputs.retain(|p| p.extension().is_some_and(|e| e == "cf"));
    inputs.sort();
    assert!(inputs.len() >= 9, "the resource UI inputs are missing");
    let scratch = modelc_tests::scratch_dir("ui-resources");
    for input in inputs {
        let name = input.file_stem().unwrap().to_str().unwrap().to_owned();
        let file = input.file_name().unwrap().to_str().unwrap().to_owned();
        let output = scratch.join(format!("{name}.json"));
        let mut args = vec!["--color", "never", "compile", &file, "-o", output.to_str().unwrap()];
        if name.starts_with("partial-") {
            args.push("--partial");
        }
        let out = modelc(&args, &dir);
        // Keep the diagnostics; the instance summary and timing are covered elsewhere.
        let stderr: String =
            out.stderr.lines().take_while(|l| !l.contains(" instances in ")).map(|l| format!("{l}\n")).collect();
        let ir = std::fs::read_to_string(&output).unwrap_or_else(|_| "(not written)\n".to_owned());
        assert_eq!(out.code == 0, output.exists(), "{name}: the IR is written exactly when the model is valid");
        insta::assert_snapshot!(
            format!("resources-{name}"),
            format!("exit status {}\n--- stderr\n{stderr}--- ir\n{ir}", out.code)
        );
    }
}
