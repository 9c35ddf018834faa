//! The main loop: the initialize handshake, then one message at a time. Notifications change
//! the workspace; once no message is waiting, the diagnostics of every open document are
//! published (those that changed), so a burst of keystrokes is checked once.

use std::collections::HashMap;
use std::path::PathBuf;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use lsp_types::{
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams, InitializeParams,
    PublishDiagnosticsParams, ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions, Url,
};
use modelc_diagnostics::FileId;

use crate::diagnostics::Converter;
use crate::position::{Encoding, Text};
use crate::workspace::Workspace;

pub type Error = Box<dyn std::error::Error + Send + Sync>;

struct Server<'c> {
    connection: &'c Connection,
    workspace: Workspace,
    encoding: Encoding,
    /// What each document was last sent, so unchanged diagnostics are not sent again.
    published: HashMap<Url, Vec<lsp_types::Diagnostic>>,
    /// A change since the last publication.
    dirty: bool,
}

/// Runs the server on a connection until the client shuts it down.
pub fn run(connection: &Connection) -> Result<(), Error> {
    let (id, params) = connection.initialize_start()?;
    let params: InitializeParams = serde_json::from_value(params)?;
    let encoding = Encoding::negotiate(&params.capabilities);
    let capabilities = ServerCapabilities {
        position_encoding: Some(encoding.kind()),
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
            ..TextDocumentSyncOptions::default()
        })),
        ..ServerCapabilities::default()
    };
    connection.initialize_finish(
        id,
        serde_json::json!({
            "capabilities": capabilities,
            "serverInfo": { "name": "modelc", "version": env!("CARGO_PKG_VERSION") },
        }),
    )?;
    let root = root_of(&params);
    let mut server = Server {
        connection,
        workspace: Workspace::new(root.as_deref()),
        encoding,
        published: HashMap::new(),
        dirty: false,
    };
    server.watch_files(&params)?;
    if let Some(error) = server.workspace.load_error.clone() {
        server.show_error(&error)?;
    }
    server.main_loop()
}

/// The workspace's root directory: the first workspace folder, else the root URI.
#[allow(deprecated, reason = "root_uri is what older clients send")]
fn root_of(params: &InitializeParams) -> Option<PathBuf> {
    let folder = params.workspace_folders.as_ref().and_then(|folders| folders.first()).map(|f| &f.uri);
    folder.or(params.root_uri.as_ref()).and_then(|uri| uri.to_file_path().ok())
}

impl Server<'_> {
    fn main_loop(&mut self) -> Result<(), Error> {
        while let Ok(message) = self.connection.receiver.recv() {
            match message {
                Message::Request(request) => {
                    if self.connection.handle_shutdown(&request)? {
                        return Ok(());
                    }
                    self.on_request(request)?;
                }
                Message::Notification(notification) => {
                    if notification.method == lsp_types::notification::Exit::METHOD {
                        return Ok(());
                    }
                    self.on_notification(notification)?;
                }
                Message::Response(_) => {}
            }
            if self.dirty && self.connection.receiver.is_empty() {
                self.publish()?;
            }
        }
        Ok(())
    }

    /// Asks the client to report `.cf` and `project.yml` changes on disk, when it can.
    fn watch_files(&self, params: &InitializeParams) -> Result<(), Error> {
        let dynamic = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|w| w.dynamic_registration)
            .unwrap_or(false);
        if !dynamic {
            return Ok(());
        }
        let watchers: Vec<serde_json::Value> =
            ["**/*.cf", "**/project.yml"].iter().map(|glob| serde_json::json!({ "globPattern": glob })).collect();
        let registration = serde_json::json!({
            "registrations": [{
                "id": "modelc-watched-files",
                "method": lsp_types::notification::DidChangeWatchedFiles::METHOD,
                "registerOptions": { "watchers": watchers },
            }]
        });
        let request = Request::new(
            RequestId::from("modelc-watch".to_owned()),
            lsp_types::request::RegisterCapability::METHOD.to_owned(),
            registration,
        );
        self.connection.sender.send(Message::Request(request))?;
        Ok(())
    }

    fn show_error(&self, message: &str) -> Result<(), Error> {
        let params =
            lsp_types::ShowMessageParams { typ: lsp_types::MessageType::ERROR, message: format!("modelc: {message}") };
        self.notify::<lsp_types::notification::ShowMessage>(params)
    }

    fn notify<N: lsp_types::notification::Notification>(&self, params: N::Params) -> Result<(), Error> {
        let notification = Notification::new(N::METHOD.to_owned(), params);
        self.connection.sender.send(Message::Notification(notification))?;
        Ok(())
    }

    fn on_request(&mut self, request: Request) -> Result<(), Error> {
        let response = Response::new_err(
            request.id,
            ErrorCode::MethodNotFound as i32,
            format!("modelc does not answer {} yet", request.method),
        );
        self.connection.sender.send(Message::Response(response))?;
        Ok(())
    }

    fn on_notification(&mut self, notification: Notification) -> Result<(), Error> {
        use lsp_types::notification::{
            DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
        };
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let params: DidOpenTextDocumentParams = serde_json::from_value(notification.params)?;
                let document = params.text_document;
                if let Ok(path) = document.uri.to_file_path() {
                    self.workspace.open(&path, document.text, document.version);
                    self.dirty = true;
                }
            }
            DidChangeTextDocument::METHOD => {
                let params: DidChangeTextDocumentParams = serde_json::from_value(notification.params)?;
                let Some(id) = self.document_id(&params.text_document.uri) else { return Ok(()) };
                let Some(document) = self.workspace.documents.get(&id) else { return Ok(()) };
                let mut text = document.text.clone();
                for change in params.content_changes {
                    match change.range {
                        Some(range) => {
                            let span = Text::new(&text, self.encoding).span(range);
                            text.replace_range(span.range(), &change.text);
                        }
                        None => text = change.text,
                    }
                }
                self.workspace.set_document(id, text, params.text_document.version);
                self.dirty = true;
            }
            DidCloseTextDocument::METHOD => {
                let params: DidCloseTextDocumentParams = serde_json::from_value(notification.params)?;
                if let Some(id) = self.document_id(&params.text_document.uri) {
                    self.workspace.close(id);
                    // A closed document shows no diagnostics.
                    self.published.remove(&params.text_document.uri);
                    self.send_diagnostics(params.text_document.uri, Vec::new(), None)?;
                    self.dirty = true;
                }
            }
            DidChangeWatchedFiles::METHOD => {
                self.workspace.disk_changed();
                if let Some(error) = self.workspace.load_error.clone() {
                    self.show_error(&error)?;
                }
                self.dirty = true;
            }
            _ => {}
        }
        Ok(())
    }

    fn document_id(&self, uri: &Url) -> Option<FileId> {
        self.workspace.file_id(&uri.to_file_path().ok()?)
    }

    /// Publishes the diagnostics of every open document that changed since last sent.
    fn publish(&mut self) -> Result<(), Error> {
        self.dirty = false;
        let diagnostics = self.workspace.diagnostics();
        let mut converter = Converter::new(&self.workspace, self.encoding);
        let mut outgoing = Vec::new();
        let mut files: Vec<&FileId> = diagnostics.keys().collect();
        files.sort();
        for file in files {
            let Some(uri) = self.workspace.path(*file).and_then(|p| Url::from_file_path(p).ok()) else { continue };
            let converted: Vec<lsp_types::Diagnostic> =
                diagnostics[file].iter().filter_map(|d| converter.convert(d)).collect();
            if self.published.get(&uri) == Some(&converted) {
                continue;
            }
            let version = self.workspace.documents.get(file).map(|d| d.version);
            outgoing.push((uri, converted, version));
        }
        for (uri, converted, version) in outgoing {
            self.published.insert(uri.clone(), converted.clone());
            self.send_diagnostics(uri, converted, version)?;
        }
        Ok(())
    }

    fn send_diagnostics(
        &self,
        uri: Url,
        diagnostics: Vec<lsp_types::Diagnostic>,
        version: Option<i32>,
    ) -> Result<(), Error> {
        self.notify::<lsp_types::notification::PublishDiagnostics>(PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        })
    }
}
