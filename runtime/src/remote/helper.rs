//! The helper: modelc run on a target as `modelc __helper`, serving deploy calls on its channel
//! with the same handlers as a local run, or starting the next hop (`sudo`) and passing the
//! channel through.
//!
//! A helper reached over ssh speaks on its stdin and stdout. A `sudo` hop is started from what
//! the hop before already holds, never from a path the next user would need to read: the
//! executable is copied into a sealed memory file (`memfd_create`), given to `sudo` as its stdin,
//! and run as `/proc/self/fd/0`; the channel is a socket pair on the child's stdout. A user such
//! as `nobody`, with no home and no right to read the connecting user's cache, runs it all the
//! same.

use std::collections::{HashMap, HashSet};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use modelc_ir::Resource;

use super::askpass::Askpass;
use super::command::{HELPER_ARG, sudo_args};
use super::context::SudoHop;
use super::lock;
use super::protocol::{CallContext, Hello, Message, PROTOCOL, read_frame, write_frame};
use crate::handler::{ContentSource, Context, Done, Handlers};

/// `modelc __helper [--socket] [--secrets] [--then HOPS]`: the helper's entry point, its arguments after
/// `__helper`. Returns the process's exit status.
pub fn main(args: &[String]) -> i32 {
    let mut socket = false;
    let mut secrets = false;
    let mut then: Vec<SudoHop> = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--socket" => socket = true,
            "--secrets" => secrets = true,
            "--then" => match args.next().map(|json| serde_json::from_str(json)) {
                Some(Ok(hops)) => then = hops,
                _ => return usage("--then needs the JSON of the sudo hops that follow"),
            },
            other => return usage(&format!("unknown argument `{other}`")),
        }
    }
    keep_descriptors_to_ourselves();
    let (input, output): (Box<dyn Read + Send>, Box<dyn Write + Send>) = if socket {
        // Started by `sudo` from a memory file: stdin is that file, stdout the channel.
        let channel = io::stdout().as_fd().try_clone_to_owned().map(UnixStream::from);
        match channel.and_then(|channel| Ok((channel.try_clone()?, channel))) {
            Ok((reader, writer)) => (Box::new(reader), Box::new(writer)),
            Err(e) => return failed(&format!("cannot use its channel: {e}")),
        }
    } else {
        (Box::new(io::stdin()), Box::new(io::stdout()))
    };
    let mut input = input;
    let passwords = if secrets {
        match read_frame(&mut input) {
            Ok(Some((Message::Secrets { sudo }, _))) => sudo,
            _ => return failed("expected the passwords of the sudo hops first"),
        }
    } else {
        Vec::new()
    };
    let result = match then.split_first() {
        Some((next, rest)) => relay(input, output, next, rest, passwords),
        None => serve(input, output, &Handlers::builtin()),
    };
    match result {
        Ok(()) => 0,
        Err(e) => failed(&e.to_string()),
    }
}

fn usage(message: &str) -> i32 {
    let _ = writeln!(io::stderr(), "modelc {HELPER_ARG}: {message}");
    2
}

fn failed(message: &str) -> i32 {
    let _ = writeln!(io::stderr(), "modelc helper: {message}");
    1
}

/// Descriptors the helper was started with beyond the standard three (the bootstrap's open
/// executable) are not passed on to the commands handlers run. Runs before any thread starts,
/// so no descriptor listed closes or is reused meanwhile.
#[allow(unsafe_code, reason = "descriptors inherited from the bootstrap, which no Rust value owns")]
fn keep_descriptors_to_ourselves() {
    use nix::fcntl::{FcntlArg, FdFlag, fcntl};
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else { return };
    let fds: Vec<i32> =
        entries.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).filter(|&fd| fd > 2).collect();
    for fd in fds {
        // SAFETY: borrowed for this one call, on the only thread there is; the directory's own
        // descriptor, closed by now, makes the call fail harmlessly.
        let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let _ = fcntl(borrowed, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC));
    }
}

/// Serves deploy calls until the channel says `Bye` or closes; then stops the commands that
/// still run, so nothing of the run outlives its connection.
pub fn serve(mut input: impl Read, output: impl Write + Send, handlers: &Handlers) -> io::Result<()> {
    let writer = Writer(Mutex::new(BufWriter::new(output)));
    writer.send(&Message::Hello(hello()), &[])?;
    let waiting = Waiting::default();
    let cache: Mutex<HashMap<String, Arc<Vec<u8>>>> = Mutex::default();
    let mut input = BufReader::new(&mut input);
    std::thread::scope(|scope| {
        loop {
            match read_frame(&mut input) {
                Ok(Some((Message::Deploy { call, resources, contexts }, _))) => {
                    let (writer, waiting, cache) = (&writer, &waiting, &cache);
                    scope.spawn(move || {
                        let content = AskedContent { call, writer, waiting, cache };
                        let results = deploy(handlers, &resources, &contexts, &content);
                        let _ = writer.send(&Message::Results { call, results }, &[]);
                    });
                }
                Ok(Some((Message::Guard { call, resource }, _))) => {
                    let writer = &writer;
                    scope.spawn(move || {
                        let reason = crate::meta::guarded_out(&resource.meta);
                        let _ = writer.send(&Message::Guarded { call, reason }, &[]);
                    });
                }
                Ok(Some((Message::Operate { call, op, args, has_data }, payload))) => {
                    let writer = &writer;
                    scope.spawn(move || {
                        let done = crate::operations::perform(&op, &args, has_data.then_some(payload.as_slice()));
                        let (result, data) = match done {
                            Ok(answer) => (Ok(answer.value), answer.data),
                            Err(failure) => (Err(failure), None),
                        };
                        let has_data = data.is_some();
                        let _ = writer.send(&Message::Operated { call, result, has_data }, &data.unwrap_or_default());
                    });
                }
                Ok(Some((Message::Content { call, hash, found }, payload))) => {
                    let payload = Arc::new(payload);
                    if found {
                        lock(&cache).insert(hash, Arc::clone(&payload));
                    }
                    waiting.answer(call, found.then_some(payload));
                }
                Ok(Some((Message::Bye, _)) | None) => break,
                Ok(Some(_)) => {}
                Err(e) => {
                    let _ = writeln!(io::stderr(), "modelc helper: its channel failed: {e}");
                    break;
                }
            }
        }
        waiting.close();
        crate::handlers::process::kill_running();
    });
    Ok(())
}

fn hello() -> Hello {
    let uid = nix::unistd::getuid();
    let user = nix::unistd::User::from_uid(uid).ok().flatten().map_or_else(|| uid.to_string(), |u| u.name);
    Hello {
        protocol: PROTOCOL,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        user,
        uid: uid.as_raw(),
        pid: std::process::id(),
    }
}

/// Runs one call's handler: a resource alone, or the members of a group.
fn deploy(
    handlers: &Handlers,
    resources: &[Resource],
    contexts: &[CallContext],
    content: &dyn ContentSource,
) -> Vec<Result<Done, String>> {
    let Some(first) = resources.first() else { return Vec::new() };
    if resources.len() != contexts.len() {
        return vec![Err("a call with more resources than contexts".to_owned()); resources.len()];
    }
    let Some(handler) = handlers.get(&first.entity_type) else {
        return vec![Err(format!("the helper has no handler for `{}`", first.entity_type)); resources.len()];
    };
    let directories: Vec<HashSet<_>> = contexts.iter().map(|c| c.directories.iter().cloned().collect()).collect();
    let contexts: Vec<Context<'_>> = contexts
        .iter()
        .zip(&directories)
        .map(|(c, directories)| Context {
            dry_run: c.dry_run,
            refresh: c.refresh,
            content,
            timeout: c.timeout_ms.map(Duration::from_millis),
            directories,
        })
        .collect();
    let members: Vec<&Resource> = resources.iter().collect();
    catch_unwind(AssertUnwindSafe(|| {
        if members.len() == 1 {
            vec![handler.deploy(members[0], &contexts[0])]
        } else {
            handler.deploy_group(&members, &contexts)
        }
    }))
    .unwrap_or_else(|_| vec![Err("its handler panicked on the target".to_owned()); resources.len()])
}

/// The channel's writing end, shared by the calls' threads: one frame at a time.
struct Writer<W: Write>(Mutex<BufWriter<W>>);

impl<W: Write> Writer<W> {
    fn send(&self, message: &Message, payload: &[u8]) -> io::Result<()> {
        write_frame(&mut *lock(&self.0), message, payload)
    }
}

/// A file's content as the other end sent it; `None` when it has none.
type Answer = Option<Arc<Vec<u8>>>;

/// Calls waiting for content, by call number; closed once the channel is gone.
#[derive(Default)]
struct Waiting(Mutex<(HashMap<u64, std::sync::mpsc::Sender<Answer>>, bool)>);

impl Waiting {
    /// Registers `call` as waiting; `None` once closed.
    fn wait(&self, call: u64) -> Option<std::sync::mpsc::Receiver<Answer>> {
        let mut state = lock(&self.0);
        if state.1 {
            return None;
        }
        let (tx, rx) = std::sync::mpsc::channel();
        state.0.insert(call, tx);
        Some(rx)
    }

    fn answer(&self, call: u64, content: Answer) {
        if let Some(tx) = lock(&self.0).0.remove(&call) {
            let _ = tx.send(content);
        }
    }

    fn close(&self) {
        let mut state = lock(&self.0);
        state.1 = true;
        state.0.clear();
    }
}

/// Content asked of the other end, once per hash for the connection's life.
struct AskedContent<'a, W: Write> {
    call: u64,
    writer: &'a Writer<W>,
    waiting: &'a Waiting,
    cache: &'a Mutex<HashMap<String, Arc<Vec<u8>>>>,
}

impl<W: Write + Send> ContentSource for AskedContent<'_, W> {
    fn content(&self, hash: &str) -> Option<Vec<u8>> {
        if let Some(bytes) = lock(self.cache).get(hash) {
            return Some(bytes.to_vec());
        }
        let answer = self.waiting.wait(self.call)?;
        self.writer.send(&Message::NeedContent { call: self.call, hash: hash.to_owned() }, &[]).ok()?;
        answer.recv().ok().flatten().map(|bytes| bytes.to_vec())
    }
}

/// A started `sudo` hop: the process, the channel to its helper, and the askpass program
/// serving its password (kept as long as sudo may ask).
pub struct SudoStarted {
    pub child: Child,
    pub channel: UnixStream,
    pub askpass: Option<Askpass>,
}

/// Starts the helper as `hop`'s user (and, through it, the hops in `then`) from `executable`'s
/// bytes held in a sealed memory file. `passwords` are those of `hop` and of `then`'s hops, in
/// order: `hop`'s is served through `SUDO_ASKPASS`, the others are passed on the channel.
pub fn spawn_sudo(
    hop: &SudoHop,
    then: &[SudoHop],
    executable: &[u8],
    stderr: Stdio,
    passwords: &[Option<String>],
) -> io::Result<SudoStarted> {
    let image = sealed_memory_file(executable)?;
    let (ours, theirs) = UnixStream::pair()?;
    let words = sudo_args(hop);
    let mut command = Command::new(&words[0]);
    command.args(&words[1..]).args(["/proc/self/fd/0", HELPER_ARG, "--socket"]);
    if !then.is_empty() {
        command.arg("--then").arg(serde_json::to_string(then).map_err(io::Error::other)?);
    }
    let askpass = match passwords.first() {
        Some(Some(password)) if hop.has_password => Some(Askpass::serve(password.clone())?),
        _ => None,
    };
    if let Some(askpass) = &askpass {
        command.env("SUDO_ASKPASS", askpass.program());
    }
    let forwarded: Vec<Option<String>> = passwords.iter().skip(1).cloned().collect();
    let forward = forwarded.iter().any(Option::is_some);
    if forward {
        command.arg("--secrets");
    }
    command.stdin(Stdio::from(image)).stdout(Stdio::from(OwnedFd::from(theirs))).stderr(stderr);
    // Ctrl-C on this machine's terminal reaches modelc, which ends the run in order; the
    // helper chain ends when its channel closes.
    command.process_group(0);
    let child = command.spawn().map_err(|e| io::Error::new(e.kind(), format!("cannot start `{}`: {e}", words[0])))?;
    let mut channel = ours;
    if forward {
        write_frame(&mut channel, &Message::Secrets { sudo: forwarded }, &[])?;
    }
    Ok(SudoStarted { child, channel, askpass })
}

/// A memory file holding `bytes`, sealed so that nothing can change it any more.
fn sealed_memory_file(bytes: &[u8]) -> io::Result<OwnedFd> {
    use nix::fcntl::{FcntlArg, SealFlag, fcntl};
    use nix::sys::memfd::{MFdFlags, memfd_create};
    let fd = memfd_create(c"modelc-helper", MFdFlags::MFD_ALLOW_SEALING).map_err(io::Error::from)?;
    let mut file = std::fs::File::from(fd);
    file.write_all(bytes)?;
    let seals = SealFlag::F_SEAL_WRITE | SealFlag::F_SEAL_GROW | SealFlag::F_SEAL_SHRINK | SealFlag::F_SEAL_SEAL;
    fcntl(&file, FcntlArg::F_ADD_SEALS(seals)).map_err(io::Error::from)?;
    Ok(OwnedFd::from(file))
}

/// Starts the next hop and passes the channel through both ways until either end closes.
fn relay(
    input: Box<dyn Read + Send>,
    output: Box<dyn Write + Send>,
    next: &SudoHop,
    rest: &[SudoHop],
    passwords: Vec<Option<String>>,
) -> io::Result<()> {
    let executable = std::fs::read("/proc/self/exe")?;
    let SudoStarted { mut child, channel, askpass } =
        spawn_sudo(next, rest, &executable, Stdio::inherit(), &passwords)?;
    drop((executable, passwords));
    let mut upstream = channel.try_clone()?;
    // Not joined: when the next hop ends first, this one ends at once (its process exits with
    // this thread still reading), which closes the channel for the hop before.
    std::thread::spawn(move || {
        let mut input = input;
        let _ = io::copy(&mut input, &mut upstream);
        // This machine closed the channel: the next helper sees its end.
        let _ = upstream.shutdown(std::net::Shutdown::Write);
    });
    let mut output = output;
    let mut downstream = channel;
    let _ = copy_flushing(&mut downstream, &mut output);
    let _ = child.wait();
    drop(askpass);
    Ok(())
}

/// Copies until the end, flushing after each read: frames must not wait in a buffer.
fn copy_flushing(from: &mut impl Read, to: &mut impl Write) -> io::Result<()> {
    let mut buffer = vec![0u8; 64 << 10];
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        to.write_all(&buffer[..n])?;
        to.flush()?;
    }
}
