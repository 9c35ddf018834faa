//! The harness of the language server's tests: a client on the other end of an in-memory
//! connection that sends what an editor sends, and scratch projects on disk.
#![allow(dead_code, reason = "each test file uses part of the harness")]

use std::path::{Path, PathBuf};
use std::time::Duration;

use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use lsp_types::Url;
use serde_json::{Value, json};

pub(crate) struct Client {
    pub(crate) connection: Connection,
    server: Option<std::thread::JoinHandle<()>>,
    pub(crate) next_id: i32,
    /// The initialize response's result.
    pub(crate) initialized: Value,
}

impl Client {
    /// Starts a server for the workspace at `root`, with the client's capabilities.
    pub(crate) fn start(root: &Path, capabilities: Value) -> Client {
        let (server_side, connection) = Connection::memory();
        let server = std::thread::spawn(move || modelc_lsp::run(&server_side).unwrap());
        let mut client = Client { connection, server: Some(server), next_id: 0, initialized: Value::Null };
        let root_uri = Url::from_directory_path(root).unwrap();
        client.initialized = client
            .request("initialize", json!({ "processId": null, "rootUri": root_uri, "capabilities": capabilities }));
        client.notify("initialized", json!({}));
        client
    }

    pub(crate) fn notify(&self, method: &str, params: Value) {
        self.connection.sender.send(Message::Notification(Notification::new(method.to_owned(), params))).unwrap();
    }

    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
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
    pub(crate) fn receive(&self) -> Message {
        let message = self.connection.receiver.recv_timeout(Duration::from_secs(20)).expect("the server answers");
        if let Message::Request(request) = &message {
            let response = Response::new_ok(request.id.clone(), Value::Null);
            self.connection.sender.send(Message::Response(response)).unwrap();
        }
        message
    }

    /// The next diagnostics published for `uri`.
    pub(crate) fn diagnostics(&self, uri: &Url) -> Vec<Value> {
        loop {
            if let Message::Notification(n) = self.receive()
                && n.method == "textDocument/publishDiagnostics"
                && n.params["uri"] == json!(uri)
            {
                return n.params["diagnostics"].as_array().unwrap().clone();
            }
        }
    }

    pub(crate) fn open(&self, path: &Path, text: &str) -> Url {
        let uri = Url::from_file_path(path).unwrap();
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "inmanta", "version": 1, "text": text } }),
        );
        uri
    }

    pub(crate) fn change(&self, uri: &Url, version: i32, changes: Value) {
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": changes }),
        );
    }

    pub(crate) fn shutdown(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        self.server.take().unwrap().join().unwrap();
    }
}

/// A fresh directory for one test.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("modelc-lsp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A project: `main.cf` importing module `web` from `libs/`.
pub(crate) fn project(name: &str, main: &str, web: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::write(dir.join("project.yml"), "name: test\nmodulepath: libs\n").unwrap();
    std::fs::write(dir.join("main.cf"), main).unwrap();
    std::fs::create_dir_all(dir.join("libs/web/model")).unwrap();
    std::fs::write(dir.join("libs/web/model/_init.cf"), web).unwrap();
    dir
}
