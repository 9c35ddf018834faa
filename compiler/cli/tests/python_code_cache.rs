//! modelc's `inmanta` API compiled once per environment: a host keeps it in the virtual
//! environment's `__pycache__` (`CodeCache` in `host.py`), the next one reads it from there; a
//! file that cannot be read is compiled anew and written again; PYTHONDONTWRITEBYTECODE keeps the
//! environment as it is. Real `modelc` processes with a throwaway environment in a temporary
//! directory (skipped without python3).
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::path::{Path, PathBuf};
use std::process::Command;

const PLUGINS: &str =
    "from inmanta.plugins import plugin\n\n\n@plugin\ndef hello() -> \"string\":\n    return \"hi\"\n";

/// A project calling a plugin of its v1 module `m`, and a virtual environment without pip.
fn setup() -> Option<(tempfile::TempDir, PathBuf)> {
    let python = modelc_test_pyenv::python3("the code cache tests")?;
    let dir = tempfile::Builder::new().prefix("modelc-code-cache").tempdir().unwrap();
    for (path, text) in [
        ("project.yml", "name: p\nmodulepath: libs\n"),
        ("main.cf", "import m\nstd::print(m::hello())\n"),
        ("libs/m/model/_init.cf", ""),
        ("libs/m/plugins/__init__.py", PLUGINS),
    ] {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let env = dir.path().join("env");
    let made = Command::new(python).args(["-m", "venv", "--without-pip"]).arg(&env).status().unwrap();
    assert!(made.success(), "python3 -m venv failed");
    Some((dir, env))
}

/// `modelc --python ENV compile .` in `dir`, PYTHONDONTWRITEBYTECODE set to `no_bytecode` or
/// unset: what it printed (stdout, stderr), checked to have succeeded.
fn compile(dir: &Path, env: &Path, no_bytecode: Option<&str>) -> (String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_modelc"));
    command.arg("--python").arg(env.join("bin/python")).args(["compile", "."]).current_dir(dir);
    command.env_remove("MODELC_STORE").env_remove("PYTHONPYCACHEPREFIX");
    match no_bytecode {
        Some(value) => command.env("PYTHONDONTWRITEBYTECODE", value),
        None => command.env_remove("PYTHONDONTWRITEBYTECODE"),
    };
    let out = command.output().unwrap();
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(out.status.success(), "{stdout}\n{stderr}");
    (stdout, stderr)
}

/// The cache files in the environment.
fn cached(env: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(env.join("__pycache__")) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

#[test]
fn the_api_is_compiled_once_per_environment_and_read_back() {
    let Some((dir, env)) = setup() else { return };
    let dir = dir.path();

    // PYTHONDONTWRITEBYTECODE: nothing written into the environment.
    let (stdout, _) = compile(dir, &env, Some("1"));
    assert_eq!(stdout, "hi\n");
    assert_eq!(cached(&env), Vec::<PathBuf>::new());

    // Without it: one file, named by the Python version and modelc's digest; another
    // version's file is removed when it is written.
    std::fs::create_dir_all(env.join("__pycache__")).unwrap();
    let (first, _) = compile(dir, &env, None);
    let [file] = cached(&env).try_into().unwrap();
    let name = file.file_name().unwrap().to_str().unwrap().to_owned();
    assert!(name.starts_with("modelc-cpython-") && name.ends_with(".marshal"), "{name}");
    let other = env.join("__pycache__").join(name.rsplit_once('-').unwrap().0.to_owned() + "-0123.marshal");
    std::fs::write(&other, b"another version's").unwrap();
    std::fs::write(&file, b"not marshal data").unwrap();
    let (again, _) = compile(dir, &env, None);
    assert_eq!((first.as_str(), again.as_str()), ("hi\n", "hi\n"), "an unreadable file is compiled anew");
    assert_eq!(cached(&env), std::slice::from_ref(&file), "rewritten, and the other version's removed");
    assert_ne!(std::fs::read(&file).unwrap(), b"not marshal data");

    // The next host runs the code the file holds: here, the `inmanta` package with a line of
    // its own added (even with PYTHONDONTWRITEBYTECODE, which only stops writing).
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pyhost/python/inmanta/__init__.py");
    let tamper = "import marshal, sys\npath = sys.argv[1]\ncodes = marshal.load(open(path, 'rb'))\n\
         source = open(sys.argv[2]).read() + '\\nimport sys\\nsys.stderr.write(\"from the cache\\\\n\")\\n'\n\
         codes['inmanta'] = compile(source, '<modelc>/inmanta/__init__.py', 'exec')\n\
         marshal.dump(codes, open(path, 'wb'))\n";
    let tampered = Command::new(env.join("bin/python")).arg("-c").arg(tamper).arg(&file).arg(source).status().unwrap();
    assert!(tampered.success());
    let (stdout, stderr) = compile(dir, &env, Some("1"));
    assert_eq!(stdout, "hi\n");
    assert!(stderr.contains("from the cache"), "{stderr}");
}
