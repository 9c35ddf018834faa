//! A real PostgreSQL for modelc's tests.
//!
//! [`Postgres::start`] initialises a cluster with Debian's server binaries
//! (`/usr/lib/postgresql/<major>/bin`, not on `PATH`) in a fresh temporary directory and runs
//! `postgres` on 127.0.0.1 and a free port, as the test's own child: as the `postgres` user when
//! the tests run as root (PostgreSQL refuses to run as root; the child is the postmaster itself,
//! so its PID is the server's). Connections need the password of the superuser the cluster is
//! made with (`scram-sha-256` on TCP; no Unix socket). Dropping the handle stops the server by
//! its PID (a fast shutdown, then SIGKILL if it lingers) and removes the directory: nothing is
//! left running or on disk.
//!
//! [`Postgres::start_with_tls`] also speaks TLS, with a certificate from a test authority
//! ([`certificates::Authority`]).
//!
//! A machine without PostgreSQL skips the test that asked (with `modelc-test-skip`), except
//! under `CI=true`, where it fails: CI installs the package (`.ci/run`).
#![allow(
    clippy::disallowed_methods,
    clippy::print_stderr,
    reason = "test support: it runs a server process, reads its environment and says why it cannot"
)]

pub mod certificates;

use std::io::Read;
use std::net::{Ipv4Addr, TcpListener};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The superuser every test cluster is made with, and its password.
pub const USER: &str = "modelc";
pub const PASSWORD: &str = "modelc-test-password";

/// How long the server may take to accept connections, or to stop.
const PATIENCE: Duration = Duration::from_secs(60);

/// A running PostgreSQL server, stopped and removed when dropped.
pub struct Postgres {
    child: Child,
    dir: PathBuf,
    port: u16,
    /// Where its binaries are, and its own settings (`-c`), to start it again.
    bin: PathBuf,
    settings: Vec<String>,
}

/// How a server is started.
#[derive(Debug, Clone, Default)]
pub struct Options<'a> {
    /// Speak TLS too, with this certificate (PEM, its chain) and key.
    pub tls: Option<(&'a str, &'a str)>,
    /// Sync every commit to disk (`fsync=on`), as a production server does: for benchmarks.
    pub durable: bool,
}

impl Postgres {
    /// Starts a server for the test `what` names. `None` (the test is recorded as skipped) on a
    /// machine without PostgreSQL, unless `CI=true`: then it panics, as a missing service must
    /// fail CI, never skip.
    pub fn start(what: &str) -> Option<Postgres> {
        Postgres::start_with_options(what, &Options::default())
    }

    /// [`Postgres::start`] with `options`.
    pub fn start_with_options(what: &str, options: &Options<'_>) -> Option<Postgres> {
        let Some(bin) = binaries() else {
            let reason = "no PostgreSQL server: install Debian's `postgresql` package (its binaries are in /usr/lib/postgresql/<major>/bin)";
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{what} needs PostgreSQL, and CI must not skip it: {reason}");
            }
            modelc_test_skip::skip(format!("{what}: {reason}"));
            return None;
        };
        match Postgres::launch(&bin, options) {
            Ok(server) => Some(server),
            Err(why) => panic!("{what}: PostgreSQL from {} did not start: {why}", bin.display()),
        }
    }

    /// Starts a server that also speaks TLS, with this certificate (PEM, its chain) and key.
    pub fn start_with_tls(what: &str, certificate: &str, key: &str) -> Option<Postgres> {
        Postgres::start_with_options(what, &Options { tls: Some((certificate, key)), ..Options::default() })
    }

    fn launch(bin: &Path, options: &Options<'_>) -> Result<Postgres, String> {
        let owner = Owner::for_server()?;
        let dir = fresh_dir()?;
        owner.give(&dir)?;
        let data = dir.join("data");
        let password_file = dir.join("password");
        std::fs::write(&password_file, PASSWORD).map_err(|e| format!("cannot write the password file: {e}"))?;
        owner.give(&password_file)?;
        let initdb = owner
            .command(&bin.join("initdb"))
            .arg("-D")
            .arg(&data)
            .args(["-U", USER, "--auth-host=scram-sha-256", "--auth-local=reject", "--encoding=UTF8", "--no-sync"])
            .arg(format!("--pwfile={}", password_file.display()))
            .env("LC_ALL", "C.UTF-8")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run initdb: {e}"))?;
        let _ = std::fs::remove_file(&password_file);
        if !initdb.status.success() {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(format!("initdb failed: {}", String::from_utf8_lossy(&initdb.stderr).trim()));
        }
        // Tests need no durability: without fsync a server starts and writes faster.
        let mut settings = vec![format!("fsync={}", if options.durable { "on" } else { "off" })];
        if let Some((certificate, key)) = options.tls {
            for (name, text, setting) in
                [("server.crt", certificate, "ssl_cert_file"), ("server.key", key, "ssl_key_file")]
            {
                let path = dir.join(name);
                std::fs::write(&path, text).map_err(|e| format!("cannot write {name}: {e}"))?;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(|e| e.to_string())?;
                owner.give(&path)?;
                settings.push(format!("{setting}={}", path.display()));
            }
            settings.push("ssl=on".to_owned());
        }
        // A free port, taken back just before the server binds it; tried again if another
        // process got it first.
        let mut last_error = String::new();
        for _ in 0..3 {
            let port = free_port()?;
            let log = dir.join(format!("server-{port}.log"));
            let child = spawn(bin, &owner, &data, port, &settings, &log)?;
            let mut server =
                Postgres { child, dir: dir.clone(), port, bin: bin.to_owned(), settings: settings.clone() };
            match server.wait_ready(&log) {
                Ok(()) => return Ok(server),
                Err(why) => {
                    last_error = why;
                    // Dropping it would remove the directory: stop the child only.
                    server.stop();
                    std::mem::forget(server);
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        Err(last_error)
    }

    /// Waits until a client can connect; fails if the server exits first.
    fn wait_ready(&mut self, log: &Path) -> Result<(), String> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("it exited ({status}): {}", read_log(log)));
            }
            if self.connect("postgres").is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!("it did not accept connections within {PATIENCE:?}: {}", read_log(log)));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The port the server listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's PID (the postmaster's own).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The directory of the cluster, removed when the server is dropped.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A libpq URL of `database` as [`USER`], without the password (which a client takes from
    /// `PGPASSWORD` or a `.pgpass` file).
    pub fn url(&self, database: &str) -> String {
        format!("postgresql://{USER}@127.0.0.1:{}/{database}", self.port)
    }

    /// A libpq URL of `database` as [`USER`], with the password in it (for tests that are not
    /// about where the password comes from).
    pub fn url_with_password(&self, database: &str) -> String {
        format!("postgresql://{USER}:{PASSWORD}@127.0.0.1:{}/{database}", self.port)
    }

    /// An administrative connection to `database`.
    pub fn connect(&self, database: &str) -> Result<postgres::Client, postgres::Error> {
        postgres::Config::new()
            .host("127.0.0.1")
            .port(self.port)
            .user(USER)
            .password(PASSWORD)
            .dbname(database)
            .connect_timeout(Duration::from_secs(5))
            .connect(postgres::NoTls)
    }

    /// Creates an empty database named `name` (one per test keeps tests apart on one server).
    pub fn create_database(&self, name: &str) -> Result<(), postgres::Error> {
        let mut client = self.connect("postgres")?;
        client.batch_execute(&format!("CREATE DATABASE \"{}\"", name.replace('"', "\"\"")))
    }

    /// Stops the server at once (SIGQUIT: no shutdown checkpoint, as a crash would), for tests
    /// of what survives one. The directory stays until the handle is dropped.
    pub fn crash(&mut self) {
        self.signal(nix::sys::signal::Signal::SIGQUIT);
    }

    /// Starts the server again on its files and port (after [`Postgres::crash`], it first
    /// recovers from its write-ahead log, as after a real crash).
    pub fn restart(&mut self) -> Result<(), String> {
        self.stop();
        let owner = Owner::for_server()?;
        let log = self.dir.join(format!("server-{}-restarted.log", self.port));
        self.child = spawn(&self.bin, &owner, &self.dir.join("data"), self.port, &self.settings, &log)?;
        self.wait_ready(&log)
    }

    /// A fast shutdown (SIGINT), then SIGKILL if the server has not exited within the patience.
    fn stop(&mut self) {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        self.signal(nix::sys::signal::Signal::SIGINT);
    }

    fn signal(&mut self, signal: nix::sys::signal::Signal) {
        let Ok(pid) = i32::try_from(self.child.id()) else { return };
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal);
        let deadline = Instant::now() + PATIENCE;
        while Instant::now() < deadline {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts `postgres` on `data`, listening on 127.0.0.1:`port` only, logging to `log`.
fn spawn(bin: &Path, owner: &Owner, data: &Path, port: u16, settings: &[String], log: &Path) -> Result<Child, String> {
    let log_file = std::fs::File::create(log).map_err(|e| format!("cannot create the server's log: {e}"))?;
    owner.give(log)?;
    owner
        .command(&bin.join("postgres"))
        .arg("-D")
        .arg(data)
        .args(["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="])
        .args(["-c", &format!("port={port}"), "-c", "max_connections=60"])
        .args(settings.iter().flat_map(|setting| ["-c", setting]))
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().map_err(|e| e.to_string())?)
        .stderr(log_file)
        .spawn()
        .map_err(|e| format!("cannot run postgres: {e}"))
}

/// The server binaries of the newest PostgreSQL Debian installed.
fn binaries() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let major = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            (bin.join("postgres").is_file() && bin.join("initdb").is_file()).then_some((major, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

/// Who runs the server: this user, or the `postgres` user when this one is root.
struct Owner {
    ids: Option<(nix::unistd::Uid, nix::unistd::Gid)>,
}

impl Owner {
    fn for_server() -> Result<Owner, String> {
        if !nix::unistd::geteuid().is_root() {
            return Ok(Owner { ids: None });
        }
        let user = nix::unistd::User::from_name("postgres")
            .map_err(|e| e.to_string())?
            .ok_or("running as root, and there is no `postgres` user to run the server as")?;
        Ok(Owner { ids: Some((user.uid, user.gid)) })
    }

    /// A command run as the owner.
    fn command(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        if let Some((uid, gid)) = self.ids {
            // From root, std also clears the supplementary groups.
            command.uid(uid.as_raw()).gid(gid.as_raw());
        }
        command
    }

    /// Makes `path` the owner's.
    fn give(&self, path: &Path) -> Result<(), String> {
        if let Some((uid, gid)) = self.ids {
            nix::unistd::chown(path, Some(uid), Some(gid))
                .map_err(|e| format!("cannot give {} to the postgres user: {e}", path.display()))?;
        }
        Ok(())
    }
}

/// A new private directory under the system's temporary directory (which the `postgres` user
/// can reach: it is world-traversable).
fn fresh_dir() -> Result<PathBuf, String> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("modelc-postgres-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("cannot make {} private: {e}", dir.display()))?;
    Ok(dir)
}

fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| format!("no free port: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

/// The server's log, for a failure's message (its last lines).
fn read_log(path: &Path) -> String {
    let mut text = String::new();
    let _ = std::fs::File::open(path).and_then(|mut f| f.read_to_string(&mut text));
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(8)..].join(" | ")
}
