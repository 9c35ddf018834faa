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
