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
    /// Each file's text as shown (control characters made visible), and where its bytes moved.
    sources: Vec<Option<(Source<Arc<str>>, Shown)>>,
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
        if super::long_lines::touches_long_line(self.files, diagnostic) {
            return super::long_lines::render(self.files, diagnostic, self.color);
        }
        let (kind, primary_color) = match diagnostic.severity {
            Severity::Error => (ReportKind::Error, Color::Red),
            Severity::Warning => (ReportKind::Warning, Color::Yellow),
        };
        let anchor = self.shown_range(primary.file, primary.span);
        let mut report = Report::build(kind, (primary.file, anchor))
            .with_code(diagnostic.code.id)
            .with_message(escape_controls(&diagnostic.message))
            .with_config(Config::new().with_index_type(IndexType::Byte).with_color(self.color));
        // Ariadne starts a new snippet whenever a label lies above the previous one, so labels go
        // in source order to keep one snippet per file.
        let mut labels: Vec<_> = diagnostic.labels.iter().collect();
        labels.sort_by_key(|l| (l.file, l.span.start, l.span.end));
        for label in labels {
            let range = self.shown_range(label.file, label.span);
            let mut rendered =
                Label::new((label.file, range)).with_color(if label.primary { primary_color } else { Color::Blue });
            // Ariadne underlines only labels that carry a message: an empty one keeps a bare
            // label visible.
            rendered = rendered.with_message(escape_controls(label.message.as_deref().unwrap_or("")));
            report = report.with_label(rendered);
        }
        for note in &diagnostic.notes {
            report = report.with_note(escape_controls(note));
        }
        for help in &diagnostic.help {
            report = report.with_help(escape_controls(help));
        }
        let mut out = Vec::new();
        let written = report.finish().write(&mut *self, &mut out);
        match written {
            Ok(()) => String::from_utf8_lossy(&out).into_owned(),
            // Writing into a Vec cannot fail; should ariadne refuse a span, still say something.
            Err(_) => self.render_without_source(diagnostic),
        }
    }

    /// A one-paragraph rendering for diagnostics that point at no source, with the header,
    /// notes and help worded as for the others.
    fn render_without_source(&self, diagnostic: &Diagnostic) -> String {
        let message = escape_controls(&diagnostic.message);
        let severity = match diagnostic.severity {
            crate::Severity::Error => "Error",
            crate::Severity::Warning => "Warning",
        };
        let mut out = format!("[{}] {severity}: {message}\n", diagnostic.code.id);
        for note in &diagnostic.notes {
            out.push_str(&format!("    Note: {}\n", escape_controls(note)));
        }
        for help in &diagnostic.help {
            out.push_str(&format!("    Help: {}\n", escape_controls(help)));
        }
        out
    }

    /// A span of `file` as a byte range of the text as shown.
    fn shown_range(&mut self, file: FileId, span: crate::Span) -> std::ops::Range<usize> {
        let span = self.files.get(file).clamp(span);
        match self.shown(file) {
            Some((_, shown)) => shown.map(span.start as usize)..shown.map(span.end as usize),
            None => span.range(),
        }
    }

    /// A file's text as shown, computed once.
    fn shown(&mut self, file: FileId) -> Option<&(Source<Arc<str>>, Shown)> {
        let files = self.files;
        let slot = self.sources.get_mut(file.0 as usize)?;
        Some(&*slot.get_or_insert_with(|| {
            let (text, shown) = Shown::of(&files.get(file).text);
            (Source::from(text), shown)
        }))
    }
}

/// A source text with its control characters made visible, so that printing a snippet of an
/// untrusted file cannot drive the terminal (`\x1b[2J` would clear it). C0 controls and DEL
/// become their Unicode control pictures (`␛`), and C1 controls and the bidirectional
/// overrides (which can make code read differently from how it parses) become `�`. Tabs and
/// line breaks stay. The replacements are longer in bytes, so the offsets after each move.
#[derive(Clone)]
pub(crate) struct Shown {
    /// (original offset of a replaced character, bytes added there), in order.
    moves: Vec<(usize, usize)>,
}

impl Shown {
    fn of(text: &Arc<str>) -> (Arc<str>, Shown) {
        if !text.chars().any(needs_escape) {
            return (text.clone(), Shown { moves: Vec::new() });
        }
        let mut shown = String::with_capacity(text.len() + 16);
        let mut moves = Vec::new();
        for (at, c) in text.char_indices() {
            if needs_escape(c) {
                let visible = picture(c);
                moves.push((at, visible.len_utf8() - c.len_utf8()));
                shown.push(visible);
            } else {
                shown.push(c);
            }
        }
        (shown.into(), Shown { moves })
    }

    /// Where `offset` of the original text is in the shown text.
    fn map(&self, offset: usize) -> usize {
        offset + self.moves.iter().take_while(|(at, _)| *at < offset).map(|(_, added)| added).sum::<usize>()
    }
}

/// A character of a source text a terminal would act on rather than show (a carriage return
/// ends a line there).
pub(super) fn needs_escape(c: char) -> bool {
    crate::terminal::needs_escape(c) && c != '\r'
}

/// The visible stand-in for a character `needs_escape` accepts.
pub(super) fn picture(c: char) -> char {
    match c {
        '\0'..='\u{1f}' => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
        '\u{7f}' => '\u{2421}',
        _ => '\u{fffd}',
    }
}

/// `text` with control characters written as escapes (`\u{1b}`), for messages, labels and
/// notes: the one rule of `crate::terminal`.
fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    crate::terminal::escape(text)
}

impl Cache<FileId> for &mut TextRenderer<'_> {
    type Storage = Arc<str>;

    fn fetch(&mut self, id: &FileId) -> Result<&Source<Arc<str>>, impl fmt::Debug> {
        match self.shown(*id) {
            Some((source, _)) => Ok(source),
            None => Err(format!("no file with id {}", id.0)),
        }
    }

    fn display<'a>(&self, id: &'a FileId) -> Option<impl fmt::Display + 'a> {
        Some(escape_controls(&self.files.get(*id).name).into_owned())
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
    fn control_characters_in_the_source_and_messages_are_shown_not_obeyed() {
        let mut files = SourceFiles::new();
        // `\x1b[2J` clears a terminal; the label after it must still point at `y`.
        let file = files.add("main.cf", "x = \"\u{1b}[2J\u{202e}\" y\n");
        let diagnostic = Diagnostic::new(&codes::UNEXPECTED_TOKEN, "unexpected `\u{1b}[2J`")
            .primary(file, Span::new(14, 15), "here")
            .note("found \u{7}");
        let text = TextRenderer::new(&files, false).render(&diagnostic);
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text:?}");
        assert!(text.contains("\u{241b}[2J\u{fffd}"), "{text}");
        assert!(text.contains("unexpected `\\u{1b}[2J`") && text.contains("found \\u{7}"), "{text}");
        let line = text.lines().find(|l| l.contains('\u{241b}')).unwrap();
        let marks = text.lines().skip_while(|l| !l.contains('\u{241b}')).nth(1).unwrap();
        let column = |s: &str, c: char| s.chars().position(|x| x == c).unwrap();
        assert_eq!(column(line, 'y'), column(marks, '┬'), "the label stays under `y`:\n{text}");
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
