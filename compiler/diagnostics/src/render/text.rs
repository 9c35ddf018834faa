//! Human-readable rendering through ariadne: the source line, underlined spans, labels,
//! notes and help. Spans are byte offsets, so ariadne is always configured with
//! `IndexType::Byte`.

use std::fmt;
use std::sync::Arc;

use ariadne::{Cache, Color, Config, IndexType, Label, Report, ReportKind, Source};

use crate::{Diagnostic, FileId, Severity, SourceFiles};

/// Renders diagnostics as text, reusing each file's line index across diagnostics.
pub struct TextRenderer<'f> {
    files: &'f SourceFiles,
    sources: Vec<Option<Source<Arc<str>>>>,
    color: bool,
}

impl<'f> TextRenderer<'f> {
    pub fn new(files: &'f SourceFiles, color: bool) -> TextRenderer<'f> {
        TextRenderer { files, sources: vec![None; files.len()], color }
    }

    /// The diagnostic as text, ending with a newline.
    pub fn render(&mut self, diagnostic: &Diagnostic) -> String {
        let Some(primary) = diagnostic.primary_label().or(diagnostic.labels.first()) else {
            return self.render_without_source(diagnostic);
        };
        let (kind, primary_color) = match diagnostic.severity {
            Severity::Error => (ReportKind::Error, Color::Red),
            Severity::Warning => (ReportKind::Warning, Color::Yellow),
        };
        let anchor = self.files.get(primary.file).clamp(primary.span);
        let mut report = Report::build(kind, (primary.file, anchor.range()))
            .with_code(diagnostic.code.id)
            .with_message(&diagnostic.message)
            .with_config(Config::new().with_index_type(IndexType::Byte).with_color(self.color));
        // Ariadne starts a new snippet whenever a label lies above the previous one, so labels go
        // in source order to keep one snippet per file.
        let mut labels: Vec<_> = diagnostic.labels.iter().collect();
        labels.sort_by_key(|l| (l.file, l.span.start, l.span.end));
        for label in labels {
            let span = self.files.get(label.file).clamp(label.span);
            let mut rendered = Label::new((label.file, span.range())).with_color(if label.primary {
                primary_color
            } else {
                Color::Blue
            });
            // Ariadne underlines only labels that carry a message: an empty one keeps a bare
            // label visible.
            rendered = rendered.with_message(label.message.as_deref().unwrap_or(""));
            report = report.with_label(rendered);
        }
        for note in &diagnostic.notes {
            report = report.with_note(note);
        }
        for help in &diagnostic.help {
            report = report.with_help(help);
        }
        let mut out = Vec::new();
        let written = report.finish().write(&mut *self, &mut out);
        match written {
            Ok(()) => String::from_utf8_lossy(&out).into_owned(),
            // Writing into a Vec cannot fail; should ariadne refuse a span, still say something.
            Err(_) => self.render_without_source(diagnostic),
        }
    }

    /// A one-paragraph rendering for diagnostics that point at no source.
    fn render_without_source(&self, diagnostic: &Diagnostic) -> String {
        let mut out = format!("{}[{}]: {}\n", diagnostic.severity.as_str(), diagnostic.code.id, diagnostic.message);
        for note in &diagnostic.notes {
            out.push_str(&format!("  = note: {note}\n"));
        }
        for help in &diagnostic.help {
            out.push_str(&format!("  = help: {help}\n"));
        }
        out
    }
}

impl Cache<FileId> for &mut TextRenderer<'_> {
    type Storage = Arc<str>;

    fn fetch(&mut self, id: &FileId) -> Result<&Source<Arc<str>>, impl fmt::Debug> {
        let files = self.files;
        match self.sources.get_mut(id.0 as usize) {
            Some(slot) => Ok(&*slot.get_or_insert_with(|| Source::from(files.get(*id).text.clone()))),
            None => Err(format!("no file with id {}", id.0)),
        }
    }

    fn display<'a>(&self, id: &'a FileId) -> Option<impl fmt::Display + 'a> {
        Some(self.files.get(*id).name.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Span, codes};

    #[test]
    fn renders_code_message_labels_and_help() {
        let mut files = SourceFiles::new();
        let file = files.add("main.cf", "x = (1\ny = 2\n");
        let diagnostic = Diagnostic::new(&codes::UNEXPECTED_TOKEN, "unexpected `y`")
            .primary(file, Span::new(7, 8), "expected `)`")
            .secondary(file, Span::new(4, 5), "this `(` is not closed")
            .help("close the parenthesis");
        let text = TextRenderer::new(&files, false).render(&diagnostic);
        insta::assert_snapshot!(text);
    }

    #[test]
    fn colour_is_optional() {
        let mut files = SourceFiles::new();
        let file = files.add("main.cf", "@\n");
        let diagnostic = Diagnostic::new(&codes::ILLEGAL_CHARACTER, "illegal").primary(file, Span::new(0, 1), "here");
        assert!(!TextRenderer::new(&files, false).render(&diagnostic).contains('\u{1b}'));
        assert!(TextRenderer::new(&files, true).render(&diagnostic).contains('\u{1b}'));
    }

    #[test]
    fn spans_past_the_end_are_clamped() {
        let mut files = SourceFiles::new();
        let file = files.add("main.cf", "é");
        let diagnostic = Diagnostic::new(&codes::UNEXPECTED_EOF, "eof").primary(file, Span::new(1, 40), "");
        let text = TextRenderer::new(&files, false).render(&diagnostic);
        assert!(text.contains("E0007"));
    }
}
