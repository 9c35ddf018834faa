//! A real OpenSSH server for modelc's tests.
//!
//! [`Sshd::start`] generates a host key and a user key with `ssh-keygen` into a fresh temporary
//! directory, writes an `sshd_config` there (loopback, a free port, public keys only, the user
//! key authorised, no PAM) and a `known_hosts` naming the host key, and runs Debian's
//! `/usr/sbin/sshd -D` as the test's own child: nothing of the machine's SSH configuration is
//! read or changed. It logs in as the user the tests run as. When the tests run as root, sshd
//! needs its privilege-separation directory `/run/sshd`, which is created if missing (the one
//! thing outside the temporary directory; the package makes the same). Dropping the handle
//! stops the server by its PID and removes the directory.
//!
//! A machine without sshd skips the test that asked (with `modelc-test-skip`), except under
//! `CI=true`, where it fails: CI installs `openssh-server` (`.ci/run`).
#![allow(
    clippy::disallowed_methods,
    clippy::print_stderr,
    reason = "test support: it runs a server process, writes its files and says why it cannot"
)]

use std::io::Read;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SSHD: &str = "/usr/sbin/sshd";
/// How long the server may take to accept connections.
const PATIENCE: Duration = Duration::from_secs(30);

/// A running sshd, stopped and removed when dropped.
pub struct Sshd {
    child: Child,
    dir: PathBuf,
    port: u16,
    user: String,
}

impl Sshd {
    /// Starts a server for the test `what` names. `None` (the test is recorded as skipped) on a
    /// machine without sshd or ssh-keygen, unless `CI=true`: then it panics, as a missing
    /// service must fail CI, never skip.
    pub fn start(what: &str) -> Option<Sshd> {
        Sshd::start_with(what, false)
    }

    /// [`Sshd::start`]; with `no_shell_startup`, the login shell of each session reads no
    /// `~/.bashrc` (sshd sets `SHLVL=1`, which bash takes as not being the session's first shell):
    /// for benchmarks, whose numbers must not depend on what the machine's user runs at every
    /// login (a `pyenv init` there costs seconds per session under load).
    pub fn start_with(what: &str, no_shell_startup: bool) -> Option<Sshd> {
        let missing: Vec<&str> =
            [SSHD, "ssh", "ssh-keygen"].into_iter().filter(|program| !installed(program)).collect();
        if !missing.is_empty() {
            let reason = format!(
                "no OpenSSH ({} missing): install Debian's `openssh-server` and `openssh-client`",
                missing.join(", ")
            );
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{what} needs an ssh server, and CI must not skip it: {reason}");
            }
            modelc_test_skip::skip(format!("{what}: {reason}"));
            return None;
        }
        match Sshd::launch(no_shell_startup) {
            Ok(server) => Some(server),
            Err(why) => panic!("{what}: sshd did not start: {why}"),
        }
    }

    fn launch(no_shell_startup: bool) -> Result<Sshd, String> {
        let dir = std::env::temp_dir().join(format!("modelc-sshd-{}-{}", std::process::id(), unique()));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        for key in ["host_key", "user_key"] {
            run(Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", key, "-f"])
                .arg(dir.join(key)))?;
        }
        std::fs::copy(dir.join("user_key.pub"), dir.join("authorized_keys")).map_err(|e| e.to_string())?;
        let port = free_port()?;
        let host_key = std::fs::read_to_string(dir.join("host_key.pub")).map_err(|e| e.to_string())?;
        let host_key: Vec<&str> = host_key.split_whitespace().take(2).collect();
        std::fs::write(dir.join("known_hosts"), format!("[127.0.0.1]:{port} {}\n", host_key.join(" ")))
            .map_err(|e| e.to_string())?;
        let mut config = format!(
            "ListenAddress 127.0.0.1\nPort {port}\nHostKey {dir}/host_key\nAuthorizedKeysFile {dir}/authorized_keys\n\
             PidFile {dir}/sshd.pid\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPermitRootLogin prohibit-password\n\
             AllowTcpForwarding yes\nMaxStartups 100\nMaxSessions 100\nLogLevel VERBOSE\n",
            dir = dir.display()
        );
        if no_shell_startup {
            config.push_str("SetEnv SHLVL=1\n");
        }
        std::fs::write(dir.join("sshd_config"), config).map_err(|e| e.to_string())?;
        if nix::unistd::geteuid().is_root() {
            std::fs::create_dir_all("/run/sshd").map_err(|e| format!("cannot make /run/sshd: {e}"))?;
        }
        let log = std::fs::File::create(dir.join("sshd.log")).map_err(|e| e.to_string())?;
        let child = Command::new(SSHD)
            .arg("-D")
            .arg("-f")
            .arg(dir.join("sshd_config"))
            .arg("-E")
            .arg(dir.join("sshd.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {SSHD}: {e}"))?;
        let user = nix::unistd::User::from_uid(nix::unistd::geteuid())
            .ok()
            .flatten()
            .map_or_else(|| "root".to_owned(), |u| u.name);
        let mut server = Sshd { child, dir, port, user };
        server.wait_ready()?;
        Ok(server)
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("sshd exited ({status}): {}", self.log()));
            }
            if let Ok(mut stream) = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port)) {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut banner = [0u8; 4];
                if stream.read_exact(&mut banner).is_ok() && &banner == b"SSH-" {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                return Err(format!("sshd did not answer within {} s: {}", PATIENCE.as_secs(), self.log()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The user that logs in (the one the tests run as).
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The private key the server accepts.
    pub fn identity_file(&self) -> PathBuf {
        self.dir.join("user_key")
    }

    /// A known_hosts file naming the server's host key for `[127.0.0.1]:port`.
    pub fn known_hosts(&self) -> PathBuf {
        self.dir.join("known_hosts")
    }

    /// Its directory (keys, config, log).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// What the server logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("sshd.log")).unwrap_or_default()
    }

    /// The sshd processes serving connections now (the children of the listening one): killing
    /// one drops its connection.
    pub fn sessions(&self) -> Vec<u32> {
        children(self.pid())
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        use nix::sys::signal::{Signal, kill};
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap_or(0));
        let _ = kill(pid, Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if !matches!(self.child.try_wait(), Ok(None)) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The processes whose parent is `pid`.
pub fn children(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut found: Vec<u32> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&p| parent_of(p) == Some(pid))
        .collect();
    found.sort_unstable();
    found
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
    stat[stat.rfind(')')? + 1..].split_whitespace().nth(1)?.parse().ok()
}

fn installed(program: &str) -> bool {
    if program.contains('/') {
        return Path::new(program).exists();
    }
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

fn run(command: &mut Command) -> Result<(), String> {
    let out = command.output().map_err(|e| e.to_string())?;
    if out.status.success() { Ok(()) } else { Err(format!("{command:?}: {}", String::from_utf8_lossy(&out.stderr))) }
}

fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| e.to_string())?;
    listener.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
