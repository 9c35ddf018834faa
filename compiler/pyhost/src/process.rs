//! The interpreter process: started, written to, read from with a deadline, and stopped.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Instant;

/// Why no message came.
pub(crate) enum Silence {
    TimedOut,
    /// The interpreter closed its end: it stopped.
    Closed,
}

pub(crate) struct Process {
    child: Child,
    stdin: ChildStdin,
    /// Lines the interpreter writes, read by a thread of their own so a read can time out.
    lines: Receiver<String>,
}

impl Process {
    pub(crate) fn spawn(interpreter: &Path, main: &str) -> std::io::Result<Process> {
        let mut child = Command::new(interpreter)
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
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Process { child, stdin, lines })
    }

    pub(crate) fn send(&mut self, message: &serde_json::Value) -> Result<(), Silence> {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).and_then(|()| self.stdin.flush()).map_err(|_| Silence::Closed)
    }

    /// The next message, or why none came before `deadline`. A line that is not JSON is
    /// the interpreter failing before the host ran: treated as the interpreter stopping.
    pub(crate) fn receive(&mut self, deadline: Instant) -> Result<serde_json::Value, Silence> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(line) => serde_json::from_str(&line).map_err(|_| Silence::Closed),
            Err(RecvTimeoutError::Timeout) => Err(Silence::TimedOut),
            Err(RecvTimeoutError::Disconnected) => Err(Silence::Closed),
        }
    }

    /// Stops the interpreter now.
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// How the interpreter ended (it closed its output): its exit code or signal.
    pub(crate) fn ending(&mut self) -> String {
        // It closed its output: it is ending, give it a moment.
        let until = Instant::now() + std::time::Duration::from_secs(2);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return describe_status(status),
                Ok(None) if Instant::now() < until => std::thread::sleep(std::time::Duration::from_millis(10)),
                _ => {
                    self.kill();
                    return "it closed its output".to_owned();
                }
            }
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // Closing stdin ends the host's loop; kill in case a plugin is still running.
        self.kill();
    }
}

fn describe_status(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exit code {code}"),
        None => "no exit code".to_owned(),
    }
}
