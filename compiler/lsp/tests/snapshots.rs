//! One editing session on a two-module project with a broken line, each feature's answer kept
//! as a snapshot: what an editor receives, paths shown relative to the project.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

mod support;

use serde_json::{Value, json};
use support::{Client, project};

const MAIN: &str = "import web\n\
s = web::Server(name=\"a\")\n\
t = web::Sever(name=\"b\")\n\
std::print(s.name)\n\
x = = \n";

const WEB: &str = "\"\"\"Web servers.\"\"\"\n\
entity Server:\n    \"\"\"A web server.\"\"\"\n    string name\n    int port = 80\nend\n\n\
Server.hosts [0:] -- Host.server [1]\n\n\
entity Host:\n    string address\nend\n\n\
implementation listen for Server:\n    label = \"{{name}}:{{port}}\"\n    std::print(label)\nend\n\n\
implement Server using listen\nimplement Host using std::none\n";

/// A JSON answer as pretty text, with the project's directory written `$ROOT` and object keys
/// sorted (a workspace edit's files come from a hash map).
fn show(value: &Value, root: &str) -> String {
    serde_json::to_string_pretty(&sorted(value)).unwrap().replace(root, "$ROOT")
}

fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&map[k]))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn position(line: u32, character: u32) -> Value {
    json!({ "line": line, "character": character })
}

#[test]
fn an_editing_session() {
    let dir = project("snapshots", MAIN, WEB);
    let root = lsp_types::Url::from_directory_path(&dir).unwrap().to_string();
    let root = root.trim_end_matches('/');
    let mut client = Client::start(&dir, json!({}));
    let main = client.open(&dir.join("main.cf"), MAIN);
    let web = client.open(&dir.join("libs/web/model/_init.cf"), WEB);
    let ask = |client: &mut Client, method: &str, uri: &lsp_types::Url, at: Value| {
        let mut params = json!({ "textDocument": { "uri": uri }, "position": at });
        if method == "textDocument/references" {
            params["context"] = json!({ "includeDeclaration": true });
        }
        client.request(method, params)
    };

    insta::assert_snapshot!("diagnostics of broken code", show(&json!(client.diagnostics(&main)), root));
    insta::assert_snapshot!(
        "hover on an entity",
        show(&ask(&mut client, "textDocument/hover", &main, position(1, 10)), root)
    );
    insta::assert_snapshot!(
        "definition of a keyword argument",
        show(&ask(&mut client, "textDocument/definition", &main, position(1, 17)), root)
    );
    insta::assert_snapshot!(
        "references of an attribute",
        show(&ask(&mut client, "textDocument/references", &web, position(3, 12)), root)
    );
    insta::assert_snapshot!(
        "completion after a dot",
        show(&ask(&mut client, "textDocument/completion", &main, position(3, 13)), root)
    );
    insta::assert_snapshot!(
        "completion in a constructor",
        show(&ask(&mut client, "textDocument/completion", &main, position(1, 16)), root)
    );
    let rename = client.request(
        "textDocument/rename",
        json!({ "textDocument": { "uri": web }, "position": position(1, 8), "newName": "Machine" }),
    );
    insta::assert_snapshot!("rename of an entity", show(&rename, root));
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": main }, "range": { "start": position(2, 0), "end": position(2, 30) },
                "context": { "diagnostics": [] } }),
    );
    insta::assert_snapshot!("quick fixes", show(&actions, root));
    let symbols = client.request("textDocument/documentSymbol", json!({ "textDocument": { "uri": web } }));
    insta::assert_snapshot!("document symbols", show(&symbols, root));
    client.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}
