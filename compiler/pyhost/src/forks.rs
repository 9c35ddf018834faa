//! Handler hosts forked from the first one, which has imported the modules already: starting
//! an interpreter and importing a module's packages costs a CPU nearly a tenth of a second, a fork a
//! millisecond. Each forked host leads a process group of its own and talks to modelc through a
//! Unix socket in a private directory (mode 0700, a new name each time); when one ends, the host
//! it was forked from writes its wait status into that directory (`_host._reap`), which modelc
//! tells as it tells a started host's.

use std::hash::{BuildHasher as _, Hasher as _};
use std::os::fd::AsFd as _;
use std::os::unix::fs::DirBuilderExt as _;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::time::Instant;

use nix::poll::PollFlags;
use serde_json::{Value, json};

use crate::process::{Process, wait_until};

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

    /// A host forked from `parent` (idle, its modules imported), ready by `deadline`; `None`
    /// where it cannot be (the slot starts an interpreter when needed instead, so why is not
    /// kept).
    pub(crate) fn fork(&self, parent: &mut Process, deadline: Instant) -> Option<Process> {
        let request = json!({"op": "fork", "socket": self.dir.join("socket"), "endings": self.dir});
        parent.send(&request, deadline).ok()?;
        let answer = parent.receive(deadline).ok()?;
        let pid = answer.get("forked").and_then(Value::as_u64).and_then(|p| u32::try_from(p).ok())?;
        let socket = self.accept(deadline)?;
        let mut process = Process::forked(socket, pid, self.dir.join(pid.to_string())).ok()?;
        let ready = process.receive(deadline).ok();
        // Only the child just forked connects; anything else is not a host of ours.
        let ours = ready
            .is_some_and(|r| r.get("ready").is_some() && r.get("pid").and_then(Value::as_u64) == Some(u64::from(pid)));
        if !ours {
            process.kill();
            return None;
        }
        Some(process)
    }

    fn accept(&self, deadline: Instant) -> Option<UnixStream> {
        loop {
            match self.listener.accept() {
                Ok((socket, _)) => return Some(socket),
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    wait_until(self.listener.as_fd(), PollFlags::POLLIN, deadline).ok()?;
                }
                Err(_) => return None,
            }
        }
    }
}

impl Drop for Forks {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
