//! Every example project checks and compiles cleanly.
#![allow(clippy::unwrap_used, reason = "test code")]

use std::path::Path;

use modelc_tests::modelc;

#[test]
fn every_example_checks_cleanly() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut checked = 0;
    for entry in std::fs::read_dir(&examples).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.join("project.yml").is_file() {
            continue;
        }
        for command in ["check", "compile"] {
            let out = modelc(&[command, dir.to_str().unwrap()], &examples);
            assert_eq!(out.code, 0, "{command} {}:\n{}", dir.display(), out.stderr);
            assert!(out.stderr.contains("no problems"), "{}", out.stderr);
        }
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
        .filter(|dir| dir.join("project.yml").is_file())
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
