//! Where the parser's actions and checks put the diagnostics they find.

use modelc_diagnostics::{Code, Diagnostic, FileId, Label, Span};

/// Collects the diagnostics of one file's parse.
#[derive(Debug)]
pub(crate) struct Sink {
    pub(crate) file: FileId,
    pub(crate) diagnostics: Vec<Diagnostic>,
}

impl Sink {
    pub(crate) fn new(file: FileId) -> Sink {
        Sink { file, diagnostics: Vec::new() }
    }

    /// Reports `message` with a primary label at `span`; returns the diagnostic so callers can
    /// add notes, help or secondary labels.
    pub(crate) fn report(
        &mut self,
        code: &'static Code,
        span: Span,
        message: impl Into<String>,
        label: impl Into<String>,
    ) -> &mut Diagnostic {
        let diagnostic = Diagnostic::new(code, message).primary(self.file, span, label);
        self.diagnostics.push(diagnostic);
        self.diagnostics.last_mut().expect("just pushed")
    }
}

/// Adds a secondary label, in the primary label's file, to a diagnostic in place.
pub(crate) fn add_secondary(diagnostic: &mut Diagnostic, span: Span, message: impl Into<String>) {
    let file = diagnostic.labels.first().map_or(FileId(0), |l| l.file);
    diagnostic.labels.push(Label { file, span, message: Some(message.into()), primary: false });
}

/// Adds help to a diagnostic in place (the builder methods take `self`).
pub(crate) fn add_help(diagnostic: &mut Diagnostic, help: impl Into<String>) {
    diagnostic.help.push(help.into());
}
