//! Every diagnostic code in the registry is produced by at least one test input, so the
//! registry never lists a diagnostic users cannot meet, and each code's explanation can be
//! checked against a real case.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::collections::BTreeSet;
use std::path::Path;

use modelc_tests::{modelc, scratch_dir};

#[test]
fn every_registered_code_is_produced_by_some_input() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = scratch_dir("codes");
    let mut inputs: Vec<String> = std::fs::read_dir(root.join("grammar/test_data/err"))
        .unwrap()
        .map(|e| e.unwrap().path().to_str().unwrap().to_owned())
        .collect();
    // Inputs no fixture file can hold: invalid UTF-8, a warning, excessive nesting, a binary
    // file, and more syntax errors than are read.
    std::fs::write(dir.join("latin1.cf"), b"x = \"caf\xe9\"\n").unwrap();
    std::fs::write(dir.join("warning.cf"), "x = \"a\\.b\"\n").unwrap();
    std::fs::write(dir.join("deep.cf"), format!("x = {}1{}\n", "[".repeat(300), "]".repeat(300))).unwrap();
    std::fs::write(dir.join("plus.cf"), "x = [1]\nx += 2\n").unwrap();
    std::fs::write(dir.join("binary.cf"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    std::fs::write(dir.join("garbage.cf"), "x = ) \n".repeat(1_500)).unwrap();
    for name in ["latin1.cf", "warning.cf", "deep.cf", "plus.cf", "binary.cf", "garbage.cf"] {
        inputs.push(dir.join(name).to_str().unwrap().to_owned());
    }
    // The semantic UI inputs: models and projects.
    for entry in std::fs::read_dir(root.join("tests/ui/check")).unwrap() {
        inputs.push(entry.unwrap().path().to_str().unwrap().to_owned());
    }
    let mut produced = BTreeSet::new();
    for input in &inputs {
        let out = modelc(&["--format", "json", "check", input], &dir);
        let diagnostics: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap();
        produced.extend(diagnostics.iter().map(|d| d["code"].as_str().unwrap().to_owned()));
    }
    // The execution and resource UI inputs, compiled.
    let compiled = ["tests/ui/compile", "tests/ui/resources"].map(|d| std::fs::read_dir(root.join(d)).unwrap());
    for entry in compiled.into_iter().flatten() {
        let input = entry.unwrap().path();
        if input.extension().is_none_or(|e| e != "cf") {
            continue;
        }
        let partial = input.file_name().unwrap().to_str().unwrap().starts_with("partial-");
        let mut args = vec!["--format", "json", "compile", input.to_str().unwrap()];
        if partial {
            args.push("--partial");
        }
        let out = modelc(&args, &dir);
        let diagnostics: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap();
        produced.extend(diagnostics.iter().map(|d| d["code"].as_str().unwrap().to_owned()));
    }
    // The store's rules: exports it refuses (their diagnostics are rendered as text).
    for case in modelc_tests::store_cases::refused_exports() {
        let text = case.output.stderr;
        produced.extend(text.match_indices("[E").filter_map(|(at, _)| text.get(at + 1..at + 6)).map(str::to_owned));
    }
    // A plugin written in Python that stops its interpreter.
    let crashy = dir.join("crashy");
    std::fs::create_dir_all(crashy.join("libs/crashy/model")).unwrap();
    std::fs::create_dir_all(crashy.join("libs/crashy/plugins")).unwrap();
    std::fs::write(crashy.join("project.yml"), "name: crashy\nmodulepath: libs\n").unwrap();
    std::fs::write(crashy.join("main.cf"), "import crashy\nx = crashy::stop()\n").unwrap();
    std::fs::write(crashy.join("libs/crashy/model/_init.cf"), "").unwrap();
    std::fs::write(
        crashy.join("libs/crashy/plugins/__init__.py"),
        "import os\nfrom inmanta.plugins import plugin\n\n@plugin\ndef stop() -> \"int\":\n    os._exit(3)\n",
    )
    .unwrap();
    if modelc_tests::python3("E0312's case").is_some() {
        let out = modelc(&["--format", "json", "compile", crashy.to_str().unwrap()], &dir);
        let diagnostics: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap();
        produced.extend(diagnostics.iter().map(|d| d["code"].as_str().unwrap().to_owned()));
    } else {
        produced.insert("E0312".to_owned());
    }
    // A module's resource class: one modelc cannot read (E0409, no Python runs), one whose
    // mapper raises (E0410), and one whose module's dependency manager raises (E0411).
    let classes = [
        ("unusable", "fields = PurgeableResource.fields + (\"path\",)\n", None),
        (
            "raising",
            "fields = (\"path\", \"mode\")\n\n    @staticmethod\n    def get_mode(exporter, obj):\n        return int(obj.path)\n",
            Some("E0410"),
        ),
        (
            "depending",
            "fields = (\"path\",)\n\nfrom inmanta.export import dependency_manager\n\n@dependency_manager\n\
             def broken(model, resources):\n    raise ValueError(\"no\")\n",
            Some("E0411"),
        ),
    ];
    for (name, body, needs_python) in classes {
        let project = dir.join(name);
        std::fs::create_dir_all(project.join("libs/conf/model")).unwrap();
        std::fs::create_dir_all(project.join("libs/conf/plugins")).unwrap();
        std::fs::write(project.join("project.yml"), "name: c\nmodulepath: libs\n").unwrap();
        std::fs::write(project.join("main.cf"), "import conf\nconf::Config(path=\"/a\", agent=\"local\")\n").unwrap();
        std::fs::write(
            project.join("libs/conf/model/_init.cf"),
            "entity Config extends std::PurgeableResource:\n    string path\n    string agent\nend\nimplement Config using std::none\n",
        )
        .unwrap();
        std::fs::write(
            project.join("libs/conf/plugins/__init__.py"),
            format!(
                "from inmanta.resources import PurgeableResource, resource\n\n@resource(\"conf::Config\", agent=\"agent\", id_attribute=\"path\")\nclass Config(PurgeableResource):\n    {body}"
            ),
        )
        .unwrap();
        match needs_python {
            Some(code) if modelc_tests::python3(&format!("{code}'s case")).is_none() => {
                produced.insert(code.to_owned());
            }
            _ => {
                let out = modelc(&["--format", "json", "compile", project.to_str().unwrap()], &dir);
                let diagnostics: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap();
                produced.extend(diagnostics.iter().map(|d| d["code"].as_str().unwrap().to_owned()));
            }
        }
    }
    // A module installed in a Python environment and on the module path (the environment is
    // only read, never run: it needs no Python).
    let shadowed = dir.join("shadowed");
    for file in ["env/bin/python3", "env/lib/python3.11/site-packages/inmanta_plugins/m/__init__.py"] {
        std::fs::create_dir_all(shadowed.join(file).parent().unwrap()).unwrap();
        std::fs::write(shadowed.join(file), "").unwrap();
    }
    std::fs::create_dir_all(shadowed.join("env/lib/python3.11/site-packages/inmanta_plugins/m/model")).unwrap();
    std::fs::create_dir_all(shadowed.join("libs/m/model")).unwrap();
    std::fs::write(shadowed.join("env/pyvenv.cfg"), "version = 3.11.7\n").unwrap();
    std::fs::write(shadowed.join("env/lib/python3.11/site-packages/inmanta_plugins/m/model/_init.cf"), "").unwrap();
    std::fs::write(shadowed.join("libs/m/model/_init.cf"), "").unwrap();
    std::fs::write(shadowed.join("project.yml"), "name: s\nmodulepath: libs\n").unwrap();
    std::fs::write(shadowed.join("main.cf"), "import m\n").unwrap();
    let env = shadowed.join("env");
    let out =
        modelc(&["--python", env.to_str().unwrap(), "--format", "json", "check", shadowed.to_str().unwrap()], &dir);
    let diagnostics: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap();
    produced.extend(diagnostics.iter().map(|d| d["code"].as_str().unwrap().to_owned()));
    let registered: BTreeSet<String> = modelc_tests::registered_codes().into_iter().collect();
    let never: Vec<&String> = registered.difference(&produced).collect();
    assert!(never.is_empty(), "registered codes no test input produces: {never:?}");
}
