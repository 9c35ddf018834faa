//! The main loop: the initialize handshake, then one message at a time. Notifications change
//! the workspace; once no message is waiting, the diagnostics of every open document are
//! published (those that changed), so a burst of keystrokes is checked once.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

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
use crate::execution::Execution;
use crate::navigation::Analysis;
use crate::position::{Encoding, Text};
use crate::workspace::Workspace;

pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// What the loop is doing between messages, as the panic guard names it.
const PUBLISHING: &str = "publishing diagnostics";

/// A request's or notification's parameters; malformed ones are the client's error, answered
/// as such, never a reason for the server to stop.
fn parse<P: serde::de::DeserializeOwned>(params: serde_json::Value) -> Result<P, serde_json::Error> {
    serde_json::from_value(params)
}

/// How a declaration shows among symbols (document and workspace alike).
fn symbol_kind(kind: modelc_sema::hir::DefinitionKind) -> lsp_types::SymbolKind {
    use modelc_sema::hir::DefinitionKind as K;
    match kind {
        K::Entity => lsp_types::SymbolKind::CLASS,
        K::Attribute => lsp_types::SymbolKind::FIELD,
        K::Relation => lsp_types::SymbolKind::PROPERTY,
        K::Implementation => lsp_types::SymbolKind::FUNCTION,
        K::Typedef => lsp_types::SymbolKind::TYPE_PARAMETER,
        K::Variable => lsp_types::SymbolKind::VARIABLE,
    }
}

fn to_json<T: serde::Serialize>(value: T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

struct Server<'c> {
    connection: &'c Connection,
    workspace: Workspace,
    encoding: Encoding,
    /// What each document was last sent, so unchanged diagnostics are not sent again.
    published: HashMap<Url, Vec<lsp_types::Diagnostic>>,
    /// A change since the last publication.
    dirty: bool,
    /// Execution diagnostics, run in the background after a pause in typing.
    execution: Execution,
    /// The document changed or opened last: its diagnostics are published first.
    last_edited: Option<FileId>,
    /// The diagnostics last published, by file, with their fixes (for code actions).
    current: HashMap<FileId, Vec<modelc_diagnostics::Diagnostic>>,
    /// Messages read ahead of the one being handled, so that a `$/cancelRequest` queued behind
    /// its request is seen before the request runs.
    backlog: std::collections::VecDeque<Message>,
    /// Requests the client cancelled before they ran.
    cancelled: std::collections::HashSet<RequestId>,
    /// The client asked for diagnostics to link to their explanations (`modelc-explain:E0101`,
    /// which the VS Code extension opens).
    explanations: bool,
    /// Each file's position tables, kept while its text is unchanged: a request converts many
    /// positions, and building the tables reads the whole text.
    positions: RefCell<HashMap<FileId, Rc<Text>>>,
}

/// Runs the server on a connection until the client shuts it down.
pub fn run(connection: &Connection) -> Result<(), Error> {
    let (id, params) = loop {
        let (id, params) = connection.initialize_start()?;
        match serde_json::from_value::<InitializeParams>(params) {
            Ok(params) => break (id, params),
            // The client may try again; nothing else is answered until it succeeds.
            Err(error) => {
                let message = format!("the initialize parameters are malformed: {error}");
                connection.sender.send(Response::new_err(id, ErrorCode::InvalidParams as i32, message).into())?;
            }
        }
    };
    let encoding = Encoding::negotiate(&params.capabilities);
    let capabilities = ServerCapabilities {
        position_encoding: Some(encoding.kind()),
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
            ..TextDocumentSyncOptions::default()
        })),
        hover_provider: Some(lsp_types::HoverProviderCapability::Simple(true)),
        completion_provider: Some(lsp_types::CompletionOptions {
            trigger_characters: Some(vec![".".to_owned(), ":".to_owned(), "(".to_owned(), ",".to_owned()]),
            ..lsp_types::CompletionOptions::default()
        }),
        definition_provider: Some(lsp_types::OneOf::Left(true)),
        type_definition_provider: Some(lsp_types::TypeDefinitionProviderCapability::Simple(true)),
        workspace_symbol_provider: Some(lsp_types::OneOf::Left(true)),
        references_provider: Some(lsp_types::OneOf::Left(true)),
        document_highlight_provider: Some(lsp_types::OneOf::Left(true)),
        document_symbol_provider: Some(lsp_types::OneOf::Left(true)),
        folding_range_provider: Some(lsp_types::FoldingRangeProviderCapability::Simple(true)),
        document_formatting_provider: Some(lsp_types::OneOf::Left(true)),
        signature_help_provider: Some(lsp_types::SignatureHelpOptions {
            trigger_characters: Some(vec!["(".to_owned(), ",".to_owned()]),
            ..lsp_types::SignatureHelpOptions::default()
        }),
        semantic_tokens_provider: Some(lsp_types::SemanticTokensServerCapabilities::SemanticTokensOptions(
            lsp_types::SemanticTokensOptions {
                legend: lsp_types::SemanticTokensLegend {
                    token_types: crate::structure::TOKEN_TYPES.to_vec(),
                    token_modifiers: Vec::new(),
                },
                full: Some(lsp_types::SemanticTokensFullOptions::Bool(true)),
                ..lsp_types::SemanticTokensOptions::default()
            },
        )),
        code_action_provider: Some(lsp_types::CodeActionProviderCapability::Options(lsp_types::CodeActionOptions {
            code_action_kinds: Some(vec![lsp_types::CodeActionKind::QUICKFIX]),
            ..lsp_types::CodeActionOptions::default()
        })),
        rename_provider: Some(lsp_types::OneOf::Right(lsp_types::RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: lsp_types::WorkDoneProgressOptions::default(),
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
    let explanations = params
        .initialization_options
        .as_ref()
        .and_then(|o| o.get("codeExplanations"))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let mut server = Server::new(connection, Workspace::new(root.as_deref()), encoding, explanations);
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

enum NotificationError {
    Params(serde_json::Error),
    Connection(Error),
}

impl From<serde_json::Error> for NotificationError {
    fn from(error: serde_json::Error) -> NotificationError {
        NotificationError::Params(error)
    }
}

impl From<Error> for NotificationError {
    fn from(error: Error) -> NotificationError {
        NotificationError::Connection(error)
    }
}

impl<'c> Server<'c> {
    /// A server that has published nothing and runs nothing yet.
    fn new(connection: &'c Connection, workspace: Workspace, encoding: Encoding, explanations: bool) -> Server<'c> {
        Server {
            connection,
            workspace,
            encoding,
            published: HashMap::new(),
            dirty: false,
            execution: Execution::new(),
            current: HashMap::new(),
            last_edited: None,
            backlog: std::collections::VecDeque::new(),
            cancelled: std::collections::HashSet::new(),
            explanations,
            positions: RefCell::new(HashMap::new()),
        }
    }
}

impl Server<'_> {
    fn main_loop(&mut self) -> Result<(), Error> {
        let messages = self.connection.receiver.clone();
        let results = self.execution.receiver.clone();
        loop {
            let pause = match self.execution.due {
                Some(at) => crossbeam_channel::at(at),
                None => crossbeam_channel::never(),
            };
            let message = if let Some(message) = self.backlog.pop_front() {
                message
            } else {
                crossbeam_channel::select! {
                recv(messages) -> message => match message {
                    Ok(message) => message,
                    Err(_) => return Ok(()),
                },
                recv(results) -> finished => {
                    if let Ok(finished) = finished
                        && self.execution.finished(finished)
                    {
                        self.dirty = true;
                    }
                    self.publish_if_idle()?;
                    continue;
                }
                recv(pause) -> _ => {
                    let projects = self.workspace.open_projects();
                    let files = self.workspace.module_files.clone();
                    self.execution.start(self.workspace.db.clone(), projects, files);
                    continue;
                }
                }
            };
            self.read_ahead(&messages);
            match message {
                Message::Request(request) if self.cancelled.remove(&request.id) => {
                    let response =
                        Response::new_err(request.id, ErrorCode::RequestCanceled as i32, "cancelled".to_owned());
                    self.connection.sender.send(Message::Response(response))?;
                }
                Message::Request(request) if request.method == lsp_types::request::Shutdown::METHOD => {
                    // Nothing runs any more; the `exit` that follows ends the loop.
                    self.execution.invalidate();
                    self.connection.sender.send(Message::Response(Response::new_ok(request.id, ())))?;
                }
                Message::Request(request) => {
                    let (id, method) = (request.id.clone(), request.method.clone());
                    self.guarded(&method, Some(id), |server| server.on_request(request))?;
                }
                Message::Notification(notification) => {
                    if notification.method == lsp_types::notification::Exit::METHOD {
                        self.execution.invalidate();
                        return Ok(());
                    }
                    let method = notification.method.clone();
                    self.guarded(&method, None, |server| server.on_notification(notification))?;
                }
                Message::Response(_) => {}
            }
            self.guarded(PUBLISHING, None, Server::publish_if_idle)?;
        }
    }

    /// Runs one handler so that a panic in it (a bug of ours) ends neither the session nor
    /// the loop: a request is answered `InternalError`, and the client's log is told once.
    fn guarded(
        &mut self,
        what: &str,
        request: Option<RequestId>,
        handler: impl FnOnce(&mut Self) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let payload = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(self))) {
            Ok(result) => return result,
            Err(payload) => payload,
        };
        let reason = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_owned());
        // What a notification half did is checked again (a failed publication is not
        // retried until the next change, so one bug is reported once).
        if what != PUBLISHING {
            self.dirty = true;
        }
        self.notify::<lsp_types::notification::LogMessage>(lsp_types::LogMessageParams {
            typ: lsp_types::MessageType::ERROR,
            message: format!(
                "modelc: internal error in {what}: {reason}. The server goes on; please report this with the file being edited."
            ),
        })?;
        if let Some(id) = request {
            let message = format!("modelc failed to answer {what}: {reason}");
            self.connection.sender.send(Message::Response(Response::new_err(
                id,
                ErrorCode::InternalError as i32,
                message,
            )))?;
        }
        Ok(())
    }

    /// Moves the messages waiting now into the backlog, taking note of cancellations.
    fn read_ahead(&mut self, messages: &crossbeam_channel::Receiver<Message>) {
        for message in messages.try_iter() {
            match message {
                Message::Notification(n) if n.method == lsp_types::notification::Cancel::METHOD => {
                    if let Ok(params) = parse::<lsp_types::CancelParams>(n.params) {
                        let id = match params.id {
                            lsp_types::NumberOrString::Number(n) => RequestId::from(n),
                            lsp_types::NumberOrString::String(s) => RequestId::from(s),
                        };
                        self.cancelled.insert(id);
                    }
                }
                other => self.backlog.push_back(other),
            }
        }
    }

    /// Publishes once no message is waiting, so a burst of edits is checked once.
    fn publish_if_idle(&mut self) -> Result<(), Error> {
        if self.dirty && self.idle() {
            self.publish()?;
        }
        Ok(())
    }

    /// No message is waiting.
    fn idle(&self) -> bool {
        self.connection.receiver.is_empty() && self.backlog.is_empty()
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
            // Modules' Python too: calls are checked against its plugins' signatures.
            ["**/*.cf", "**/project.yml", "**/*.py"].iter().map(|glob| serde_json::json!({ "globPattern": glob })).collect();
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
        use lsp_types::request::{
            CodeActionRequest, Completion, DocumentHighlightRequest, DocumentSymbolRequest, FoldingRangeRequest,
            Formatting, GotoDefinition, HoverRequest, PrepareRenameRequest, References, Rename,
            SemanticTokensFullRequest, SignatureHelpRequest,
        };
        let Request { id, method, params } = request;
        let answer = match method.as_str() {
            HoverRequest::METHOD => parse(params).map(|p| to_json(self.hover(&p))),
            Completion::METHOD => parse(params).map(|p| to_json(self.complete(&p))),
            CodeActionRequest::METHOD => parse(params).map(|p| to_json(self.code_actions(&p))),
            FoldingRangeRequest::METHOD => parse(params).map(|p| to_json(self.folding(&p))),
            Formatting::METHOD => parse(params).map(|p| to_json(self.formatting(&p))),
            SemanticTokensFullRequest::METHOD => parse(params).map(|p| to_json(self.semantic_tokens(&p))),
            SignatureHelpRequest::METHOD => parse(params).map(|p| to_json(self.signature_help(&p))),
            GotoDefinition::METHOD => parse(params).map(|p| to_json(self.definition(&p))),
            lsp_types::request::GotoTypeDefinition::METHOD => parse(params).map(|p| to_json(self.type_definition(&p))),
            lsp_types::request::WorkspaceSymbolRequest::METHOD => {
                parse(params).map(|p| to_json(self.workspace_symbols(&p)))
            }
            References::METHOD => parse(params).map(|p| to_json(self.references(&p))),
            DocumentHighlightRequest::METHOD => parse(params).map(|p| to_json(self.highlights(&p))),
            DocumentSymbolRequest::METHOD => parse(params).map(|p| to_json(self.symbols(&p))),
            PrepareRenameRequest::METHOD => parse(params).map(|p| self.prepare_rename(&p)),
            Rename::METHOD => match parse::<lsp_types::RenameParams>(params) {
                Ok(p) => match self.rename(&p) {
                    Ok(edit) => Ok(to_json(edit)),
                    Err(message) => {
                        let response = Response::new_err(id, ErrorCode::RequestFailed as i32, message);
                        self.connection.sender.send(Message::Response(response))?;
                        return Ok(());
                    }
                },
                Err(error) => Err(error),
            },
            _ => {
                let message = format!("modelc does not answer {method} yet");
                let response = Response::new_err(id, ErrorCode::MethodNotFound as i32, message);
                self.connection.sender.send(Message::Response(response))?;
                return Ok(());
            }
        };
        let response = match answer {
            Ok(result) => Response::new_ok(id, result),
            Err(error) => Response::new_err(id, ErrorCode::InvalidParams as i32, error.to_string()),
        };
        self.connection.sender.send(Message::Response(response))?;
        Ok(())
    }

    /// The open file and byte offset a position names.
    fn locate(&self, at: &lsp_types::TextDocumentPositionParams) -> Option<(FileId, u32)> {
        let file = self.document_id(&at.text_document.uri)?;
        let offset = self.positions(file).offset(at.position);
        Some((file, u32::try_from(offset).ok()?))
    }

    /// The position tables of a file's current text.
    fn positions(&self, file: FileId) -> Rc<Text> {
        let text = self.workspace.text(file);
        let mut cache = self.positions.borrow_mut();
        if let Some(cached) = cache.get(&file).filter(|cached| Arc::ptr_eq(cached.text(), &text)) {
            return Rc::clone(cached);
        }
        let fresh = Rc::new(Text::new(text, self.encoding));
        cache.insert(file, Rc::clone(&fresh));
        fresh
    }

    fn location(&self, file: FileId, span: modelc_diagnostics::Span) -> Option<lsp_types::Location> {
        let uri = Url::from_file_path(self.workspace.path(file)?).ok()?;
        Some(lsp_types::Location { uri, range: self.positions(file).range(span) })
    }

    fn hover(&self, params: &lsp_types::HoverParams) -> Option<lsp_types::Hover> {
        let (file, offset) = self.locate(&params.text_document_position_params)?;
        let analysis = Analysis::of(&self.workspace, file)?;
        let (span, symbol) = analysis.symbol_at(file, offset)?;
        Some(lsp_types::Hover {
            contents: lsp_types::HoverContents::Markup(lsp_types::MarkupContent {
                kind: lsp_types::MarkupKind::Markdown,
                value: analysis.hover(file, &symbol)?,
            }),
            range: Some(self.positions(file).range(span)),
        })
    }

    /// The whole document in the canonical layout (`modelc fmt`): one edit, or none when it
    /// is formatted already or has syntax errors (a file being typed is not touched).
    fn formatting(&self, params: &lsp_types::DocumentFormattingParams) -> Option<Vec<lsp_types::TextEdit>> {
        let file = self.document_id(&params.text_document.uri)?;
        let text = self.workspace.text(file);
        let formatted = modelc_fmt::format(&text).ok()?;
        if formatted == *text {
            return Some(Vec::new());
        }
        let whole = self.positions(file).range(modelc_diagnostics::Span::new(0, text.len()));
        Some(vec![lsp_types::TextEdit { range: whole, new_text: formatted }])
    }

    fn folding(&self, params: &lsp_types::FoldingRangeParams) -> Option<Vec<lsp_types::FoldingRange>> {
        let file = self.document_id(&params.text_document.uri)?;
        let analysis = Analysis::of(&self.workspace, file)?;
        Some(crate::structure::folding_ranges(&analysis, file, &self.positions(file)))
    }

    fn semantic_tokens(&self, params: &lsp_types::SemanticTokensParams) -> Option<lsp_types::SemanticTokensResult> {
        let file = self.document_id(&params.text_document.uri)?;
        let analysis = Analysis::of(&self.workspace, file)?;
        let positions = self.positions(file);
        let data = crate::structure::semantic_tokens(&analysis, file, positions.text(), &positions);
        Some(lsp_types::SemanticTokensResult::Tokens(lsp_types::SemanticTokens { result_id: None, data }))
    }

    fn signature_help(&self, params: &lsp_types::SignatureHelpParams) -> Option<lsp_types::SignatureHelp> {
        let (file, offset) = self.locate(&params.text_document_position_params)?;
        let analysis = Analysis::of(&self.workspace, file)?;
        let text = self.workspace.text(file);
        crate::completion::signature_help(&analysis, file, &text, offset as usize)
    }

    /// The fixes of the diagnostics in a range, as quick fixes.
    fn code_actions(&self, params: &lsp_types::CodeActionParams) -> Option<Vec<lsp_types::CodeActionOrCommand>> {
        let file = self.document_id(&params.text_document.uri)?;
        let wanted = self.positions(file).span(params.range);
        let positions = |file| self.positions(file);
        let converter = Converter::new(&self.workspace, &positions);
        let mut actions = Vec::new();
        for diagnostic in self.current.get(&file).into_iter().flatten() {
            let Some(label) = diagnostic.primary_label() else { continue };
            if label.span.end < wanted.start || wanted.end < label.span.start {
                continue;
            }
            let converted = converter.convert(diagnostic);
            for fix in &diagnostic.fixes {
                let mut changes: HashMap<Url, Vec<lsp_types::TextEdit>> = HashMap::new();
                for edit in &fix.edits {
                    let Some(location) = self.location(edit.file, edit.span) else { continue };
                    changes
                        .entry(location.uri)
                        .or_default()
                        .push(lsp_types::TextEdit { range: location.range, new_text: edit.replacement.clone() });
                }
                actions.push(lsp_types::CodeActionOrCommand::CodeAction(lsp_types::CodeAction {
                    title: fix.message.clone(),
                    kind: Some(lsp_types::CodeActionKind::QUICKFIX),
                    diagnostics: converted.clone().map(|d| vec![d]),
                    edit: Some(lsp_types::WorkspaceEdit {
                        changes: Some(changes),
                        ..lsp_types::WorkspaceEdit::default()
                    }),
                    is_preferred: Some(
                        diagnostic.fixes.len() == 1
                            && fix.applicability == modelc_diagnostics::Applicability::MachineApplicable,
                    ),
                    ..lsp_types::CodeAction::default()
                }));
            }
        }
        Some(actions)
    }

    fn complete(&self, params: &lsp_types::CompletionParams) -> Option<lsp_types::CompletionResponse> {
        let (file, offset) = self.locate(&params.text_document_position)?;
        let analysis = Analysis::of(&self.workspace, file)?;
        let text = self.workspace.text(file);
        // An `import` goes after the file's last import, or first.
        let last_import = text.lines().enumerate().filter(|(_, l)| l.starts_with("import ")).map(|(n, _)| n + 1).last();
        let import_at = lsp_types::Position { line: last_import.unwrap_or(0) as u32, character: 0 };
        let items = crate::completion::complete(&analysis, file, &text, offset as usize, import_at);
        Some(lsp_types::CompletionResponse::Array(items))
    }

    fn definition(&self, params: &lsp_types::GotoDefinitionParams) -> Option<lsp_types::GotoDefinitionResponse> {
        let (file, offset) = self.locate(&params.text_document_position_params)?;
        let analysis = Analysis::of(&self.workspace, file)?;
        let (_, symbol) = analysis.symbol_at(file, offset)?;
        let (target, span) = analysis.definition(file, &symbol)?;
        Some(lsp_types::GotoDefinitionResponse::Scalar(self.location(target, span)?))
    }

    fn type_definition(&self, params: &lsp_types::GotoDefinitionParams) -> Option<lsp_types::GotoDefinitionResponse> {
        let (file, offset) = self.locate(&params.text_document_position_params)?;
        let analysis = Analysis::of(&self.workspace, file)?;
        let (_, symbol) = analysis.symbol_at(file, offset)?;
        let ty = analysis.type_of(file, &symbol)?;
        let (target, span) = analysis.definition(file, &ty)?;
        Some(lsp_types::GotoDefinitionResponse::Scalar(self.location(target, span)?))
    }

    #[allow(deprecated, reason = "SymbolInformation::deprecated must be given")]
    fn workspace_symbols(
        &self,
        params: &lsp_types::WorkspaceSymbolParams,
    ) -> Option<Vec<lsp_types::SymbolInformation>> {
        let mut out = Vec::new();
        let mut seen = Vec::new();
        let mut open: Vec<FileId> = self.workspace.documents.keys().copied().collect();
        open.sort();
        for file in open {
            let Some(analysis) = Analysis::of(&self.workspace, file) else { continue };
            for (f, definition) in analysis.workspace_symbols(&params.query) {
                if seen.contains(&(f, definition.name)) {
                    continue;
                }
                seen.push((f, definition.name));
                let Some(location) = self.location(f, definition.name) else { continue };
                let text = self.workspace.text(f);
                out.push(lsp_types::SymbolInformation {
                    name: text.get(definition.name.range()).unwrap_or_default().to_owned(),
                    kind: symbol_kind(definition.kind),
                    tags: None,
                    deprecated: None,
                    location,
                    container_name: None,
                });
            }
        }
        Some(out)
    }

    fn references(&self, params: &lsp_types::ReferenceParams) -> Option<Vec<lsp_types::Location>> {
        let (file, offset) = self.locate(&params.text_document_position)?;
        let analysis = Analysis::of(&self.workspace, file)?;
        let (_, symbol) = analysis.symbol_at(file, offset)?;
        let declaration = analysis.definition(file, &symbol);
        let found = analysis.references(file, &symbol);
        Some(
            found
                .into_iter()
                .filter(|place| params.context.include_declaration || Some(*place) != declaration)
                .filter_map(|(f, span)| self.location(f, span))
                .collect(),
        )
    }

    fn highlights(&self, params: &lsp_types::DocumentHighlightParams) -> Option<Vec<lsp_types::DocumentHighlight>> {
        let (file, offset) = self.locate(&params.text_document_position_params)?;
        let analysis = Analysis::of(&self.workspace, file)?;
        let (_, symbol) = analysis.symbol_at(file, offset)?;
        let positions = self.positions(file);
        Some(
            analysis
                .references(file, &symbol)
                .into_iter()
                .filter(|(f, _)| *f == file)
                .map(|(_, span)| lsp_types::DocumentHighlight { range: positions.range(span), kind: None })
                .collect(),
        )
    }

    /// The range of the name a rename would change, or an error message saying why not.
    fn prepare_rename(&self, params: &lsp_types::TextDocumentPositionParams) -> serde_json::Value {
        let Some((file, offset)) = self.locate(params) else { return serde_json::Value::Null };
        let Some(analysis) = Analysis::of(&self.workspace, file) else { return serde_json::Value::Null };
        let Some((span, symbol)) = analysis.symbol_at(file, offset) else { return serde_json::Value::Null };
        let text = self.workspace.text(file);
        let written = text.get(span.range()).unwrap_or_default();
        let last = written.rsplit("::").next().unwrap_or(written);
        match analysis.rename(file, &symbol, last) {
            Ok(_) => {
                let name = modelc_diagnostics::Span::new(span.end as usize - last.len(), span.end as usize);
                to_json(lsp_types::PrepareRenameResponse::RangeWithPlaceholder {
                    range: self.positions(file).range(name),
                    placeholder: last.to_owned(),
                })
            }
            Err(_) => serde_json::Value::Null,
        }
    }

    fn rename(&self, params: &lsp_types::RenameParams) -> Result<Option<lsp_types::WorkspaceEdit>, String> {
        let Some((file, offset)) = self.locate(&params.text_document_position) else { return Ok(None) };
        let Some(analysis) = Analysis::of(&self.workspace, file) else { return Ok(None) };
        let Some((_, symbol)) = analysis.symbol_at(file, offset) else { return Ok(None) };
        let places = analysis.rename(file, &symbol, &params.new_name)?;
        let mut changes: HashMap<Url, Vec<lsp_types::TextEdit>> = HashMap::new();
        for (f, span) in places {
            let Some(location) = self.location(f, span) else { continue };
            let edit = lsp_types::TextEdit { range: location.range, new_text: params.new_name.clone() };
            changes.entry(location.uri).or_default().push(edit);
        }
        Ok(Some(lsp_types::WorkspaceEdit { changes: Some(changes), ..lsp_types::WorkspaceEdit::default() }))
    }

    #[allow(deprecated, reason = "DocumentSymbol::deprecated must be given")]
    fn symbols(&self, params: &lsp_types::DocumentSymbolParams) -> Option<lsp_types::DocumentSymbolResponse> {
        let file = self.document_id(&params.text_document.uri)?;
        let analysis = Analysis::of(&self.workspace, file)?;
        let positions = self.positions(file);
        let text = positions.text();
        let symbol = |definition: &modelc_sema::hir::Definition, children: Option<Vec<lsp_types::DocumentSymbol>>| {
            let name = text.get(definition.name.range()).unwrap_or_default().to_owned();
            lsp_types::DocumentSymbol {
                name,
                detail: Some(definition.header.clone()),
                kind: symbol_kind(definition.kind),
                tags: None,
                deprecated: None,
                range: positions.range(definition.full),
                selection_range: positions.range(definition.name),
                children,
            }
        };
        let nested = analysis
            .symbols(file)
            .into_iter()
            .map(|(parent, children)| {
                let children: Vec<lsp_types::DocumentSymbol> = children.into_iter().map(|c| symbol(c, None)).collect();
                symbol(parent, (!children.is_empty()).then_some(children))
            })
            .collect();
        Some(lsp_types::DocumentSymbolResponse::Nested(nested))
    }

    fn on_notification(&mut self, notification: Notification) -> Result<(), Error> {
        let method = notification.method.clone();
        match self.apply_notification(notification) {
            Ok(()) => Ok(()),
            // Malformed parameters: say so and go on.
            Err(NotificationError::Params(error)) => {
                self.notify::<lsp_types::notification::LogMessage>(lsp_types::LogMessageParams {
                    typ: lsp_types::MessageType::WARNING,
                    message: format!("modelc: ignored {method}: {error}"),
                })
            }
            Err(NotificationError::Connection(error)) => Err(error),
        }
    }

    fn apply_notification(&mut self, notification: Notification) -> Result<(), NotificationError> {
        use lsp_types::notification::{
            DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
        };
        let changes_model = [
            DidOpenTextDocument::METHOD,
            DidChangeTextDocument::METHOD,
            DidCloseTextDocument::METHOD,
            DidChangeWatchedFiles::METHOD,
        ];
        if changes_model.contains(&notification.method.as_str()) {
            // Before anything is written to the database: a run in progress stops first.
            self.execution.invalidate();
        }
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let params: DidOpenTextDocumentParams = parse(notification.params)?;
                let document = params.text_document;
                if let Ok(path) = document.uri.to_file_path() {
                    self.last_edited = Some(self.workspace.open(&path, document.text, document.version));
                    self.dirty = true;
                }
            }
            DidChangeTextDocument::METHOD => {
                let params: DidChangeTextDocumentParams = parse(notification.params)?;
                let Some(id) = self.document_id(&params.text_document.uri) else { return Ok(()) };
                let Some(document) = self.workspace.documents.get(&id) else { return Ok(()) };
                let mut text = document.text.clone();
                for change in params.content_changes {
                    match change.range {
                        Some(range) => {
                            let span = Text::new(Arc::from(text.as_str()), self.encoding).span(range);
                            text.replace_range(span.range(), &change.text);
                        }
                        None => text = change.text,
                    }
                }
                self.workspace.set_document(id, text, params.text_document.version);
                self.last_edited = Some(id);
                self.dirty = true;
            }
            DidCloseTextDocument::METHOD => {
                let params: DidCloseTextDocumentParams = parse(notification.params)?;
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

    /// Publishes the diagnostics of every open document that changed since last sent, the
    /// document edited last first. Each document's list is complete when sent; when a message
    /// arrives in between, the documents not yet published wait for the next round (after
    /// that message), so an edit is never held up by other files' checks.
    fn publish(&mut self) -> Result<(), Error> {
        self.dirty = false;
        let open = self.workspace.documents_in_order(self.last_edited);
        self.current.retain(|file, _| self.workspace.documents.contains_key(file));
        let mut errors = false;
        for (n, file) in open.iter().enumerate() {
            if n > 0 && !self.idle() {
                self.dirty = true;
                return Ok(());
            }
            let mut diagnostics = self.workspace.document_diagnostics(*file);
            errors |= diagnostics.iter().any(modelc_diagnostics::Diagnostic::is_error);
            let ran = self.execution.diagnostics.iter().filter(|d| d.primary_label().is_some_and(|l| l.file == *file));
            diagnostics.extend(ran.cloned());
            let Some(uri) = self.workspace.path(*file).and_then(|p| Url::from_file_path(p).ok()) else { continue };
            let converted: Vec<lsp_types::Diagnostic> = {
                let positions = |file| self.positions(file);
                let mut converter = Converter::new(&self.workspace, &positions);
                converter.explanations = self.explanations;
                diagnostics.iter().filter_map(|d| converter.convert(d)).collect()
            };
            self.current.insert(*file, diagnostics);
            if self.published.get(&uri) == Some(&converted) {
                continue;
            }
            let version = self.workspace.documents.get(file).map(|d| d.version);
            self.published.insert(uri.clone(), converted.clone());
            self.send_diagnostics(uri, converted, version)?;
        }
        // Execution runs once the open documents are free of errors (the worker checks the
        // rest of their projects first).
        if !errors {
            self.execution.schedule();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::unwrap_used, reason = "test code")]
    fn a_handler_that_panics_is_answered_internal_error_and_logged_once() {
        let (ours, client) = Connection::memory();
        let mut server = Server::new(&ours, Workspace::new(None), Encoding::Utf16, false);
        let id = RequestId::from(7);
        let result = server.guarded("textDocument/hover", Some(id.clone()), |_| panic!("a bug of ours"));
        assert!(result.is_ok(), "the loop goes on");
        let messages: Vec<Message> = client.receiver.try_iter().collect();
        assert_eq!(messages.len(), 2, "{messages:?}");
        match &messages[0] {
            Message::Notification(n) => {
                assert_eq!(n.method, "window/logMessage");
                assert!(n.params["message"].as_str().unwrap().contains("a bug of ours"), "{n:?}");
            }
            other => panic!("expected a log message, got {other:?}"),
        }
        match &messages[1] {
            Message::Response(r) => {
                assert_eq!(r.id, id);
                assert_eq!(r.error.as_ref().unwrap().code, ErrorCode::InternalError as i32);
            }
            other => panic!("expected the answer, got {other:?}"),
        }
        // A notification that panics is logged and not answered.
        server.guarded("textDocument/didChange", None, |_| panic!("{}", String::from("again"))).unwrap();
        let messages: Vec<Message> = client.receiver.try_iter().collect();
        assert_eq!(messages.len(), 1);
        // The server still serves: a handler that works returns its own result.
        assert!(server.guarded("x", None, |_| Ok(())).is_ok());
    }
}
