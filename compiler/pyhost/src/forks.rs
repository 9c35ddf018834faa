//! Handler hosts forked from the first one, which has imported the modules already: starting
//! an interpreter and importing a module's packages costs a CPU a fifth of a second, a fork a
//! millisecond. Each forked host leads a process group of its own and talks to modelc through a
//! Unix socket in a private directory (mode 0700, a new name each time); when one ends, the host
//! it was forked from writes how into that directory (`_host._reap`), as a started host's exit
//! status says it.

use std::hash::{BuildHasher as _, Hasher as _};
use std::os::fd::AsFd as _;
use std::os::unix::fs::DirBuilderExt as _;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::time::Instant;

use nix::poll::PollFlags;
use serde_json::{Value, json};

use crate::process::{Process, Silence, wait_until};

/// The directory and socket of one set of forked hosts; removed when dropped (after them).
pub(crate) struct Forks {
    dir: PathBuf,
    listener: UnixListener,
}

impl Forks {
    pub(crate) fn new() -> std::io::Result<Forks> {
        let random = std::collections::hash_map::RandomState::new().build_hasher().finish();
        let dir = std::env::temp_dir().join(format!("modelc-handlers-{}-{random:016x}", std::process::id()));
        // A directory that exists already (someone else's) is never used.
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        let listening = UnixListener::bind(dir.join("socket")).and_then(|listener| {
            listener.set_nonblocking(true)?;
            Ok(listener)
        });
        match listening {
            Ok(listener) => Ok(Forks { dir, listener }),
            Err(error) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(error)
            }
        }
    }

    /// A host forked from `parent` (idle, its modules imported), ready; why not by `deadline`.
    pub(crate) fn fork(&self, parent: &mut Process, deadline: Instant) -> Result<Process, String> {
        let request = json!({"op": "fork", "socket": self.dir.join("socket"), "endings": self.dir});
        parent.send(&request, deadline).map_err(|s| why(&s))?;
        let answer = parent.receive(deadline).map_err(|s| why(&s))?;
        let Some(pid) = answer.get("forked").and_then(Value::as_u64).and_then(|p| u32::try_from(p).ok()) else {
            return Err(format!("the host answered {answer}"));
        };
        let socket = self.accept(deadline)?;
        let mut process = Process::forked(socket, pid, self.dir.join(pid.to_string())).map_err(|e| e.to_string())?;
        let ready = process.receive(deadline).map_err(|s| why(&s))?;
        // Only the child just forked connects; anything else is not a host of ours.
        if ready.get("ready").is_none() || ready.get("pid").and_then(Value::as_u64) != Some(u64::from(pid)) {
            process.kill();
            return Err(format!("the forked host answered {ready}"));
        }
        Ok(process)
    }

    fn accept(&self, deadline: Instant) -> Result<UnixStream, String> {
        loop {
            match self.listener.accept() {
                Ok((socket, _)) => return Ok(socket),
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    wait_until(self.listener.as_fd(), PollFlags::POLLIN, deadline).map_err(|s| why(&s))?;
                }
                Err(error) => return Err(error.to_string()),
            }
        }
    }
}

impl Drop for Forks {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn why(silence: &Silence) -> String {
    match silence {
        Silence::TimedOut => "it did not answer in time".to_owned(),
        Silence::Closed => "it stopped".to_owned(),
        Silence::Garbled(line) => format!("it wrote {line:?}"),
    }
}
