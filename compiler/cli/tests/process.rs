//! The real binary, as a separate process: exit statuses and streams.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::process::Command;

fn modelc() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_modelc"));
    command.env_remove("NO_COLOR").env_remove("MODELC_STORE");
    command
}

#[test]
fn the_binary_reports_errors_and_exit_statuses() {
    let dir = std::env::temp_dir().join(format!("modelc-process-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bad.cf"), "x = = 1\n").unwrap();
    std::fs::write(dir.join("good.cf"), "x = 1\n").unwrap();

    let bad = modelc().args(["parse", "bad.cf"]).current_dir(&dir).output().unwrap();
    assert_eq!(bad.status.code(), Some(1));
    let stderr = String::from_utf8(bad.stderr).unwrap();
    assert!(stderr.contains("E0006") && !stderr.contains('\u{1b}'), "piped stderr is not coloured: {stderr}");

    let good = modelc().args(["parse", "good.cf"]).current_dir(&dir).output().unwrap();
    assert_eq!(good.status.code(), Some(0));

    let usage = modelc().arg("--frobnicate").output().unwrap();
    assert_eq!(usage.status.code(), Some(2));

    let version = modelc().arg("--version").output().unwrap();
    assert!(String::from_utf8(version.stdout).unwrap().starts_with("modelc "));
}

#[test]
fn a_closed_pipe_is_not_a_crash() {
    // `modelc completions bash | head -1`: the reader is gone before modelc writes.
    for args in [&["completions", "bash"][..], &["explain", "--list"][..], &["doc"][..]] {
        let mut child = modelc()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
}

/// `MODELC_STORE` names the store as `--store` does (which wins over it), a path or a
/// PostgreSQL URL.
#[test]
fn the_store_is_named_by_modelc_store_or_store() {
    let dir = std::env::temp_dir().join(format!("modelc-process-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("main.cf"), "import std::testing\nstd::testing::NullResource(name=\"a\")\n").unwrap();
    let export = |env: Option<&str>, args: &[&str]| {
        let mut command = modelc();
        command.args(["export", "main.cf"]).args(args).current_dir(&dir);
        if let Some(store) = env {
            command.env("MODELC_STORE", store);
        }
        command.output().unwrap()
    };
    assert_eq!(export(Some("from-env.sqlite"), &[]).status.code(), Some(0));
    assert!(dir.join("from-env.sqlite").is_file());
    assert_eq!(export(Some("from-env.sqlite"), &["--store", "from-flag.sqlite"]).status.code(), Some(0));
    assert!(dir.join("from-flag.sqlite").is_file(), "--store wins over MODELC_STORE");
    let versions =
        modelc().args(["versions"]).env("MODELC_STORE", "from-env.sqlite").current_dir(&dir).output().unwrap();
    assert_eq!(
        String::from_utf8(versions.stdout).unwrap().lines().count(),
        2,
        "one version in the store MODELC_STORE names"
    );

    // A URL names a PostgreSQL store: one that does not parse is refused before anything is
    // compiled; one that cannot be reached (nothing listens on port 1) is an I/O error.
    let bad = export(Some("postgresql://db.example:notaport/x"), &[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8(bad.stderr).unwrap().contains("the store's URL does not parse"));
    let unreachable = export(Some("POSTGRES://modelc@127.0.0.1:1/db"), &[]);
    assert_eq!(unreachable.status.code(), Some(2));
    let stderr = String::from_utf8(unreachable.stderr).unwrap();
    assert!(stderr.contains("cannot connect to the PostgreSQL store"), "{stderr}");
    assert!(!dir.join(".modelc").exists(), "no default store was created");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What libpq reads from the environment, modelc reads too: the password from `PGPASSWORD`, else
/// from the password file (`PGPASSFILE`, else `~/.pgpass`), and `PGSSLMODE` and
/// `PGSSLROOTCERT` where the URL sets no `sslmode` or `sslrootcert`. None of them ever shows.
#[test]
fn the_password_and_tls_settings_come_from_the_environment_as_libpq_reads_them() {
    use modelc_test_postgres::certificates::Authority;
    use modelc_test_postgres::{PASSWORD, Postgres, USER};
    let authority = Authority::new("modelc test CA");
    let (certificate, key) = authority.server(&["127.0.0.1"]);
    let Some(server) = Postgres::start_with_tls("the environment of a PostgreSQL store", &certificate, &key) else {
        return;
    };
    server.create_database("store").unwrap();
    let dir = std::env::temp_dir().join(format!("modelc-process-pgenv-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(dir.join("ca.pem"), authority.certificate()).unwrap();
    std::fs::write(dir.join("other-ca.pem"), Authority::new("another CA").certificate()).unwrap();
    let url = server.url("store");
    assert!(!url.contains(PASSWORD));
    let run = |env: &[(&str, &str)], args: &[&str]| {
        let mut command = modelc();
        command.args(args).args(["--store", &url]).current_dir(&dir).env("HOME", &home);
        for variable in ["PGPASSWORD", "PGPASSFILE", "PGSSLMODE", "PGSSLROOTCERT"] {
            command.env_remove(variable);
        }
        command.envs(env.iter().copied());
        let out = command.output().unwrap();
        let (stdout, stderr) = (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap());
        assert!(!stdout.contains(PASSWORD) && !stderr.contains(PASSWORD), "the password shows: {stdout}{stderr}");
        (out.status.code(), stdout + &stderr)
    };

    // No password anywhere: the server's refusal, exit status 2.
    let (code, said) = run(&[], &["store", "migrate"]);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("password"), "{said}");
    // PGPASSWORD.
    let (code, said) = run(&[("PGPASSWORD", PASSWORD)], &["store", "migrate"]);
    assert_eq!(code, Some(0), "{said}");
    // ~/.pgpass, and PGPASSFILE over it.
    let port = server.port().to_string();
    std::fs::write(home.join(".pgpass"), format!("127.0.0.1:{port}:store:{USER}:{PASSWORD}\n")).unwrap();
    assert_eq!(run(&[], &["store", "info"]).0, Some(0), "~/.pgpass");
    std::fs::write(dir.join("wrong.pgpass"), format!("*:*:*:{USER}:wrong\n")).unwrap();
    let wrong_file = dir.join("wrong.pgpass").display().to_string();
    let (code, said) = run(&[("PGPASSFILE", &wrong_file)], &["store", "info"]);
    assert_eq!(code, Some(2), "PGPASSFILE is read instead of ~/.pgpass: {said}");
    assert!(said.contains("password authentication failed"), "{said}");

    // PGSSLMODE and PGSSLROOTCERT.
    let ca = dir.join("ca.pem").display().to_string();
    let other = dir.join("other-ca.pem").display().to_string();
    let verified = run(&[("PGSSLMODE", "verify-full"), ("PGSSLROOTCERT", &ca)], &["store", "info"]);
    assert_eq!(verified.0, Some(0), "{}", verified.1);
    let (code, said) = run(&[("PGSSLMODE", "verify-full"), ("PGSSLROOTCERT", &other)], &["store", "info"]);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("UnknownIssuer") || said.contains("unknown issuer"), "{said}");
    let (code, said) = run(&[("PGSSLMODE", "verify-full")], &["store", "info"]);
    assert_eq!(code, Some(2), "verify-full without a root certificate: {said}");
    assert!(said.contains("sslrootcert"), "{said}");
    // ~/.postgresql/root.crt is the default root certificate.
    std::fs::create_dir_all(home.join(".postgresql")).unwrap();
    std::fs::write(home.join(".postgresql/root.crt"), authority.certificate()).unwrap();
    assert_eq!(run(&[("PGSSLMODE", "verify-full")], &["store", "info"]).0, Some(0));
    std::fs::remove_dir_all(&dir).unwrap();
}
