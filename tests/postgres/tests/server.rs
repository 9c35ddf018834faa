//! The harness itself: a real server starts, serves, and leaves nothing behind.
#![allow(clippy::unwrap_used, reason = "test code")]

use modelc_test_postgres::Postgres;

fn alive(pid: u32) -> bool {
    // Signal 0 checks that the process exists (a zombie would too; the harness reaps it).
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), None).is_ok()
}

#[test]
fn a_server_starts_on_loopback_serves_and_is_stopped_and_removed() {
    let Some(server) = Postgres::start("the harness test") else { return };
    let (pid, dir) = (server.pid(), server.dir().to_owned());
    assert!(alive(pid));
    server.create_database("first").unwrap();
    let mut client = server.connect("first").unwrap();
    let row = client.query_one("SELECT current_user, inet_server_addr()::text, current_setting('port')", &[]).unwrap();
    assert_eq!(row.get::<_, String>(0), modelc_test_postgres::USER);
    assert_eq!(row.get::<_, String>(1), "127.0.0.1/32");
    assert_eq!(row.get::<_, String>(2), server.port().to_string());
    // The password is needed: a wrong one is refused.
    let wrong = postgres::Config::new()
        .host("127.0.0.1")
        .port(server.port())
        .user(modelc_test_postgres::USER)
        .password("wrong")
        .dbname("first")
        .connect(postgres::NoTls);
    assert!(wrong.is_err());
    drop(client);
    drop(server);
    assert!(!alive(pid), "the server is stopped by its PID");
    assert!(!dir.exists(), "its directory is removed");
}

#[test]
fn two_servers_run_side_by_side_and_a_crash_stops_one_at_once_until_it_restarts() {
    let (Some(mut one), Some(two)) = (Postgres::start("the harness test"), Postgres::start("the harness test")) else {
        return;
    };
    assert_ne!(one.port(), two.port());
    let pid = one.pid();
    one.create_database("kept").unwrap();
    one.connect("kept").unwrap().batch_execute("CREATE TABLE t (n int); INSERT INTO t VALUES (7)").unwrap();
    one.crash();
    assert!(!alive(pid));
    assert!(one.connect("postgres").is_err());
    assert!(two.connect("postgres").is_ok(), "the other one is untouched");
    one.restart().unwrap();
    assert_ne!(one.pid(), pid);
    let n: i32 = one.connect("kept").unwrap().query_one("SELECT n FROM t", &[]).unwrap().get(0);
    assert_eq!(n, 7, "what was committed before the crash is there after the restart");
}
