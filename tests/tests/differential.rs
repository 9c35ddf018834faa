//! Differential tests against the reference exporter. Each directory of `tests/differential`
//! holds a model (`main.cf`) and what the reference's offline export wrote for it
//! (`reference.json`, recorded with `../shared/tools/reference-inmanta export main.cf
//! reference.json`; CI never runs the reference). `modelc compile --format reference` must give
//! the same resources: same ids, attributes and requires. The reference orders the list, the
//! fields and `requires` arbitrarily (Python sets), so they are compared as sets.
//!
//! A case with a `project.yml` is a project with modules of its own under `libs/` (their Python
//! runs: it needs python3). A model that imports the public `fs`, `exec` or `mitogen` modules is
//! compiled as a project
//! whose module path is the corpus of those modules in the shared reference material; without
//! it, those cases are skipped with a message.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::path::{Path, PathBuf};

use modelc_tests::modelc;

#[test]
fn resources_match_the_reference_exporter() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("differential");
    let mut cases: Vec<PathBuf> =
        std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    cases.sort();
    assert!(cases.len() >= 4, "the differential fixtures are missing");
    let scratch = modelc_tests::scratch_dir("differential");
    for case in cases {
        let name = case.file_name().unwrap().to_str().unwrap().to_owned();
        let reference = std::fs::read_to_string(case.join("reference.json")).unwrap();
        let out = if case.join("project.yml").is_file() {
            // A project with modules of its own, whose Python runs: compiled in a copy, so that
            // Python's caches are not written into the fixture.
            if modelc_tests::python3(&format!("differential case {name}")).is_none() {
                continue;
            }
            let project = scratch.join(&name);
            copy_tree(&case, &project);
            modelc(&["compile", ".", "--format", "reference"], &project)
        } else if uses_public_modules(&case) {
            let Some(shared) = modelc_tests::shared_dir(&format!("differential case {name}")) else { continue };
            let project = scratch.join(&name);
            std::fs::create_dir_all(&project).unwrap();
            std::fs::copy(case.join("main.cf"), project.join("main.cf")).unwrap();
            let modules = shared.join("corpus/inmanta-modules");
            std::fs::write(project.join("project.yml"), format!("name: {name}\nmodulepath: {}\n", modules.display()))
                .unwrap();
            modelc(&["compile", ".", "--format", "reference"], &project)
        } else {
            modelc(&["compile", "main.cf", "--format", "reference"], &case)
        };
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        let ours = modelc_tests::exported_by_id(out.stdout.trim_end());
        let theirs = modelc_tests::exported_by_id(&reference);
        assert!(!theirs.is_empty(), "{name}: the reference exported nothing");
        let only_theirs: Vec<&String> = theirs.keys().filter(|id| !ours.contains_key(*id)).collect();
        let only_ours: Vec<&String> = ours.keys().filter(|id| !theirs.contains_key(*id)).collect();
        assert!(
            only_theirs.is_empty() && only_ours.is_empty(),
            "{name}: ids differ: reference only {only_theirs:?}, modelc only {only_ours:?}"
        );
        for (id, resource) in &theirs {
            assert_eq!(&ours[id], resource, "{name}: {id} differs");
        }
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// Whether a case's model imports a module other than std.
fn uses_public_modules(case: &Path) -> bool {
    let text = std::fs::read_to_string(case.join("main.cf")).unwrap();
    text.lines().any(|l| ["import fs", "import exec", "import mitogen"].iter().any(|m| l.trim() == *m))
}

/// Same output, byte for byte, for the same model: the IR, the reference list and the DOT graph.
#[test]
fn output_is_deterministic() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("differential/catalogue");
    let scratch = modelc_tests::scratch_dir("deterministic");
    let run = |k: usize| {
        let ir = scratch.join(format!("ir-{k}.json"));
        assert_eq!(modelc(&["compile", "main.cf", "-o", ir.to_str().unwrap()], &case).code, 0);
        let reference = modelc(&["compile", "main.cf", "--format", "reference"], &case).stdout;
        let dot = modelc(&["graph", "main.cf"], &case).stdout;
        (std::fs::read(ir).unwrap(), reference, dot)
    };
    let first = run(0);
    assert!(first.2.starts_with("digraph resources {"));
    assert_eq!(first, run(1));
}
