//! The language server driven through its real message loop, in process: a client on the other
//! end of an in-memory connection sends what an editor sends and checks what comes back.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stderr, reason = "test code")]

use std::path::{Path, PathBuf};
use std::time::Duration;

use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use lsp_types::Url;
use serde_json::{Value, json};

struct Client {
    connection: Connection,
    server: Option<std::thread::JoinHandle<()>>,
    next_id: i32,
    /// The initialize response's result.
    initialized: Value,
}

impl Client {
    /// Starts a server for the workspace at `root`, with the client's capabilities.
    fn start(root: &Path, capabilities: Value) -> Client {
        let (server_side, connection) = Connection::memory();
        let server = std::thread::spawn(move || modelc_lsp::run(&server_side).unwrap());
        let mut client = Client { connection, server: Some(server), next_id: 0, initialized: Value::Null };
        let root_uri = Url::from_directory_path(root).unwrap();
        client.initialized = client
            .request("initialize", json!({ "processId": null, "rootUri": root_uri, "capabilities": capabilities }));
        client.notify("initialized", json!({}));
        client
    }

    fn notify(&self, method: &str, params: Value) {
        self.connection.sender.send(Message::Notification(Notification::new(method.to_owned(), params))).unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.connection.sender.send(Message::Request(Request::new(id.clone(), method.to_owned(), params))).unwrap();
        loop {
            match self.receive() {
                Message::Response(response) if response.id == id => {
                    assert!(response.error.is_none(), "{method}: {:?}", response.error);
                    return response.result.unwrap_or(Value::Null);
                }
                _ => {}
            }
        }
    }

    /// The next message from the server; requests it makes (registrations) are answered.
    fn receive(&self) -> Message {
        let message = self.connection.receiver.recv_timeout(Duration::from_secs(20)).expect("the server answers");
        if let Message::Request(request) = &message {
            let response = Response::new_ok(request.id.clone(), Value::Null);
            self.connection.sender.send(Message::Response(response)).unwrap();
        }
        message
    }

    /// The next diagnostics published for `uri`.
    fn diagnostics(&self, uri: &Url) -> Vec<Value> {
        loop {
            if let Message::Notification(n) = self.receive()
                && n.method == "textDocument/publishDiagnostics"
                && n.params["uri"] == json!(uri)
            {
                return n.params["diagnostics"].as_array().unwrap().clone();
            }
        }
    }

    fn open(&self, path: &Path, text: &str) -> Url {
        let uri = Url::from_file_path(path).unwrap();
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "inmanta", "version": 1, "text": text } }),
        );
        uri
    }

    fn change(&self, uri: &Url, version: i32, changes: Value) {
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": changes }),
        );
    }

    fn shutdown(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        self.server.take().unwrap().join().unwrap();
    }
}

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("modelc-lsp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A project: `main.cf` importing module `web` from `libs/`.
fn project(name: &str, main: &str, web: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::write(dir.join("project.yml"), "name: test\nmodulepath: libs\n").unwrap();
    std::fs::write(dir.join("main.cf"), main).unwrap();
    std::fs::create_dir_all(dir.join("libs/web/model")).unwrap();
    std::fs::write(dir.join("libs/web/model/_init.cf"), web).unwrap();
    dir
}

fn codes(diagnostics: &[Value]) -> Vec<&str> {
    diagnostics.iter().map(|d| d["code"].as_str().unwrap()).collect()
}

const WEB: &str = "entity Server:\n    string name\nend\nimplement Server using std::none\n";

#[test]
fn diagnostics_follow_every_edit_and_clear_when_fixed() {
    let dir = project("as-you-type", "import web\nweb::Server(name=\"a\")\n", WEB);
    let client = Client::start(&dir, json!({}));
    let uri = client.open(&dir.join("main.cf"), "import web\nweb::Server(name=\"a\")\n");
    assert_eq!(client.diagnostics(&uri), Vec::<Value>::new());

    // Typing a mistake: an unknown variable on a new line (an incremental change).
    client.change(
        &uri,
        2,
        json!([{ "range": { "start": { "line": 2, "character": 0 }, "end": { "line": 2, "character": 0 } },
                 "text": "x = nosuch\n" }]),
    );
    let diagnostics = client.diagnostics(&uri);
    assert_eq!(codes(&diagnostics).len(), 1, "{diagnostics:?}");
    let d = &diagnostics[0];
    assert_eq!(d["range"], json!({ "start": { "line": 2, "character": 4 }, "end": { "line": 2, "character": 10 } }));
    assert_eq!(d["source"], "modelc");
    assert!(d["message"].as_str().unwrap().contains("nosuch"), "{d}");

    // Fixing it: the diagnostics clear.
    client.change(
        &uri,
        3,
        json!([{ "range": { "start": { "line": 2, "character": 4 }, "end": { "line": 2, "character": 10 } },
                 "text": "1" }]),
    );
    assert_eq!(client.diagnostics(&uri), Vec::<Value>::new());
    client.shutdown();
}

#[test]
fn an_edit_in_a_module_shows_in_the_files_that_use_it() {
    let dir = project("modules", "import web\nweb::Server(name=\"a\")\n", WEB);
    let client = Client::start(&dir, json!({}));
    let main = client.open(&dir.join("main.cf"), "import web\nweb::Server(name=\"a\")\n");
    assert_eq!(client.diagnostics(&main), Vec::<Value>::new());
    let web = client.open(&dir.join("libs/web/model/_init.cf"), WEB);
    // Renaming the attribute in the module (not saved): main.cf's constructor is now wrong.
    client.change(
        &web,
        2,
        json!([{ "range": { "start": { "line": 1, "character": 11 }, "end": { "line": 1, "character": 15 } },
                 "text": "title" }]),
    );
    let diagnostics = client.diagnostics(&main);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert!(diagnostics[0]["message"].as_str().unwrap().contains("no attribute `name`"), "{diagnostics:?}");
    // Closing the module without saving: the file on disk counts again.
    client.notify("textDocument/didClose", json!({ "textDocument": { "uri": web } }));
    assert_eq!(client.diagnostics(&main), Vec::<Value>::new());
    client.shutdown();
}

#[test]
fn positions_count_utf16_units_and_lines_end_at_crlf() {
    let dir = scratch("utf16");
    let path = dir.join("loose.cf");
    let client = Client::start(&dir, json!({}));
    assert_eq!(client.initialized["capabilities"]["positionEncoding"], "utf-16");
    let uri = client.open(&path, "s = \"é😀\"\r\ny = \"😀\" + nosuch\r\n");
    let diagnostics = client.diagnostics(&uri);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    // `y = "😀" + ` is 11 UTF-16 units (the emoji is 2).
    assert_eq!(
        diagnostics[0]["range"],
        json!({ "start": { "line": 1, "character": 11 }, "end": { "line": 1, "character": 17 } })
    );
    // An edit after the emoji, addressed in UTF-16 units, lands where the editor means it.
    client.change(
        &uri,
        2,
        json!([{ "range": { "start": { "line": 1, "character": 11 }, "end": { "line": 1, "character": 17 } },
                 "text": "s" }]),
    );
    assert_eq!(client.diagnostics(&uri), Vec::<Value>::new());
    client.shutdown();
}

#[test]
fn utf8_positions_when_the_client_offers_them() {
    let dir = scratch("utf8");
    let client = Client::start(&dir, json!({ "general": { "positionEncodings": ["utf-8", "utf-16"] } }));
    assert_eq!(client.initialized["capabilities"]["positionEncoding"], "utf-8");
    let uri = client.open(&dir.join("loose.cf"), "y = \"😀\" + nosuch\n");
    let diagnostics = client.diagnostics(&uri);
    // `y = "😀" + ` is 13 bytes.
    assert_eq!(diagnostics[0]["range"]["start"], json!({ "line": 0, "character": 13 }));
    client.shutdown();
}

#[test]
fn related_locations_point_into_their_files() {
    let dir = project(
        "related",
        "import web\nweb::Server(name=\"a\")\n",
        "entity Server:\n    string name\n    string name\nend\nimplement Server using std::none\n",
    );
    let client = Client::start(&dir, json!({}));
    let web = client.open(
        &dir.join("libs/web/model/_init.cf"),
        &std::fs::read_to_string(dir.join("libs/web/model/_init.cf")).unwrap(),
    );
    let diagnostics = client.diagnostics(&web);
    let duplicate = diagnostics.iter().find(|d| d["relatedInformation"].is_array()).expect("a related location");
    let related = &duplicate["relatedInformation"][0]["location"];
    assert_eq!(related["uri"], json!(web));
    assert_eq!(related["range"]["start"]["line"], 1);
    client.shutdown();
}

#[test]
fn files_changed_on_disk_are_read_again() {
    let dir = project("watched", "import web\nweb::Server(name=\"a\")\n", WEB);
    std::fs::remove_dir_all(dir.join("libs/web")).unwrap();
    let capabilities = json!({ "workspace": { "didChangeWatchedFiles": { "dynamicRegistration": true } } });
    let client = Client::start(&dir, capabilities);
    let main = client.open(&dir.join("main.cf"), "import web\nweb::Server(name=\"a\")\n");
    assert!(!client.diagnostics(&main).is_empty(), "module web is missing");
    // The module appears on disk; the editor reports it.
    std::fs::create_dir_all(dir.join("libs/web/model")).unwrap();
    std::fs::write(dir.join("libs/web/model/_init.cf"), WEB).unwrap();
    let created = Url::from_file_path(dir.join("libs/web/model/_init.cf")).unwrap();
    client.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": created, "type": 1 }] }));
    assert_eq!(client.diagnostics(&main), Vec::<Value>::new());
    client.shutdown();
}

#[test]
fn requests_it_does_not_answer_get_an_error_not_silence() {
    let dir = scratch("unknown");
    let mut client = Client::start(&dir, json!({}));
    client.next_id += 1;
    let id = RequestId::from(client.next_id);
    client
        .connection
        .sender
        .send(Message::Request(Request::new(id.clone(), "textDocument/nosuch".to_owned(), json!({}))))
        .unwrap();
    loop {
        if let Message::Response(response) = client.receive()
            && response.id == id
        {
            assert_eq!(response.error.unwrap().code, lsp_server::ErrorCode::MethodNotFound as i32);
            break;
        }
    }
    client.shutdown();
}
