//! Every example project checks and compiles cleanly.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::path::Path;

use modelc_tests::modelc;

/// Whether an example can be compiled here: `local-site` needs the public modules of the
/// shared reference material beside the repository (its module path names them).
fn available(dir: &Path) -> bool {
    let config = std::fs::read_to_string(dir.join("project.yml")).unwrap();
    let needs_corpus = config.contains("shared/corpus/inmanta-modules");
    let has_corpus = dir.join("../../../shared/corpus/inmanta-modules/fs").is_dir() || dir.join("libs/fs").is_dir();
    if needs_corpus && !has_corpus {
        modelc_tests::shared_dir(&format!("example {}", dir.display()));
        return false;
    }
    true
}

#[test]
fn every_example_checks_cleanly() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut checked = 0;
    for entry in std::fs::read_dir(&examples).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.join("project.yml").is_file() || !available(&dir) {
            continue;
        }
        for command in ["check", "compile"] {
            let out = modelc(&[command, dir.to_str().unwrap()], &examples);
            assert_eq!(out.code, 0, "{command} {}:\n{}", dir.display(), out.stderr);
            assert!(out.stderr.contains("no problems"), "{}", out.stderr);
        }
        // Examples are what users copy: they are in the canonical layout.
        let fmt = modelc(&["fmt", "--check", dir.to_str().unwrap()], &examples);
        assert_eq!(fmt.code, 0, "`modelc fmt {}` would change:\n{}", dir.display(), fmt.stdout);
        assert!(dir.join("README.md").is_file(), "{} needs a README", dir.display());
        checked += 1;
    }
    assert!(checked >= 1, "no examples found");
}

#[test]
fn the_web_service_renders_its_balancer_config_from_the_module_template() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let out = modelc(&["compile", "--dump-instances", "web-service"], &examples);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains(r"upstream backends {\n    server web1.example.com:8080;\n    server web2.example.com:8080;\n}"),
        "{}",
        out.stdout
    );
}

/// What each example compiles to: its resource IR (ids, attributes, requires, sets) and its
/// graph as DOT.
#[test]
fn every_example_compiles_to_its_resources() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let scratch = modelc_tests::scratch_dir("examples-ir");
    let mut names: Vec<String> = std::fs::read_dir(&examples)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|dir| dir.join("project.yml").is_file() && available(dir))
        .map(|dir| dir.file_name().unwrap().to_str().unwrap().to_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 2, "examples are missing");
    for name in names {
        let ir = scratch.join(format!("{name}.json"));
        let out = modelc(&["compile", &name, "-o", ir.to_str().unwrap()], &examples);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let dot = modelc(&["graph", &name], &examples);
        assert_eq!(dot.code, 0, "{}", dot.stderr);
        let ir = std::fs::read_to_string(ir).unwrap();
        insta::assert_snapshot!(format!("{name}-resources"), format!("{}--- graph\n{}", ir, dot.stdout));
    }
}

/// The same model gives the same bytes: the IR, the reference's list, DOT and Mermaid, compiled
/// twice, and the versions two exports of it store.
#[test]
fn compiling_and_exporting_twice_gives_identical_bytes() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let scratch = modelc_tests::scratch_dir("examples-twice");
    for name in ["catalogue", "static-sites", "web-service"] {
        let outputs = |round: usize| {
            let ir = scratch.join(format!("{name}-{round}.json"));
            let reference = scratch.join(format!("{name}-{round}-reference.json"));
            let store = scratch.join(format!("{name}-{round}.sqlite"));
            let run = |args: &[&str]| {
                let out = modelc(args, &examples);
                assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
                out.stdout
            };
            run(&["compile", name, "-o", ir.to_str().unwrap()]);
            run(&["compile", name, "--format", "reference", "-o", reference.to_str().unwrap()]);
            run(&["export", name, "--store", store.to_str().unwrap()]);
            [
                std::fs::read_to_string(&ir).unwrap(),
                std::fs::read_to_string(&reference).unwrap(),
                run(&["graph", name]),
                run(&["--format", "mermaid", "graph", name]),
                run(&["--format", "json", "show", "--store", store.to_str().unwrap()]),
            ]
        };
        let (first, second) = (outputs(0), outputs(1));
        for (what, (a, b)) in
            ["IR", "reference list", "DOT", "Mermaid", "stored version"].iter().zip(first.iter().zip(&second))
        {
            assert!(a.len() > 2, "{name}: {what} is empty");
            assert_eq!(a, b, "{name}: {what} differs between two runs");
        }
    }
}
