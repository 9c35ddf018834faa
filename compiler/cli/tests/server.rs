//! `modelc server` and `modelc agent` as a team runs them: real processes on 127.0.0.1 in front
//! of a real PostgreSQL (`modelc-test-postgres`), real commands run by the agents in scratch
//! directories.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stderr, reason = "test code")]

mod support;

use std::path::Path;
use std::time::Duration;

use modelc_test_postgres::Postgres;
use support::fleet::{Fleet, http, id, result, run, write_ir};

fn scratch(name: &str) -> std::path::PathBuf {
    support::scratch("server", name)
}

/// A version is deployed once released; across two agents, a resource waits for the one it
/// requires on the other agent; a failure blocks only what depends on it, on the other agent
/// too; every action is recorded once.
#[test]
fn two_agents_keep_order_across_them_and_a_failure_blocks_only_its_dependents() {
    let Some(postgres) = Postgres::start("the server test") else { return };
    let dir = scratch("two-agents");
    let fleet = Fleet::new(&postgres, "two_agents", &dir);
    let server = fleet.server(&[]);
    let exporter = fleet.token(&server, &["--role", "export"]);
    let alpha_token = fleet.token(&server, &["--role", "agent", "--agent", "alpha"]);
    let beta_token = fleet.token(&server, &["--role", "agent", "--agent", "beta"]);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let o = out.display();
    let slow = run("alpha", "slow", &format!("sleep 0.5; echo from-alpha > {o}/a"), &[]);
    let broken = run("alpha", "broken", "exit 3", &[]);
    let copy = run("beta", "copy", &format!("cp {o}/a {o}/b"), &[&id(&slow)]);
    let after_broken = run("beta", "after-broken", &format!("touch {o}/never"), &[&id(&broken)]);
    let alone = run("beta", "alone", &format!("touch {o}/alone"), &[]);
    write_ir(&dir.join("ir.json"), &[slow.clone(), broken.clone(), copy.clone(), after_broken.clone(), alone.clone()]);

    let _alpha = fleet.agent(&server, &alpha_token, &["alpha"], &dir.join("state-alpha"), &[]);
    let _beta = fleet.agent(&server, &beta_token, &["beta"], &dir.join("state-beta"), &[]);
    let exported = fleet.modelc(&server, &exporter, &["export", "--ir", "ir.json"], &[]);
    assert!(exported.status.success(), "{}", String::from_utf8_lossy(&exported.stderr));
    // Not released: nothing is deployed.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!out.join("alone").exists(), "an unreleased version was deployed");
    let released = fleet.modelc(&server, &exporter, &["release"], &[]);
    assert!(released.status.success(), "{}", String::from_utf8_lossy(&released.stderr));

    let ids = [id(&slow), id(&broken), id(&copy), id(&after_broken), id(&alone)];
    let status = fleet.wait_status(&server, Duration::from_secs(30), |s| {
        ids.iter().all(|i| result(s, i).is_some_and(|r| r != "deploying"))
    });
    assert_eq!(result(&status, &id(&slow)).as_deref(), Some("changed"), "{status:#}");
    assert_eq!(result(&status, &id(&broken)).as_deref(), Some("failed"));
    assert_eq!(result(&status, &id(&copy)).as_deref(), Some("changed"));
    assert_eq!(result(&status, &id(&after_broken)).as_deref(), Some("blocked"));
    assert_eq!(result(&status, &id(&alone)).as_deref(), Some("changed"));
    // Order across agents: the copy ran after alpha wrote its file.
    assert_eq!(std::fs::read_to_string(out.join("b")).unwrap(), "from-alpha\n");
    assert!(!out.join("never").exists());
    let blocked = support::fleet::resource(&status, &id(&after_broken)).unwrap();
    assert!(blocked["error"].as_str().unwrap().contains(&id(&broken)), "{blocked}");
    assert_eq!(status["version"], 1);

    // Every action once: one per resource and version, each with its own id.
    let actions = fleet.modelc(&server, &fleet.admin, &["actions", "--format", "json"], &[]);
    let actions: Vec<serde_json::Value> = serde_json::from_slice(&actions.stdout).unwrap();
    assert_eq!(actions.len(), 5, "{actions:#?}");
    let mut action_ids: Vec<&str> = actions.iter().map(|a| a["action_id"].as_str().unwrap()).collect();
    action_ids.sort_unstable();
    action_ids.dedup();
    assert_eq!(action_ids.len(), 5);
    let of = |resource: &str| actions.iter().find(|a| a["id"] == resource).unwrap();
    // RFC 3339 times, and the copy started only after the slow command finished.
    let slow_finished = of(&id(&slow))["finished"].as_str().unwrap().to_owned();
    let copy_started = of(&id(&copy))["started"].as_str().unwrap().to_owned();
    assert!(copy_started >= slow_finished, "{copy_started} < {slow_finished}");
    assert!(slow_finished.ends_with('Z') && slow_finished.contains('T'));

    // A version that changes one of beta's resources: beta runs again only that one and what
    // had not converged (an incremental run); alpha, unchanged, is not woken.
    let replaced = run("beta", "alone", &format!("touch {o}/alone-2"), &[]);
    write_ir(
        &dir.join("ir2.json"),
        &[slow.clone(), broken.clone(), copy.clone(), after_broken.clone(), replaced.clone()],
    );
    let exported = fleet.modelc(&server, &exporter, &["export", "--ir", "ir2.json", "--release"], &[]);
    assert!(exported.status.success(), "{}", String::from_utf8_lossy(&exported.stderr));
    let status = fleet
        .wait_status(&server, Duration::from_secs(30), |s| result(s, &id(&replaced)).as_deref() == Some("changed"));
    assert_eq!(result(&status, &id(&replaced)).as_deref(), Some("changed"), "{status:#}");
    std::thread::sleep(Duration::from_millis(500));
    let actions = fleet.modelc(&server, &fleet.admin, &["actions", "--format", "json"], &[]);
    let actions: Vec<serde_json::Value> = serde_json::from_slice(&actions.stdout).unwrap();
    let mut second: Vec<String> =
        actions.iter().filter(|a| a["version"] == 2).map(|a| a["id"].as_str().unwrap().to_owned()).collect();
    second.sort();
    let mut expected = vec![id(&replaced), id(&after_broken)];
    expected.sort();
    assert_eq!(second, expected);
    assert!(out.join("alone-2").exists());
}

/// A second process with a held name is refused at once; an agent that dies while deploying
/// leaves its resource `agent-lost` once its lease runs out, not `deploying` for ever.
#[test]
fn a_held_name_is_refused_and_a_dead_agents_resources_turn_agent_lost() {
    let Some(postgres) = Postgres::start("the server test") else { return };
    let dir = scratch("lost");
    let fleet = Fleet::new(&postgres, "lost", &dir);
    let server = fleet.server(&["--lease", "2"]);
    let exporter = fleet.token(&server, &["--role", "export"]);
    let token = fleet.token(&server, &["--role", "agent", "--agent", "alpha"]);
    let long = run("alpha", "long", "sleep 8", &[]);
    write_ir(&dir.join("ir.json"), std::slice::from_ref(&long));
    let mut first = fleet.agent(&server, &token, &["alpha"], &dir.join("state-1"), &[]);
    assert!(first.wait_for("agent alpha: started", Duration::from_secs(20)), "{}", first.log());

    // Another process on the same state directory, and another elsewhere: both refused.
    let started = std::time::Instant::now();
    let mut same_dir = fleet.agent(&server, &token, &["alpha"], &dir.join("state-1"), &[]);
    assert_eq!(same_dir.exited(Duration::from_secs(10)), Some(2));
    assert!(same_dir.log().contains("another agent process serves `alpha`"), "{}", same_dir.log());
    let mut elsewhere = fleet.agent(&server, &token, &["alpha"], &dir.join("state-2"), &[]);
    assert_eq!(elsewhere.exited(Duration::from_secs(10)), Some(2));
    assert!(elsewhere.log().contains("agent `alpha` is held by another process"), "{}", elsewhere.log());
    assert!(started.elapsed() < Duration::from_secs(10), "refused quickly");

    let exported = fleet.modelc(&server, &exporter, &["export", "--ir", "ir.json", "--release"], &[]);
    assert!(exported.status.success(), "{}", String::from_utf8_lossy(&exported.stderr));
    let status =
        fleet.wait_status(&server, Duration::from_secs(20), |s| result(s, &id(&long)).as_deref() == Some("deploying"));
    assert_eq!(result(&status, &id(&long)).as_deref(), Some("deploying"), "{status:#}");
    first.kill();
    let status =
        fleet.wait_status(&server, Duration::from_secs(15), |s| result(s, &id(&long)).as_deref() == Some("agent-lost"));
    assert_eq!(result(&status, &id(&long)).as_deref(), Some("agent-lost"), "{status:#}");
    assert_eq!(status["agents"][0]["connected"], false);
    // Once the lease ran out, another process may take the name.
    let mut again = fleet.agent(&server, &token, &["alpha"], &dir.join("state-2"), &[]);
    assert!(again.wait_for("agent alpha: deploying version 1", Duration::from_secs(20)), "{}", again.log());
    // Stopped, it lets the running command finish and starts nothing more.
    assert_eq!(again.terminate(Duration::from_secs(30)), Some(0), "{}", again.log());
}

/// Every call but health needs a token of the right role; an agent token reaches only its own
/// agents; bad input gets one JSON error; no token is ever in the server's log.
#[test]
fn every_call_checks_its_token_and_no_token_is_logged() {
    let Some(postgres) = Postgres::start("the server test") else { return };
    let dir = scratch("tokens");
    let fleet = Fleet::new(&postgres, "tokens", &dir);
    let server = fleet.server(&[]);
    let address = server.address();
    let exporter = fleet.token(&server, &["--role", "export"]);
    let reader = fleet.token(&server, &["--role", "read"]);
    let agent = fleet.token(&server, &["--role", "agent", "--agent", "alpha"]);
    let made = fleet.modelc(&server, &fleet.admin, &["token", "create"], &["--role", "admin"]);
    let revoked = String::from_utf8(made.stdout).unwrap().trim().to_owned();
    // Its id and role on stderr, the token alone on stdout.
    let said = String::from_utf8(made.stderr).unwrap();
    let revoked_id = said.split("created token ").nth(1).unwrap().split(' ').next().unwrap().to_owned();
    assert!(said.contains("with role admin") && !said.contains(&revoked), "{said}");
    let listed = fleet.modelc(&server, &fleet.admin, &["token", "list", "--format", "json"], &[]);
    let listed: Vec<serde_json::Value> = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed.len(), 5);
    assert!(!String::from_utf8_lossy(&serde_json::to_vec(&listed).unwrap()).contains(&revoked));
    let out = fleet.modelc(&server, &fleet.admin, &["token", "revoke", &revoked_id], &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    write_ir(&dir.join("ir.json"), &[run("alpha", "a", "true", &[]), run("beta", "b", "true", &[])]);
    let out = fleet.modelc(&server, &exporter, &["export", "--ir", "ir.json", "--release"], &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let (status, body) = http(&address, "GET", "/api/v1/health", None, None);
    assert_eq!(status, 200, "{body}");
    // (method, path, body, the roles allowed: export, read, agent-of-alpha)
    let calls: [(&str, &str, Option<&str>, [bool; 3]); 18] = [
        ("GET", "/api/v1/versions", None, [true, true, false]),
        ("GET", "/api/v1/releases/latest", None, [true, true, true]),
        (
            "POST",
            "/api/v1/versions",
            Some(
                r#"{"ir": {"format": "modelc-resources", "format_version": 1, "resources": [], "sets": []}, "partial": {}, "metadata": {"created": "2026-11-27T00:00:00Z", "source_hash": "0", "message": ""}}"#,
            ),
            [true, false, false],
        ),
        ("POST", "/api/v1/agents/alpha/lease", Some(r#"{"holder": "h1"}"#), [false, false, true]),
        ("GET", "/api/v1/agents/alpha/work?holder=h1&wait=0", None, [false, false, true]),
        (
            "POST",
            "/api/v1/agents/alpha/progress",
            Some(r#"{"holder": "h1", "version": 1, "finished": true}"#),
            [false, false, true],
        ),
        ("POST", "/api/v1/versions/1/requirements", Some(r#"{"ids": [], "wait": 0}"#), [true, true, true]),
        ("POST", "/api/v1/actions", Some(r#"{"holder": "h1", "actions": []}"#), [false, false, true]),
        ("GET", "/api/v1/versions/1", None, [true, true, false]),
        ("GET", "/api/v1/versions/1/changes/1", None, [true, true, false]),
        ("POST", "/api/v1/releases", Some("{}"), [true, false, false]),
        (
            "POST",
            "/api/v1/plan",
            Some(r#"{"ir": {"format": "modelc-resources", "format_version": 1, "resources": [], "sets": []}}"#),
            [true, false, false],
        ),
        ("GET", "/api/v1/tokens", None, [false, false, false]),
        ("GET", "/api/v1/status", None, [true, true, true]),
        ("GET", "/api/v1/actions", None, [true, true, true]),
        ("GET", "/api/v1/agents/alpha/versions/1/resources", None, [false, false, true]),
        ("GET", "/api/v1/agents/beta/versions/1/resources", None, [false, false, false]),
        ("POST", "/api/v1/contents", Some(r#"{"hashes": []}"#), [true, true, true]),
    ];
    for (method, path, body, allowed) in calls {
        for (token, expected) in [(None, 401), (Some("modelc_nonsense"), 401), (Some(revoked.as_str()), 401)] {
            let (status, answer) = http(&address, method, path, token, body);
            assert_eq!(status, expected, "{method} {path} with {token:?}: {answer}");
            let error: serde_json::Value = serde_json::from_str(&answer).unwrap();
            assert_eq!(error["error"]["code"], "unauthorized", "{answer}");
        }
        for (token, allowed) in [(&exporter, allowed[0]), (&reader, allowed[1]), (&agent, allowed[2])] {
            let (status, answer) = http(&address, method, path, Some(token), body);
            if allowed {
                assert!((200..300).contains(&status), "{method} {path}: {status} {answer}");
            } else {
                assert_eq!(status, 403, "{method} {path}: {answer}");
                let error: serde_json::Value = serde_json::from_str(&answer).unwrap();
                assert_eq!(error["error"]["code"], "forbidden");
            }
        }
        let (status, answer) = http(&address, method, path, Some(&fleet.admin), body);
        assert!((200..300).contains(&status), "admin {method} {path}: {status} {answer}");
    }
    // An agent token reads only its own agents' status.
    let (status, _) = http(&address, "GET", "/api/v1/status?agent=beta", Some(&agent), None);
    assert_eq!(status, 403);
    // Bad input: one JSON error each, and nothing written.
    let (status, answer) = http(&address, "POST", "/api/v1/releases", Some(&exporter), Some("{\"version\": \"x\"}"));
    assert_eq!(status, 400, "{answer}");
    let (status, answer) = http(&address, "POST", "/api/v1/releases", Some(&exporter), Some("{\"verzion\": 1}"));
    assert_eq!(status, 400, "unknown fields are refused: {answer}");
    let (status, _) = http(&address, "GET", "/api/v1/versions/9", Some(&reader), None);
    assert_eq!(status, 404);
    let (status, _) = http(&address, "GET", "/api/v1/nothing", Some(&reader), None);
    assert_eq!(status, 404);
    let (status, answer) = http(&address, "POST", "/api/v1/releases", Some(&exporter), Some("{\"version\": 0}"));
    assert!(status == 404 || status == 409, "{answer}");
    // The CLI names the cause and exits 2.
    let out = fleet.modelc(&server, "modelc_nonsense", &["versions"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown token"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = modelc_cli_without_token(&server.url);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("MODELC_TOKEN"));

    let log = server.process.log();
    assert!(log.contains("GET /api/v1/versions 401"), "requests are logged: {log}");
    for token in [&fleet.admin, &exporter, &reader, &agent, &revoked] {
        let secret = token.trim_start_matches("modelc_");
        assert!(!log.contains(secret), "a token is in the server's log");
    }
}

fn modelc_cli_without_token(url: &str) -> std::process::Output {
    support::fleet::modelc().args(["versions", "--server", url]).output().unwrap()
}

/// A release older than the latest released version is refused (409, exit status 2); an
/// export through the server that breaks a store rule is refused with the rule's diagnostic.
#[test]
fn stale_releases_and_refused_exports_are_reported_as_locally() {
    let Some(postgres) = Postgres::start("the server test") else { return };
    let dir = scratch("refusals");
    let fleet = Fleet::new(&postgres, "refusals", &dir);
    let server = fleet.server(&[]);
    let exporter = fleet.token(&server, &["--role", "export"]);
    write_ir(&dir.join("one.json"), &[run("alpha", "a", "true", &[])]);
    write_ir(&dir.join("two.json"), &[run("alpha", "a", "true", &[]), run("alpha", "b", "true", &[])]);
    for file in ["one.json", "two.json"] {
        let out = fleet.modelc(&server, &exporter, &["export", "--ir", file, "--release"], &[]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let out = fleet.modelc(&server, &exporter, &["release", "1"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("older than version 2"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The same versions through the server as in the store.
    let through = fleet.modelc(&server, &exporter, &["versions", "--format", "json"], &[]);
    let direct =
        support::fleet::modelc().args(["versions", "--format", "json", "--store", &fleet.store]).output().unwrap();
    assert_eq!(through.stdout, direct.stdout);
    let through = fleet.modelc(&server, &exporter, &["diff", "1", "2"], &[]);
    let direct = support::fleet::modelc().args(["diff", "1", "2", "--store", &fleet.store]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&through.stdout), String::from_utf8_lossy(&direct.stdout));
    // A partial export with no set to replace is refused by the store's rule, as locally.
    let out = fleet.modelc(
        &server,
        &exporter,
        &["export", "--ir", "one.json", "--partial", "--delete-resource-set", "nope"],
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("E0510"), "{stderr}");
}

/// The server killed for a while, then started again, and then a network that cuts every
/// connection again and again: the agents reach each next version without being restarted,
/// and every action is recorded exactly once (none lost, none twice).
#[test]
fn agents_survive_a_killed_server_and_a_cutting_network_and_record_every_action_once() {
    let Some(postgres) = Postgres::start("the server test") else { return };
    let dir = scratch("survive");
    let fleet = Fleet::new(&postgres, "survive", &dir);
    let mut server = fleet.server(&[]);
    let address = server.address();
    let proxy = support::fleet::Proxy::start(&address);
    let exporter = fleet.token(&server, &["--role", "export"]);
    let tokens = [
        fleet.token(&server, &["--role", "agent", "--agent", "alpha"]),
        fleet.token(&server, &["--role", "agent", "--agent", "beta"]),
    ];
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    // Version n: each agent writes n into a file of its own, 20 times over (20 actions each).
    let version = |n: u32| -> Vec<serde_json::Value> {
        let mut resources = Vec::new();
        for agent in ["alpha", "beta"] {
            for k in 0..20 {
                resources.push(run(agent, &format!("w{k}"), &format!("echo {n} > {}/{agent}-{k}", out.display()), &[]));
            }
        }
        resources
    };
    let converged = |n: u32| {
        let until = std::time::Instant::now() + Duration::from_secs(60);
        while std::time::Instant::now() < until {
            let done = ["alpha", "beta"].iter().all(|agent| {
                (0..20).all(|k| {
                    std::fs::read_to_string(out.join(format!("{agent}-{k}"))).is_ok_and(|t| t.trim() == n.to_string())
                })
            });
            if done {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    };
    let agents: Vec<_> = ["alpha", "beta"]
        .iter()
        .zip(&tokens)
        .map(|(name, token)| fleet.agent_at(&proxy.url(), token, &[name], &dir.join(format!("state-{name}")), &[]))
        .collect();
    write_ir(&dir.join("v1.json"), &version(1));
    let out1 = fleet.modelc(&server, &exporter, &["export", "--ir", "v1.json", "--release"], &[]);
    assert!(out1.status.success(), "{}", String::from_utf8_lossy(&out1.stderr));
    assert!(converged(1), "version 1: {}", agents[0].log());

    // The server is killed; version 2 is exported and released into the store meanwhile.
    server.process.kill();
    write_ir(&dir.join("v2.json"), &version(2));
    let direct = support::fleet::modelc()
        .current_dir(&dir)
        .args(["export", "--ir", "v2.json", "--release", "--store", &fleet.store])
        .output()
        .unwrap();
    assert!(direct.status.success(), "{}", String::from_utf8_lossy(&direct.stderr));
    std::thread::sleep(Duration::from_secs(3));
    assert!(agents.iter().all(|a| a.log().contains("the server cannot be reached")), "{}", agents[0].log());
    let server = fleet.server_at(&address, &[]);
    assert!(converged(2), "version 2 after the restart: {}", agents[0].log());

    // Connections cut every 150 ms while version 3 is deployed and reported.
    let cutting = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let cutter = {
        let proxy = &proxy;
        std::thread::scope(|scope| {
            let still = std::sync::Arc::clone(&cutting);
            scope.spawn(move || {
                while still.load(std::sync::atomic::Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(150));
                    proxy.cut();
                }
            });
            write_ir(&dir.join("v3.json"), &version(3));
            let out3 = fleet.modelc(&server, &exporter, &["export", "--ir", "v3.json", "--release"], &[]);
            assert!(out3.status.success(), "{}", String::from_utf8_lossy(&out3.stderr));
            let reached = converged(3);
            std::thread::sleep(Duration::from_secs(2));
            cutting.store(false, std::sync::atomic::Ordering::SeqCst);
            reached
        })
    };
    assert!(cutter, "version 3 under cuts: {}", agents[0].log());
    // Everything reported arrives: every resource of every version once, finished.
    let until = std::time::Instant::now() + Duration::from_secs(60);
    let actions = loop {
        let listed = fleet.modelc(&server, &fleet.admin, &["actions", "--format", "json"], &[]);
        let actions: Vec<serde_json::Value> = serde_json::from_slice(&listed.stdout).unwrap();
        if actions.len() >= 120 && actions.iter().all(|a| !a["finished"].is_null())
            || std::time::Instant::now() >= until
        {
            break actions;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let mut seen = std::collections::BTreeMap::new();
    for action in &actions {
        *seen.entry((action["id"].as_str().unwrap().to_owned(), action["version"].as_u64().unwrap())).or_insert(0) += 1;
        assert_eq!(action["result"], "changed", "{action}");
    }
    assert_eq!(seen.len(), 120, "40 resources in each of 3 versions");
    assert!(seen.values().all(|n| *n == 1), "an action was recorded twice: {seen:?}");
    // The outboxes are empty: nothing is waiting to be sent.
    for agent in ["alpha", "beta"] {
        let outbox = dir.join(format!("state-{agent}/{agent}/outbox"));
        let left: Vec<_> = std::fs::read_dir(&outbox).unwrap().filter_map(Result::ok).collect();
        assert!(left.is_empty(), "{agent}'s outbox holds {left:?}");
    }
}

/// Two servers on one database: a release through one wakes the agents connected to the other
/// at once (not at their next poll); a release that changes one agent wakes only that one.
#[test]
fn a_release_through_one_server_wakes_agents_of_the_other_and_only_those_it_changes() {
    let Some(postgres) = Postgres::start("the server test") else { return };
    let dir = scratch("two-servers");
    let fleet = Fleet::new(&postgres, "two_servers", &dir);
    let first = fleet.server(&[]);
    let second = fleet.server(&[]);
    let exporter = fleet.token(&first, &["--role", "export"]);
    let alpha = fleet.token(&first, &["--role", "agent", "--agent", "alpha"]);
    let beta = fleet.token(&first, &["--role", "agent", "--agent", "beta"]);
    // Long polls of 30 s: an agent that deploys sooner was woken.
    let agents = [
        fleet.agent(&second, &alpha, &["alpha"], &dir.join("state-alpha"), &["--poll", "30"]),
        fleet.agent(&second, &beta, &["beta"], &dir.join("state-beta"), &["--poll", "30"]),
    ];
    for agent in &agents {
        assert!(agent.wait_for("started", Duration::from_secs(20)), "{}", agent.log());
    }
    std::thread::sleep(Duration::from_millis(500));
    let set = |agent: &str, value: &str| {
        let mut r = run(agent, "r", &format!("true {value}"), &[]);
        r["id"] = serde_json::json!(format!("exec::Run[{agent},command=r]"));
        r["resource_set"] = serde_json::json!(format!("set-{agent}"));
        r
    };
    let ir = |resources: &[serde_json::Value]| {
        let mut sets = Vec::new();
        for r in resources {
            sets.push(serde_json::json!({"name": r["resource_set"], "resources": [r["id"]],
                "source": {"entity": "std::ResourceSet", "file": "main.cf", "line": 1}}));
        }
        serde_json::json!({"format": "modelc-resources", "format_version": 1, "resources": resources, "sets": sets})
    };
    std::fs::write(dir.join("v1.json"), ir(&[set("alpha", "1"), set("beta", "1")]).to_string()).unwrap();
    let started = std::time::Instant::now();
    let out = fleet.modelc(&first, &exporter, &["export", "--ir", "v1.json", "--release"], &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for agent in &agents {
        assert!(agent.wait_for("deploying version 1", Duration::from_secs(10)), "{}", agent.log());
    }
    assert!(started.elapsed() < Duration::from_secs(10), "woken, not polled: {:?}", started.elapsed());
    // A partial export of alpha's set: only alpha deploys version 2.
    std::fs::write(dir.join("v2.json"), ir(&[set("alpha", "2")]).to_string()).unwrap();
    let out = fleet.modelc(&first, &exporter, &["export", "--ir", "v2.json", "--partial", "--release"], &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(agents[0].wait_for("deploying version 2", Duration::from_secs(10)), "{}", agents[0].log());
    std::thread::sleep(Duration::from_secs(2));
    assert!(!agents[1].log().contains("version 2"), "beta was woken: {}", agents[1].log());
}

/// A body larger than `--max-body` is 413; while the database is away every call is 503 with
/// `Retry-After`, and the server answers again once it is back, by itself.
#[test]
fn a_large_body_is_refused_and_a_missing_database_is_unavailable_until_it_is_back() {
    let Some(mut postgres) = Postgres::start("the server test") else { return };
    let dir = scratch("unavailable");
    let fleet = Fleet::new(&postgres, "unavailable", &dir);
    let server = fleet.server(&["--max-body", "2000"]);
    let address = server.address();
    let exporter = fleet.token(&server, &["--role", "export"]);
    let large = format!("{{\"version\": 1, \"padding\": \"{}\"}}", "x".repeat(5000));
    let (status, answer) = http(&address, "POST", "/api/v1/releases", Some(&exporter), Some(&large));
    assert_eq!(status, 413, "{answer}");
    assert!(answer.contains("too-large"), "{answer}");

    postgres.crash();
    let (status, answer) = http(&address, "GET", "/api/v1/versions", Some(&exporter), None);
    assert_eq!(status, 503, "{answer}");
    assert!(answer.contains("\"unavailable\""), "{answer}");
    let (status, _) = http(&address, "GET", "/api/v1/health", None, None);
    assert_eq!(status, 503);
    let out = fleet.modelc(&server, &exporter, &["versions"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot be reached"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    postgres.restart().unwrap();
    let until = std::time::Instant::now() + Duration::from_secs(30);
    let back = loop {
        let (status, _) = http(&address, "GET", "/api/v1/versions", Some(&exporter), None);
        if status == 200 || std::time::Instant::now() >= until {
            break status;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(back, 200, "the server answers again once the database is back");
}

/// Over TLS (a certificate of the test's own authority, which clients trust through
/// `MODELC_SERVER_CA`): an agent deploys a file with its content fetched by hash, repairs it
/// when it is changed behind its back, and `--keep` prunes what neither the latest release nor
/// an agent needs. Plain HTTP beyond loopback is refused; a token comes from `--token-file` too.
#[test]
fn over_tls_an_agent_deploys_files_repairs_drift_and_keep_prunes_what_no_one_needs() {
    let Some(postgres) = Postgres::start("the server test") else { return };
    let dir = scratch("tls");
    let mut fleet = Fleet::new(&postgres, "tls", &dir);
    let authority = modelc_test_postgres::certificates::Authority::new("modelc test authority");
    let (certificate, key) = authority.server(&["localhost", "127.0.0.1"]);
    for (name, text) in [("ca.pem", authority.certificate()), ("server.pem", certificate), ("server.key", key)] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let refused =
        support::fleet::modelc().args(["server", "--store", &fleet.store, "--listen", "0.0.0.0:0"]).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("refusing to serve plain HTTP"));
    let (cert, key) = (dir.join("server.pem"), dir.join("server.key"));
    let server = fleet.server(&[
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
        "--keep",
        "1",
        "--prune-interval",
        "1",
    ]);
    assert!(server.url.starts_with("https://127.0.0.1:"), "{}", server.url);
    // Without the authority, the certificate is not trusted.
    let untrusted = support::fleet::modelc()
        .env("MODELC_TOKEN", &fleet.admin)
        .args(["versions", "--server", &server.url])
        .output()
        .unwrap();
    assert_eq!(untrusted.status.code(), Some(2));
    fleet.ca = Some(dir.join("ca.pem"));
    let exporter = fleet.token(&server, &["--role", "export"]);
    std::fs::write(dir.join("export.token"), format!("{exporter}\n")).unwrap();
    let agent_token = fleet.token(&server, &["--role", "agent", "--agent", "alpha"]);

    let target = dir.join("out/motd");
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    let file_ir = |content: &str, path: &Path| {
        let hash = sha1(content);
        let file = serde_json::json!({
            "id": format!("fs::File[alpha,path={}]", path.display()), "type": "fs::File", "agent": "alpha",
            "attributes": {"path": path.display().to_string(), "hash": hash, "owner": null, "group": null,
                "permissions": null, "purged": false, "via": {"method_name": "local", "name": ""}},
            "requires": [], "send_event": true, "receive_events": true, "resource_set": null,
            "state": "available", "source": {"entity": "fs::File", "file": "main.cf", "line": 1}
        });
        serde_json::json!({"format": "modelc-resources", "format_version": 1, "resources": [file], "sets": [],
            "files": {hash: content}})
    };
    let export = |content: &str, release: bool| {
        std::fs::write(dir.join("ir.json"), file_ir(content, &target).to_string()).unwrap();
        let mut args = vec!["export", "--ir", "ir.json", "--server", &server.url, "--token-file", "export.token"];
        if release {
            args.push("--release");
        }
        let out = fleet.client().current_dir(&dir).args(&args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    let holds = |text: &str| {
        let until = std::time::Instant::now() + Duration::from_secs(20);
        while std::time::Instant::now() < until {
            if std::fs::read_to_string(&target).is_ok_and(|t| t == text) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    };
    let agent = fleet.agent(&server, &agent_token, &["alpha"], &dir.join("state"), &[]);
    export("hello\n", true);
    assert!(holds("hello\n"), "{}", agent.log());
    // The content came by hash into the agent's cache.
    assert!(dir.join("state/contents").join(sha1("hello\n")).exists());
    // Changed behind the agent's back: repaired.
    std::fs::write(&target, "tampered\n").unwrap();
    assert!(holds("hello\n"), "the drift was not repaired: {}", agent.log());

    // Versions 2 (released), 3 and 4 (not): keeping 1 keeps 4 (the latest) and 2 (released).
    export("two\n", true);
    assert!(holds("two\n"), "{}", agent.log());
    export("three\n", false);
    export("four\n", false);
    let until = std::time::Instant::now() + Duration::from_secs(20);
    let kept = loop {
        let out = fleet.modelc(&server, &exporter, &["versions", "--format", "json"], &[]);
        let versions: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
        let kept: Vec<u64> = versions.iter().map(|v| v["version"].as_u64().unwrap()).collect();
        if kept.len() <= 2 || std::time::Instant::now() >= until {
            break kept;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(kept, [2, 4]);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "two\n", "unreleased versions are not deployed");
}

fn sha1(text: &str) -> String {
    let mut child = std::process::Command::new("sha1sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap().split_whitespace().next().unwrap().to_owned()
}
