//! What the fuzzer runs an input through. A target answers `Err` with what went wrong when the
//! code under test panicked (the language server: answered `InternalError`, or stopped).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId};
use modelc_db::{FileInput, ProjectInput, TestDb};
use modelc_diagnostics::FileId;
use salsa::Setter as _;
use serde_json::{Value, json};

use crate::rng::{Rng, hash};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Parse,
    Check,
    Fmt,
    Lsp,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::Parse, Kind::Check, Kind::Fmt, Kind::Lsp];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Parse => "parse",
            Kind::Check => "check",
            Kind::Fmt => "fmt",
            Kind::Lsp => "lsp",
        }
    }

    pub fn named(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    pub fn start(self) -> Box<dyn Target> {
        match self {
            Kind::Parse => Box::new(Parse),
            Kind::Check => Box::new(Check::new()),
            Kind::Fmt => Box::new(Fmt::default()),
            Kind::Lsp => Box::new(Lsp::start()),
        }
    }
}

pub trait Target {
    /// Runs one input: `Err` says how the code under test failed.
    fn run(&mut self, input: &[u8]) -> Result<(), String>;

    /// Counts worth reporting beside failures (the formatter's refusals, say).
    fn notes(&self) -> String {
        String::new()
    }

    /// Why the last input, which did not fail, is still worth keeping for a person to read (a
    /// guard that caught a bug before it did harm).
    fn curious(&self) -> Option<&'static str> {
        None
    }
}

/// The message of the last panic on any thread, kept by the hook [`quiet_panics`] installs.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Replaces the panic hook with one that records the message instead of printing it: panics
/// are what the fuzzer looks for, thousands of times a second.
pub fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let location = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        let payload = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        if let Ok(mut last) = LAST_PANIC.lock() {
            *last = Some(format!("panicked{location}: {payload}"));
        }
    }));
}

fn last_panic() -> String {
    LAST_PANIC.lock().ok().and_then(|mut l| l.take()).unwrap_or_else(|| "panicked".to_owned())
}

fn guarded<R>(run: impl FnOnce() -> R) -> Result<R, String> {
    catch_unwind(AssertUnwindSafe(run)).map_err(|_| last_panic())
}

fn text(input: &[u8]) -> String {
    String::from_utf8_lossy(input).into_owned()
}

struct Parse;

impl Target for Parse {
    fn run(&mut self, input: &[u8]) -> Result<(), String> {
        let text = text(input);
        guarded(|| drop(modelc_syntax::parse(FileId(0), &text)))
    }
}

#[derive(Default)]
struct Fmt {
    refused_as_changed: usize,
    last_refused: bool,
}

impl Target for Fmt {
    fn run(&mut self, input: &[u8]) -> Result<(), String> {
        let text = text(input);
        self.last_refused = false;
        let formatted = guarded(|| modelc_fmt::format(&text))?;
        match formatted {
            Ok(formatted) => {
                // The canonical layout is a fixed point.
                let again = guarded(|| modelc_fmt::format(&formatted))?;
                match again {
                    Ok(again) if again == formatted => Ok(()),
                    _ => Err("formatting the formatted text changed it or failed".to_owned()),
                }
            }
            // The formatter checks its own output and refuses to change a file's meaning.
            Err(modelc_fmt::Error::Changed) => {
                self.refused_as_changed += 1;
                self.last_refused = true;
                Ok(())
            }
            Err(_) => Ok(()),
        }
    }

    fn notes(&self) -> String {
        format!("{} refused (the layout would have changed the meaning)", self.refused_as_changed)
    }

    fn curious(&self) -> Option<&'static str> {
        // Each refusal is a formatter bug its own check caught.
        self.last_refused.then_some("fmt refused: its layout would have changed the meaning")
    }
}

/// The checker, incrementally, as the editor runs it: one database, the standard library
/// loaded once, the main file's text set to each input.
struct Check {
    db: TestDb,
    main: FileInput,
    project: ProjectInput,
}

impl Check {
    fn new() -> Check {
        let db = TestDb::default();
        let main = FileInput::new(&db, "main.cf".to_owned(), Arc::from(""), FileId(0));
        let mut modules = vec![("__config__".to_owned(), main)];
        for (i, file) in modelc_stdlib::FILES.iter().enumerate() {
            let input = FileInput::new(&db, file.display_name.to_owned(), Arc::from(file.text), FileId(i as u32 + 1));
            modules.push((file.namespace.to_owned(), input));
        }
        let project = ProjectInput::new(&db, modules, vec!["__config__".to_owned()]);
        Check { db, main, project }
    }
}

impl Target for Check {
    fn run(&mut self, input: &[u8]) -> Result<(), String> {
        let text: Arc<str> = Arc::from(text(input));
        self.main.set_text(&mut self.db).to(text);
        let (db, project) = (&self.db, self.project);
        let result = guarded(|| drop(modelc_sema::check_project(db, project)));
        if result.is_err() {
            // A panic may leave a query half-done: the next input starts clean.
            *self = Check::new();
        }
        result
    }
}

/// The language server on an in-memory connection. Each input opens a document with the
/// input's text, then sends edits and requests at positions derived from it (in and out of
/// range, inside characters), and closes it.
struct Lsp {
    connection: Connection,
    next_id: i32,
    root: std::path::PathBuf,
}

const REQUESTS: &[&str] = &[
    "textDocument/hover",
    "textDocument/completion",
    "textDocument/signatureHelp",
    "textDocument/definition",
    "textDocument/typeDefinition",
    "textDocument/references",
    "textDocument/documentHighlight",
    "textDocument/prepareRename",
    "textDocument/rename",
    "textDocument/documentSymbol",
    "textDocument/foldingRange",
    "textDocument/semanticTokens/full",
    "textDocument/formatting",
    "textDocument/codeAction",
    "workspace/symbol",
];

const SNIPPETS: &[&str] = &["", "x", "é", "😀", "\n", "\r\n", ".", "std::", "entity A:\nend\n", "(", "\"", "end"];

impl Lsp {
    fn start() -> Lsp {
        static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!("modelc-fuzz-lsp-{}-{n}", std::process::id()));
        let _ = std::fs::create_dir_all(&root);
        let (server_side, connection) = Connection::memory();
        std::thread::Builder::new()
            .name("language server".into())
            .spawn(move || {
                let _ = modelc_lsp::run(&server_side);
            })
            .expect("a thread for the server");
        let mut lsp = Lsp { connection, next_id: 0, root };
        let root_uri = lsp_types::Url::from_directory_path(&lsp.root).map(|u| u.to_string()).unwrap_or_default();
        let _ = lsp.request("initialize", json!({ "processId": null, "rootUri": root_uri, "capabilities": {} }));
        lsp.notify("initialized", json!({}));
        lsp
    }

    fn notify(&self, method: &str, params: Value) -> bool {
        self.connection.sender.send(Message::Notification(Notification::new(method.to_owned(), params))).is_ok()
    }

    /// Sends a request and waits for its answer: `Err` when it is `InternalError` or never comes.
    fn request(&mut self, method: &str, params: Value) -> Result<(), String> {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        let request = Request::new(id.clone(), method.to_owned(), params);
        if self.connection.sender.send(Message::Request(request)).is_err() {
            return Err("the server stopped".to_owned());
        }
        loop {
            match self.connection.receiver.recv_timeout(Duration::from_secs(30)) {
                Ok(Message::Response(response)) if response.id == id => {
                    return match response.error {
                        Some(error) if error.code == ErrorCode::InternalError as i32 => {
                            Err(format!("{method}: {} ({})", error.message, last_panic()))
                        }
                        _ => Ok(()),
                    };
                }
                Ok(Message::Request(request)) => {
                    // The server's own requests (registrations) are answered, as an editor does.
                    let answer = lsp_server::Response::new_ok(request.id, Value::Null);
                    let _ = self.connection.sender.send(Message::Response(answer));
                }
                Ok(_) => {}
                Err(_) => return Err(format!("{method}: no answer")),
            }
        }
    }
}

/// The longest document the language server target opens: it looks for failures in message
/// handling and position arithmetic, which small documents reach many times faster (the
/// scaling benchmark and the chain tests cover size).
const LSP_DOCUMENT: usize = 4 * 1024;

impl Target for Lsp {
    fn run(&mut self, input: &[u8]) -> Result<(), String> {
        let text = text(&input[..input.len().min(LSP_DOCUMENT)]);
        let mut rng = Rng::new(hash(input));
        let uri = lsp_types::Url::from_file_path(self.root.join("main.cf")).map(|u| u.to_string()).unwrap_or_default();
        let document = json!({ "uri": uri });
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "inmanta", "version": 1, "text": text } }),
        );
        let lines = text.lines().count() as u32 + 1;
        let position = |rng: &mut Rng| {
            let line = if rng.one_in(8) { lines + rng.below(3) as u32 } else { rng.below(lines as usize) as u32 };
            let character = if rng.one_in(4) { rng.below(400) } else { rng.below(40) };
            json!({ "line": line, "character": character })
        };
        let mut result = Ok(());
        for version in 2..2 + 1 + rng.below(6) as i32 {
            if rng.one_in(3) {
                let (start, end) = (position(&mut rng), position(&mut rng));
                let snippet = if rng.one_in(2) {
                    SNIPPETS[rng.below(SNIPPETS.len())].to_owned()
                } else {
                    text.chars().skip(rng.below(text.len() + 1)).take(rng.small(64)).collect()
                };
                let change = json!({ "range": { "start": start, "end": end }, "text": snippet });
                self.notify(
                    "textDocument/didChange",
                    json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [change] }),
                );
                continue;
            }
            let method = REQUESTS[rng.below(REQUESTS.len())];
            let at = position(&mut rng);
            let params = match method {
                "textDocument/documentSymbol" | "textDocument/foldingRange" | "textDocument/semanticTokens/full" => {
                    json!({ "textDocument": document })
                }
                "textDocument/formatting" => {
                    json!({ "textDocument": document, "options": { "tabSize": 4, "insertSpaces": true } })
                }
                "textDocument/codeAction" => json!({
                    "textDocument": document,
                    "range": { "start": at, "end": position(&mut rng) },
                    "context": { "diagnostics": [] }
                }),
                "textDocument/references" => json!({
                    "textDocument": document, "position": at, "context": { "includeDeclaration": true }
                }),
                "textDocument/rename" => json!({ "textDocument": document, "position": at, "newName": "renamed" }),
                "workspace/symbol" => json!({ "query": text.chars().take(rng.below(3)).collect::<String>() }),
                _ => json!({ "textDocument": document, "position": at }),
            };
            result = self.request(method, params);
            if result.is_err() {
                break;
            }
        }
        self.notify("textDocument/didClose", json!({ "textDocument": document }));
        if result.is_err() {
            // A server that failed once starts afresh, so the next input's failure is its own.
            *self = Lsp::start();
        }
        result
    }
}

impl Drop for Lsp {
    fn drop(&mut self) {
        let _ = self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
