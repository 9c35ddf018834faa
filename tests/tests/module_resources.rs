//! Modules' resources as their Python declares them (`@resource` classes), with real modules
//! from the registry installed in a throwaway environment (skipped without Python or the
//! registry; a failed install fails the run under `CI=true`).
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::collections::BTreeMap;
use std::path::Path;

use modelc_tests::pyenv::registry_env;
use modelc_tests::{modelc, scratch_dir};
use serde_json::Value;

/// Writes each `(path, text)` under `dir`.
fn write_files(dir: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        std::fs::create_dir_all(dir.join(path).parent().unwrap()).unwrap();
        std::fs::write(dir.join(path), text).unwrap();
    }
}

/// id → the resource, without `requires` (which dependency managers add, not resource classes).
fn fields_by_id(list: &str) -> BTreeMap<String, BTreeMap<String, Value>> {
    let list: Vec<BTreeMap<String, Value>> = serde_json::from_str(list).unwrap();
    list.into_iter()
        .map(|mut resource| {
            resource.remove("requires");
            (resource["id"].as_str().unwrap().to_owned(), resource)
        })
        .collect()
}

/// modelc ships hand-written shapes for fs and exec (faster: no Python runs). They must give
/// exactly what those modules' own Python classes give: every differential case that uses them
/// is exported both ways (`--python-shapes` makes the Python classes win), and every id,
/// field and value is the same.
#[test]
fn the_shapes_modelc_ships_for_fs_and_exec_are_what_their_python_gives() {
    let Some(env) =
        registry_env(Path::new(env!("CARGO_TARGET_TMPDIR")), "exec-ip-fs", &modelc_tests::pyenv::EXEC_IP_FS)
    else {
        return;
    };
    let python = env.join("bin/python").display().to_string();
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("differential");
    let scratch = scratch_dir("shapes-vs-python");
    let mut compared = 0;
    for name in [
        "exec-run",
        "fs-content",
        "fs-nested-directories",
        "fs-purged-directory",
        "fs-symlinks",
        "mitogen-contexts",
        "user-subtypes",
    ] {
        let project = scratch.join(name);
        std::fs::create_dir_all(&project).unwrap();
        std::fs::copy(cases.join(name).join("main.cf"), project.join("main.cf")).unwrap();
        std::fs::write(project.join("project.yml"), format!("name: {}\n", name.replace('-', "_"))).unwrap();
        let args = ["--python", python.as_str(), "compile", ".", "--format", "reference"];
        let shipped = modelc(&args, &project);
        let from_python = modelc(&[&["--python-shapes"], &args[..]].concat(), &project);
        assert_eq!(shipped.code, 0, "{name}: {}", shipped.stderr);
        assert_eq!(from_python.code, 0, "{name} with the modules' Python classes: {}", from_python.stderr);
        let (shipped, from_python) = (fields_by_id(&shipped.stdout), fields_by_id(&from_python.stdout));
        assert!(!shipped.is_empty(), "{name}: nothing exported");
        assert_eq!(shipped, from_python, "{name}: the shipped shapes and the modules' Python classes differ");
        compared += shipped.len();
    }
    assert!(compared >= 25, "only {compared} resources compared");
}

/// Models of public modules whose resources their Python declares (files, podman, vyos, apt, yum,
/// ansible; `tests/modules`), with those modules from the registry at the versions the
/// reference ran (`tests/modules/packages.txt`): the same resources as the reference's
/// `export -j` (`reference.json`, recorded by `scripts/record-modules`), with the same ids,
/// agents, fields, values and requires.
#[test]
fn public_modules_resources_match_the_reference_exporter() {
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("modules");
    let listed = std::fs::read_to_string(cases.join("packages.txt")).unwrap();
    let packages: Vec<&str> = listed.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    let Some(env) = registry_env(Path::new(env!("CARGO_TARGET_TMPDIR")), "public-modules", &packages) else {
        return;
    };
    let python = env.join("bin/python").display().to_string();
    let scratch = scratch_dir("public-modules");
    let mut names: Vec<String> = std::fs::read_dir(&cases)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("main.cf").is_file())
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 7, "the module fixtures are missing: {names:?}");
    for name in names {
        let project = scratch.join(&name);
        std::fs::create_dir_all(&project).unwrap();
        std::fs::copy(cases.join(&name).join("main.cf"), project.join("main.cf")).unwrap();
        std::fs::write(project.join("project.yml"), format!("name: {}\n", name.replace('-', "_"))).unwrap();
        let out = modelc(&["--python", &python, "compile", ".", "--format", "reference"], &project);
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        let ours = modelc_tests::exported_by_id(out.stdout.trim_end());
        let reference = std::fs::read_to_string(cases.join(&name).join("reference.json")).unwrap();
        let theirs = modelc_tests::exported_by_id(&reference);
        assert!(!theirs.is_empty(), "{name}: the reference exported nothing");
        let ids = |m: &BTreeMap<String, BTreeMap<String, Value>>| m.keys().cloned().collect::<Vec<_>>();
        assert_eq!(ids(&ours), ids(&theirs), "{name}: the ids differ");
        for (id, resource) in &theirs {
            assert_eq!(&ours[id], resource, "{name}: {id} differs");
        }
    }
}

/// A module's resource class modelc cannot read (its `fields` is computed) shapes no resource:
/// instances of its entity and of the entity's subtypes are reported (E0409, naming the class
/// and the cause) and not exported, never given a shape the module did not declare. The
/// module's other indexed entities are not resources either, as in the reference. No Python
/// runs for this.
#[test]
fn an_unreadable_resource_class_exports_nothing_it_would_have_shaped() {
    let dir = scratch_dir("unreadable-resource-class");
    write_files(
        &dir,
        &[
            ("project.yml", "name: p\nmodulepath: libs\n"),
            (
                "libs/conf/model/_init.cf",
                "entity Config extends std::PurgeableResource:\n    string path\n    string agent\nend\n\
                 entity Special extends Config:\nend\n\
                 entity Other extends std::Resource:\n    string name\nend\nindex Other(name)\n\
                 implement Config using std::none\nimplement Special using std::none\nimplement Other using std::none\n",
            ),
            (
                "libs/conf/plugins/__init__.py",
                "from inmanta.resources import PurgeableResource, resource\n\n\
                 @resource(\"conf::Config\", agent=\"agent\", id_attribute=\"path\")\n\
                 class Config(PurgeableResource):\n    fields = PurgeableResource.fields + (\"path\",)\n",
            ),
            (
                "main.cf",
                "import conf\nconf::Special(path=\"/a\", agent=\"local\")\nconf::Other(name=\"x\")\n\
                 import std::testing\nstd::testing::NullResource(name=\"kept\")\n",
            ),
        ],
    );
    let out = modelc(&["--format", "json", "compile", "."], &dir);
    let diagnostics: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    let codes: Vec<&str> = diagnostics.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["E0409"], "{diagnostics:?}");
    let message = diagnostics[0]["message"].as_str().unwrap();
    assert!(message.contains("`conf::Special`") && message.contains("inmanta_plugins.conf.Config"), "{message}");
    let listed = modelc(&["compile", ".", "--format", "reference"], &dir);
    assert_eq!(listed.code, 1, "an error: nothing to list");
    std::fs::write(
        dir.join("main.cf"),
        "import conf\nconf::Other(name=\"x\")\nimport std::testing\nstd::testing::NullResource(name=\"kept\")\n",
    )
    .unwrap();
    let listed = modelc(&["compile", ".", "--format", "reference"], &dir);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let ids: Vec<String> = modelc_tests::exported_by_id(listed.stdout.trim_end()).into_keys().collect();
    assert_eq!(ids, ["std::testing::NullResource[internal,name=kept],v=0"]);
}

/// What a std plugin warns while a mapper calls it is reported with the export's diagnostics
/// (W0105), not lost.
#[test]
fn a_warning_of_a_std_plugin_a_mapper_calls_is_reported() {
    if modelc_tests::python3("the mapper warning test").is_none() {
        return;
    }
    let dir = scratch_dir("mapper-warning");
    write_files(
        &dir,
        &[
            ("project.yml", "name: p\nmodulepath: libs\n"),
            (
                "libs/conf/model/_init.cf",
                "entity Config extends std::PurgeableResource:\n    string path\n    string agent\nend\n\
                 implement Config using std::none\n",
            ),
            (
                "libs/conf/plugins/__init__.py",
                "import inmanta_plugins.std\nfrom inmanta.resources import PurgeableResource, resource\n\n\
                 @resource(\"conf::Config\", agent=\"agent\", id_attribute=\"path\")\n\
                 class Config(PurgeableResource):\n    fields = (\"path\", \"home\")\n\n    @staticmethod\n    \
                 def get_home(exporter, obj):\n        return inmanta_plugins.std.get_env(\"MODELC_UNSET_FOR_MAPPER\")\n",
            ),
            ("main.cf", "import conf\nconf::Config(path=\"/a\", agent=\"local\")\n"),
        ],
    );
    let out = modelc(&["--format", "json", "compile", "."], &dir);
    let diagnostics: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    let codes: Vec<&str> = diagnostics.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["W0105"], "{diagnostics:?}");
    assert!(diagnostics[0]["message"].as_str().unwrap().contains("MODELC_UNSET_FOR_MAPPER"), "{diagnostics:?}");
}

/// What crosses the plugin host's batch protocol comes back intact: text beyond ASCII (an
/// accent, an emoji), dicts and lists, an instance read through an optional relation that is
/// set on one resource and empty on another, an unknown attribute; and a mapper's error whose
/// message is not text (a lone surrogate) fails that resource alone, with a readable message.
#[test]
fn values_of_every_kind_cross_the_batch_protocol_intact() {
    if modelc_tests::python3("the batch protocol test").is_none() {
        return;
    }
    let dir = scratch_dir("batch-protocol");
    let model = "entity Thing extends std::PurgeableResource:\n    string name\n    string label = \"é 😀\"\n    \
                 dict tags = {}\n    list items = []\nend\nThing.host [1] -- std::Host\nThing.other [0:1] -- std::Host\n\
                 implement Thing using std::none\n";
    let plugins = "from inmanta.resources import PurgeableResource, resource\n\n\n\
                   @resource(\"e::Thing\", agent=\"host.name\", id_attribute=\"name\")\n\
                   class Thing(PurgeableResource):\n    fields = (\"name\", \"text\", \"shape\", \"other_name\")\n\n    \
                   @staticmethod\n    def get_text(exporter, obj):\n        \
                   if obj.name == \"bad\":\n            raise ValueError(\"not text: \\udc80\")\n        \
                   return obj.label + \" ✓\"\n\n    \
                   @staticmethod\n    def get_shape(exporter, obj):\n        return [obj.tags, obj.items]\n\n    \
                   @staticmethod\n    def get_other_name(exporter, obj):\n        try:\n            \
                   return obj.other.name\n        except Exception as error:\n            return type(error).__name__\n";
    let main = "import e\nh = std::Host(name=\"web1\", os=std::linux)\n\
                e::Thing(host=h, name=\"t1\", tags={\"a\": 1, \"é\": [1.5, true, null]}, items=[h.name, 3])\n\
                e::Thing(host=h, name=\"t2\", other=h, label=\"\")\n\
                e::Thing(host=h, name=\"t3\", label=std::environment_server())\n";
    write_files(
        &dir,
        &[
            ("project.yml", "name: p\nmodulepath: libs\n"),
            ("libs/e/model/_init.cf", model),
            ("libs/e/plugins/__init__.py", plugins),
            ("main.cf", main),
        ],
    );
    let out = modelc(&["-q", "compile", ".", "-o", "ir.json"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let ir: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("ir.json")).unwrap()).unwrap();
    let fields = |id: &str| {
        let resource = ir["resources"].as_array().unwrap().iter().find(|r| r["id"] == id).unwrap();
        let attributes = &resource["attributes"];
        [&attributes["text"], &attributes["shape"], &attributes["other_name"]].map(Value::to_string).join(" ")
    };
    assert_eq!(
        fields("e::Thing[web1,name=t1]"),
        r#""é 😀 ✓" [{"a":1,"é":[1.5,true,null]},["web1",3]] "OptionalValueException""#
    );
    assert_eq!(fields("e::Thing[web1,name=t2]"), r#"" ✓" [{},[]] "web1""#);
    // An unknown read by the mapper makes its field unknown, as in the reference.
    assert_eq!(fields("e::Thing[web1,name=t3]"), r#""<<undefined>>" [{},[]] "OptionalValueException""#);

    std::fs::write(dir.join("main.cf"), format!("{main}e::Thing(host=h, name=\"bad\")\n")).unwrap();
    let out = modelc(&["--format", "json", "compile", "."], &dir);
    let diagnostics: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0]["code"], "E0410");
    assert!(diagnostics[0]["message"].as_str().unwrap().contains("ValueError: not text: ?"), "{diagnostics:?}");
}

/// A batch larger than one part of the host's answer (1,000 resources): the outcomes of the
/// resources a mapper ignores or fails are those resources', wherever they fall in the parts.
#[test]
fn outcomes_of_a_large_batch_belong_to_their_resources() {
    if modelc_tests::python3("the large batch test").is_none() {
        return;
    }
    let dir = scratch_dir("large-batch");
    let plugins = "from inmanta.resources import IgnoreResourceException, PurgeableResource, resource\n\n\n\
                   @resource(\"n::Item\", agent=\"agent\", id_attribute=\"key\")\n\
                   class Item(PurgeableResource):\n    fields = (\"key\", \"double\")\n\n    \
                   @staticmethod\n    def get_double(exporter, obj):\n        \
                   if obj.number % 7 == 0:\n            raise IgnoreResourceException()\n        \
                   if obj.number % 11 == 0:\n            raise ValueError(\"eleven\")\n        \
                   return obj.number * 2\n";
    write_files(
        &dir,
        &[
            ("project.yml", "name: p\nmodulepath: libs\n"),
            (
                "libs/n/model/_init.cf",
                "entity Item extends std::PurgeableResource:\n    int number\n    string key\n    string agent = \"a\"\nend\n\
                 implement Item using std::none\n",
            ),
            ("libs/n/plugins/__init__.py", plugins),
            (
                "main.cf",
                "import n\nfor i in std::sequence(2500, start=1):\n    n::Item(number=i, key=\"k{{i}}\")\nend\n",
            ),
        ],
    );
    let out = modelc(&["--format", "json", "compile", "."], &dir);
    let diagnostics: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    // One diagnostic per failed resource: numbers divisible by 11 and not by 7.
    let failed: Vec<i64> = (1..=2500).filter(|n| n % 11 == 0 && n % 7 != 0).collect();
    assert_eq!(diagnostics.len(), failed.len(), "{:?}", &diagnostics[..3]);
    assert!(diagnostics.iter().all(|d| d["code"] == "E0410"));

    // Without the failing resources, every other is exported with its own value.
    let plugins = plugins.replace("raise ValueError(\"eleven\")", "return 0");
    std::fs::write(dir.join("libs/n/plugins/__init__.py"), plugins).unwrap();
    let out = modelc(&["-q", "compile", ".", "-o", "ir.json"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let ir: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("ir.json")).unwrap()).unwrap();
    let exported: BTreeMap<String, i64> = ir["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["attributes"]["key"].as_str().unwrap().to_owned(), r["attributes"]["double"].as_i64().unwrap()))
        .collect();
    let expected: BTreeMap<String, i64> =
        (1..=2500).filter(|n| n % 7 != 0).map(|n| (format!("k{n}"), if n % 11 == 0 { 0 } else { n * 2 })).collect();
    assert_eq!(exported, expected);
}
