//! `modelc compile -o` as a whole process (best of 5) for 10,000 resources of a module resource
//! type whose fields three Python mappers compute (one reads a relation, one uploads the file's
//! content, one formats an attribute), against 10,000 `std::testing::NullResource`, which need
//! no Python. The project runs its plugins in its own virtual environment (`python: .venv` in
//! project.yml, as the README sets projects up), made here with `python3 -m venv`: an interpreter
//! found through a version manager's shim (pyenv) starts several times slower. Needs `python3`
//! on PATH; how that interpreter was built matters: one without PGO and LTO (pyenv's default)
//! runs the mappers about twice as slowly as a distribution's. Run with
//! `cargo bench -p modelc-tests --bench python_resources`.
//!
//! Target (issue 31): the Python-mapped compile costs at most 3 times the NullResource one.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stdout, reason = "benchmark code")]

const RESOURCES: usize = 10_000;
const RUNS: usize = 5;

const MODEL: &str = r#"entity Config extends std::PurgeableResource:
    string path
    string content
    int mode = 644
end
Config.host [1] -- std::Host
implement Config using std::none
"#;

const PLUGINS: &str = r#"from inmanta.resources import PurgeableResource, resource


@resource("m::Config", agent="host.name", id_attribute="path")
class Config(PurgeableResource):
    fields = ("path", "host_name", "hash", "mode")

    @staticmethod
    def get_host_name(exporter, obj):
        return obj.host.name

    @staticmethod
    def get_hash(exporter, obj):
        return exporter.upload_file(obj.content)

    @staticmethod
    def get_mode(exporter, obj):
        return "%04o" % int(str(obj.mode), 8)
"#;

fn main() {
    let Some(system_python) = modelc_tests::python3("the Python resource benchmark") else { return };
    let binary = modelc_tests::process::release_binary();
    let dir = std::env::temp_dir().join(format!("modelc-bench-python-resources-{}", std::process::id()));
    let python = dir.join("python");
    let null = dir.join("null");
    for (path, text) in [
        ("python/project.yml", "name: bench\nmodulepath: libs\npython: .venv\n".to_owned()),
        ("python/libs/m/model/_init.cf", MODEL.to_owned()),
        ("python/libs/m/plugins/__init__.py", PLUGINS.to_owned()),
        (
            "python/main.cf",
            format!(
                "import m\nh = std::Host(name=\"web1\", os=std::linux)\nfor i in std::sequence({RESOURCES}):\n    \
                 m::Config(host=h, path=\"/etc/f{{{{i}}}}.conf\", content=\"content {{{{i}}}}\")\nend\n"
            ),
        ),
        (
            "null/main.cf",
            format!(
                "import std::testing\nfor i in std::sequence({RESOURCES}):\n    \
                 std::testing::NullResource(name=\"n{{{{i}}}}\", agentname=\"web1\")\nend\n"
            ),
        ),
    ] {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let made = std::process::Command::new(&system_python).args(["-m", "venv"]).arg(python.join(".venv")).status();
    assert!(made.is_ok_and(|s| s.success()), "python3 -m venv failed");
    // The two compiles take turns, so that both see the machine as it is during the run.
    let run = |cwd: &std::path::Path, target: &str| {
        let ir = cwd.join("ir.json");
        modelc_tests::process::timed(&binary, cwd, &["-q", "compile", target, "-o", ir.to_str().unwrap()]).seconds
    };
    let (mut with_python, mut without) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..RUNS {
        with_python = with_python.min(run(&python, "."));
        without = without.min(run(&null, "main.cf"));
    }
    println!("{RESOURCES} resources, compile -o, best of {RUNS} processes");
    println!("{:<46} {:>8.3} s", "std::testing::NullResource", without);
    println!("{:<46} {:>8.3} s", "a module resource with three Python mappers", with_python);
    println!("{:<46} {:>8.2} ×", "ratio (target: at most 3)", with_python / without);
    std::fs::remove_dir_all(&dir).unwrap();
}
