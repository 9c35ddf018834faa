//! Exports the store must refuse, one per rule (E0501–E0510), run through the CLI against a
//! store holding one full version. Shared by the store tests (which snapshot each diagnostic and
//! check the store did not change) and the code registry test (which checks every code is met).
#![allow(clippy::disallowed_methods, reason = "tests read files and the environment")]

use std::path::Path;

use crate::{Output, modelc, scratch_dir};

/// The model every case starts from: two sets and a shared resource.
const FULL: &str = r#"entity Item extends std::Resource:
    string name
    int value = 1
end
index Item(name)
implement Item using std::none

a1 = Item(name="a1")
a2 = Item(name="a2", requires=a1)
b1 = Item(name="b1")
Item(name="shared")
std::ResourceSet(name="set-a", resources=[a1, a2])
std::ResourceSet(name="set-b", resources=[b1])
"#;

/// One refused export: what it printed, and everything the store showed before and after.
pub struct Refused {
    pub name: &'static str,
    pub output: Output,
    /// `modelc plan` with the export's arguments, run first (for the export cases).
    pub plan: Option<Output>,
    pub store_before: String,
    pub store_after: String,
}

/// What a reader can see of the store: its versions and its latest version's resources.
pub fn store_state(store: &Path, cwd: &Path) -> String {
    let store = store.to_str().unwrap();
    let versions = modelc(&["--format", "json", "versions", "--store", store], cwd);
    let latest = modelc(&["--format", "json", "show", "--store", store], cwd);
    let mut state = versions.stdout;
    state.push_str(&latest.stdout);
    state
}

/// Runs every case; output has the scratch directory replaced by `[DIR]`.
pub fn refused_exports() -> Vec<Refused> {
    let dir = scratch_dir("store-rules");
    let models: [(&str, String); 4] = [
        ("full.cf", FULL.to_owned()),
        // b1 moves from set-b into set-a.
        ("moved.cf", model("b1 = Item(name=\"b1\")\nstd::ResourceSet(name=\"set-a\", resources=[b1])\n")),
        // The shared resource with another value.
        ("shared.cf", model("Item(name=\"shared\", value=2)\n")),
        // set-a again, with a1 only.
        ("set-a.cf", model("a1 = Item(name=\"a1\")\nstd::ResourceSet(name=\"set-a\", resources=[a1])\n")),
    ];
    for (name, text) in &models {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let empty_store = dir.join("empty.sqlite");
    let store = dir.join("store.sqlite");
    let run = |args: &[&str]| modelc(args, &dir);
    let s = store.to_str().unwrap();
    assert_eq!(run(&["export", "full.cf", "--store", s]).code, 0, "the base version is exported");
    // IR files edited the way only a hand or another tool would.
    assert_eq!(run(&["compile", "--partial", "set-a.cf", "-o", "set-a.json"]).code, 0);
    let edited = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut ir: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("set-a.json")).unwrap()).unwrap();
        edit(&mut ir);
        std::fs::write(dir.join(name), serde_json::to_string_pretty(&ir).unwrap()).unwrap();
    };
    let a1 = "__config__::Item[internal,name=a1]";
    edited("cross.json", &|ir| {
        ir["resources"][0]["requires"] = serde_json::json!(["__config__::Item[internal,name=b1]"])
    });
    edited("dangling.json", &|ir| {
        ir["resources"][0]["requires"] = serde_json::json!(["__config__::Item[internal,name=a2]"])
    });
    edited("duplicate.json", &|ir| {
        let first = ir["resources"][0].clone();
        ir["resources"].as_array_mut().unwrap().push(first);
    });
    assert!(std::fs::read_to_string(dir.join("duplicate.json")).unwrap().matches(a1).count() >= 3);
    edited("unlisted.json", &|ir| ir["sets"][0]["resources"] = serde_json::json!([]));
    let fresh_store = dir.join("fresh.sqlite");

    let cases: [(&'static str, Vec<&str>, &Path); 12] = [
        ("no-base", vec!["export", "--partial", "set-a.cf", "--store", empty_store.to_str().unwrap()], &empty_store),
        (
            "exported-and-deleted",
            vec!["export", "--partial", "--delete-resource-set", "set-a", "set-a.cf", "--store", s],
            &store,
        ),
        (
            "unknown-set",
            vec!["export", "--partial", "--delete-resource-set", "set-x", "set-a.cf", "--store", s],
            &store,
        ),
        ("moved", vec!["export", "--partial", "moved.cf", "--store", s], &store),
        ("shared-changed", vec!["export", "--partial", "shared.cf", "--store", s], &store),
        ("cross-set", vec!["export", "--partial", "--ir", "cross.json", "--store", s], &store),
        ("dangling", vec!["export", "--partial", "--ir", "dangling.json", "--store", s], &store),
        ("duplicate", vec!["export", "--partial", "--ir", "duplicate.json", "--store", s], &store),
        ("set-mismatch", vec!["export", "--partial", "--ir", "unlisted.json", "--store", s], &store),
        // A refused full export does not even create its store.
        (
            "full-dangling",
            vec!["export", "--ir", "dangling.json", "--store", fresh_store.to_str().unwrap()],
            &fresh_store,
        ),
        ("not-a-store", vec!["versions", "--store", "full.cf"], &store),
        ("no-such-version", vec!["show", "7", "--store", s], &store),
    ];
    let shown = dir.to_str().unwrap().to_owned();
    cases
        .into_iter()
        .map(|(name, args, store)| {
            let store_before = store_state(store, &dir);
            let plan = (args[0] == "export").then(|| {
                let planned: Vec<&str> = std::iter::once("plan").chain(args[1..].iter().copied()).collect();
                let mut output = run(&planned);
                output.stderr = output.stderr.replace(&shown, "[DIR]");
                output
            });
            assert_eq!(store_state(store, &dir), store_before, "{name}: the plan changed the store");
            let mut output = run(&args);
            output.stderr = output.stderr.replace(&shown, "[DIR]");
            output.stdout = output.stdout.replace(&shown, "[DIR]");
            Refused { name, output, plan, store_before, store_after: store_state(store, &dir) }
        })
        .collect()
}

/// A partial model over the same entity.
fn model(statements: &str) -> String {
    let declarations = FULL.split("\n\n").next().unwrap();
    format!("{declarations}\n\n{statements}")
}
