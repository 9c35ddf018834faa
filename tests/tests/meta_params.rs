//! The meta parameters' one rule table (`modelc_ir::meta_params::PARAMS`) against its two
//! readers' inputs: for every parameter and values of its kind, generated from the table, std's
//! `Meta` in a compiled model and a YAML graph's `meta:` both take what the table takes and
//! refuse what it refuses, with the table's words; and std's defaults are the table's.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use modelc_ir::meta_params::{Given, Kind, PARAMS, Param, meta_of};
use modelc_tests::{modelc, scratch_dir};
use serde_json::{Value, json};

/// A value to try: as the model writes it, as a YAML graph has it (`None`: JSON cannot hold it),
/// and as the table is asked about it.
struct Sample {
    model: String,
    yaml: Option<Value>,
    given: Given<'static>,
}

fn sample(model: impl Into<String>, yaml: Option<Value>, given: Given<'static>) -> Sample {
    Sample { model: model.into(), yaml, given }
}

/// Values of `param`'s kind on both sides of its rule (and `null` where it may be unset).
fn samples(param: &Param) -> Vec<Sample> {
    let mut out = match param.kind {
        Kind::Flag => [true, false].map(|b| sample(b.to_string(), Some(json!(b)), Given::Bool(b))).into(),
        Kind::Count | Kind::Burst => {
            [-2, -1, 0, 1, 5].map(|n: i64| sample(n.to_string(), Some(json!(n)), Given::Int(n))).into()
        }
        Kind::Seconds => {
            let mut out: Vec<Sample> =
                [-1.0, -0.5, 0.0, 2.5].map(|f: f64| sample(format!("{f:?}"), Some(json!(f)), Given::Float(f))).into();
            out.push(sample("3", Some(json!(3)), Given::Int(3)));
            // An infinite number: only a computation makes one, and JSON has none.
            let huge = format!("1{}.0 * 10.0", "0".repeat(320));
            out.push(sample(huge, None, Given::Float(f64::INFINITY)));
            out
        }
        Kind::Backoff => ["none", "exponential", "linear", ""]
            .map(|s| sample(format!("\"{s}\""), Some(json!(s)), Given::Str(s)))
            .into(),
        Kind::Semaphores => {
            ["disk", "disk:2", "d.i-s_k:10", "disk:0", "disk:01", "disk:+3", "disk:x", "disk:", ":2", "a b"]
                .map(|s| sample(format!("[\"{s}\"]"), Some(json!([s])), Given::List(vec![Given::Str(s)])))
                .into()
        }
        Kind::Text => vec![sample("\"test -e /x\"", Some(json!("test -e /x")), Given::Str("test -e /x"))],
    };
    if param.nullable {
        out.push(sample("null", Some(Value::Null), Given::Null));
    }
    out
}

/// What the table says of `param` = `given`: `None` if it takes it, else its words and the
/// code a compile refuses it with (E0210 for a value of another type, E0222 for a broken rule).
fn table(param: &Param, given: &Given<'static>) -> Option<(String, &'static str)> {
    let problems = meta_of(|name| (name == param.name).then(|| given.clone())).err()?;
    let items = match given {
        Given::List(items) => items.clone(),
        other => vec![other.clone()],
    };
    let code = if items.iter().all(|item| param.kind.keeps(item).is_some()) { "E0222" } else { "E0210" };
    Some((problems[0].1.message.clone(), code))
}

/// What a compile says of `std::Meta(param=model)` on a resource: `None` if it takes it.
fn compiled(param: &Param, model: &str) -> Option<String> {
    let dir = scratch_dir(&format!("meta-{}", param.name));
    let main = format!(
        "import std::testing\nm = std::Meta({}={model})\nstd::testing::NullResource(name=\"a\", agentname=\"x\", meta=m)\n",
        param.name
    );
    std::fs::write(dir.join("main.cf"), main).unwrap();
    let out = modelc(&["compile", "main.cf"], &dir);
    (out.code != 0).then(|| format!("{}{}", out.stdout, out.stderr))
}

/// What the YAML graph front end says of `meta: {param: yaml}`: `None` if it takes it.
fn yaml_graph(param: &Param, yaml: &Value) -> Option<String> {
    let dir = scratch_dir(&format!("meta-yaml-{}", param.name));
    let graph = json!({
        "graph": "g",
        "resources": [{"kind": "noop", "name": "a", "meta": {param.name: yaml}}],
    });
    std::fs::write(dir.join("g.yaml"), graph.to_string()).unwrap();
    let out = modelc(&["deploy", "--graph", "g.yaml", "--dry-run", "--store", "store.sqlite"], &dir);
    (out.code != 0).then(|| format!("{}{}", out.stdout, out.stderr))
}

#[test]
fn std_and_yaml_graphs_take_and_refuse_what_the_table_does_in_its_words() {
    let mut disagreements = Vec::new();
    for param in PARAMS {
        for sample in samples(param) {
            let expected = table(param, &sample.given);
            let what = format!("{} = {}", param.name, sample.model);
            let model = compiled(param, &sample.model);
            // A broken rule in the table's words; a value of another type as the type checker
            // words it (E0210), refused all the same.
            match (&expected, &model) {
                (None, None) => {}
                (Some((_, "E0210")), Some(said)) if said.contains("E0210") => {}
                (Some((words, code)), Some(said)) if said.contains(code) && said.contains(words.as_str()) => {}
                _ => disagreements.push(format!("model {what}: table {expected:?}, compile {model:?}")),
            }
            let Some(yaml) = &sample.yaml else { continue };
            let graph = yaml_graph(param, yaml);
            match (&expected, &graph) {
                (None, None) => {}
                (Some((words, _)), Some(said)) if said.contains(words.as_str()) => {}
                _ => disagreements.push(format!("yaml {what}: table {expected:?}, graph {graph:?}")),
            }
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n\n"));
}

/// A resource given `std::Meta()` exports no `meta`: std's defaults are the table's.
#[test]
fn stds_defaults_are_the_tables() {
    let dir = scratch_dir("meta-defaults");
    let main = "import std::testing\nstd::testing::NullResource(name=\"a\", agentname=\"x\", meta=std::Meta())\n";
    std::fs::write(dir.join("main.cf"), main).unwrap();
    let out = modelc(&["compile", "main.cf", "-o", "ir.json"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let ir: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("ir.json")).unwrap()).unwrap();
    let resource = &ir["resources"][0];
    assert!(resource.get("meta").is_none(), "std's defaults differ from the table's: {resource:#}");
    // And a value other than a default is carried, so the check above can fail.
    std::fs::write(dir.join("main.cf"), main.replace("std::Meta()", "std::Meta(retry=2)")).unwrap();
    assert_eq!(modelc(&["compile", "main.cf", "-o", "ir.json"], &dir).code, 0);
    let ir: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("ir.json")).unwrap()).unwrap();
    assert_eq!(ir["resources"][0]["meta"]["retry"], 2);
}
