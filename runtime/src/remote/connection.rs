//! One connection to a target: the process that carries it (`ssh`, or `sudo` on this machine),
//! the helper's handshake, and deploy calls multiplexed over it, answered in any order.

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use modelc_ir::Resource;

use super::askpass::{Askpass, Secrets};
use super::binary::Binary;
use super::command::{
    HELPER_ARG, NEED_BINARY, REFUSED, STARTING, askpass_environment, program, remote_command, ssh_options,
};
use super::context::Chain;
use super::lock;
use super::protocol::{CallContext, Hello, Message, PROTOCOL, read_frame, write_frame};
use crate::handler::{Context, Done};

/// How long connecting, copying the helper and its hello may take before the attempt is given
/// up (ssh's own `ConnectTimeout` is 30 s of it).
const HANDSHAKE_LIMIT: Duration = Duration::from_secs(300);
/// How long a helper may take to end after `Bye` before its process is killed.
const CLOSE_GRACE: Duration = Duration::from_secs(5);
/// How much of the transport's stderr a message quotes.
const STDERR_KEPT: usize = 2000;

/// What a connection needs from its pool.
pub struct Setup<'a> {
    pub binary: &'a Binary,
    /// The helper cache on targets (`~/` is the connecting user's home).
    pub cache_dir: &'a str,
}

/// An open connection to the helper at the end of a chain.
pub struct Connection {
    /// How the target was reached, for messages.
    pub chain: Chain,
    pub hello: Hello,
    writer: Mutex<Box<dyn Write + Send>>,
    calls: Arc<Mutex<Calls>>,
    next_call: AtomicU64,
    child: Mutex<Child>,
    stderr: Arc<Mutex<Tail>>,
    /// Whether the helper had to be copied to the target for this connection.
    pub copied: bool,
    /// The askpass programs of the chain's passwords, served while the connection lives.
    _askpass: Vec<Askpass>,
}

#[derive(Default)]
struct Calls {
    waiting: BTreeMap<u64, Sender<Reply>>,
    /// Why the connection is gone, once it is.
    lost: Option<String>,
}

enum Reply {
    NeedContent(String),
    Operated(Result<crate::operations::Answer, crate::operations::Failure>),
    Results(Vec<Result<Done, String>>),
    Guarded(Option<String>),
    Lost(String),
}

impl Connection {
    /// Reaches the end of `chain` and starts the helper there; `secrets` are the passwords of
    /// its hops.
    pub fn open(chain: &Chain, setup: &Setup<'_>, secrets: &Secrets) -> Result<Connection, String> {
        let stderr = Arc::new(Mutex::new(Tail::default()));
        let mut askpass = Vec::new();
        let (child, reader, writer, copied) = if chain.ssh.is_empty() {
            let started = super::helper::spawn_sudo(
                &chain.sudo[0],
                &chain.sudo[1..],
                &setup.binary.bytes,
                Stdio::piped(),
                &secrets.sudo,
            )
            .map_err(|e| format!("cannot reach {chain}: {e}"))?;
            let mut child = started.child;
            askpass.extend(started.askpass);
            if let Some(pipe) = child.stderr.take() {
                collect_stderr(pipe, Arc::clone(&stderr));
            }
            let reader = started.channel.try_clone().map_err(|e| format!("cannot reach {chain}: {e}"))?;
            let reader: Box<dyn Read + Send> = Box::new(BufReader::new(reader));
            (child, reader, Box::new(started.channel) as Box<dyn Write + Send>, false)
        } else {
            open_ssh(chain, setup, secrets, &stderr, &mut askpass)?
        };
        let mut connection = Connection {
            chain: chain.clone(),
            hello: Hello { protocol: 0, version: String::new(), user: String::new(), uid: 0, pid: 0 },
            writer: Mutex::new(writer),
            calls: Arc::default(),
            next_call: AtomicU64::new(1),
            child: Mutex::new(child),
            stderr,
            copied,
            _askpass: askpass,
        };
        let mut reader = reader;
        // A sudo that waits, or a helper that never answers, is given up.
        let watchdog = Watchdog::arm(lock(&connection.child).id());
        let hello = handshake(&mut reader);
        watchdog.disarm();
        match hello {
            Ok(hello) => connection.hello = hello,
            Err(why) => {
                let message = connection.failure(&why);
                connection.kill();
                return Err(message);
            }
        }
        let calls = Arc::clone(&connection.calls);
        let stderr = Arc::clone(&connection.stderr);
        let chain = chain.clone();
        std::thread::spawn(move || read_replies(reader, &calls, &stderr, &chain));
        Ok(connection)
    }

    /// Deploys `resources` (one, or a group's members) on the target, each with its context;
    /// content the handlers ask for is read from the first context's source.
    pub fn deploy(&self, resources: &[&Resource], contexts: &[Context<'_>]) -> Vec<Result<Done, String>> {
        let message = |call| Message::Deploy {
            call,
            resources: resources.iter().map(|r| without_context(r)).collect(),
            contexts: resources.iter().zip(contexts).map(|(r, c)| call_context(r, c)).collect(),
        };
        let (call, rx) = match self.call(message) {
            Ok(started) => started,
            Err(why) => return vec![Err(why); resources.len()],
        };
        self.answer(call, &rx, contexts, resources.len())
    }

    /// Evaluates `resource`'s guards on the target: why they keep it from deploying, if they do.
    pub fn guarded_out(&self, resource: &Resource) -> Result<Option<String>, String> {
        let (_, rx) = self.call(|call| Message::Guard { call, resource: Box::new(without_context(resource)) })?;
        match rx.recv() {
            Ok(Reply::Guarded(reason)) => Ok(reason),
            Ok(Reply::Lost(why)) => Err(why),
            _ => Err(format!("the connection to {} ended", self.chain)),
        }
    }

    /// Does an operation of a module's handler on the target.
    pub fn operate(
        &self,
        op: &str,
        args: &[serde_json::Value],
        data: Option<&[u8]>,
    ) -> Result<crate::operations::Answer, crate::operations::Failure> {
        let lost = |message: String| crate::operations::Failure::usage(message);
        let message =
            |call| Message::Operate { call, op: op.to_owned(), args: args.to_vec(), has_data: data.is_some() };
        let (_, rx) = self.call_with(message, data.unwrap_or_default()).map_err(lost)?;
        match rx.recv() {
            Ok(Reply::Operated(result)) => result,
            Ok(Reply::Lost(why)) => Err(lost(why)),
            _ => Err(lost(format!("the connection to {} ended", self.chain))),
        }
    }

    /// Sends the request `message` makes with a new call number; the call's replies arrive on
    /// the receiver.
    fn call(&self, message: impl FnOnce(u64) -> Message) -> Result<(u64, Receiver<Reply>), String> {
        self.call_with(message, &[])
    }

    /// [`Connection::call`] with a payload.
    fn call_with(
        &self,
        message: impl FnOnce(u64) -> Message,
        payload: &[u8],
    ) -> Result<(u64, Receiver<Reply>), String> {
        let call = self.next_call.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = channel();
        {
            let mut calls = lock(&self.calls);
            if let Some(lost) = &calls.lost {
                return Err(lost.clone());
            }
            calls.waiting.insert(call, tx);
        }
        if let Err(e) = self.send(&message(call), payload) {
            lock(&self.calls).waiting.remove(&call);
            return Err(self.failure(&format!("the connection failed: {e}")));
        }
        Ok((call, rx))
    }

    fn answer(&self, call: u64, rx: &Receiver<Reply>, contexts: &[Context<'_>], n: usize) -> Vec<Result<Done, String>> {
        loop {
            match rx.recv() {
                Ok(Reply::NeedContent(hash)) => {
                    let content = contexts.first().and_then(|c| c.content.content(&hash));
                    let found = content.is_some();
                    let message = Message::Content { call, hash, found };
                    if let Err(e) = self.send(&message, content.as_deref().unwrap_or_default()) {
                        lock(&self.calls).waiting.remove(&call);
                        return vec![Err(self.failure(&format!("the connection failed: {e}"))); n];
                    }
                }
                Ok(Reply::Results(results)) if results.len() == n => return results,
                Ok(Reply::Results(results)) => {
                    return vec![Err(format!("the helper gave {} results for {n} resources", results.len())); n];
                }
                Ok(Reply::Lost(why)) => return vec![Err(why); n],
                Ok(Reply::Guarded(_) | Reply::Operated(_)) => {
                    return vec![Err("the helper answered another question".to_owned()); n];
                }
                Err(_) => return vec![Err(format!("the connection to {} ended", self.chain)); n],
            }
        }
    }

    fn send(&self, message: &Message, payload: &[u8]) -> io::Result<()> {
        write_frame(&mut *lock(&self.writer), message, payload)
    }

    /// Whether the connection is gone (its calls fail; the pool opens another).
    pub fn is_lost(&self) -> bool {
        lock(&self.calls).lost.is_some()
    }

    /// `why`, with what the transport said on stderr (cut, escaped) and how it ended.
    fn failure(&self, why: &str) -> String {
        std::thread::sleep(Duration::from_millis(50)); // let the last of stderr arrive
        let exit = lock(&self.child).try_wait().ok().flatten();
        describe(&self.chain, why, exit.map(|s| s.code()), &lock(&self.stderr).text())
    }

    /// Says `Bye`, and waits for the helper's end a moment before killing what carries it.
    pub fn close(&self) {
        let _ = self.send(&Message::Bye, &[]);
        // Closing our end of the channel is what a helper waiting for a frame sees.
        *lock(&self.writer) = Box::new(io::sink());
        let deadline = Instant::now() + CLOSE_GRACE;
        let mut child = lock(&self.child);
        while Instant::now() < deadline {
            if !matches!(child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = child.kill();
        let _ = child.wait();
    }

    fn kill(&self) {
        let mut child = lock(&self.child);
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.close();
    }
}

/// Starts `ssh` to the last host of the chain with the bootstrap as its command.
#[allow(clippy::type_complexity, reason = "the four parts of a started transport, taken apart at once")]
fn open_ssh(
    chain: &Chain,
    setup: &Setup<'_>,
    secrets: &Secrets,
    stderr: &Arc<Mutex<Tail>>,
    askpass: &mut Vec<Askpass>,
) -> Result<(Child, Box<dyn Read + Send>, Box<dyn Write + Send>, bool), String> {
    let Some(target) = chain.ssh.last() else { return Err("no ssh hop".to_owned()) };
    let mut helper_args = vec![HELPER_ARG.to_owned()];
    if !chain.sudo.is_empty() {
        helper_args.push("--then".to_owned());
        helper_args.push(serde_json::to_string(&chain.sudo).unwrap_or_default());
    }
    let sudo_passwords = secrets.sudo.iter().any(Option::is_some);
    if sudo_passwords {
        helper_args.push("--secrets".to_owned());
    }
    let mut programs = Vec::new();
    for (hop, password) in chain.ssh.iter().zip(secrets.ssh.iter().chain(std::iter::repeat(&None))) {
        match password {
            Some(password) if hop.has_password => {
                let served = Askpass::serve(password.clone()).map_err(|e| format!("cannot reach {chain}: {e}"))?;
                programs.push(Some(served.program()));
                askpass.push(served);
            }
            _ => programs.push(None),
        }
    }
    let mut command = Command::new(program(target));
    if let Some(Some(program)) = programs.last() {
        command.envs(askpass_environment(program));
    }
    command
        .args(ssh_options(&chain.ssh, &programs))
        .arg("--")
        .arg(&target.hostname)
        .arg(remote_command(setup.binary, setup.cache_dir, &helper_args))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Ctrl-C reaches modelc, which ends the run in order, not the connections under it.
        .process_group(0);
    let mut child =
        command.spawn().map_err(|e| format!("cannot reach {chain}: cannot start `{}`: {e}", program(target)))?;
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut writer: Box<dyn Write + Send> = Box::new(stdin);
    if let Some(pipe) = child.stderr.take() {
        collect_stderr(pipe, Arc::clone(stderr));
    }
    let watchdog = Watchdog::arm(child.id());
    let mut reader = BufReader::new(stdout);
    let started = bootstrap(&mut reader, &mut writer, setup.binary).and_then(|copied| {
        if sudo_passwords {
            let secrets = Message::Secrets { sudo: secrets.sudo.clone() };
            write_frame(&mut writer, &secrets, &[]).map_err(|e| format!("the connection failed: {e}"))?;
        }
        Ok(copied)
    });
    let copied = match started {
        Ok(copied) => copied,
        Err(why) => {
            watchdog.disarm();
            let _ = child.kill();
            let status = child.wait().ok();
            std::thread::sleep(Duration::from_millis(50));
            let said = lock(stderr).text();
            return Err(describe(chain, &why, status.map(|s| s.code()), &said));
        }
    };
    watchdog.disarm();
    Ok((child, Box::new(reader), writer, copied))
}

/// Reads the bootstrap's lines until the helper starts, sending the helper when asked;
/// whether it was sent.
fn bootstrap(reader: &mut impl BufRead, writer: &mut impl Write, binary: &Binary) -> Result<bool, String> {
    let mut copied = false;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader.take(4096).read_until(b'\n', &mut line).map_err(|e| format!("reading from it failed: {e}"))?;
        if n == 0 {
            return Err("it closed the connection before the helper started".to_owned());
        }
        match String::from_utf8_lossy(&line).trim_end() {
            NEED_BINARY => {
                writer
                    .write_all(&binary.bytes)
                    .and_then(|()| writer.flush())
                    .map_err(|e| format!("copying the helper failed: {e}"))?;
                copied = true;
            }
            STARTING => return Ok(copied),
            // A login script's chatter on stdout.
            _ => {}
        }
    }
}

/// Reads the helper's hello.
fn handshake(reader: &mut impl Read) -> Result<Hello, String> {
    match read_frame(reader) {
        Ok(Some((Message::Hello(hello), _))) if hello.protocol == PROTOCOL => Ok(hello),
        Ok(Some((Message::Hello(hello), _))) => Err(format!(
            "its helper speaks protocol {} (modelc {}), this modelc {PROTOCOL}",
            hello.protocol, hello.version
        )),
        Ok(Some(_)) => Err("its helper did not say hello first".to_owned()),
        Ok(None) => Err("it closed the connection before the helper said hello".to_owned()),
        Err(e) => Err(format!("reading the helper's hello failed: {e}")),
    }
}

/// Dispatches the helper's frames to the calls waiting for them; when the channel ends, every
/// call still waiting fails with why.
fn read_replies(mut reader: Box<dyn Read + Send>, calls: &Mutex<Calls>, stderr: &Mutex<Tail>, chain: &Chain) {
    let why = loop {
        match read_frame(&mut reader) {
            Ok(Some((Message::NeedContent { call, hash }, _))) => deliver(calls, call, Reply::NeedContent(hash), false),
            Ok(Some((Message::Results { call, results }, _))) => deliver(calls, call, Reply::Results(results), true),
            Ok(Some((Message::Guarded { call, reason }, _))) => deliver(calls, call, Reply::Guarded(reason), true),
            Ok(Some((Message::Operated { call, result, has_data }, payload))) => {
                let answer = result.map(|value| crate::operations::Answer { value, data: has_data.then_some(payload) });
                deliver(calls, call, Reply::Operated(answer), true)
            }
            Ok(Some(_)) => {}
            Ok(None) => break "the connection closed".to_owned(),
            Err(e) => break format!("the connection failed: {e}"),
        }
    };
    std::thread::sleep(Duration::from_millis(50)); // let the last of stderr arrive
    let message = describe(chain, &why, None, &lock(stderr).text());
    let mut calls = lock(calls);
    calls.lost = Some(message.clone());
    for (_, waiting) in std::mem::take(&mut calls.waiting) {
        let _ = waiting.send(Reply::Lost(message.clone()));
    }
}

fn deliver(calls: &Mutex<Calls>, call: u64, reply: Reply, last: bool) {
    let mut calls = lock(calls);
    let waiting = if last { calls.waiting.remove(&call) } else { calls.waiting.get(&call).cloned() };
    if let Some(waiting) = waiting {
        let _ = waiting.send(reply);
    }
}

/// A resource as the helper gets it: without its context, which it does not need (and whose
/// passwords stay here).
fn without_context(resource: &Resource) -> Resource {
    let mut resource = resource.clone();
    resource.attributes.shift_remove("via");
    resource
}

/// The context as it travels: the directories of the run that the resource's paths are in
/// (all a handler asks of them).
fn call_context(resource: &Resource, context: &Context<'_>) -> CallContext {
    let directories = resource
        .attributes
        .values()
        .filter_map(|v| v.as_str())
        .filter_map(|path| std::path::Path::new(path).parent())
        .filter(|parent| context.directories.contains(*parent))
        .map(std::path::Path::to_path_buf)
        .collect();
    CallContext {
        dry_run: context.dry_run,
        refresh: context.refresh,
        timeout_ms: context.timeout.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
        directories,
    }
}

/// A transport failure as users read it: the chain, what went wrong, how the transport ended,
/// and its own words (the last of its stderr, control characters escaped).
fn describe(chain: &Chain, why: &str, exit: Option<Option<i32>>, said: &str) -> String {
    let said = said.trim();
    let words = if said.is_empty() { String::new() } else { format!(": {said}") };
    match exit {
        // The bootstrap said why it refused the target ("modelc: refused: …").
        Some(Some(REFUSED)) => format!("cannot deploy through {chain}{words}"),
        Some(Some(255)) if !chain.ssh.is_empty() => format!("cannot reach {chain}: ssh failed{words}"),
        Some(Some(code)) => format!("cannot deploy through {chain}: {why} (exit status {code}){words}"),
        _ => format!("cannot deploy through {chain}: {why}{words}"),
    }
}

/// The last bytes a transport wrote on stderr.
#[derive(Default)]
struct Tail(Vec<u8>);

impl Tail {
    fn push(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
        if self.0.len() > STDERR_KEPT {
            self.0.drain(..self.0.len() - STDERR_KEPT);
        }
    }

    /// The text, each line trimmed, control characters escaped, lines joined with `; `.
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| {
                l.chars()
                    .flat_map(|c| if c.is_control() { c.escape_default().collect() } else { vec![c] })
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

fn collect_stderr(mut pipe: impl Read + Send + 'static, tail: Arc<Mutex<Tail>>) {
    std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buffer) {
            if n == 0 {
                break;
            }
            lock(&tail).push(&buffer[..n]);
        }
    });
}

/// Kills a transport that has not finished its handshake within [`HANDSHAKE_LIMIT`].
struct Watchdog(Sender<()>);

impl Watchdog {
    fn arm(pid: u32) -> Watchdog {
        let (tx, rx) = channel::<()>();
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(HANDSHAKE_LIMIT) {
                let pid = nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap_or(0));
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            }
        });
        Watchdog(tx)
    }

    fn disarm(self) {
        let _ = self.0.send(());
    }
}
