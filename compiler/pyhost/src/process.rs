//! The interpreter process: started, written to, read from with a deadline, and stopped.
//!
//! A plugin call is a round trip over a pipe, and most take microseconds: sleeping in `read`
//! and being woken costs far more than the call (about 75 µs a round trip on a small virtual
//! machine). So a read first spins on the non-blocking pipe for a moment, and only then waits
//! in poll(2), until the call's deadline. The host does the same on its side.

use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

/// How long a read spins before it sleeps: longer than a trivial call's round trip.
const SPIN: Duration = Duration::from_micros(200);

/// Why no message came.
pub(crate) enum Silence {
    TimedOut,
    /// The interpreter closed its end: it stopped.
    Closed,
    /// It wrote a line that is not a message (the line).
    Garbled(String),
}

pub(crate) struct Process {
    /// Started by modelc; `None` for a host forked from another (see [`Process::forked`]).
    child: Option<Child>,
    /// Its process id.
    pid: u32,
    /// It leads a process group of its own: stopping it stops what it started.
    grouped: bool,
    /// How long a read spins before it sleeps (see the module's doc).
    spin: Duration,
    /// `None` once closed, which tells the host to end.
    stdin: Option<Input>,
    stdout: Output,
    /// A forked host's wait status is written here by the host it was forked from.
    ending_file: Option<std::path::PathBuf>,
    /// What was read and not yet taken as a message.
    buffer: Vec<u8>,
    /// How much of `buffer` is known to hold no line end.
    scanned: usize,
}

/// Where messages to the host go: its stdin, or a forked host's socket.
enum Input {
    Pipe(ChildStdin),
    Socket(UnixStream),
}

/// Where its messages come from: its stdout, or a forked host's socket.
enum Output {
    Pipe(ChildStdout),
    Socket(UnixStream),
}

impl Write for Input {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        match self {
            Input::Pipe(pipe) => pipe.write(data),
            Input::Socket(socket) => socket.write(data),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Input {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self {
            Input::Pipe(pipe) => pipe.as_fd(),
            Input::Socket(socket) => socket.as_fd(),
        }
    }
}

impl Drop for Input {
    fn drop(&mut self) {
        // The socket's other half stays open for reading: the host is told there is no more.
        if let Input::Socket(socket) = self {
            let _ = socket.shutdown(std::net::Shutdown::Write);
        }
    }
}

impl Read for Output {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Output::Pipe(pipe) => pipe.read(buffer),
            Output::Socket(socket) => socket.read(buffer),
        }
    }
}

impl Output {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self {
            Output::Pipe(pipe) => pipe.as_fd(),
            Output::Socket(socket) => socket.as_fd(),
        }
    }
}

impl Process {
    pub(crate) fn spawn(interpreter: &Path, main: &str) -> std::io::Result<Process> {
        Process::start(interpreter, main, false)
    }

    /// An interpreter in a process group of its own: Ctrl-C at the terminal does not reach it
    /// (modelc lets what runs finish), and stopping it stops the commands it started. Its reads
    /// do not spin: a handler's call takes far longer than being woken, and several of these
    /// may be waited for at once.
    pub(crate) fn spawn_grouped(interpreter: &Path, main: &str) -> std::io::Result<Process> {
        Process::start(interpreter, main, true)
    }

    fn start(interpreter: &Path, main: &str, grouped: bool) -> std::io::Result<Process> {
        use std::os::unix::process::CommandExt as _;
        let mut command = Command::new(interpreter);
        if grouped {
            command.process_group(0);
        }
        let mut child = command
            .arg("-c")
            .arg(main)
            // The modules' directories stay as they are: no __pycache__ written into them.
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // What plugins print and log goes where modelc's own messages go.
            .stderr(Stdio::inherit())
            .spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err(std::io::Error::other("the interpreter's pipes could not be opened"));
        };
        for fd in [stdout.as_fd(), stdin.as_fd()] {
            if let Err(error) = fcntl(fd, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)) {
                let _ = child.kill();
                return Err(std::io::Error::from(error));
            }
        }
        let spin = if grouped { Duration::ZERO } else { SPIN };
        Ok(Process {
            pid: child.id(),
            child: Some(child),
            grouped,
            spin,
            stdin: Some(Input::Pipe(stdin)),
            stdout: Output::Pipe(stdout),
            ending_file: None,
            buffer: Vec::with_capacity(4096),
            scanned: 0,
        })
    }

    /// A handler host forked from another (`_host._fork`): process `pid`, leading its own
    /// process group, connected through `socket`; its wait status is written to `ending_file`.
    pub(crate) fn forked(socket: UnixStream, pid: u32, ending_file: std::path::PathBuf) -> std::io::Result<Process> {
        socket.set_nonblocking(true)?;
        let input = socket.try_clone()?;
        Ok(Process {
            child: None,
            pid,
            grouped: true,
            spin: Duration::ZERO,
            stdin: Some(Input::Socket(input)),
            stdout: Output::Socket(socket),
            ending_file: Some(ending_file),
            buffer: Vec::with_capacity(4096),
            scanned: 0,
        })
    }

    /// Writes one message; an interpreter that does not read it by `deadline` is as silent as
    /// one that does not answer.
    pub(crate) fn send(&mut self, message: &impl serde::Serialize, deadline: Instant) -> Result<(), Silence> {
        self.send_line(&line(message), deadline)
    }

    /// Writes one message already serialized by [`line`].
    pub(crate) fn send_line(&mut self, line: &[u8], deadline: Instant) -> Result<(), Silence> {
        let Some(stdin) = self.stdin.as_mut() else { return Err(Silence::Closed) };
        let mut rest = line;
        while !rest.is_empty() {
            match stdin.write(rest) {
                Ok(0) => return Err(Silence::Closed),
                Ok(n) => rest = &rest[n..],
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) if error.kind() == ErrorKind::WouldBlock => {
                    wait_until(stdin.as_fd(), PollFlags::POLLOUT, deadline)?;
                }
                Err(_) => return Err(Silence::Closed),
            }
        }
        Ok(())
    }

    /// The next message, or why none came before `deadline`. A line that is not JSON is
    /// the interpreter failing before the host ran: treated as the interpreter stopping.
    pub(crate) fn receive(&mut self, deadline: Instant) -> Result<serde_json::Value, Silence> {
        let line = self.receive_line(deadline)?;
        serde_json::from_slice(&line).map_err(|_| Silence::Garbled(String::from_utf8_lossy(&line).into_owned()))
    }

    /// The next message's line (without its newline), not parsed yet: a large answer is read
    /// into its own types.
    pub(crate) fn receive_line(&mut self, deadline: Instant) -> Result<Vec<u8>, Silence> {
        let mut chunk = [0u8; 64 * 1024];
        let mut spin_until = Instant::now() + self.spin;
        loop {
            if let Some(found) = self.buffer[self.scanned..].iter().position(|b| *b == b'\n') {
                let end = self.scanned + found;
                let mut line: Vec<u8> = self.buffer.drain(..=end).collect();
                line.pop();
                self.scanned = 0;
                return Ok(line);
            }
            self.scanned = self.buffer.len();
            match self.stdout.read(&mut chunk) {
                Ok(0) => return Err(Silence::Closed),
                Ok(n) => {
                    self.buffer.extend_from_slice(&chunk[..n]);
                    spin_until = Instant::now() + self.spin;
                }
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) if error.kind() == ErrorKind::WouldBlock => {
                    let now = Instant::now();
                    if now < spin_until {
                        std::hint::spin_loop();
                        continue;
                    }
                    wait_until(self.stdout.as_fd(), PollFlags::POLLIN, deadline)?;
                }
                Err(_) => return Err(Silence::Closed),
            }
        }
    }

    /// Stops the interpreter now.
    pub(crate) fn kill(&mut self) {
        if self.grouped
            && let Ok(pid) = i32::try_from(self.pid)
        {
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
        }
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// How the interpreter ended (it closed its output): its exit code or signal.
    pub(crate) fn ending(&mut self) -> String {
        // It closed its output: it is ending, give it a moment.
        let until = Instant::now() + Duration::from_secs(2);
        loop {
            let ended = match (&mut self.child, &self.ending_file) {
                (Some(child), _) => child.try_wait().map(|s| s.map(describe_status)).unwrap_or(None),
                (None, Some(file)) => std::fs::read_to_string(file)
                    .ok()
                    .and_then(|status| status.trim().parse().ok())
                    .map(|status| describe_status(std::os::unix::process::ExitStatusExt::from_raw(status))),
                (None, None) => None,
            };
            if let Some(ending) = ended {
                return ending;
            }
            if Instant::now() >= until {
                self.kill();
                return "it closed its output".to_owned();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Whether it has ended: a started one has exited, a forked one has closed its socket.
    fn has_ended(&mut self) -> bool {
        match &mut self.child {
            Some(child) => !matches!(child.try_wait(), Ok(None)),
            None => {
                let mut scratch = [0u8; 4096];
                loop {
                    match self.stdout.read(&mut scratch) {
                        Ok(0) => return true,
                        Ok(_) => {}
                        Err(error) if error.kind() == ErrorKind::Interrupted => {}
                        Err(error) if error.kind() == ErrorKind::WouldBlock => return false,
                        Err(_) => return true,
                    }
                }
            }
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // Closing its input ends the host's loop (it flushes what plugins printed); a host
        // that does not end promptly is killed.
        self.stdin = None;
        let until = Instant::now() + Duration::from_millis(500);
        while Instant::now() < until {
            if self.has_ended() {
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        self.kill();
    }
}

/// One message as a line of the protocol: JSON and its newline.
pub(crate) fn line(message: &impl serde::Serialize) -> Vec<u8> {
    // Serializing can not fail: every message's map keys are strings.
    let mut line = serde_json::to_vec(message).unwrap_or_default();
    line.push(b'\n');
    line
}

/// Sleeps until `fd` is ready for `events`, or fails at `deadline`.
pub(crate) fn wait_until(fd: std::os::fd::BorrowedFd<'_>, events: PollFlags, deadline: Instant) -> Result<(), Silence> {
    let now = Instant::now();
    if now >= deadline {
        return Err(Silence::TimedOut);
    }
    let wait = (deadline - now).min(Duration::from_secs(3600));
    let timeout = PollTimeout::try_from(wait).unwrap_or(PollTimeout::MAX);
    let mut fds = [PollFd::new(fd, events)];
    match poll(&mut fds, timeout) {
        Ok(_) | Err(nix::errno::Errno::EINTR) => Ok(()),
        Err(_) => Err(Silence::Closed),
    }
}

fn describe_status(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(signal) = status.signal() {
        return format!("killed by signal {signal}");
    }
    match status.code() {
        Some(code) => format!("exit code {code}"),
        None => "no exit code".to_owned(),
    }
}
