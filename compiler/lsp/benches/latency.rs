//! The language server's latency on a generated project of about 50,000 lines: 100 modules of
//! about 500 lines, each using the entity `base::Host`, and a `main.cf` importing them all. Measured
//! in process, through the server's real message loop:
//!
//! * an edit inside one implementation body, from `didChange` to the `publishDiagnostics` of
//!   the edited file (each edit adds or removes an error, so every edit publishes);
//! * renaming `base::Host`, used in 100 files, from the request to the answer;
//! * completion after `self.` typed in an implementation body;
//! * go to definition and hover on a use of it;
//! * how soon a running execution stops once cancelled;
//! * declaration edits: one character of `base::Host` (its attribute `name` renamed, which
//!   every module's construction of a host and base's index use), from `didChange` to the
//!   edited file's diagnostics and to those of every open file it changes (base and ten
//!   modules are open); a line added to `base::Host` (an attribute of an unknown type), to the
//!   edited file's diagnostics;
//! * an edit sent while an execution run is starting or running, to its diagnostics.
//!
//! Each timing is reported as min / median / max.
//!
//! Run with `cargo bench -p modelc-lsp --bench latency`.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stdout, reason = "benchmark code")]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The allocator of the `modelc` binary, which runs the server (`compiler/cli/src/main.rs`), so
/// that what is measured is what users get.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use lsp_server::{Connection, Message, Notification, Request, RequestId};
use lsp_types::Url;
use serde_json::{Value, json};

const MODULES: usize = 100;
const ENTITIES_PER_MODULE: usize = 28;

fn module_text(m: usize) -> String {
    let mut text = String::from("import base\n\n");
    for e in 0..ENTITIES_PER_MODULE {
        text.push_str(&format!(
            "entity Service{e}:\n    \"\"\"Service {e} of module {m}.\"\"\"\n    string name\n    int port = {port}\nend\n\n\
             Service{e}.host [1] -- base::Host\n\n\
             implementation deploy{e} for Service{e}:\n    x = name\n    y = port + 1\n    label = \"{{{{x}}}}-{{{{y}}}}\"\n    \
             std::print(label)\nend\n\n\
             implement Service{e} using deploy{e}\n\n",
            port = 8000 + e
        ));
    }
    text.push_str("h = base::Host(name=\"host\")\n");
    for e in 0..ENTITIES_PER_MODULE {
        text.push_str(&format!("s{e} = Service{e}(name=\"s{e}\", host=h)\n"));
    }
    text
}

fn generate(root: &Path) -> usize {
    let _ = std::fs::remove_dir_all(root);
    std::fs::create_dir_all(root.join("libs/base/model")).unwrap();
    std::fs::write(root.join("project.yml"), "name: bench\nmodulepath: libs\n").unwrap();
    std::fs::write(
        root.join("libs/base/model/_init.cf"),
        "entity Host:\n    string name\nend\nindex Host(name)\nimplement Host using std::none\n",
    )
    .unwrap();
    let mut lines = 5;
    let mut main = String::new();
    for m in 0..MODULES {
        let dir = root.join(format!("libs/m{m}/model"));
        std::fs::create_dir_all(&dir).unwrap();
        let text = module_text(m);
        lines += text.lines().count();
        std::fs::write(dir.join("_init.cf"), text).unwrap();
        main.push_str(&format!("import m{m}\n"));
    }
    std::fs::write(root.join("main.cf"), &main).unwrap();
    lines + MODULES
}

struct Client {
    connection: Connection,
    next: i32,
}

impl Client {
    fn notify(&self, method: &str, params: Value) {
        self.connection.sender.send(Message::Notification(Notification::new(method.to_owned(), params))).unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = RequestId::from(self.next);
        self.connection.sender.send(Message::Request(Request::new(id.clone(), method.to_owned(), params))).unwrap();
        loop {
            if let Message::Response(r) = self.connection.receiver.recv_timeout(Duration::from_secs(60)).unwrap()
                && r.id == id
            {
                return r.result.unwrap_or(Value::Null);
            }
        }
    }

    /// Waits until each of `uris` has been published: how many diagnostics each got, and
    /// when (from `start`).
    fn diagnostics_of(&self, uris: &[Url], start: Instant) -> Vec<(usize, Duration)> {
        let mut out: Vec<Option<(usize, Duration)>> = vec![None; uris.len()];
        while out.iter().any(Option::is_none) {
            if let Message::Notification(n) = self.connection.receiver.recv_timeout(Duration::from_secs(60)).unwrap()
                && n.method == "textDocument/publishDiagnostics"
                && let Some(i) = uris.iter().position(|u| n.params["uri"] == json!(u))
            {
                out[i] = Some((n.params["diagnostics"].as_array().unwrap().len(), start.elapsed()));
            }
        }
        out.into_iter().map(Option::unwrap).collect()
    }

    fn open(&self, path: &Path) -> Url {
        let uri = Url::from_file_path(path).unwrap();
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "inmanta", "version": 1,
                                      "text": std::fs::read_to_string(path).unwrap() } }),
        );
        uri
    }

    /// Replaces `old` at (`line`, `column`) with `new`.
    fn change(&self, uri: &Url, version: i32, line: usize, column: usize, old: &str, new: &str) {
        let change = json!([{ "range": { "start": { "line": line, "character": column },
                                         "end": { "line": line, "character": column + old.len() } },
                              "text": new }]);
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": change }),
        );
    }

    fn diagnostics(&self, uri: &Url) -> usize {
        loop {
            if let Message::Notification(n) = self.connection.receiver.recv_timeout(Duration::from_secs(60)).unwrap()
                && n.method == "textDocument/publishDiagnostics"
                && n.params["uri"] == json!(uri)
            {
                return n.params["diagnostics"].as_array().unwrap().len();
            }
        }
    }
}

fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e3
}

/// `min / median / max` in milliseconds.
fn spread(mut times: Vec<Duration>) -> String {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    format!("{:.1} / {:.1} / {:.1} ms", ms(times[0]), ms(times[times.len() / 2]), ms(times[times.len() - 1]))
}

fn main() {
    let root: PathBuf = std::env::temp_dir().join(format!("modelc-lsp-latency-{}", std::process::id()));
    let lines = generate(&root);
    let (server, connection) = Connection::memory();
    let thread = std::thread::spawn(move || modelc_lsp::run(&server).unwrap());
    let mut client = Client { connection, next: 0 };
    let root_uri = Url::from_directory_path(&root).unwrap();
    let started = Instant::now();
    client.request("initialize", json!({ "processId": null, "rootUri": root_uri, "capabilities": {} }));
    client.notify("initialized", json!({}));
    let module = root.join("libs/m0/model/_init.cf");
    let text = std::fs::read_to_string(&module).unwrap();
    let uri = Url::from_file_path(&module).unwrap();
    let main_uri = Url::from_file_path(root.join("main.cf")).unwrap();
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": main_uri, "languageId": "inmanta", "version": 1,
                                  "text": std::fs::read_to_string(root.join("main.cf")).unwrap() } }),
    );
    client.diagnostics(&main_uri);
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "inmanta", "version": 1, "text": text } }),
    );
    client.diagnostics(&uri);
    let first = started.elapsed();

    // Edits inside the body of `deploy3`: `y = port + 1` becomes `y = nosuch + 1` and back.
    let line = text.lines().position(|l| l.contains("implementation deploy3 ")).unwrap() + 2;
    let mut edit_times = Vec::new();
    for round in 0..40 {
        let replacement = if round % 2 == 0 { "nosuch" } else { "port" };
        let old_len = if round % 2 == 0 { 4 } else { 6 };
        let change = json!([{ "range": { "start": { "line": line, "character": 8 },
                                         "end": { "line": line, "character": 8 + old_len } },
                              "text": replacement }]);
        let start = Instant::now();
        client.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": round + 2 }, "contentChanges": change }),
        );
        let count = client.diagnostics(&uri);
        edit_times.push(start.elapsed());
        assert_eq!(count, usize::from(round % 2 == 0), "round {round}");
    }
    // The model is clean again here (an even number of edits).
    let declarations = declaration_edits(&client, &root, &uri);
    let during = edits_during_execution(&client, &uri, line);

    // `base::Host` in `Service0.host [1] -- base::Host`.
    let relation = text.lines().position(|l| l.contains("-- base::Host")).unwrap();
    let column = text.lines().nth(relation).unwrap().find("Host").unwrap() + 1;
    let position = json!({ "line": relation, "character": column });
    let mut rename_times = Vec::new();
    let mut edits = 0;
    for _ in 0..10 {
        let start = Instant::now();
        let answer = client.request(
            "textDocument/rename",
            json!({ "textDocument": { "uri": uri }, "position": position, "newName": "Machine" }),
        );
        rename_times.push(start.elapsed());
        edits = answer["changes"].as_object().map_or(0, |c| c.values().map(|v| v.as_array().unwrap().len()).sum());
    }
    // Completion after `self.` typed in the body of `deploy5`: each round types the `.` again
    // (a change), then asks; the time is the request's, lowering of the changed file included.
    let body = text.lines().position(|l| l.contains("implementation deploy5 ")).unwrap() + 1;
    let mut completion_times = Vec::new();
    let mut members = 0;
    for round in 0..20 {
        // The first round types the line; the next ones indent it by one space and back, so
        // the file changes (and is lowered again) every time.
        let (range, new, column) = match round {
            0 => (
                json!({ "start": { "line": body, "character": 0 }, "end": { "line": body, "character": 0 } }),
                "    self.\n",
                9,
            ),
            r if r % 2 == 1 => {
                (json!({ "start": { "line": body, "character": 0 }, "end": { "line": body, "character": 0 } }), " ", 10)
            }
            _ => (json!({ "start": { "line": body, "character": 0 }, "end": { "line": body, "character": 1 } }), "", 9),
        };
        client.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": 100 + round }, "contentChanges": [{ "range": range, "text": new }] }),
        );
        let start = Instant::now();
        let answer = client.request(
            "textDocument/completion",
            json!({ "textDocument": { "uri": uri }, "position": { "line": body, "character": column } }),
        );
        completion_times.push(start.elapsed());
        members = answer.as_array().map_or(0, Vec::len);
    }
    assert!(members >= 2, "completion after self. offered {members} items");
    let mut definition_times = Vec::new();
    let mut hover_times = Vec::new();
    for _ in 0..20 {
        let params = json!({ "textDocument": { "uri": uri }, "position": position });
        let start = Instant::now();
        client.request("textDocument/definition", params.clone());
        definition_times.push(start.elapsed());
        let start = Instant::now();
        client.request("textDocument/hover", params);
        hover_times.push(start.elapsed());
    }
    client.request("shutdown", Value::Null);
    client.notify("exit", Value::Null);
    thread.join().unwrap();
    let _ = std::fs::remove_dir_all(&root);

    let cancel = cancellation();
    println!("project: {lines} lines in {} files", MODULES + 2);
    println!("opening main.cf and one module, first diagnostics: {:.1} ms", first.as_secs_f64() * 1e3);
    println!("edit inside an implementation body → its diagnostics: median {:.2} ms", median(edit_times));
    println!("rename base::Host ({edits} edits in {MODULES} files): median {:.2} ms", median(rename_times));
    println!(
        "go to definition: median {:.2} ms; hover: median {:.2} ms",
        median(definition_times),
        median(hover_times)
    );
    println!("completion after `self.` ({members} items): median {:.2} ms", median(completion_times));
    println!("cancelling a running execution (10,000 networks): stopped {cancel:.2} ms after the flag (median)");
    println!(
        "declaration edit, one character of base::Host → the edited file's diagnostics: {}",
        declarations.character
    );
    println!(
        "declaration edit, one character of base::Host → every changed open file's diagnostics (11 files): {}",
        declarations.affected
    );
    println!("declaration edit, a line added to base::Host → the edited file's diagnostics: {}", declarations.line);
    println!("edit while an execution starts or runs → its diagnostics: {during}");
}

struct DeclarationEdits {
    character: String,
    affected: String,
    line: String,
}

/// Edits of `base::Host`, with base and ten modules open.
fn declaration_edits(client: &Client, root: &Path, m0: &Url) -> DeclarationEdits {
    let base = client.open(&root.join("libs/base/model/_init.cf"));
    client.diagnostics(&base);
    let mut open = vec![base.clone(), m0.clone()];
    for m in 1..10 {
        let uri = client.open(&root.join(format!("libs/m{m}/model/_init.cf")));
        client.diagnostics(&uri);
        open.push(uri);
    }
    // `    string name` (line 1) ⇄ `    string nam`: base's index and every module's
    // `base::Host(name=…)` then name an attribute Host does not have.
    let (mut edited, mut affected) = (Vec::new(), Vec::new());
    for round in 0..20 {
        let (old, new) = if round % 2 == 0 { ("name", "nam") } else { ("nam", "name") };
        let start = Instant::now();
        client.change(&base, 1000 + round, 1, 11, old, new);
        let published = client.diagnostics_of(&open, start);
        assert_eq!(published[0].0 > 0, round % 2 == 0, "round {round}: base's diagnostics");
        assert_eq!(published[1].0 > 0, round % 2 == 0, "round {round}: m0's diagnostics");
        edited.push(published[0].1);
        affected.push(published.iter().map(|(_, at)| *at).max().unwrap());
    }
    // A line `    strin zone` added to Host (after `string name`) and removed again.
    let mut line = Vec::new();
    for round in 0..20 {
        let start = Instant::now();
        if round % 2 == 0 {
            client.change(&base, 2000 + round, 2, 0, "", "    strin zone\n");
        } else {
            let change = json!([{ "range": { "start": { "line": 2, "character": 0 }, "end": { "line": 3, "character": 0 } },
                                  "text": "" }]);
            client.notify(
                "textDocument/didChange",
                json!({ "textDocument": { "uri": base, "version": 2000 + round }, "contentChanges": change }),
            );
        }
        let count = client.diagnostics(&base);
        line.push(start.elapsed());
        assert_eq!(count > 0, round % 2 == 0, "round {round}: base's diagnostics");
    }
    DeclarationEdits { character: spread(edited), affected: spread(affected), line: spread(line) }
}

/// Body edits in m0 (`y = port + 1` ⇄ `y = nosuch + 1` in `deploy3`) sent at different moments
/// of the execution run that follows a clean check: only the edits that add the error, each
/// sent while a run is starting or running, are timed.
fn edits_during_execution(client: &Client, m0: &Url, line: usize) -> String {
    let mut times = Vec::new();
    for round in 0..12 {
        // The model is clean: a run starts after the pause; the edit comes 10–120 ms into it.
        std::thread::sleep(EXECUTION_PAUSE + Duration::from_millis(10 + 10 * round));
        let start = Instant::now();
        client.change(m0, 3000 + 2 * i32::try_from(round).unwrap(), line, 8, "port", "nosuch");
        assert_eq!(client.diagnostics(m0), 1);
        times.push(start.elapsed());
        client.change(m0, 3001 + 2 * i32::try_from(round).unwrap(), line, 8, "nosuch", "port");
        assert_eq!(client.diagnostics(m0), 0);
    }
    spread(times)
}

/// How long the server waits after typing stops before it executes the model (its
/// `execution::PAUSE`).
const EXECUTION_PAUSE: Duration = Duration::from_millis(300);

/// From setting the cancel flag of an execution in progress to the run's end.
fn cancellation() -> f64 {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let text = catalogue(10_000);
    let mut times = Vec::new();
    for _ in 0..5 {
        let db = modelc_driver::RootDatabase::default();
        let mut files = modelc_diagnostics::SourceFiles::new();
        files.add("main.cf", text.clone());
        for file in modelc_stdlib::FILES {
            files.add(file.display_name, file.text);
        }
        let inputs = db.add_files(&files);
        let mut modules = vec![("__config__".to_owned(), inputs[0])];
        modules.extend(modelc_stdlib::FILES.iter().zip(&inputs[1..]).map(|(f, i)| (f.namespace.to_owned(), *i)));
        let project = modelc_db::ProjectInput::new(&db, modules, vec!["__config__".to_owned()]);
        // Checked and lowered first, as the server has by the time it executes.
        let _ = modelc_sema::check_project(&db, project);
        let flag = Arc::new(AtomicBool::new(false));
        let world = modelc_exec::World { cancel: Some(Arc::clone(&flag)), ..modelc_exec::World::default() };
        // Lowered first too: the server's check has lowered the open files by then.
        for file in modelc_sema::loaded_modules(&db, project).files.values() {
            let _ = modelc_sema::hir::file_hir(&db, project, *file);
        }
        // The worker has its own handle on the database, as the server's does.
        let handle = db.clone();
        let run = std::thread::spawn(move || modelc_driver::execute(&handle, project, world).cancelled);
        std::thread::sleep(Duration::from_millis(30));
        let start = Instant::now();
        flag.store(true, Ordering::Relaxed);
        let cancelled = run.join().unwrap();
        times.push(start.elapsed());
        assert!(cancelled, "the run ended before it was cancelled");
    }
    median(times)
}

/// Networks of five hosts, like the compile benchmark's catalogue.
fn catalogue(networks: usize) -> String {
    let mut text = String::from(
        "entity Network:\n    string name\nend\nentity Host:\n    string name\n    string ip\nend\n\
         Host.network [1] -- Network.hosts [0:]\nindex Network(name)\nindex Host(name)\n\
         implement Network using std::none\nimplement Host using std::none\n",
    );
    for n in 0..networks {
        text.push_str(&format!("net{n} = Network(name=\"net{n}\")\n"));
        for h in 0..5 {
            text.push_str(&format!("Host(name=\"h{n}-{h}\", ip=\"10.{}.{}.{h}\", network=net{n})\n", n / 256, n % 256));
        }
    }
    text
}
