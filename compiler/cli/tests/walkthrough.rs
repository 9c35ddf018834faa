//! The walkthroughs as a reader follows them: every command in the `sh` blocks of README.md and
//! of the examples' READMEs, in the order a reader meets them, run by `sh` in a fresh copy of the
//! repository with this build's binary in place of `cargo run --release -p modelc --`. Each
//! command must succeed, what the text says it prints or writes is checked, and afterwards the
//! copy has no file git does not know about (what the walkthroughs write is ignored).
//!
//! Skipped, each with a message: a command that pipes into Graphviz's `dot` where `dot` is not
//! installed; the pip route to the public modules (a virtual environment, `pip install`) where
//! Python's `venv` or the package registry is missing (a failure with `CI=true`); the commands
//! that deploy the local-site example where neither that route nor the shared reference material
//! beside the repository (or `$MODELC_SHARED`) gives the modules it uses.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stderr, reason = "test code")]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The READMEs in the order a reader meets them: the quick start, which sends them on to the
/// catalogue (partial exports) and the local site (deploys), then the other examples.
const READMES: &[&str] = &[
    "README.md",
    "examples/catalogue/README.md",
    "examples/local-site/README.md",
    "examples/web-service/README.md",
    "examples/static-sites/README.md",
];

/// One command of a walkthrough and what it did.
struct Ran {
    readme: &'static str,
    line: String,
    status: i32,
    stdout: String,
    stderr: String,
}

type Check = fn(&Ran, &Path) -> Result<(), String>;

/// What the READMEs say about their commands: (README, the command's line, check).
fn claims() -> Vec<(&'static str, &'static str, Check)> {
    vec![
        ("README.md", "compile examples/web-service", |r, _| {
            expect(r.stderr.contains("compiled 3 files: no problems") && r.stderr.contains("1 web::LoadBalancer"), r)
        }),
        ("README.md", "graph examples/web-service", |r, _| expect(r.stdout.starts_with("digraph resources {"), r)),
        ("README.md", "export examples/catalogue -m", |r, _| expect(r.stderr.contains("exported version 1 (full)"), r)),
        ("README.md", "versions --store examples/catalogue", |r, _| {
            expect(r.stdout.contains("      1  ") && r.stdout.contains("first version"), r)
        }),
        ("README.md", "python3 -m venv examples/local-site/.venv", |_, root| {
            expect_file(root, "examples/local-site/.venv/pyvenv.cfg")
        }),
        ("README.md", "pip install --no-deps inmanta-module-fs", |_, root| installed_modules(root)),
        ("README.md", "deploy examples/local-site --dry-run", |r, _| {
            expect(r.stderr.contains("dry run, nothing changed") && r.stdout.contains("would-change"), r)
        }),
        ("examples/catalogue/README.md", "compile examples/catalogue -o resources.json", |r, root| {
            expect(
                r.stderr.contains("10 resources, 6 dependencies, 3 resource sets")
                    && r.stderr.contains("1 shared")
                    && root.join("resources.json").is_file(),
                r,
            )
        }),
        ("examples/catalogue/README.md", "| dot -Tsvg > catalogue.svg", |r, root| {
            expect(std::fs::metadata(root.join("catalogue.svg")).is_ok_and(|m| m.len() > 0), r)
        }),
        ("examples/catalogue/README.md", "cd examples/catalogue", |_, _| Ok(())),
        ("examples/catalogue/README.md", "--format mermaid graph", |r, _| expect(r.stdout.starts_with("flowchart"), r)),
        // Version 1, or unchanged when the quick start stored it: it did, in this order.
        ("examples/catalogue/README.md", "export -m \"all networks\"", |r, _| {
            expect(r.stderr.contains("unchanged since version 1"), r)
        }),
        ("examples/catalogue/README.md", "HOSTS=3 NETWORK=1", |r, _| {
            expect(r.stderr.contains("exported version 2 (partial on version 1)"), r)
        }),
        ("examples/catalogue/README.md", "diff 1 2", |r, _| {
            expect(
                r.stdout.contains("+ __config__::Host[internal,network.id=1,id=2]")
                    && r.stdout.contains("~ __config__::Firewall[internal,name=fw-1]")
                    && r.stdout.contains("1 added, 0 removed, 1 changed"),
                r,
            )
        }),
        ("examples/catalogue/README.md", "show 2", |r, _| {
            let network = |n: u32, hosts: u32| {
                let set = r.stdout.split(&format!("set network-{n}:")).nth(1).unwrap_or_default();
                let set = set.split("set ").next().unwrap_or_default();
                set.matches("__config__::Host[").count() as u32 == hosts
            };
            expect(network(0, 2) && network(1, 3) && network(2, 2), r)
        }),
        ("examples/local-site/README.md", "python3 -m venv examples/local-site/.venv", |_, root| {
            expect_file(root, "examples/local-site/.venv/pyvenv.cfg")
        }),
        ("examples/local-site/README.md", "pip install --no-deps inmanta-module-fs", |_, root| installed_modules(root)),
        ("examples/local-site/README.md", "export SITE_ROOT", |_, _| Ok(())),
        ("examples/local-site/README.md", "deploy examples/local-site --dry-run   # what", |r, _| {
            expect(r.stdout.contains("would-change"), r)
        }),
        ("examples/local-site/README.md", "deploy examples/local-site             # 7 changed", |r, _| {
            expect(r.stderr.contains("converged: 7 changed"), r)
        }),
        ("examples/local-site/README.md", "deploy examples/local-site             # 7 unchanged", |r, _| {
            expect(r.stderr.contains("converged: 7 unchanged"), r)
        }),
        ("examples/local-site/README.md", "echo drift", |_, _| Ok(())),
        ("examples/local-site/README.md", "--dry-run   # a diff", |r, _| {
            expect(r.stdout.contains("-drift") && r.stdout.contains("not-evaluated"), r)
        }),
        ("examples/local-site/README.md", "# repaired", |r, _| {
            expect(r.stderr.contains("converged: 2 changed, 5 unchanged") && r.stdout.contains("(refreshed)"), r)
        }),
        ("examples/local-site/README.md", "status --store", |r, _| expect(r.stdout.contains(": converged"), r)),
        ("examples/web-service/README.md", "--dump-instances", |r, _| {
            expect(r.stderr.contains("compiled 3 files: no problems") && r.stdout.contains("web::LoadBalancer"), r)
        }),
        // The README shows the graph this prints.
        ("examples/web-service/README.md", "graph examples/web-service", |r, root| {
            let readme = std::fs::read_to_string(root.join("examples/web-service/README.md")).unwrap();
            let shown =
                readme.split("```\n").find(|block| block.starts_with("digraph")).map(|b| format!("{}\n", b.trim_end()));
            let printed = format!("{}\n", r.stdout.trim_end());
            expect(shown.as_deref() == Some(printed.as_str()), r)
        }),
        ("examples/static-sites/README.md", "--partial -o pages.json", |r, root| {
            expect(
                r.stderr.contains("5 resources")
                    && r.stderr.contains("3 resource sets")
                    && root.join("pages.json").is_file(),
                r,
            )
        }),
    ]
}

fn expect_file(root: &Path, path: &str) -> Result<(), String> {
    if root.join(path).is_file() { Ok(()) } else { Err(format!("{path} is not there")) }
}

/// The three modules' models are in the example's virtual environment, where modelc looks.
fn installed_modules(root: &Path) -> Result<(), String> {
    let lib = root.join("examples/local-site/.venv/lib");
    let site = std::fs::read_dir(&lib)
        .map_err(|e| format!("{}: {e}", lib.display()))?
        .flatten()
        .map(|python| python.path().join("site-packages/inmanta_plugins"))
        .find(|dir| dir.is_dir())
        .ok_or("no inmanta_plugins package was installed")?;
    match ["fs", "exec", "mitogen"].iter().find(|m| !site.join(m).join("model/_init.cf").is_file()) {
        Some(missing) => Err(format!("module `{missing}` is not installed in {}", site.display())),
        None => Ok(()),
    }
}

fn expect(holds: bool, ran: &Ran) -> Result<(), String> {
    if holds { Ok(()) } else { Err(format!("its output is not what the README says:\n{}{}", ran.stdout, ran.stderr)) }
}

#[test]
fn every_walkthrough_command_does_what_its_readme_says() {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let scratch = std::env::temp_dir().join(format!("modelc-walkthrough-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let root = scratch.join("repo");
    let temp = scratch.join("tmp");
    std::fs::create_dir_all(&temp).unwrap();
    copy_tracked_files(&repository, &root);
    // The local-site example finds the public modules in the shared material beside the
    // repository, as in a checkout.
    let modules = shared_dir(&repository);
    if let Some(shared) = &modules {
        std::os::unix::fs::symlink(shared, scratch.join("shared")).unwrap();
    }
    let has_dot = Command::new("dot").arg("-V").output().is_ok_and(|o| o.status.success());
    // The pip route to the public modules needs Python's venv and the package registry. In CI
    // it must run: a walkthrough that cannot install what its README installs is broken there.
    let registry = registry_reachable();
    if let Err(why) = &registry {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "CI=true, but the pip route cannot run: {why}");
    }

    let mut ran: Vec<Ran> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    for readme in READMES {
        let text = std::fs::read_to_string(root.join(readme)).unwrap();
        for block in sh_blocks(&text) {
            let mut commands = Vec::new();
            for line in block.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
                // The test command itself is not run by a test (nor listed as skipped: it is not
                // something this machine lacks).
                if line.starts_with("./scripts/test") {
                    continue;
                }
                let skip = if is_pip_route(line) {
                    registry.as_ref().err().cloned()
                } else if (line.contains("local-site") || *readme == "examples/local-site/README.md")
                    && modules.is_none()
                    && registry.is_err()
                {
                    Some(
                        "the public fs, exec and mitogen modules are not here, and the registry is not reachable"
                            .to_owned(),
                    )
                } else if line.contains("| dot ") && !has_dot {
                    Some("Graphviz's dot is not installed".to_owned())
                } else {
                    None
                };
                match skip {
                    Some(why) => skipped.push(format!("{readme}: `{line}`: {why}")),
                    None => commands.push(line.to_owned()),
                }
            }
            if commands.is_empty() {
                continue;
            }
            ran.extend(run_block(readme, &commands, &root, &temp));
        }
    }
    for message in &skipped {
        modelc_test_skip::skip(message);
    }

    let mut wrong = Vec::new();
    for r in &ran {
        if r.status != 0 {
            wrong.push(format!("{}: `{}` exited with {}:\n{}{}", r.readme, r.line, r.status, r.stdout, r.stderr));
        }
    }
    // Every claim is about a command that ran (or was skipped), and every command that ran has one.
    let claims = claims();
    for (readme, pattern, check) in &claims {
        let found: Vec<&Ran> = ran.iter().filter(|r| r.readme == *readme && r.line.contains(pattern)).collect();
        match found.as_slice() {
            [one] => {
                if let Err(why) = check(one, &root) {
                    wrong.push(format!("{readme}: `{}`: {why}", one.line));
                }
            }
            [] if skipped.iter().any(|s| s.starts_with(readme) && s.contains(pattern)) => {}
            [] => wrong.push(format!("{readme}: no command matches the claim about `{pattern}`")),
            _ => wrong.push(format!("{readme}: several commands match the claim about `{pattern}`")),
        }
    }
    for r in &ran {
        if !claims.iter().any(|(readme, pattern, _)| r.readme == *readme && r.line.contains(pattern)) {
            wrong.push(format!("{}: `{}` has no claim in this test: say what it should do", r.readme, r.line));
        }
    }
    // Nothing the walkthroughs wrote is left for git to show.
    let status = git(&root, &["status", "--porcelain", "--untracked-files=all"]);
    if !status.trim().is_empty() {
        wrong.push(format!("the walkthroughs leave files git does not ignore:\n{status}"));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    assert!(ran.len() >= 12, "only {} commands ran", ran.len());
    drop(modules);
    let _ = std::fs::remove_dir_all(&scratch);
}

/// A command of the pip route to the public modules: it makes a virtual environment or installs
/// into one.
fn is_pip_route(line: &str) -> bool {
    line.contains("-m venv") || line.contains("pip install")
}

/// Whether the pip route can run here: `python3` with its `venv` and `ensurepip` modules, and the
/// Python package registry answering. `Err` says why not.
fn registry_reachable() -> Result<(), String> {
    let probe = "import venv, ensurepip, urllib.request\n\
                 urllib.request.urlopen('https://pypi.org/simple/inmanta-module-fs/', timeout=20).read(1)";
    match Command::new("python3").args(["-c", probe]).output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => {
            let why = String::from_utf8_lossy(&out.stderr);
            Err(format!("the pip route: {}", why.trim().lines().last().unwrap_or("python3 failed")))
        }
        Err(error) => Err(format!("the pip route: no python3 ({error})")),
    }
}

/// The bodies of the ```sh blocks of a Markdown text.
fn sh_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut rest = markdown;
    while let Some(start) = rest.find("```sh\n") {
        let body = &rest[start + "```sh\n".len()..];
        let Some(end) = body.find("```") else { break };
        blocks.push(body[..end].to_owned());
        rest = &body[end..];
    }
    blocks
}

/// Runs one block's commands in one shell from the repository root, as a reader pastes them
/// (a `cd` or an `export` holds for the rest of the block), recording each command's output
/// and status between markers.
fn run_block(readme: &'static str, commands: &[String], root: &Path, temp: &Path) -> Vec<Ran> {
    let binary = env!("CARGO_BIN_EXE_modelc");
    let mut script = String::new();
    for (n, command) in commands.iter().enumerate() {
        let command = command.replace("cargo run --release -p modelc --", "\"$MODELC\"");
        script.push_str(&format!(
            "printf '\\n@@@ {n}\\n'; printf '\\n@@@ {n}\\n' >&2\n{command}\nprintf '\\n@@@ status %s\\n' $? >&2\n"
        ));
    }
    let out = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(root)
        .env("MODELC", binary)
        .env("TMPDIR", temp)
        .env_remove("NETWORK")
        .env_remove("HOSTS")
        .env_remove("MODELC_SHARED")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let section = |text: &str, n: usize| -> String {
        let start = format!("\n@@@ {n}\n");
        let after = text.split(&start).nth(1).unwrap_or_default();
        after.split("\n@@@ ").next().unwrap_or_default().to_owned()
    };
    commands
        .iter()
        .enumerate()
        .map(|(n, line)| {
            let err = section(&stderr, n);
            let status = stderr
                .split(&format!("\n@@@ {n}\n"))
                .nth(1)
                .and_then(|after| after.split("\n@@@ status ").nth(1))
                .and_then(|s| s.lines().next())
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(-1);
            Ran { readme, line: line.clone(), status, stdout: section(&stdout, n), stderr: err }
        })
        .collect()
}

/// A copy of the files git tracks, committed in a repository of its own.
fn copy_tracked_files(repository: &Path, to: &Path) {
    let listed = git(repository, &["ls-files", "-z"]);
    for name in listed.split('\0').filter(|n| !n.is_empty()) {
        let from = repository.join(name);
        if !from.is_file() {
            continue;
        }
        let target = to.join(name);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&from, &target).unwrap();
    }
    git(to, &["init", "-q"]);
    git(to, &["add", "-A"]);
    git(to, &["-c", "user.name=walkthrough", "-c", "user.email=walkthrough@localhost", "commit", "-qm", "copy"]);
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").args(args).current_dir(dir).output().expect("the walkthrough test needs git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The shared reference material, where the public modules are: `$MODELC_SHARED` or `shared/`
/// beside the repository.
fn shared_dir(repository: &Path) -> Option<PathBuf> {
    let dir = std::env::var_os("MODELC_SHARED").map_or_else(|| repository.join("../shared"), PathBuf::from);
    let modules = dir.join("corpus/inmanta-modules");
    ["fs", "exec", "mitogen"].iter().all(|m| modules.join(m).is_dir()).then(|| dir.canonicalize().unwrap())
}
