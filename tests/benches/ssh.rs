//! Deploying over SSH against Ansible, both as whole processes, side by side in one run: 20
//! hosts (aliases of one loopback sshd the benchmark starts, in a generated ssh config), each
//! with a directory and 50 files. Measured: the first deploy (fresh targets; for modelc an
//! empty helper cache, so every host gets the binary) and the unchanged re-check (modelc: the
//! median of three runs; Ansible once, its runs take minutes). The sessions' login shells read
//! no `~/.bashrc`, so that neither tool pays for what the machine's user runs at each login. Ansible is `ansible-core` from the Python registry, installed into a
//! throwaway environment by this benchmark only (never by CI), and runs with its fastest
//! settings: `forks` = hosts, `pipelining`, no fact gathering.
//!
//! Run with `cargo bench -p modelc-tests --bench ssh` (optionally followed by `--`, the number of
//! hosts and of files per host). Targets (issue 34): the re-check at least 10× faster than
//! Ansible's, the first deploy at least 5×.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stdout, reason = "benchmark code")]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const ANSIBLE: &str = "ansible-core==2.17.7";
/// Runs of each measurement of modelc (the median is reported); Ansible's take minutes, which
/// the machine's noise moves far less, and run once.
const RUNS: usize = 3;

fn main() {
    let numbers: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let hosts = numbers.first().copied().unwrap_or(20);
    let files = numbers.get(1).copied().unwrap_or(50);
    let binary = modelc_tests::process::release_binary();
    let Some(server) = modelc_test_sshd::Sshd::start_with("the ssh benchmark", true) else { return };
    let dir = std::env::temp_dir().join(format!("modelc-bench-ssh-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ansible = ansible(&dir);
    let config = ssh_config(&dir, &server, hosts);
    let names: Vec<String> = (1..=hosts).map(|i| format!("h{i:02}")).collect();

    let modelc_dir = dir.join("modelc");
    project(&modelc_dir, &names, files, &config);
    let mut deploy_args: Vec<String> =
        ["deploy", ".", "--hosts", &hosts.to_string(), "--helper-dir"].iter().map(|s| s.to_string()).collect();
    deploy_args.push(dir.join("helpers").display().to_string());
    for name in &names {
        deploy_args.extend(["--agent".to_owned(), name.clone()]);
    }
    let modelc_target = modelc_dir.join("target");
    let modelc = |fresh: bool| {
        if fresh {
            let _ = std::fs::remove_dir_all(&modelc_target);
            let _ = std::fs::remove_dir_all(dir.join("helpers"));
            let _ = std::fs::remove_dir_all(modelc_dir.join(".modelc"));
        }
        std::fs::create_dir_all(&modelc_target).unwrap();
        let args: Vec<&str> = deploy_args.iter().map(String::as_str).collect();
        timed(Command::new(&binary).current_dir(&modelc_dir).args(&args))
    };

    let ansible_dir = dir.join("ansible");
    playbook(&ansible_dir, &names, files, &config, hosts);
    let ansible_target = ansible_dir.join("target");
    let ansible_run = |fresh: bool| {
        if fresh {
            let _ = std::fs::remove_dir_all(&ansible_target);
        }
        std::fs::create_dir_all(&ansible_target).unwrap();
        timed(
            Command::new(ansible.join("bin/ansible-playbook"))
                .current_dir(&ansible_dir)
                .args(["-i", "inventory.ini", "site.yml"])
                .env("ANSIBLE_CONFIG", ansible_dir.join("ansible.cfg"))
                .env("ANSIBLE_HOME", ansible_dir.join("home"))
                .env("ANSIBLE_LOCAL_TEMP", ansible_dir.join("tmp")),
        )
    };

    println!("{hosts} hosts × {files} files (one loopback sshd); modelc: median of {RUNS} runs, Ansible: one");
    let mut rows = Vec::new();
    for (what, fresh) in [("first deploy", true), ("unchanged re-check", false)] {
        let ours = median((0..RUNS).map(|_| modelc(fresh)).collect());
        let theirs = ansible_run(fresh);
        rows.push((what, ours, theirs));
    }
    check(&modelc_target, &ansible_target, &names, files);
    println!("{:<20} {:>12} {:>12} {:>8}", "", "modelc (s)", "ansible (s)", "ratio");
    for (what, ours, theirs) in rows {
        println!("{what:<20} {ours:>12.3} {theirs:>12.3} {:>7.1}x", theirs / ours);
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An ssh config naming `hosts` aliases of the loopback sshd.
fn ssh_config(dir: &Path, server: &modelc_test_sshd::Sshd, hosts: usize) -> PathBuf {
    let mut text = String::new();
    for i in 1..=hosts {
        writeln!(
            text,
            "Host h{i:02}\n  HostName 127.0.0.1\n  Port {}\n  User {}\n  IdentityFile {}\n  IdentitiesOnly yes\n  \
             UserKnownHostsFile {}\n  StrictHostKeyChecking yes\n  BatchMode yes",
            server.port(),
            server.user(),
            server.identity_file().display(),
            server.known_hosts().display()
        )
        .unwrap();
    }
    let path = dir.join("ssh_config");
    std::fs::write(&path, text).unwrap();
    path
}

/// The modelc project: per host a context through the ssh config, a directory and its files.
fn project(dir: &Path, names: &[String], files: usize, config: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let modules = modelc_tests::shared_dir("the ssh benchmark").unwrap().join("corpus/inmanta-modules");
    std::fs::write(dir.join("project.yml"), format!("name: bench\nmodulepath: {}\n", modules.display())).unwrap();
    let target = dir.join("target");
    let mut model = String::from("import fs\nimport mitogen\n\n");
    for name in names {
        writeln!(
            model,
            "{name} = std::Host(name=\"{name}\", os=std::linux, via=mitogen::Ssh(name=\"{name}\", hostname=\"{name}\", \
             ssh_args=[\"-F\", \"{}\"]))\n{name}_dir = fs::Directory(host={name}, path=\"{}/{name}\", mode=755)",
            config.display(),
            target.display()
        )
        .unwrap();
        for f in 1..=files {
            writeln!(
                model,
                "fs::File(host={name}, path=\"{}/{name}/f{f:03}\", content=\"host {name} file {f}\\n\", mode=644, requires=[{name}_dir])",
                target.display()
            )
            .unwrap();
        }
    }
    std::fs::write(dir.join("main.cf"), model).unwrap();
}

/// The same as an Ansible playbook: a directory and the files (one `copy` per file, in a loop).
fn playbook(dir: &Path, names: &[String], files: usize, config: &Path, forks: usize) {
    std::fs::create_dir_all(dir).unwrap();
    let target = dir.join("target");
    let mut inventory = String::from("[targets]\n");
    for name in names {
        writeln!(inventory, "{name}").unwrap();
    }
    writeln!(
        inventory,
        "\n[targets:vars]\nansible_ssh_common_args='-F {}'\nansible_python_interpreter=/usr/bin/python3",
        config.display()
    )
    .unwrap();
    std::fs::write(dir.join("inventory.ini"), inventory).unwrap();
    std::fs::write(
        dir.join("ansible.cfg"),
        format!(
            "[defaults]\nforks = {forks}\nhost_key_checking = True\nstdout_callback = default\n\
             remote_tmp = {t}/remote-tmp\n\n[ssh_connection]\npipelining = True\ncontrol_path_dir = {t}/cp\n",
            t = dir.display()
        ),
    )
    .unwrap();
    let site = format!(
        "- hosts: targets\n  gather_facts: false\n  tasks:\n    - file:\n        path: \"{t}/{{{{ inventory_hostname }}}}\"\n        \
         state: directory\n        mode: \"0755\"\n    - copy:\n        content: \"host {{{{ inventory_hostname }}}} file {{{{ item }}}}\\n\"\n        \
         dest: \"{t}/{{{{ inventory_hostname }}}}/f{{{{ '%03d' % item }}}}\"\n        mode: \"0644\"\n      \
         loop: \"{{{{ range(1, {end}) | list }}}}\"\n",
        t = target.display(),
        end = files + 1
    );
    std::fs::write(dir.join("site.yml"), site).unwrap();
}

/// Both tools wrote the same files.
fn check(modelc: &Path, ansible: &Path, names: &[String], files: usize) {
    for name in names {
        for f in 1..=files {
            let ours = std::fs::read_to_string(modelc.join(name).join(format!("f{f:03}"))).unwrap();
            let theirs = std::fs::read_to_string(ansible.join(name).join(format!("f{f:03}"))).unwrap();
            assert_eq!(ours, theirs);
            assert_eq!(ours, format!("host {name} file {f}\n"));
        }
    }
}

/// A throwaway environment with ansible-core.
fn ansible(dir: &Path) -> PathBuf {
    let cache = std::env::temp_dir().join("modelc-bench-ssh-ansible");
    let ready = cache.join(".installed");
    if std::fs::read_to_string(&ready).ok().as_deref() != Some(ANSIBLE) {
        let _ = std::fs::remove_dir_all(&cache);
        let made = Command::new("python3").arg("-m").arg("venv").arg(&cache).status().unwrap();
        assert!(made.success(), "python3 -m venv failed");
        let installed = Command::new(cache.join("bin/python"))
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", ANSIBLE])
            .status()
            .unwrap();
        assert!(installed.success(), "pip install {ANSIBLE} failed");
        std::fs::write(&ready, ANSIBLE).unwrap();
    }
    let _ = dir;
    cache
}

fn timed(command: &mut Command) -> f64 {
    let started = Instant::now();
    let out = command.output().unwrap();
    let seconds = started.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{command:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    seconds
}

fn median(mut runs: Vec<f64>) -> f64 {
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}
