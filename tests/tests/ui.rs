//! UI tests: what a user sees for each input of `tests/ui`, one snapshot per input
//! (`insta::glob!`), each showing the input's source first and then modelc's output:
//!
//! * `tests/ui/check`: `modelc check` of a `.cf` file, or of a `project-*` directory with
//!   modules (its `main.cf` is the input; every `.cf` file of the project is shown);
//! * `tests/ui/compile`: `modelc compile --dump-instances` (printed lines, instances,
//!   diagnostics, summary);
//! * `tests/ui/resources`: `modelc compile -o` (diagnostics, and the resource IR of a valid
//!   model; `partial-*.cf` as partial compiles).
//!
//! The comment at the top of each input says which diagnostics it is about.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::path::{Path, PathBuf};

use modelc_tests::modelc;

/// The `.cf` files of a project directory (or the one file), each under a header with its path.
fn source_of(input: &Path, root: &Path) -> String {
    let files: Vec<PathBuf> = if input.file_name().is_some_and(|n| n == "main.cf") {
        let mut files = Vec::new();
        modelc_tests::cf_files(input.parent().unwrap(), &mut files);
        files.sort();
        files
    } else {
        vec![input.to_owned()]
    };
    files
        .iter()
        .map(|f| {
            let name = f.strip_prefix(root).unwrap().display();
            format!("--- {name}\n{}", std::fs::read_to_string(f).unwrap())
        })
        .collect()
}

/// The summary's timing changes from run to run.
fn without_timing(stderr: &str) -> String {
    stderr
        .lines()
        .map(|l| match l.split_once(" instances in ").or_else(|| l.split_once(" instance in ")) {
            Some((count, _)) => format!("{count} instances in [time]"),
            None => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn check_diagnostics_as_users_see_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/check");
    insta::glob!("../ui/check", "{*.cf,project-*/main.cf}", |input| {
        // A project is checked as a directory, a lone file as a file.
        let target = if input.file_name().is_some_and(|n| n == "main.cf") { input.parent().unwrap() } else { input };
        let relative = target.strip_prefix(&root).unwrap().to_str().unwrap().to_owned();
        let out = modelc(&["--color", "never", "check", &relative], &root);
        insta::assert_snapshot!(format!("{}=== exit status {}\n{}", source_of(input, &root), out.code, out.stderr));
    });
}

#[test]
fn compile_results_as_users_see_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/compile");
    insta::glob!("../ui/compile", "*.cf", |input| {
        let file = input.file_name().unwrap().to_str().unwrap().to_owned();
        let out = modelc(&["--color", "never", "compile", "--dump-instances", &file], &root);
        insta::assert_snapshot!(format!(
            "{}=== exit status {}\n--- stdout\n{}--- stderr\n{}\n",
            source_of(input, &root),
            out.code,
            out.stdout,
            without_timing(&out.stderr)
        ));
    });
}

#[test]
fn resources_as_users_see_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/resources");
    let scratch = modelc_tests::scratch_dir("ui-resources");
    insta::glob!("../ui/resources", "*.cf", |input| {
        let name = input.file_stem().unwrap().to_str().unwrap().to_owned();
        let file = input.file_name().unwrap().to_str().unwrap().to_owned();
        let output = scratch.join(format!("{name}.json"));
        let mut args = vec!["--color", "never", "compile", &file, "-o", output.to_str().unwrap()];
        if name.starts_with("partial-") {
            args.push("--partial");
        }
        let out = modelc(&args, &root);
        // Keep the diagnostics; the instance summary and timing are covered elsewhere.
        let stderr: String = out
            .stderr
            .lines()
            .take_while(|l| !l.contains(" instances in ") && !l.contains(" instance in "))
            .map(|l| format!("{l}\n"))
            .collect();
        let ir = std::fs::read_to_string(&output).unwrap_or_else(|_| "(not written)\n".to_owned());
        assert_eq!(out.code == 0, output.exists(), "{name}: the IR is written exactly when the model is valid");
        insta::assert_snapshot!(format!(
            "{}=== exit status {}\n--- stderr\n{stderr}--- ir\n{ir}",
            source_of(input, &root),
            out.code
        ));
    });
}
