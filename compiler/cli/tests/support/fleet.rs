//! Real `modelc server` and `modelc agent` processes for the server tests: each started on
//! 127.0.0.1 with a free port and its own state in a scratch directory, its stderr kept (the
//! tests read it, and check no token is in it), killed when dropped.
#![allow(dead_code, reason = "each test file uses part of it")]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use modelc_test_postgres::Postgres;

pub(crate) fn modelc() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_modelc"));
    command.env_remove("MODELC_STORE").env_remove("MODELC_TOKEN").env_remove("NO_COLOR");
    command
}

/// A process whose stderr is collected line by line.
pub(crate) struct Process {
    child: Child,
    log: Arc<Mutex<String>>,
}

impl Process {
    fn spawn(mut command: Command) -> Process {
        let mut child = command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let stderr = child.stderr.take().unwrap();
        let kept = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut log = kept.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        Process { child, log }
    }

    pub(crate) fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Waits until the log holds `text`; false after `timeout`.
    pub(crate) fn wait_for(&self, text: &str, timeout: Duration) -> bool {
        let until = Instant::now() + timeout;
        while Instant::now() < until {
            if self.log().contains(text) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, and reaped.
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, and its exit status once it ended (within `timeout`).
    pub(crate) fn terminate(&mut self, timeout: Duration) -> Option<i32> {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap()),
            nix::sys::signal::Signal::SIGTERM,
        );
        self.exited(timeout)
    }

    /// Its exit status, once it ended by itself within `timeout`.
    pub(crate) fn exited(&mut self, timeout: Duration) -> Option<i32> {
        let until = Instant::now() + timeout;
        while Instant::now() < until {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A store in a fresh database of `postgres`, laid out, with an admin token made on it.
pub(crate) struct Fleet {
    pub(crate) store: String,
    pub(crate) admin: String,
    pub(crate) dir: PathBuf,
    /// The authority a TLS server's certificate is signed by (`MODELC_SERVER_CA` of clients).
    pub(crate) ca: Option<PathBuf>,
}

impl Fleet {
    pub(crate) fn new(postgres: &Postgres, database: &str, dir: &Path) -> Fleet {
        postgres.create_database(database).unwrap();
        let store = postgres.url_with_password(database);
        let migrated = modelc().args(["store", "migrate", "--store", &store]).output().unwrap();
        assert!(migrated.status.success(), "{}", String::from_utf8_lossy(&migrated.stderr));
        let admin = token_on_store(&store, &["--role", "admin"]);
        Fleet { store, admin, dir: dir.to_owned(), ca: None }
    }

    /// A server on a free port of 127.0.0.1, with `extra` arguments.
    pub(crate) fn server(&self, extra: &[&str]) -> Server {
        let mut command = modelc();
        command.args(["server", "--store", &self.store, "--listen", "127.0.0.1:0"]).args(extra);
        let process = Process::spawn(command);
        assert!(
            process.wait_for("listening on ", Duration::from_secs(20)),
            "the server did not start: {}",
            process.log()
        );
        let log = process.log();
        let url = log.split("listening on ").nth(1).unwrap().lines().next().unwrap().trim().to_owned();
        Server { process, url }
    }

    /// A server on a given address (to start one again where it was).
    pub(crate) fn server_at(&self, address: &str, extra: &[&str]) -> Server {
        let mut command = modelc();
        command.args(["server", "--store", &self.store, "--listen", address]).args(extra);
        let process = Process::spawn(command);
        assert!(
            process.wait_for("listening on ", Duration::from_secs(20)),
            "the server did not start: {}",
            process.log()
        );
        Server { process, url: format!("http://{address}") }
    }

    /// A token made through `server` with the admin token.
    pub(crate) fn token(&self, server: &Server, args: &[&str]) -> String {
        let output = self.modelc(server, &self.admin, &["token", "create"], args);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    }

    /// `modelc FIRST… --server URL ARGS…` with `token` in MODELC_TOKEN.
    pub(crate) fn modelc(&self, server: &Server, token: &str, first: &[&str], args: &[&str]) -> Output {
        self.client()
            .current_dir(&self.dir)
            .env("MODELC_TOKEN", token)
            .args(first)
            .args(["--server", &server.url])
            .args(args)
            .output()
            .unwrap()
    }

    /// An agent process serving `names` from `server`, its state in `state`.
    pub(crate) fn agent(&self, server: &Server, token: &str, names: &[&str], state: &Path, extra: &[&str]) -> Process {
        self.agent_at(&server.url, token, names, state, extra)
    }

    /// An agent process serving `names` from the server at `url` (a proxy, say).
    pub(crate) fn agent_at(&self, url: &str, token: &str, names: &[&str], state: &Path, extra: &[&str]) -> Process {
        let mut command = self.client();
        command.env("MODELC_TOKEN", token).args(["agent", "--server", url, "--state-dir"]).arg(state);
        for name in names {
            command.args(["--name", name]);
        }
        if !extra.contains(&"--poll") {
            command.args(["--poll", "5"]);
        }
        command.args(extra);
        Process::spawn(command)
    }

    /// A `modelc` command that trusts the fleet's certificate authority.
    pub(crate) fn client(&self) -> Command {
        let mut command = modelc();
        if let Some(ca) = &self.ca {
            command.env("MODELC_SERVER_CA", ca);
        }
        command
    }

    /// `status --format json` through `server`.
    pub(crate) fn status(&self, server: &Server) -> serde_json::Value {
        let output = self.modelc(server, &self.admin, &["status", "--format", "json"], &[]);
        serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|_| panic!("status: {}", String::from_utf8_lossy(&output.stderr)))
    }

    /// Waits until `done` holds of the status; the last status either way.
    pub(crate) fn wait_status(
        &self,
        server: &Server,
        timeout: Duration,
        done: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let until = Instant::now() + timeout;
        loop {
            let status = self.status(server);
            if done(&status) || Instant::now() >= until {
                return status;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A token made directly on a store.
pub(crate) fn token_on_store(store: &str, args: &[&str]) -> String {
    let output = modelc().args(["token", "create", "--store", store]).args(args).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

pub(crate) struct Server {
    pub(crate) process: Process,
    pub(crate) url: String,
}

impl Server {
    pub(crate) fn address(&self) -> String {
        self.url.trim_start_matches("http://").to_owned()
    }
}

/// A raw HTTP/1.1 call: (status, body).
pub(crate) fn http(address: &str, method: &str, path: &str, token: Option<&str>, body: Option<&str>) -> (u16, String) {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n");
    if let Some(token) = token {
        request.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    let body = body.unwrap_or("");
    request.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let status = response.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = response.split("\r\n\r\n").nth(1).unwrap_or("").to_owned();
    // Chunked bodies: the JSON is between the chunk sizes.
    let body = if response.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        body.lines().filter(|l| !l.chars().all(|c| c.is_ascii_hexdigit())).collect::<Vec<_>>().join("\n")
    } else {
        body
    };
    (status, body)
}

/// An `exec::Run` resource of `agent` running `command` (with `sh -c`), as IR JSON.
pub(crate) fn run(agent: &str, name: &str, command: &str, requires: &[&str]) -> serde_json::Value {
    let command = format!("sh -c '{command}' {name}");
    serde_json::json!({
        "id": format!("exec::Run[{agent},command={command}]"), "type": "exec::Run", "agent": agent,
        "attributes": {"command": command, "creates": "", "cwd": "", "environment": {}, "onlyif": "", "path": "",
            "reload": "", "reload_only": false, "returns": [0], "timeout": 300, "unless": "", "skip_on_fail": false},
        "requires": requires, "send_event": false, "receive_events": false, "resource_set": null,
        "state": "available", "source": {"entity": "exec::Run", "file": "main.cf", "line": 1}
    })
}

/// The id of a resource made by [`run`].
pub(crate) fn id(resource: &serde_json::Value) -> String {
    resource["id"].as_str().unwrap().to_owned()
}

/// Writes an IR of `resources` to `path`.
pub(crate) fn write_ir(path: &Path, resources: &[serde_json::Value]) {
    let ir = serde_json::json!({"format": "modelc-resources", "format_version": 1, "resources": resources, "sets": []});
    std::fs::write(path, serde_json::to_string_pretty(&ir).unwrap()).unwrap();
}

/// The status's entry of resource `id`.
pub(crate) fn resource<'a>(status: &'a serde_json::Value, id: &str) -> Option<&'a serde_json::Value> {
    status["resources"].as_array()?.iter().find(|r| r["id"] == id)
}

/// The result of `id` in the status, if it has one.
pub(crate) fn result(status: &serde_json::Value, id: &str) -> Option<String> {
    resource(status, id).and_then(|r| r["result"].as_str()).map(str::to_owned)
}

/// A TCP proxy on 127.0.0.1 in front of `target` that can cut every connection it carries, as
/// a flaky network does.
pub(crate) struct Proxy {
    pub(crate) address: String,
    connections: Arc<Mutex<Vec<std::net::TcpStream>>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl Proxy {
    pub(crate) fn start(target: &str) -> Proxy {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let connections: Arc<Mutex<Vec<std::net::TcpStream>>> = Arc::default();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (kept, target, stopped) = (Arc::clone(&connections), target.to_owned(), Arc::clone(&stop));
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stopped.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = std::net::TcpStream::connect(&target) else { continue };
                let mut all = kept.lock().unwrap();
                all.push(client.try_clone().unwrap());
                all.push(server.try_clone().unwrap());
                for (mut from, mut to) in [(client.try_clone().unwrap(), server.try_clone().unwrap()), (server, client)]
                {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        Proxy { address, connections, stop }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Cuts every connection open now.
    pub(crate) fn cut(&self) {
        for stream in self.connections.lock().unwrap().drain(..) {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(&self.address);
        self.cut();
    }
}
