//! Passwords a model gives its contexts, handed to `ssh` (`SSH_ASKPASS`) and `sudo` (`sudo -A`,
//! `SUDO_ASKPASS`) the way they ask for them: an askpass program they run. The program is a
//! two-line script in a fresh private directory (0700) that reads a line from a named pipe beside it, and
//! a thread writes the password into the pipe each time it is opened. So the password is never
//! on a command line, in an environment, in a file or in a log: only in this process's memory
//! and in the pipe, which only this user (and root) can open.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// An askpass program serving one password while it lives.
pub struct Askpass {
    dir: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Askpass {
    /// Serves `password` through a new askpass program.
    pub fn serve(password: String) -> std::io::Result<Askpass> {
        let dir = private_dir()?;
        let pipe = dir.join("password");
        nix::unistd::mkfifo(&pipe, nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR)?;
        let script = dir.join("askpass");
        // One line per run: a copy the writer started while the last reader was leaving is
        // never read twice into one answer (every copy is the same password).
        let text = format!(
            "#!/bin/sh\nIFS= read -r password < {} && printf '%s\\n' \"$password\"\n",
            super::command::quote(&pipe.to_string_lossy())
        );
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o700)
            .open(&script)?
            .write_all(text.as_bytes())?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                // Each open of the pipe by a reader is one answer.
                while !stop.load(Ordering::SeqCst) {
                    let Ok(mut writer) = std::fs::OpenOptions::new().write(true).open(&pipe) else { return };
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let _ = writer.write_all(password.as_bytes());
                    let _ = writer.write_all(b"\n");
                }
            })
        };
        Ok(Askpass { dir, stop, thread: Some(thread) })
    }

    /// The program `ssh` or `sudo` runs to get the password.
    pub fn program(&self) -> PathBuf {
        self.dir.join("askpass")
    }
}

impl Drop for Askpass {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // The writer waits in `open` for a reader: be that reader, without blocking.
        let _ = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
            .open(self.dir.join("password"));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A new directory only this user can enter, under the runtime directory or the temporary one;
/// made with its mode at once, and never one that already exists.
fn private_dir() -> std::io::Result<PathBuf> {
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    for _ in 0..16 {
        let mut random = [0u8; 8];
        getrandom::fill(&mut random).map_err(|e| std::io::Error::other(e.to_string()))?;
        let dir = base.join(format!("modelc-askpass-{}", super::binary::hex(&random)));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
                return Ok(dir);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("cannot make a private directory for the askpass program"))
}

/// The passwords of a chain's hops, outermost first (`None`: the hop gives none).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Secrets {
    pub ssh: Vec<Option<String>>,
    pub sudo: Vec<Option<String>>,
}

impl Secrets {
    /// The passwords the context `via` gives, for `chain`'s hops.
    pub fn of(via: &serde_json::Value, chain: &super::Chain) -> Secrets {
        Secrets {
            ssh: (0..chain.ssh.len()).map(|i| super::context::password(via, "ssh", i)).collect(),
            sudo: (0..chain.sudo.len()).map(|i| super::context::password(via, "sudo", i)).collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.ssh.iter().chain(&self.sudo).all(Option::is_none)
    }
}

impl std::fmt::Debug for Askpass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Askpass").field("dir", &self.dir).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_prints_the_password_each_time_and_leaves_nothing() {
        let askpass = Askpass::serve("s3cret pass".to_owned()).unwrap();
        let program = askpass.program();
        for _ in 0..3 {
            let out = std::process::Command::new(&program).arg("Password:").output().unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), "s3cret pass\n");
        }
        let script = std::fs::read_to_string(&program).unwrap();
        assert!(!script.contains("s3cret"), "the script holds no password");
        let mode = std::fs::metadata(program.parent().unwrap()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let dir = program.parent().unwrap().to_path_buf();
        drop(askpass);
        assert!(!dir.exists());
    }
}
