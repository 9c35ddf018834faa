//! The language server driven through its real message loop, in process: a client on the other
//! end of an in-memory connection sends what an editor sends and checks what comes back.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stderr, reason = "test code")]

mod support;

use std::path::PathBuf;

use lsp_server::{Message, Request, RequestId};
use lsp_types::Url;
use serde_json::{Value, json};
use support::{Client, project, scratch};

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

/// The file being edited is published before the others its edit changes, so its own
/// diagnostics never wait for the rest of the project's checks.
#[test]
fn the_edited_file_is_published_before_the_files_it_changes() {
    let web = "entity Server:\n    string name\nend\nindex Server(name)\nimplement Server using std::none\n";
    let main_text = "import web\nweb::Server(name=\"a\")\n";
    let dir = project("edited-first", main_text, web);
    let client = Client::start(&dir, json!({}));
    let main = client.open(&dir.join("main.cf"), main_text);
    assert_eq!(client.diagnostics(&main), Vec::<Value>::new());
    let module = client.open(&dir.join("libs/web/model/_init.cf"), web);
    assert_eq!(client.diagnostics(&module), Vec::<Value>::new());
    // `name` renamed `title`: the module's index and main.cf's constructor both break.
    client.change(
        &module,
        2,
        json!([{ "range": { "start": { "line": 1, "character": 11 }, "end": { "line": 1, "character": 15 } },
                 "text": "title" }]),
    );
    let mut order = Vec::new();
    while order.len() < 2 {
        if let Message::Notification(n) = client.receive()
            && n.method == "textDocument/publishDiagnostics"
        {
            let uri: Url = serde_json::from_value(n.params["uri"].clone()).unwrap();
            assert_eq!(n.params["diagnostics"].as_array().map(Vec::len), Some(1), "{n:?}");
            order.push(uri);
        }
    }
    assert_eq!(order, [module, main], "the edited module first");
    client.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

/// What `check` reports about a module as a whole (here W0107: its Python cannot be read) has
/// no place in the model's text; the editor shows it on the module's `import`.
#[test]
fn module_diagnostics_show_on_the_import_of_the_module() {
    let main_text = "entity A:\nend\nimport web\nweb::Server(name=\"a\")\n";
    let dir = project("module-diagnostics", main_text, WEB);
    std::fs::create_dir_all(dir.join("libs/web/plugins")).unwrap();
    std::fs::write(dir.join("libs/web/plugins/__init__.py"), "def broken(:\n").unwrap();
    let client = Client::start(&dir, json!({}));
    let main = client.open(&dir.join("main.cf"), main_text);
    let diagnostics = client.diagnostics(&main);
    assert_eq!(codes(&diagnostics), ["W0107"], "{diagnostics:?}");
    assert_eq!(diagnostics[0]["range"]["start"], json!({ "line": 2, "character": 0 }), "on `import web`");
    let message = diagnostics[0]["message"].as_str().unwrap();
    assert!(message.contains("libs/web/plugins/__init__.py") && message.contains("could not be read"), "{message}");
    client.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_module_says_where_modelc_looked_as_check_does() {
    let main_text = "import nosuch\n";
    let dir = project("unknown-module", main_text, WEB);
    let client = Client::start(&dir, json!({}));
    let main = client.open(&dir.join("main.cf"), main_text);
    let diagnostics = client.diagnostics(&main);
    assert_eq!(codes(&diagnostics), ["E0101"], "{diagnostics:?}");
    let message = diagnostics[0]["message"].as_str().unwrap();
    assert!(message.contains("modelc looked in the `modulepath` of project.yml: `libs`"), "{message}");
    client.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn what_loading_the_project_finds_is_shown_as_check_shows_it() {
    let main_text = "import web\n";
    let dir = project("load-diagnostics", main_text, WEB);
    std::fs::write(dir.join("project.yml"), "name: test\nmodulepath: libs\nmodulepaths: other\n").unwrap();
    std::fs::write(dir.join("libs/web/model/broken.cf"), b"entity \xff\xfeBad:\nend\n").unwrap();
    let client = Client::start(&dir, json!({}));
    let main = client.open(&dir.join("main.cf"), main_text);
    let diagnostics = client.diagnostics(&main);
    assert_eq!(codes(&diagnostics), ["W0106"], "{diagnostics:?}");
    assert_eq!(diagnostics[0]["range"]["start"], json!({ "line": 0, "character": 0 }));
    assert!(diagnostics[0]["message"].as_str().unwrap().contains("modulepaths"), "{diagnostics:?}");
    // An editor shows the invalid bytes as replacement characters: the file as modelc read it.
    let broken = client.open(&dir.join("libs/web/model/broken.cf"), "entity \u{fffd}\u{fffd}Bad:\nend\n");
    let diagnostics = client.diagnostics(&broken);
    assert_eq!(codes(&diagnostics)[0], "E0027", "{diagnostics:?}");
    assert_eq!(diagnostics[0]["range"]["start"], json!({ "line": 0, "character": 7 }));
    // Saved as UTF-8 in the editor: what was read from disk no longer applies.
    client.change(&broken, 2, json!([{ "text": "entity Bad:\nend\n" }]));
    assert!(!codes(&client.diagnostics(&broken)).contains(&"E0027"));
    client.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
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

/// The position of the `n`th (0-based) occurrence of `needle` in an ASCII `text`, plus `delta`
/// characters.
fn at(text: &str, needle: &str, n: usize, delta: u32) -> Value {
    let offset = text.match_indices(needle).nth(n).unwrap_or_else(|| panic!("no {needle} #{n}")).0;
    let line = text[..offset].matches('\n').count();
    let column = offset - text[..offset].rfind('\n').map_or(0, |i| i + 1);
    json!({ "line": line, "character": column as u32 + delta })
}

const NAV_MAIN: &str = "import web\ns = web::Server(name=\"a\", port=web::default_port)\nstd::print(s.name)\n";
const NAV_WEB: &str = "typedef port as int matching self > 0\ndefault_port = 80\n\
entity Server:\n    \"\"\"A web server.\"\"\"\n    string name\n    port port = 80\nend\n\
implementation listen for Server:\n    x = name\n    std::print(x)\n    std::print(self.port)\nend\n\
implement Server using listen\n";

struct Nav {
    client: Client,
    dir: PathBuf,
    main: Url,
    web: Url,
}

fn navigation(name: &str) -> Nav {
    let dir = project(name, NAV_MAIN, NAV_WEB);
    let client = Client::start(&dir, json!({}));
    let main = client.open(&dir.join("main.cf"), NAV_MAIN);
    assert_eq!(client.diagnostics(&main), Vec::<Value>::new());
    let web = client.open(&dir.join("libs/web/model/_init.cf"), NAV_WEB);
    assert_eq!(client.diagnostics(&web), Vec::<Value>::new());
    Nav { client, dir, main, web }
}

impl Nav {
    fn ask(&mut self, method: &str, uri: &Url, position: Value) -> Value {
        self.client.request(
            method,
            json!({ "textDocument": { "uri": uri }, "position": position, "context": { "includeDeclaration": true } }),
        )
    }
}

#[test]
fn go_to_definition_of_entities_attributes_and_variables_across_modules() {
    let mut nav = navigation("definition");
    let (main, web) = (nav.main.clone(), nav.web.clone());
    // The entity of a constructor: its declaration in the module.
    let found = nav.ask("textDocument/definition", &main, at(NAV_MAIN, "Server", 0, 2));
    assert_eq!(found["uri"], json!(web));
    assert_eq!(found["range"]["start"], at(NAV_WEB, "Server", 0, 0));
    // A constructor's keyword: the attribute.
    let found = nav.ask("textDocument/definition", &main, at(NAV_MAIN, "name=", 0, 1));
    assert_eq!(found["range"]["start"], at(NAV_WEB, "name", 0, 0));
    // A qualified variable: its first assignment in the other file.
    let found = nav.ask("textDocument/definition", &main, at(NAV_MAIN, "default_port", 0, 3));
    assert_eq!(
        (found["uri"].clone(), found["range"]["start"].clone()),
        (json!(web), at(NAV_WEB, "default_port", 0, 0))
    );
    // A variable of a block, and an attribute read by its bare name in an implementation.
    let found = nav.ask("textDocument/definition", &web, at(NAV_WEB, "print(x)", 0, 6));
    assert_eq!(found["range"]["start"], at(NAV_WEB, "x = name", 0, 0));
    let found = nav.ask("textDocument/definition", &web, at(NAV_WEB, "x = name", 0, 5));
    assert_eq!(found["range"]["start"], at(NAV_WEB, "name", 0, 0));
    // `self.port`, and a typedef used as an attribute's type.
    let found = nav.ask("textDocument/definition", &web, at(NAV_WEB, "self.port", 0, 6));
    assert_eq!(found["range"]["start"], at(NAV_WEB, "port port", 0, 5));
    let found = nav.ask("textDocument/definition", &web, at(NAV_WEB, "port port", 0, 1));
    assert_eq!(found["range"]["start"], at(NAV_WEB, "port", 0, 0));
    // The implementation an `implement` names.
    let found = nav.ask("textDocument/definition", &web, at(NAV_WEB, "using listen", 0, 8));
    assert_eq!(found["range"]["start"], at(NAV_WEB, "listen", 0, 0));
    // Nothing there: no answer, not an error.
    assert_eq!(nav.ask("textDocument/definition", &main, at(NAV_MAIN, "import", 0, 2)), Value::Null);
    nav.client.shutdown();
    let _ = std::fs::remove_dir_all(&nav.dir);
}

#[test]
fn references_and_highlights_find_every_use() {
    let mut nav = navigation("references");
    let (main, web) = (nav.main.clone(), nav.web.clone());
    let found = nav.ask("textDocument/references", &web, at(NAV_WEB, "Server", 0, 0));
    let mut places: Vec<(String, u64)> = found
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["uri"].as_str().unwrap().rsplit('/').next().unwrap().to_owned(),
                l["range"]["start"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    places.sort();
    // main.cf's constructor; the declaration, `implementation … for Server`, `implement Server`.
    assert_eq!(
        places,
        [
            ("_init.cf".to_owned(), 2),
            ("_init.cf".to_owned(), 7),
            ("_init.cf".to_owned(), 12),
            ("main.cf".to_owned(), 1)
        ]
    );
    let _ = main;
    let highlights = nav.ask("textDocument/documentHighlight", &web, at(NAV_WEB, "x = name", 0, 0));
    assert_eq!(highlights.as_array().unwrap().len(), 2, "{highlights}");
    nav.client.shutdown();
    let _ = std::fs::remove_dir_all(&nav.dir);
}

#[test]
fn hover_shows_declarations_docstrings_members_and_signatures() {
    let mut nav = navigation("hover");
    let main = nav.main.clone();
    let hover = nav.ask("textDocument/hover", &main, at(NAV_MAIN, "Server", 0, 1));
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("entity Server"), "{text}");
    assert!(text.contains("A web server."), "{text}");
    assert!(text.contains("- `string name`") && text.contains("- `web::port port`"), "{text}");
    // The range is the name as written, namespace included.
    assert_eq!(hover["range"]["start"], at(NAV_MAIN, "web::Server", 0, 0));
    let hover = nav.ask("textDocument/hover", &main, at(NAV_MAIN, "print", 0, 1));
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("std::print(any message) -> null"), "{text}");
    // The plugin's documentation, as `modelc doc std` shows it.
    assert!(text.contains("Prints the value"), "{text}");
    nav.client.shutdown();
    let _ = std::fs::remove_dir_all(&nav.dir);
}

#[test]
fn document_symbols_nest_attributes_in_their_entity() {
    let mut nav = navigation("symbols");
    let web = nav.web.clone();
    let symbols = nav.client.request("textDocument/documentSymbol", json!({ "textDocument": { "uri": web } }));
    let names: Vec<&str> = symbols.as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["port", "default_port", "Server", "listen"]);
    let server = &symbols[2];
    let children: Vec<&str> =
        server["children"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(children, ["name", "port"]);
    nav.client.shutdown();
    let _ = std::fs::remove_dir_all(&nav.dir);
}

#[test]
fn navigation_works_in_a_file_with_a_syntax_error() {
    let mut nav = navigation("broken");
    let main = nav.main.clone();
    // A half-typed line after the constructor.
    nav.client.change(&main, 2, json!([{ "text": format!("{NAV_MAIN}x = = \n") }]));
    assert!(!nav.client.diagnostics(&main).is_empty());
    let found = nav.ask("textDocument/definition", &main, at(NAV_MAIN, "Server", 0, 2));
    assert_eq!(found["range"]["start"], at(NAV_WEB, "Server", 0, 0));
    nav.client.shutdown();
    let _ = std::fs::remove_dir_all(&nav.dir);
}

/// The edits of a rename, as `(file name, line, start character, end character)`, sorted.
fn edits(rename: &Value) -> Vec<(String, u64, u64, u64)> {
    let mut out = Vec::new();
    for (uri, list) in rename["changes"].as_object().unwrap() {
        let file = uri.rsplit('/').next().unwrap().to_owned();
        for edit in list.as_array().unwrap() {
            let range = &edit["range"];
            out.push((
                file.clone(),
                range["start"]["line"].as_u64().unwrap(),
                range["start"]["character"].as_u64().unwrap(),
                range["end"]["character"].as_u64().unwrap(),
            ));
        }
    }
    out.sort();
    out
}

#[test]
fn rename_changes_every_use_across_modules_and_keeps_namespaces() {
    let mut nav = navigation("rename");
    let (main, web) = (nav.main.clone(), nav.web.clone());
    let prepared = nav.ask("textDocument/prepareRename", &main, at(NAV_MAIN, "Server", 0, 2));
    // Only the entity's own name, not `web::`.
    assert_eq!(prepared["range"]["start"], at(NAV_MAIN, "Server", 0, 0));
    assert_eq!(prepared["placeholder"], "Server");
    let rename = nav.client.request(
        "textDocument/rename",
        json!({ "textDocument": { "uri": main }, "position": at(NAV_MAIN, "Server", 0, 2), "newName": "Machine" }),
    );
    let server_line = |text: &str, n: usize| at(text, "Server", n, 0)["line"].as_u64().unwrap();
    let column = |text: &str, n: usize| at(text, "Server", n, 0)["character"].as_u64().unwrap();
    let expected: Vec<(String, u64, u64, u64)> = vec![
        ("_init.cf".to_owned(), server_line(NAV_WEB, 0), column(NAV_WEB, 0), column(NAV_WEB, 0) + 6),
        ("_init.cf".to_owned(), server_line(NAV_WEB, 1), column(NAV_WEB, 1), column(NAV_WEB, 1) + 6),
        ("_init.cf".to_owned(), server_line(NAV_WEB, 2), column(NAV_WEB, 2), column(NAV_WEB, 2) + 6),
        ("main.cf".to_owned(), 1, column(NAV_MAIN, 0), column(NAV_MAIN, 0) + 6),
    ];
    assert_eq!(edits(&rename), expected);

    // An attribute: its declaration, the constructor's keyword, the bare name in the
    // implementation, and `s.name` through the variable that holds a `web::Server`.
    let rename = nav.client.request(
        "textDocument/rename",
        json!({ "textDocument": { "uri": web }, "position": at(NAV_WEB, "string name", 0, 8), "newName": "title" }),
    );
    let files: Vec<(String, u64)> = edits(&rename).into_iter().map(|(f, line, _, _)| (f, line)).collect();
    assert_eq!(
        files,
        [("_init.cf".to_owned(), 4), ("_init.cf".to_owned(), 8), ("main.cf".to_owned(), 1), ("main.cf".to_owned(), 2)]
    );
    nav.client.shutdown();
    let _ = std::fs::remove_dir_all(&nav.dir);
}

#[test]
fn rename_refuses_invalid_names_and_what_std_declares() {
    let mut nav = navigation("rename-invalid");
    let main = nav.main.clone();
    for (position, new_name) in [
        (at(NAV_MAIN, "Server", 0, 2), "machine"),
        (at(NAV_MAIN, "name=", 0, 1), "Title"),
        (at(NAV_MAIN, "name=", 0, 1), "for"),
        (at(NAV_MAIN, "print", 0, 1), "show"),
    ] {
        nav.client.next_id += 1;
        let id = RequestId::from(nav.client.next_id);
        let params = json!({ "textDocument": { "uri": main }, "position": position, "newName": new_name });
        nav.client
            .connection
            .sender
            .send(Message::Request(Request::new(id.clone(), "textDocument/rename".to_owned(), params)))
            .unwrap();
        loop {
            if let Message::Response(response) = nav.client.receive()
                && response.id == id
            {
                let error = response.error.unwrap_or_else(|| panic!("renaming to {new_name} was accepted"));
                assert!(!error.message.is_empty());
                break;
            }
        }
    }
    // A std plugin cannot be renamed: prepareRename says so by answering nothing.
    assert_eq!(nav.ask("textDocument/prepareRename", &main, at(NAV_MAIN, "print", 0, 1)), Value::Null);
    nav.client.shutdown();
    let _ = std::fs::remove_dir_all(&nav.dir);
}

#[test]
fn execution_diagnostics_follow_a_pause_and_the_next_edit_drops_them() {
    let dir = scratch("execution");
    let client = Client::start(&dir, json!({}));
    // Only running the model finds that `a.b` never gets its one value.
    let text = "entity A:\nend\nentity B:\nend\nA.b [1] -- B\nimplement A using std::none\n\
                implement B using std::none\na = A()\n";
    let uri = client.open(&dir.join("main.cf"), text);
    assert_eq!(client.diagnostics(&uri), Vec::<Value>::new(), "check finds nothing");
    let executed = client.diagnostics(&uri);
    assert_eq!(executed.len(), 1, "{executed:?}");
    assert!(executed[0]["message"].as_str().unwrap().contains("relation `b` is not set"), "{executed:?}");
    assert_eq!(executed[0]["range"]["start"]["line"], 7);
    // Fixed: the stale execution diagnostic goes at once, and the next run finds nothing.
    client.change(&uri, 2, json!([{ "text": text.replace("A()", "A(b=B())") }]));
    assert_eq!(client.diagnostics(&uri), Vec::<Value>::new());
    client.shutdown();
    // Nothing was written: no password file, no store.
    let entries: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(entries.is_empty(), "{entries:?}");
}

fn labels(completion: &Value) -> Vec<String> {
    completion.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn completion_in_each_context() {
    let mut nav = navigation("completion");
    let (main, web) = (nav.main.clone(), nav.web.clone());
    let std_extra = "entity Thing:\n    string id\nend\n";
    std::fs::create_dir_all(nav.dir.join("libs/extra/model")).unwrap();
    std::fs::write(nav.dir.join("libs/extra/model/_init.cf"), std_extra).unwrap();
    // `web` imports `extra`, `main.cf` does not: its entities come with the import to add.
    let web_text = format!("import extra\n{NAV_WEB}");
    std::fs::write(nav.dir.join("libs/web/model/_init.cf"), &web_text).unwrap();
    let created = Url::from_file_path(nav.dir.join("libs/extra/model/_init.cf")).unwrap();
    nav.client.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": created, "type": 1 }] }));
    nav.client.change(&web, 2, json!([{ "text": web_text }]));
    let complete = |nav: &mut Nav, uri: &Url, text: &str, line: usize| {
        let character = text.lines().nth(line).unwrap().len();
        nav.client.request(
            "textDocument/completion",
            json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } }),
        )
    };

    // After `s.`, on a half-typed line: the attributes of what `s` holds.
    let typed = format!("{NAV_MAIN}s.");
    nav.client.change(&main, 2, json!([{ "text": typed.clone() }]));
    let found = complete(&mut nav, &main, &typed, 3);
    // Its own attributes, then what every entity inherits from std::Entity.
    assert_eq!(labels(&found), ["name", "port", "requires", "provides"]);
    assert_eq!(found[1]["detail"], "web::port");

    // Inside a constructor: its keywords, the required one first, given ones left out.
    let typed = format!("{NAV_MAIN}t = web::Server(");
    nav.client.change(&main, 3, json!([{ "text": typed.clone() }]));
    let found = complete(&mut nav, &main, &typed, 3);
    let mut items: Vec<(String, String)> = found
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["sortText"].as_str().unwrap().to_owned(), i["label"].as_str().unwrap().to_owned()))
        .collect();
    items.sort();
    let ordered: Vec<&str> = items.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(ordered, ["name=", "port=", "provides=", "requires="]);
    let name = found.as_array().unwrap().iter().find(|i| i["label"] == "name=").unwrap();
    assert_eq!(name["labelDetails"]["detail"], " (required)");
    let typed = format!("{NAV_MAIN}t = web::Server(name=\"b\", ");
    nav.client.change(&main, 4, json!([{ "text": typed.clone() }]));
    assert_eq!(labels(&complete(&mut nav, &main, &typed, 3)), ["port=", "requires=", "provides="]);

    // After `web::`: what the namespace declares.
    let typed = format!("{NAV_MAIN}t = web::");
    nav.client.change(&main, 5, json!([{ "text": typed.clone() }]));
    let found = labels(&complete(&mut nav, &main, &typed, 3));
    for expected in ["Server", "port", "listen", "default_port"] {
        assert!(found.contains(&expected.to_owned()), "{expected} in {found:?}");
    }

    // After `import `: modules.
    let typed = "import ".to_owned();
    nav.client.change(&main, 6, json!([{ "text": typed.clone() }]));
    let found = labels(&complete(&mut nav, &main, &typed, 0));
    assert!(found.contains(&"web".to_owned()) && found.contains(&"extra".to_owned()), "{found:?}");
    assert!(!found.contains(&"__config__".to_owned()), "main.cf is no module: {found:?}");

    // At the start of a statement: keywords and snippets, entities, variables; an entity of a
    // module main.cf does not import comes with `import extra` after its last import.
    let typed = format!("{NAV_MAIN}T");
    nav.client.change(&main, 7, json!([{ "text": typed.clone() }]));
    let found = complete(&mut nav, &main, &typed, 3);
    let all = labels(&found);
    for expected in ["entity", "implementation", "web::Server", "s", "std::print"] {
        assert!(all.contains(&expected.to_owned()), "{expected} in {all:?}");
    }
    let thing = found.as_array().unwrap().iter().find(|i| i["label"] == "extra::Thing").expect("extra::Thing");
    assert_eq!(thing["additionalTextEdits"][0]["newText"], "import extra\n");
    assert_eq!(thing["additionalTextEdits"][0]["range"]["start"]["line"], 1);
    let entity = found.as_array().unwrap().iter().find(|i| i["label"] == "entity").unwrap();
    assert_eq!(entity["insertTextFormat"], 2, "a snippet");

    // After `self.` in an implementation (the module's file, also half typed).
    let typed = web_text.replace("    std::print(x)\n", "    std::print(x)\n    self.\n");
    nav.client.change(&web, 3, json!([{ "text": typed.clone() }]));
    let line = typed.lines().position(|l| l == "    self.").unwrap();
    assert_eq!(labels(&complete(&mut nav, &web, &typed, line)), ["name", "port", "requires", "provides"]);
    nav.client.shutdown();
    let _ = std::fs::remove_dir_all(&nav.dir);
}

#[test]
fn did_you_mean_fixes_are_code_actions() {
    let dir = project("fixes", "import web\nweb::Server(name=\"a\")\n", WEB);
    let mut client = Client::start(&dir, json!({}));
    let text = "import web\nweb::Sever(nme=\"a\")\nx = web::Server(name=\"b\")\ny = nosuch::z\n";
    let uri = client.open(&dir.join("main.cf"), text);
    let diagnostics = client.diagnostics(&uri);
    assert!(!diagnostics.is_empty());
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri },
                "range": { "start": { "line": 1, "character": 0 }, "end": { "line": 1, "character": 20 } },
                "context": { "diagnostics": diagnostics } }),
    );
    let titles: Vec<&str> = actions.as_array().unwrap().iter().map(|a| a["title"].as_str().unwrap()).collect();
    assert!(titles.contains(&"replace with `web::Server`"), "{titles:?}");
    let fix = actions.as_array().unwrap().iter().find(|a| a["title"] == "replace with `web::Server`").unwrap();
    assert_eq!(fix["kind"], "quickfix");
    let edit = &fix["edit"]["changes"][uri.as_str()][0];
    assert_eq!(edit["newText"], "web::Server");
    assert_eq!(edit["range"], json!({ "start": { "line": 1, "character": 0 }, "end": { "line": 1, "character": 10 } }));
    // Nothing on a line without a fixable diagnostic.
    let none = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri },
                "range": { "start": { "line": 2, "character": 0 }, "end": { "line": 2, "character": 1 } },
                "context": { "diagnostics": [] } }),
    );
    assert_eq!(none, json!([]));
    client.shutdown();
}

/// Issue 36: a misspelt attribute of `self` in an implementation is found by `check`, as you
/// type, with its fix.
#[test]
fn a_misspelt_attribute_of_self_is_reported_with_its_fix() {
    let text = "entity A:\n    string port\nend\nimplementation show for A:\n    std::print(self.porr)\nend\nimplement A using show\n";
    let dir = project("self-fix", text, WEB);
    let mut client = Client::start(&dir, json!({}));
    let uri = client.open(&dir.join("main.cf"), text);
    let diagnostics = client.diagnostics(&uri);
    assert_eq!(codes(&diagnostics), ["E0207"], "{diagnostics:?}");
    assert_eq!(diagnostics[0]["range"]["start"], json!({ "line": 4, "character": 20 }));
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri },
                "range": { "start": { "line": 4, "character": 20 }, "end": { "line": 4, "character": 24 } },
                "context": { "diagnostics": diagnostics } }),
    );
    let fix = &actions.as_array().unwrap()[0];
    assert_eq!(fix["title"], "replace with `port`", "{actions}");
    assert_eq!(fix["edit"]["changes"][uri.as_str()][0]["newText"], "port");
    client.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn folding_ranges_cover_definitions_and_blocks() {
    let mut nav = navigation("folding");
    let web = nav.web.clone();
    let ranges = nav.client.request("textDocument/foldingRange", json!({ "textDocument": { "uri": web } }));
    let mut lines: Vec<(u64, u64)> = ranges
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["startLine"].as_u64().unwrap(), r["endLine"].as_u64().unwrap()))
        .collect();
    lines.sort();
    // `entity Server: … end` (lines 2–6) and `implementation listen … end` (7–11), each folded
    // up to the line before its `end`.
    assert_eq!(lines, [(2, 5), (7, 10)]);
    nav.client.shutdown();
    let _ = std::fs::remove_dir_all(&nav.dir);
}

#[test]
fn semantic_tokens_colour_names_by_what_they_refer_to() {
    let mut nav = navigation("tokens");
    let main = nav.main.clone();
    let legend = nav.client.initialized["capabilities"]["semanticTokensProvider"]["legend"]["tokenTypes"].clone();
    let tokens = nav.client.request("textDocument/semanticTokens/full", json!({ "textDocument": { "uri": main } }));
    let data: Vec<u64> = tokens["data"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    // Decode: (line, start, length, type name).
    let (mut line, mut start) = (0, 0);
    let mut decoded = Vec::new();
    for chunk in data.chunks(5) {
        if chunk[0] > 0 {
            start = 0;
        }
        line += chunk[0];
        start += chunk[1];
        let written: String =
            NAV_MAIN.lines().nth(line as usize).unwrap().chars().skip(start as usize).take(chunk[2] as usize).collect();
        decoded.push((written, legend[chunk[3] as usize].as_str().unwrap().to_owned()));
    }
    let expected = [
        ("s", "variable"),
        ("web", "namespace"),
        ("Server", "class"),
        ("name", "property"),
        ("port", "property"),
        ("web", "namespace"),
        ("default_port", "variable"),
        ("std", "namespace"),
        ("print", "function"),
        ("s", "variable"),
        ("name", "property"),
    ];
    let decoded: Vec<(&str, &str)> = decoded.iter().map(|(w, t)| (w.as_str(), t.as_str())).collect();
    assert_eq!(decoded, expected);
    nav.client.shutdown();
    let _ = std::fs::remove_dir_all(&nav.dir);
}

#[test]
fn signature_help_inside_a_plugin_call() {
    let mut nav = navigation("signature");
    let main = nav.main.clone();
    let typed = format!("{NAV_MAIN}std::replace(\"abc\", ");
    nav.client.change(&main, 2, json!([{ "text": typed.clone() }]));
    let character = typed.lines().nth(3).unwrap().len();
    let help = nav.client.request(
        "textDocument/signatureHelp",
        json!({ "textDocument": { "uri": main }, "position": { "line": 3, "character": character } }),
    );
    let signature = &help["signatures"][0];
    assert!(signature["label"].as_str().unwrap().starts_with("std::replace("), "{help}");
    assert_eq!(help["activeParameter"], 1, "the second argument");
    let [start, end] = [0, 1].map(|i| signature["parameters"][1]["label"][i].as_u64().unwrap() as usize);
    let label: Vec<u16> = signature["label"].as_str().unwrap().encode_utf16().collect();
    let second = String::from_utf16(&label[start..end]).unwrap();
    assert!(second.ends_with("old"), "{second}");
    nav.client.shutdown();
    let _ = std::fs::remove_dir_all(&nav.dir);
}

#[test]
fn formatting_gives_the_canonical_layout_and_leaves_broken_files_alone() {
    let dir = scratch("formatting");
    let mut client = Client::start(&dir, json!({}));
    let uri = client.open(&dir.join("main.cf"), "entity A:\nstring a\nend\nx=A(a=\"é😀\")\n");
    let _ = client.diagnostics(&uri);
    let params = json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 4, "insertSpaces": true } });
    let edits = client.request("textDocument/formatting", params.clone());
    assert_eq!(edits[0]["newText"], "entity A:\n    string a\nend\n\nx = A(a=\"é😀\")\n");
    // The edit covers the whole document, its end in UTF-16 units.
    assert_eq!(edits[0]["range"]["end"], json!({ "line": 4, "character": 0 }));
    client.change(&uri, 2, json!([{ "text": "x = = 1\n" }]));
    let _ = client.diagnostics(&uri);
    assert_eq!(client.request("textDocument/formatting", params), Value::Null);
    client.shutdown();
}

#[test]
fn type_definition_and_workspace_symbols() {
    let mut nav = navigation("type-definition");
    let (main, web) = (nav.main.clone(), nav.web.clone());
    // `s` holds a web::Server: its type is the entity.
    let found = nav.ask("textDocument/typeDefinition", &main, at(NAV_MAIN, "s.name", 0, 0));
    assert_eq!((found["uri"].clone(), found["range"]["start"].clone()), (json!(web), at(NAV_WEB, "Server", 0, 0)));
    // An attribute typed by a typedef: the typedef.
    let found = nav.ask("textDocument/typeDefinition", &main, at(NAV_MAIN, "port=", 0, 1));
    assert_eq!(found["range"]["start"], at(NAV_WEB, "port", 0, 0));
    let symbols = nav.client.request("workspace/symbol", json!({ "query": "serv" }));
    let names: Vec<&str> = symbols.as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Server"]);
    assert_eq!(symbols[0]["location"]["uri"], json!(web));
    nav.client.shutdown();
    let _ = std::fs::remove_dir_all(&nav.dir);
}

#[test]
fn codes_link_to_their_explanation_when_the_client_opens_such_links() {
    let dir = scratch("explanations");
    let (server_side, connection) = lsp_server::Connection::memory();
    let server = std::thread::spawn(move || modelc_lsp::run(&server_side).unwrap());
    let root = Url::from_directory_path(&dir).unwrap();
    connection
        .sender
        .send(Message::Request(Request::new(
            RequestId::from(1),
            "initialize".to_owned(),
            json!({ "processId": null, "rootUri": root, "capabilities": {},
                    "initializationOptions": { "codeExplanations": true } }),
        )))
        .unwrap();
    let _ = connection.receiver.recv().unwrap();
    connection
        .sender
        .send(Message::Notification(lsp_server::Notification::new("initialized".to_owned(), json!({}))))
        .unwrap();
    let uri = Url::from_file_path(dir.join("main.cf")).unwrap();
    connection
        .sender
        .send(Message::Notification(lsp_server::Notification::new(
            "textDocument/didOpen".to_owned(),
            json!({ "textDocument": { "uri": uri, "languageId": "cf", "version": 1, "text": "x = = 1\n" } }),
        )))
        .unwrap();
    loop {
        if let Message::Notification(n) = connection.receiver.recv().unwrap()
            && n.method == "textDocument/publishDiagnostics"
        {
            let code = n.params["diagnostics"][0]["code"].as_str().unwrap().to_owned();
            assert_eq!(n.params["diagnostics"][0]["codeDescription"]["href"], format!("modelc-explain:{code}"));
            break;
        }
    }
    connection
        .sender
        .send(Message::Request(Request::new(RequestId::from(2), "shutdown".to_owned(), Value::Null)))
        .unwrap();
    connection
        .sender
        .send(Message::Notification(lsp_server::Notification::new("exit".to_owned(), Value::Null)))
        .unwrap();
    server.join().unwrap();
}

#[test]
fn a_request_cancelled_before_it_runs_is_answered_as_cancelled() {
    let dir = scratch("cancel-request");
    let mut client = Client::start(&dir, json!({}));
    // A large file keeps the server busy while the request and its cancellation queue up.
    let mut text = String::from("entity A:\n    int n\nend\nimplement A using std::none\n");
    for i in 0..3000 {
        text.push_str(&format!("a{i} = A(n={i})\n"));
    }
    let uri = client.open(&dir.join("main.cf"), &text);
    // Each round gives the server a change to check, then sends a request and cancels it at
    // once: both wait behind the change. (A thread switch at the wrong moment could let the
    // request run first; ten rounds make that certain not to happen every time.)
    let mut cancelled = false;
    for round in 0..10 {
        client.change(&uri, round + 2, json!([{ "text": format!("{text}z{round} = 1\n") }]));
        client.next_id += 1;
        let id = RequestId::from(client.next_id);
        let params = json!({ "textDocument": { "uri": uri }, "position": { "line": 5, "character": 1 } });
        let request = Request::new(id.clone(), "textDocument/hover".to_owned(), params);
        client.connection.sender.send(Message::Request(request)).unwrap();
        client.notify("$/cancelRequest", json!({ "id": client.next_id }));
        let response = loop {
            if let Message::Response(response) = client.receive()
                && response.id == id
            {
                break response;
            }
        };
        if response.error.map(|e| e.code) == Some(lsp_server::ErrorCode::RequestCanceled as i32) {
            cancelled = true;
            break;
        }
    }
    assert!(cancelled, "no request was cancelled in ten rounds");
    // The next request is answered as usual.
    let symbols = client.request("textDocument/documentSymbol", json!({ "textDocument": { "uri": uri } }));
    assert!(symbols.as_array().is_some_and(|s| !s.is_empty()), "{symbols}");
    client.shutdown();
}

/// A module's plugins written in Python are known to the editor, read from their source: no
/// "unavailable" error, their arguments checked, their signature on hover. Nothing runs them:
/// executing the model in the editor gives their values as unknown, not an error.
#[test]
fn python_plugins_are_checked_and_shown_without_running_python() {
    let main = "import web\nx = web::slug(\"A b\")\ny = web::slug(3)\nweb::Server(name=x)\n";
    let dir = project("python-plugins", main, WEB);
    std::fs::create_dir_all(dir.join("libs/web/plugins")).unwrap();
    std::fs::write(
        dir.join("libs/web/plugins/__init__.py"),
        "from inmanta.plugins import plugin\n\n@plugin\ndef slug(text: \"string\") -> \"string\":\n    \"\"\"Lower case, with dashes.\"\"\"\n    raise Exception('the editor ran me')\n",
    )
    .unwrap();
    let mut client = Client::start(&dir, json!({}));
    let uri = client.open(&dir.join("main.cf"), main);
    let diagnostics = client.diagnostics(&uri);
    assert_eq!(codes(&diagnostics), ["E0210"], "{diagnostics:?}");
    assert_eq!(diagnostics[0]["range"]["start"], json!({ "line": 2, "character": 14 }));
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": { "line": 1, "character": 10 } }),
    );
    let text = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(text.contains("web::slug(string text) -> string"), "{hover}");
    assert!(text.contains("Lower case, with dashes."), "its docstring: {hover}");
    // The Python changes on disk: the calls are checked against the new signature.
    let plugins = dir.join("libs/web/plugins/__init__.py");
    std::fs::write(
        &plugins,
        "from inmanta.plugins import plugin\n\n@plugin\ndef slug(n: \"int\") -> \"string\":\n    return ''\n",
    )
    .unwrap();
    let changed = Url::from_file_path(&plugins).unwrap();
    client.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": changed, "type": 2 }] }));
    let diagnostics = client.diagnostics(&uri);
    assert_eq!(codes(&diagnostics), ["E0210"], "{diagnostics:?}");
    assert_eq!(diagnostics[0]["range"]["start"], json!({ "line": 1, "character": 14 }), "now the string is wrong");
    client.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 30: completion right after a non-ASCII character panicked (a byte offset inside `é`)
/// and the server died with it. Every such request is answered, and the server goes on.
#[test]
fn completion_after_non_ascii_text_is_answered() {
    let dir = scratch("non-ascii");
    let mut client = Client::start(&dir, json!({}));
    let uri = client.open(&dir.join("main.cf"), "");
    for (version, (text, character)) in
        [("x = é", 5), ("x = éa.", 7), ("éstd::", 6), ("x = \"😀\" é", 10)].iter().enumerate()
    {
        client.change(&uri, version as i32 + 2, json!([{ "text": text }]));
        for method in ["textDocument/completion", "textDocument/signatureHelp", "textDocument/hover"] {
            // The request's answer, whatever it is, proves the server is alive and serving.
            client.request(
                method,
                json!({ "textDocument": { "uri": uri }, "position": { "line": 0, "character": character } }),
            );
        }
    }
    client.shutdown();
}

#[test]
fn a_document_of_long_chains_is_served() {
    // The 246 KB document of `a.x.x…` chains got no hover answer in a minute; chains of
    // operators and relation steps are walked by every request too.
    let dir = scratch("chains");
    let mut client = Client::start(&dir, json!({}));
    let n = 20_000;
    let text = format!(
        "entity A:\n    string[] a{} = 1\nend\nentity Node:\n    int v = 1\nend\nNode.next [0:1] -- Node\n\
         implement Node using std::none\nn = Node()\nn.next = n\ny = n{}.v\nz = 1{}\nw = true{}\n",
        ".x".repeat(n),
        ".next".repeat(n),
        " + 1".repeat(n),
        " or false".repeat(n)
    );
    let uri = client.open(&dir.join("main.cf"), &text);
    let document = json!({ "uri": uri });
    let lines: Vec<&str> = text.lines().collect();
    for (line, content) in lines.iter().enumerate() {
        // The start, the middle and the end of every line.
        for character in [0, content.len() / 2, content.len()] {
            let position = json!({ "line": line, "character": character });
            for method in [
                "textDocument/hover",
                "textDocument/completion",
                "textDocument/signatureHelp",
                "textDocument/definition",
                "textDocument/references",
                "textDocument/documentHighlight",
                "textDocument/prepareRename",
            ] {
                let mut params = json!({ "textDocument": document, "position": position });
                if method == "textDocument/references" {
                    params["context"] = json!({ "includeDeclaration": true });
                }
                client.request(method, params);
            }
        }
    }
    for method in ["textDocument/documentSymbol", "textDocument/foldingRange", "textDocument/semanticTokens/full"] {
        client.request(method, json!({ "textDocument": document }));
    }
    // Without the malformed declaration the document is formatted (one edit: the
    // chains' lines are long).
    let valid = text.split_once("end\n").map(|(_, rest)| rest.to_owned()).unwrap();
    client.change(&uri, 2, json!([{ "text": valid }]));
    let formatted = client.request(
        "textDocument/formatting",
        json!({ "textDocument": document, "options": { "tabSize": 4, "insertSpaces": true } }),
    );
    assert!(formatted.is_array(), "{formatted}");
    client.shutdown();
}
