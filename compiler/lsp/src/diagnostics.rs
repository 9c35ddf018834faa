//! modelc diagnostics as LSP diagnostics: the primary label is the range; secondary labels
//! become related information (in whichever file they point into); notes and help follow the
//! message, as the terminal shows them.

use std::rc::Rc;

use lsp_types::{DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Url};
use modelc_diagnostics::{Diagnostic, FileId, Severity, Span};

use crate::position::Text;
use crate::workspace::Workspace;

/// Converts diagnostics, with the server's position tables of the files they point into
/// (built once per text of a file, and only for the files a diagnostic points into).
pub(crate) struct Converter<'w> {
    workspace: &'w Workspace,
    positions: &'w dyn Fn(FileId) -> Rc<Text>,
    /// Link each code to its explanation (`modelc-explain:E0101`): only for a client that said
    /// it opens such links.
    pub(crate) explanations: bool,
}

impl<'w> Converter<'w> {
    pub(crate) fn new(workspace: &'w Workspace, positions: &'w dyn Fn(FileId) -> Rc<Text>) -> Converter<'w> {
        Converter { workspace, positions, explanations: false }
    }

    fn range(&self, file: FileId, span: Span) -> lsp_types::Range {
        (self.positions)(file).range(span)
    }

    pub(crate) fn convert(&self, diagnostic: &Diagnostic) -> Option<lsp_types::Diagnostic> {
        let primary = diagnostic.primary_label()?;
        let range = self.range(primary.file, primary.span);
        let mut message = diagnostic.message.clone();
        if let Some(label) = primary.message.as_ref().filter(|label| !message.contains(label.as_str())) {
            message.push_str(&format!("\n{label}"));
        }
        for note in &diagnostic.notes {
            message.push_str(&format!("\nnote: {note}"));
        }
        for help in &diagnostic.help {
            message.push_str(&format!("\nhelp: {help}"));
        }
        let mut related = Vec::new();
        for label in diagnostic.labels.iter().filter(|l| !l.primary) {
            let Some(uri) = self.workspace.path(label.file).and_then(|p| Url::from_file_path(p).ok()) else {
                continue;
            };
            let range = self.range(label.file, label.span);
            related.push(DiagnosticRelatedInformation {
                location: Location { uri, range },
                message: label.message.clone().unwrap_or_else(|| "related".to_owned()),
            });
        }
        Some(lsp_types::Diagnostic {
            range,
            severity: Some(match diagnostic.severity {
                Severity::Error => DiagnosticSeverity::ERROR,
                Severity::Warning => DiagnosticSeverity::WARNING,
            }),
            code: Some(NumberOrString::String(diagnostic.code.id.to_owned())),
            code_description: self
                .explanations
                .then(|| Url::parse(&format!("modelc-explain:{}", diagnostic.code.id)).ok())
                .flatten()
                .map(|href| lsp_types::CodeDescription { href }),
            source: Some("modelc".to_owned()),
            message,
            related_information: (!related.is_empty()).then_some(related),
            ..lsp_types::Diagnostic::default()
        })
    }
}
