//! One diagnostic model for every phase of modelc.
//!
//! A [`Diagnostic`] is plain data: a stable [`Code`], a severity, a message, labelled spans,
//! notes and help. It knows nothing about terminals or editors; [`render::text`] draws it with
//! ariadne, [`render::json`] serialises it for tools, and the language server (a later layer)
//! converts it into LSP diagnostics. Phases return diagnostics as values, never print them.

pub mod codes;
mod counts;
mod files;
pub mod render;
mod span;
pub mod terminal;

pub use codes::Code;
pub use counts::{count, is_are, plural, was_were};
pub use files::{FileId, LineCol, LineIndex, SourceFile, SourceFiles};
pub use span::Span;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A span in a file with an optional message. The primary label says where the problem is;
/// secondary labels point at related places (the other definition, the opening bracket).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub file: FileId,
    pub span: Span,
    pub message: Option<String>,
    pub primary: bool,
}

/// A problem found in a model, ready to be rendered in any format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: &'static Code,
    pub severity: Severity,
    pub message: String,
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
    pub help: Vec<String>,
    /// Changes that would fix it, as data (the JSON output and the language server's code
    /// actions apply them; nothing parses them back out of the help text).
    pub fixes: Vec<Fix>,
}

/// A change that would fix a diagnostic: edits applied together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    /// What the fix does, for a person choosing it: "replace with `Entity`".
    pub message: String,
    pub edits: Vec<Edit>,
    pub applicability: Applicability,
}

/// Replace `span` of `file` with `replacement` (an empty span inserts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub file: FileId,
    pub span: Span,
    pub replacement: String,
}

/// How sure a fix is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applicability {
    /// Certainly what was meant: a tool may apply it without asking.
    MachineApplicable,
    /// A likely fix (a similar name, say), for a person to choose.
    MaybeIncorrect,
}

impl Applicability {
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::MachineApplicable => "machine-applicable",
            Applicability::MaybeIncorrect => "maybe-incorrect",
        }
    }
}

impl Diagnostic {
    /// A diagnostic with the code's default severity.
    pub fn new(code: &'static Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            severity: code.severity,
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
            help: Vec::new(),
            fixes: Vec::new(),
        }
    }

    /// Adds a fix.
    #[must_use]
    pub fn fix(mut self, fix: Fix) -> Diagnostic {
        self.fixes.push(fix);
        self
    }

    /// Adds a fix replacing `span` of `file` with `replacement`.
    #[must_use]
    pub fn replace(
        self,
        file: FileId,
        span: Span,
        replacement: impl Into<String>,
        applicability: Applicability,
    ) -> Diagnostic {
        let replacement = replacement.into();
        let message = format!("replace with `{replacement}`");
        self.fix(Fix { message, edits: vec![Edit { file, span, replacement }], applicability })
    }

    /// Adds the primary label: where the problem is.
    #[must_use]
    pub fn primary(mut self, file: FileId, span: Span, message: impl Into<String>) -> Diagnostic {
        let message = message.into();
        self.labels.push(Label { file, span, message: (!message.is_empty()).then_some(message), primary: true });
        self
    }

    /// Adds a secondary label: a related place.
    #[must_use]
    pub fn secondary(mut self, file: FileId, span: Span, message: impl Into<String>) -> Diagnostic {
        let message = message.into();
        self.labels.push(Label { file, span, message: (!message.is_empty()).then_some(message), primary: false });
        self
    }

    #[must_use]
    pub fn note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    #[must_use]
    pub fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help.push(help.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The primary label, if any.
    pub fn primary_label(&self) -> Option<&Label> {
        self.labels.iter().find(|l| l.primary)
    }

    /// A stable order for output: syntax errors of every file first (a broken file explains
    /// what other files then miss in it), then by file, position and code.
    pub fn sort_key(&self) -> (bool, u32, u32, u32, &'static str) {
        let later = !self.code.is_syntax();
        match self.primary_label() {
            Some(l) => (later, l.file.0, l.span.start, l.span.end, self.code.id),
            None => (later, u32::MAX, 0, 0, self.code.id),
        }
    }
}

/// Sorts diagnostics into the order they are shown in.
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
}
