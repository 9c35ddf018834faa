//! `modelc lsp` as an editor starts it: a child process spoken to in JSON-RPC over its stdin
//! and stdout, with the protocol's `Content-Length` framing.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_modelc"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        // A server that stops answering fails the test instead of hanging it.
        let pid = child.id().to_string();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(60));
            let _ = Command::new("kill").arg(&pid).status();
        });
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Server { child, stdin, stdout }
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn receive(&mut self) -> Value {
        let mut length = 0;
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server closed its output");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = n.parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        self.stdout.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    /// Reads until a message satisfies `wanted`.
    fn receive_until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let message = self.receive();
            if wanted(&message) {
                return message;
            }
        }
    }
}

#[test]
fn an_editor_session_over_stdio() {
    let dir = std::env::temp_dir().join(format!("modelc-lsp-stdio-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("main.cf");
    let uri = format!("file://{}", file.display());
    let mut server = Server::start();

    server.send(json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
                        "params": { "processId": null, "rootUri": null, "capabilities": {} } }));
    let initialized = server.receive_until(|m| m["id"] == 1);
    assert_eq!(initialized["result"]["serverInfo"]["name"], "modelc");
    server.send(json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }));

    // A file with an error: its diagnostics arrive without saving anything.
    server.send(json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": { "uri": uri, "languageId": "inmanta", "version": 1, "text": "x = = 1\n" } } }));
    let published = server.receive_until(|m| m["method"] == "textDocument/publishDiagnostics");
    assert_eq!(published["params"]["uri"], uri);
    let diagnostics = published["params"]["diagnostics"].as_array().unwrap();
    assert!(!diagnostics.is_empty(), "{published}");
    assert_eq!(diagnostics[0]["severity"], 1);

    // Fixed: none.
    server.send(json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": { "uri": uri, "version": 2 },
        "contentChanges": [{ "text": "x = 1\n" }] } }));
    let published = server.receive_until(|m| m["method"] == "textDocument/publishDiagnostics");
    assert_eq!(published["params"]["diagnostics"], json!([]));
    assert_eq!(published["params"]["version"], 2);

    // A clean shutdown: the answer to `shutdown`, then `exit` ends the process with status 0.
    server.send(json!({ "jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": null }));
    let answer = server.receive_until(|m| m["id"] == 2);
    assert!(answer.get("error").is_none(), "{answer}");
    server.send(json!({ "jsonrpc": "2.0", "method": "exit", "params": null }));
    let status = server.child.wait().unwrap();
    assert!(status.success(), "{status}");
    // Nothing was written next to the model.
    let entries: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(entries.is_empty(), "the server wrote {entries:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

impl Server {
    /// Sends `body` as one framed message, whatever bytes it holds.
    fn send_raw(&mut self, body: &[u8]) {
        write!(self.stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        self.stdin.write_all(body).unwrap();
        self.stdin.flush().unwrap();
    }
}

/// Issue 30: a malformed message ended the session (exit 2). Each gets its JSON-RPC error
/// answer and the session goes on: a lone surrogate escape in a document's text, truncated
/// JSON, a body that is not UTF-8, and JSON that is not a message.
#[test]
fn malformed_messages_are_answered_and_the_session_goes_on() {
    let mut server = Server::start();
    server.send(json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
                        "params": { "processId": null, "rootUri": null, "capabilities": {} } }));
    server.receive_until(|m| m["id"] == 1);
    server.send(json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }));
    let malformed: [&[u8]; 4] = [
        br#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///tmp/x.cf","languageId":"inmanta","version":1,"text":"\ud800"}}}"#,
        br#"{"jsonrpc":"2.0","id":5,"method":"textDocument/hov"#,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"initialized\",\"params\":{\"x\":\"\xc3\x28\"}}",
        br#"[1, 2, 3]"#,
    ];
    for (n, body) in malformed.iter().enumerate() {
        server.send_raw(body);
        let answer = server.receive_until(|m| m.get("error").is_some());
        let expected = if n == 3 { -32600 } else { -32700 };
        assert_eq!(answer["error"]["code"], expected, "message {n}: {answer}");
        assert!(answer["id"].is_null(), "{answer}");
    }
    // Still serving.
    server.send(json!({ "jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": null }));
    let answer = server.receive_until(|m| m["id"] == 2);
    assert!(answer.get("error").is_none(), "{answer}");
    server.send(json!({ "jsonrpc": "2.0", "method": "exit", "params": null }));
    let status = server.child.wait().unwrap();
    assert!(status.success(), "{status}");
}
