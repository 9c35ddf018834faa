//! Modules' plugins written in Python, run by modelc: real modules installed from the registry
//! give the reference's values; the gradual semantics, the failures, modelc's own `inmanta` API
//! and "at most one interpreter, and none without a call". Skipped, with a message, where no
//! Python runs (and the registry tests where the registry cannot be reached).
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::path::{Path, PathBuf};

use modelc_tests::pyenv::{registry_env, site_packages};
use modelc_tests::{modelc, python3, scratch_dir};

/// Writes `files` (path, text) under `dir`.
fn write_files(dir: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// A project whose module `m` is a v1 module with `plugins` as its Python.
fn v1_project(name: &str, main: &str, model: &str, plugins: &str) -> PathBuf {
    let dir = scratch_dir(name);
    write_files(
        &dir,
        &[
            ("project.yml", "name: p\nmodulepath: libs\n"),
            ("main.cf", main),
            ("libs/m/model/_init.cf", model),
            ("libs/m/plugins/__init__.py", plugins),
        ],
    );
    dir
}

fn diagnostics(stdout: &str) -> Vec<serde_json::Value> {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// The registry's `exec` 2.1.1, `ip` 2.0.3 and `fs` 1.1.2 (and what their models and Python
/// import) in a throwaway environment: every plugin of exec and ip, and fs's reading of the
/// project's files, give the values the reference compiler gives.
/// The expected lines are what `../shared/tools/reference-inmanta compile` printed for this model
/// (inmanta-core 14.0.0 with the same packages).
#[test]
fn exec_ip_and_fs_plugins_from_the_registry_give_the_reference_values() {
    let packages = modelc_tests::pyenv::EXEC_IP_FS;
    let Some(env) = registry_env(Path::new(env!("CARGO_TARGET_TMPDIR")), "exec-ip-fs", &packages) else { return };
    let dir = scratch_dir("python-exec-ip");
    let model = r#"import exec
import ip
import fs

std::print(exec::in_shell("echo hello; rm -rf /tmp/x"))
std::print(exec::shlex_join(["ls", "-l", "a b", "it's"]))
std::print(ip::hostname("web1.example.com"))
std::print(ip::network("192.168.5.17", "24"))
std::print(ip::cidr_to_network("10.1.2.3/16"))
std::print(ip::netmask(20))
std::print(ip::concat("web", "example.com"))
std::print(ip::net_to_nm("10.0.0.0/8"))
std::print(ip::ipnet("192.168.1.10/24", "ip"))
std::print(ip::ipnet("192.168.1.10/24", "prefixlen"))
std::print(ip::ipnet("192.168.1.10/24", "netmask"))
std::print(ip::ipnet("192.168.1.10/24", "network"))
std::print(ip::ipindex("192.168.1.0/24", 5))
std::print(ip::ipindex("192.168.1.0/24", -1))
std::print(ip::is_valid_ip("10.0.0.1"))
std::print(ip::is_valid_ip("10.0.0.300"))
std::print(ip::is_valid_cidr_v6("fe80::/64"))
std::print(ip::is_valid_ip_v6("fe80::1"))
std::print(ip::is_valid_cidr("10.0.0.0/33"))
std::print(ip::is_valid_cidr_v10("fe80::1/64"))
std::print(ip::is_valid_ip_v10("::1"))
std::print(ip::add("10.0.0.254", 3))
std::print(ip::is_valid_netmask("255.255.240.0"))
std::print(ip::is_valid_netmask("255.0.255.0"))
std::print(fs::source("/hello.txt"))
std::print(fs::list_files("/"))
"#;
    // The modules come from the environment alone: no module path.
    write_files(&dir, &[("project.yml", "name: p\n"), ("main.cf", model), ("files/hello.txt", "hello from a file\n")]);
    let python = env.display().to_string();
    // The reference warns of the modules' deprecated `number` too.
    let check = modelc(&["--python", &python, "--format", "json", "check"], &dir);
    let errors: Vec<serde_json::Value> =
        diagnostics(&check.stdout).into_iter().filter(|d| d["severity"] == "error").collect();
    assert_eq!(errors, Vec::<serde_json::Value>::new(), "{}", check.stderr);
    let out = modelc(&["--python", &python, "compile"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let reference = r#"sh -c "echo hello; rm -rf /tmp/x"
ls -l 'a b' 'it'"'"'s'
web1
192.168.5.0
10.1.0.0
255.255.240.0
web.example.com
255.0.0.0
192.168.1.10
24
255.255.255.0
192.168.1.0
192.168.1.5
192.168.1.255
True
False
True
True
False
True
True
10.0.1.1
True
False
hello from a file

@['hello.txt']
"#;
    assert_eq!(out.stdout, reference);
    // Which interpreter ran them: the environment's (its `sys.executable`).
    let said = format!("python: plugins ran in {} (Python 3.", env.join("bin/python3").display());
    assert!(out.stderr.contains(&said) && out.stderr.contains("from --python)"), "{}", out.stderr);
}

/// The registry's `config` 0.8.0, with inmanta-core 14.0.0 installed beside it (as its
/// package requires): modelc's API is used, except the pure-Python `inmanta.util.dict_path`,
/// which comes from the installed core; the values are the reference's. The reference prints
/// them in another order (its calls whose arguments have typedef constraints that call plugins
/// wait longer), so the lines are compared sorted.
#[test]
fn config_plugins_with_inmanta_core_installed_give_the_reference_values() {
    let packages = [
        "inmanta-module-config==0.8.0",
        "inmanta-core==14.0.0",
        "Jinja2==3.1.6",
        "MarkupSafe==3.0.3",
        "pydantic==2.14.4",
        "pydantic-core==2.50.5",
        "annotated-types==0.8.0",
        "typing-extensions==4.16.0",
        "typing-inspection==0.4.5",
        "PyYAML==6.0.4",
    ];
    let Some(env) = registry_env(Path::new(env!("CARGO_TARGET_TMPDIR")), "config", &packages) else { return };
    let dir = scratch_dir("python-config");
    let model = r#"import config

c = {"a": {"b": [1, 2], "name": "x"}, "list": [{"k": "one", "v": 1}, {"k": "two", "v": 2}]}
std::print(config::get_config_value(c, "a.b"))
std::print(config::get_config_value_as_string(c, "a.name"))
std::print(config::get_config_value(c, "list[k=two].v"))
std::print(config::get_config_value_as_int(c, "list[k=one].v"))
std::print(config::json_dumps({"x": [1, true, null]}))
std::print(config::json_loads("{\"y\": [2.5]}"))
std::print(config::get_const("SYSTEM_PATH_PATTERN"))
std::print(config::resolve_path("file:///etc/hosts"))
p = "file:///etc/passwd"
std::print(config::absolute_path(config::resolve_path(p)))
"#;
    write_files(&dir, &[("project.yml", "name: p\n"), ("main.cf", model)]);
    let out = modelc(&["--python", &env.display().to_string(), "compile"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // As `reference-inmanta compile` printed them, in its order.
    let mut reference = vec![
        r#"{"x": [1, true, null]}"#,
        "@{'y': [2.5]}",
        r"^file:\/\/(\/[^\/]+)+?$",
        "/etc/hosts",
        "@[1, 2]",
        "x",
        "2",
        "1",
        "/etc/passwd",
    ];
    let mut printed: Vec<&str> = out.stdout.lines().collect();
    printed.sort_unstable();
    reference.sort_unstable();
    assert_eq!(printed, reference);
}

/// The yaml module's plugins import std's `get_file_content` helper, and read a module's file
/// with it (yaml 1.0.0 from the registry, with PyYAML).
#[test]
fn the_yaml_module_reads_a_modules_file_through_stds_helper() {
    let packages = ["inmanta-module-yaml==1.0.0", "PyYAML==6.0.4"];
    let Some(env) = registry_env(Path::new(env!("CARGO_TARGET_TMPDIR")), "yaml", &packages) else { return };
    let dir = scratch_dir("python-yaml");
    let model = "import yaml
import m

c = yaml::load(\"m/conf.yml\")
std::print(c[\"port\"])
std::print(c[\"hosts\"])
std::print(yaml::loads(\"a: [1, 2]\"))
";
    write_files(
        &dir,
        &[
            ("project.yml", "name: p\nmodulepath: libs\n"),
            ("main.cf", model),
            ("libs/m/model/_init.cf", ""),
            ("libs/m/files/conf.yml", "port: 8080\nhosts:\n  - a\n  - b\n"),
        ],
    );
    let out = modelc(&["--python", &env.display().to_string(), "compile"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The lines the reference printed (in another order: it promises none between these).
    assert_eq!(out.stdout, "8080\n@['a', 'b']\n@{'a': [1, 2]}\n");
}

const GRADUAL_PLUGINS: &str = r#"from inmanta.plugins import plugin
from inmanta.execute.proxy import DynamicProxy


@plugin
def describe(box: "m::Box") -> "string":
    assert isinstance(box, DynamicProxy)
    items = ",".join(sorted(item.n for item in box.items))
    return "%s:%s (%s)" % (box.name, items, box._type().get_full_name())


@plugin
def shape(values: "dict", boxes: "m::Box[]") -> "dict":
    return {
        "keys": sorted(values),
        "nested": values["nested"],
        "types": [type(v).__name__ for v in values["nested"]],
        "first": boxes[0],
        "count": len(boxes),
    }
"#;

/// A plugin that reads an attribute another statement sets later, and a relation that grows
/// later, still sees their final values: the call waits, as the reference's does.
#[test]
fn a_plugin_reading_values_set_later_gets_the_final_ones() {
    if python3("the gradual Python plugin test").is_none() {
        return;
    }
    let model = "entity Box:\n    string name\nend\nentity Item:\n    string n\nend\nBox.items [0:] -- Item\nimplement Box using std::none\nimplement Item using std::none\n";
    let main = r#"import m
b = m::Box()
std::print(m::describe(b))
b.items += m::Item(n="1")
b.name = "late"
b.items += m::Item(n="2")
s = m::shape({"a": 1, "nested": [1, 2.5, null, true, "x", {"k": [3]}]}, [b])
std::print(s["keys"])
std::print(s["types"])
first = s["first"]
std::print(first.name)
std::print(s["count"] + 1)
d = std::at(s["nested"], 5)
std::print(std::at(d["k"], 0) + 1)
"#;
    let dir = v1_project("python-gradual", main, model, GRADUAL_PLUGINS);
    let out = modelc(&["compile"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The call that waited prints once, when the values are complete: after the others.
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "@['a', 'nested']",
            "@['int', 'float', 'NoneType', 'bool', 'str', 'dict']",
            "late",
            "2",
            "4",
            "late:1,2 (m::Box)"
        ]
    );
}

const FAILING_PLUGINS: &str = r#"import os
import time
from inmanta.plugins import PluginException, plugin


def helper(n):
    return [1, 2][n]


@plugin
def pick(n: "int") -> "int":
    return helper(n)


@plugin
def refuse(why: "string") -> "string":
    raise PluginException("refused: " + why)


@plugin
def sleep(seconds: "float") -> "int":
    time.sleep(seconds)
    return 1


@plugin
def stop() -> "int":
    os._exit(7)


@plugin
def listen(port: "m::port", names: "string[]" = []) -> "string":
    raise Exception("not called: its arguments do not fit")


@plugin
def answer() -> "string":
    return 42
"#;

/// A Python exception is an error at the call with the plugin's traceback; a plugin past the
/// time limit, or one that stops the interpreter, fails the compile cleanly; arguments and
/// results that do not fit the plugin's annotations are errors, as in the reference; nothing is
/// written.
#[test]
fn python_failures_are_diagnostics_at_the_call_and_nothing_is_written() {
    if python3("the Python plugin failure test").is_none() {
        return;
    }
    let cases: [(&str, &[&str], &str, &str); 7] = [
        ("x = m::pick(5)\n", &[], "E0309", "exception in plugin m::pick: IndexError: list index out of range"),
        ("x = m::refuse(\"no\")\n", &[], "E0309", "plugin m::refuse raised: refused: no"),
        ("x = m::sleep(30.0)\n", &["--plugin-timeout", "0.5"], "E0312", "did not return within 0.5 s"),
        ("x = m::stop()\n", &[], "E0312", "the Python interpreter stopped while it ran (exit code 7)"),
        ("x = m::listen(70000)\n", &[], "E0218", "argument `port` of m::listen(): invalid value 70000,"),
        ("x = m::listen(80, names=[1])\n", &[], "E0210", "argument `names` of m::listen(): invalid value 1,"),
        ("x = m::answer()\n", &[], "E0210", "the value m::answer() returned does not fit its declared type"),
    ];
    for (call, flags, code, message) in cases {
        let main = format!("import m\n{call}");
        let dir = v1_project(
            "python-failures",
            &main,
            "typedef port as int matching self > 0 and self < 65536\n",
            FAILING_PLUGINS,
        );
        let mut args: Vec<&str> = flags.to_vec();
        args.extend(["--format", "json", "compile", "-o", "out.json"]);
        let started = std::time::Instant::now();
        let out = modelc(&args, &dir);
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "{call}: the time limit holds");
        assert_eq!(out.code, 1, "{call}: {}", out.stderr);
        let found = diagnostics(&out.stdout);
        assert_eq!(found.len(), 1, "{call}: {found:?}");
        assert_eq!(found[0]["code"], code, "{call}: {found:?}");
        assert!(found[0]["message"].as_str().unwrap().contains(message), "{call}: {found:?}");
        assert_eq!(found[0]["labels"][0]["line"], 2, "{call}: at the call: {found:?}");
        assert!(!dir.join("out.json").exists(), "{call}: nothing is written");
    }
    // The traceback is a note: the plugin's own frames, most recent call last.
    let dir = v1_project("python-traceback", "import m\nx = m::pick(5)\n", "", FAILING_PLUGINS);
    let found = diagnostics(&modelc(&["--format", "json", "compile"], &dir).stdout);
    let notes = found[0]["notes"].to_string();
    assert!(notes.contains("in pick") && notes.contains("in helper") && notes.contains("IndexError"), "{notes}");
    assert!(!notes.contains("<modelc>"), "modelc's own frames are left out: {notes}");
}

/// A model that calls no Python plugin never starts Python; one compile starts one
/// interpreter however many plugins it calls. The interpreter is a script that counts its starts.
#[test]
fn no_call_starts_no_interpreter_and_a_compile_starts_one_at_most() {
    let Some(python) = python3("the interpreter count test") else { return };
    let plugins = "from inmanta.plugins import plugin\n\n@plugin\ndef one() -> \"int\":\n    return 1\n\n@plugin\ndef two(x: \"int\") -> \"int\":\n    return x + 1\n";
    let dir = v1_project("python-starts", "import m\nx = 1\n", "", plugins);
    let starts = dir.join("starts");
    let counting = dir.join("counting-python");
    std::fs::write(
        &counting,
        format!("#!/bin/sh\necho started >> '{}'\nexec '{}' \"$@\"\n", starts.display(), python.display()),
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&counting).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&counting, permissions).unwrap();
    let interpreter = counting.display().to_string();
    let out = modelc(&["--python", &interpreter, "compile"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!starts.exists(), "no plugin called, no interpreter started");
    assert!(!out.stderr.contains("python:"), "{}", out.stderr);
    let main = "import m\nx = m::one()\ny = m::two(x)\nz = m::two(y)\nstd::print(z)\n";
    std::fs::write(dir.join("main.cf"), main).unwrap();
    let out = modelc(&["--python", &interpreter, "compile"], &dir);
    assert_eq!((out.code, out.stdout.as_str()), (0, "3\n"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&starts).unwrap(), "started\n", "one interpreter for the compile");
    assert!(out.stderr.contains("python: plugins ran in"), "{}", out.stderr);
}

/// modelc's own `inmanta` API wins over an installed inmanta-core, and its std over an
/// installed `inmanta_plugins.std`: both are there, and both fail when imported. The module
/// is a v2 one installed in the environment (its model inside its package), whose Python uses
/// the parts of the API that real modules import at load time.
#[test]
fn modelc_inmanta_api_and_std_win_over_installed_ones() {
    let Some(python) = python3("the API precedence test") else { return };
    let dir = scratch_dir("python-precedence");
    let env = dir.join("env");
    let made = std::process::Command::new(&python).args(["-m", "venv", "--without-pip"]).arg(&env).status().unwrap();
    assert!(made.success());
    let site = site_packages(&env);
    let demo = r#"import inmanta.agent.handler
import inmanta.execute.proxy
import inmanta.export
import inmanta.resources
import inmanta_plugins.std
from inmanta.agent.handler import CRUDHandler, HandlerContext, ResourcePurged, cache, provider
from inmanta.execute.util import Unknown
from inmanta.export import dependency_manager
from inmanta.module import Project
from inmanta.plugins import Context, PluginException, deprecated, plugin


@plugin
def where() -> "string":
    project = Project.get()
    return "%s %s" % (project.modules["demo"].path == __path__[0], project.project_path != "")
from inmanta.resources import PurgeableResource, resource
from inmanta.util import dict_path


@plugin
def shout(text: "string", ctx: Context) -> "string":
    """
    The text in capitals, through std's `upper`.
    """
    return inmanta_plugins.std.upper(text) + "! " + ctx.get_environment_id()


@deprecated(replaced_by="demo::shout")
@plugin("maybe")
def maybe_unknown(value: "any") -> "bool":
    return isinstance(value, Unknown)


@resource("demo::Thing", agent="name", id_attribute="name")
class Thing(PurgeableResource):
    fields = ("name",)


@provider("demo::Thing", name="demo")
class ThingHandler(CRUDHandler[Thing]):
    @cache(timeout=10)
    def read_resource(self, ctx: HandlerContext, resource: Thing) -> None:
        raise ResourcePurged()


@dependency_manager
def dependencies(model, resources):
    pass


@plugin
def handler() -> "string":
    # A class deriving from a stand-in is an ordinary class: shown, and without made-up members.
    return "%s %s" % (str(ThingHandler).rsplit(".", 1)[-1], hasattr(ThingHandler, "nothing_here"))
"#;
    write_files(
        &site,
        &[
            ("inmanta/__init__.py", "raise ImportError('the installed inmanta-core was imported')\n"),
            ("inmanta_plugins/std/__init__.py", "raise ImportError('the installed std was imported')\n"),
            ("inmanta_plugins/std/model/_init.cf", "entity Nope:\nend\n"),
            ("inmanta_plugins/demo/__init__.py", demo),
            ("inmanta_plugins/demo/model/_init.cf", "entity Thing:\n    string name\nend\n"),
        ],
    );
    write_files(
        &dir,
        &[
            ("project.yml", "name: p\n"),
            ("main.cf", "import demo\nstd::print(demo::shout(\"hi\"))\nstd::print(demo::maybe(1))\n"),
        ],
    );
    let out = modelc(&["--python", &env.display().to_string(), "compile"], &dir);
    assert_eq!((out.code, out.stdout.as_str()), (0, "HI! None\nFalse\n"), "{}", out.stderr);
    // `check` knows the plugins without running them: a wrong argument type and the deprecation.
    std::fs::write(dir.join("main.cf"), "import demo\nx = demo::shout(1)\ny = demo::maybe(2)\n").unwrap();
    let found =
        diagnostics(&modelc(&["--python", &env.display().to_string(), "--format", "json", "check"], &dir).stdout);
    let codes: Vec<&str> = found.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["E0210", "W0103"], "{found:?}");
    // `modelc doc` shows them, with their docstrings.
    let doc = modelc(&["--python", &env.display().to_string(), "doc", "demo"], &dir);
    assert!(doc.stdout.contains("demo::shout(string text) -> string"), "{}", doc.stdout);
    assert!(doc.stdout.contains("The text in capitals, through std's `upper`."), "{}", doc.stdout);
    assert!(doc.stdout.contains("demo::maybe(any value) -> bool"), "{}", doc.stdout);
}

/// A name of the `inmanta` API that modelc does not provide fails the call with a message that
/// names it, and a stand-in used as a value does too.
#[test]
fn what_modelc_does_not_provide_is_named() {
    if python3("the unsupported API test").is_none() {
        return;
    }
    let missing = "from inmanta.plugins import plugin, NoSuchThing\n\n@plugin\ndef f() -> \"int\":\n    return 1\n";
    let dir = v1_project("python-missing-name", "import m\nx = m::f()\n", "", missing);
    let found = diagnostics(&modelc(&["--format", "json", "compile"], &dir).stdout);
    let message = found[0]["message"].as_str().unwrap();
    assert_eq!(found[0]["code"], "E0312");
    assert!(message.contains("plugin m::f") && message.contains("'NoSuchThing'"), "{message}");
    let stand_in = "from inmanta.plugins import plugin\nfrom inmanta.resources import HostNotFoundException\n\n@plugin\ndef f() -> \"string\":\n    return \"id: %s\" % HostNotFoundException.of(\"x\")\n";
    let dir = v1_project("python-stand-in", "import m\nx = m::f()\n", "", stand_in);
    let found = diagnostics(&modelc(&["--format", "json", "compile"], &dir).stdout);
    let message = found[0]["message"].as_str().unwrap();
    assert!(
        message.contains("plugin m::f") && message.contains("inmanta.resources.HostNotFoundException.of"),
        "{message}"
    );
}

/// A v2 module's source tree (its Python in `inmanta_plugins/<module>/` beside `model/`), with
/// signatures and values real modules use: `Context` in the middle and under
/// `from __future__ import annotations`, a submodule's plugins, payloads larger than a pipe's
/// buffer both ways, and values the model cannot hold, which fail the call without stopping
/// the interpreter.
#[test]
fn a_v2_source_tree_with_unusual_signatures_and_values() {
    if python3("the v2 source tree test").is_none() {
        return;
    }
    let dir = scratch_dir("python-v2-source");
    let init = r#"from __future__ import annotations

import inmanta.plugins as plugins
from inmanta.plugins import PluginException, plugin


@plugin
def around(before: "string", ctx: plugins.Context, after: "string") -> "string":
    return "%s %s %s" % (before, ctx.owner.namespace.get_full_name(), after)


@plugin
def big(n: "int") -> "string":
    return "x" * n


@plugin
def length(text: "string") -> "int":
    return len(text)


@plugin
def not_a_number() -> "float":
    return float("nan")


class Quiet(PluginException):
    def __init__(self):
        pass


@plugin
def quiet() -> "int":
    raise Quiet()
"#;
    write_files(
        &dir,
        &[
            ("project.yml", "name: p\nmodulepath: libs\n"),
            ("libs/m/model/_init.cf", ""),
            ("libs/m/model/sub.cf", ""),
            ("libs/m/inmanta_plugins/m/__init__.py", init),
            (
                "libs/m/inmanta_plugins/m/sub.py",
                "from inmanta.plugins import plugin\n\n@plugin\ndef twice(x: \"int\") -> \"int\":\n    return 2 * x\n",
            ),
        ],
    );
    let main = r#"import m
import m::sub
std::print(m::around("a", "b"))
std::print(m::length(m::big(200000)))
std::print(m::sub::twice(21))
"#;
    std::fs::write(dir.join("main.cf"), main).unwrap();
    let out = modelc(&["compile"], &dir);
    assert_eq!((out.code, out.stdout.as_str()), (0, "a __config__ b\n200000\n42\n"), "{}", out.stderr);
    // What the model cannot hold fails the call; the next call still runs.
    for (call, message) in [
        ("m::not_a_number()", "it returned nan, which the model's float can not hold"),
        ("m::quiet()", "plugin m::quiet raised"),
    ] {
        std::fs::write(dir.join("main.cf"), format!("import m\nstd::print(m::length(\"abc\"))\nx = {call}\n")).unwrap();
        let out = modelc(&["--format", "json", "compile"], &dir);
        let found = diagnostics(&out.stdout);
        assert_eq!(found.len(), 1, "{call}: {found:?}");
        assert!(found[0]["message"].as_str().unwrap().contains(message), "{call}: {found:?}");
    }
}

/// A plugin that reads an unknown attribute of an instance gets inmanta-core's
/// `UnknownException`, and its result is unknown, as in the reference (which printed these lines
/// for this model): the plugin's own code never sees the unknown.
#[test]
fn a_plugin_that_reads_an_unknown_attribute_gives_unknown() {
    if python3("the unknown-read test").is_none() {
        return;
    }
    let main = r#"import m
u = std::get_env("MODELC_UNSET_VARIABLE_FOR_TEST")
a = m::A(name=u)
b = m::A(name="b ")
x = m::strip(a)
y = m::strip(b)
std::print(std::is_unknown(x))
std::print(y)
z = m::names([a, b])
std::print(std::is_unknown(z))
"#;
    let plugins = r#"from inmanta.plugins import plugin


@plugin
def strip(a: "m::A") -> "string":
    return a.name.rstrip()


@plugin
def names(items: "m::A[]") -> "string[]":
    return [item.name for item in items]
"#;
    let dir = v1_project(
        "python-unknown-read",
        main,
        "entity A:\n  string name\nend\nimplement A using std::none\n",
        plugins,
    );
    let out = modelc(&["compile"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut lines: Vec<&str> = out.stdout.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["True", "True", "b"]);
}
