//! modelc diagnostics as LSP diagnostics: the primary label is the range; secondary labels
//! become related information (in whichever file they point into); notes and help follow the
//! message, as the terminal shows them.

use std::collections::HashMap;

use lsp_types::{DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Url};
use modelc_diagnostics::{Diagnostic, FileId, Severity, Span};

use crate::position::{Encoding, Text};
use crate::workspace::Workspace;

/// Converts diagnostics, sharing each file's line index between them.
pub(crate) struct Converter<'w> {
    workspace: &'w Workspace,
    encoding: Encoding,
    /// Link each code to its explanation (`modelc-explain:E0101`): only for a client that said
    /// it opens such links.
    pub(crate) explanations: bool,
    texts: HashMap<FileId, Text>,
}

impl<'w> Converter<'w> {
    pub(crate) fn new(workspace: &'w Workspace, encoding: Encoding) -> Converter<'w> {
        Converter { workspace, encoding, texts: HashMap::new(), explanations: false }
    }

    fn range(&mut self, file: FileId, span: Span) -> lsp_types::Range {
        let (workspace, encoding) = (self.workspace, self.encoding);
        self.texts.entry(file).or_insert_with(|| Text::new(workspace.text(file), encoding)).range(span)
    }

    pub(crate) fn convert(&mut self, diagnostic: &Diagnostic) -> Option<lsp_types::Diagnostic> {
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
