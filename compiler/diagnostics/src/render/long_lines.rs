//! Diagnostics on very long source lines (generated or minified files, hostile input).
//!
//! Ariadne draws every labelled line whole, so one label on a line of 50 MB printed 50 MB and
//! took seconds. A diagnostic that touches such a line is drawn here instead, in the same
//! frame, with a window of each label's line around the label (as rustc trims long lines).

use crate::{Diagnostic, FileId, Severity, SourceFile, SourceFiles};

/// A line longer than this many bytes is shown as a window around each label.
pub(crate) const LONG_LINE: usize = 1_000;
/// Characters of the line shown before a label's start.
const BEFORE: usize = 40;
/// Characters shown from a label's start on: the underline and what follows it.
const AFTER: usize = 80;
/// The longest underline, in characters.
const MAX_UNDERLINE: usize = 60;

/// Whether a label of the diagnostic starts or ends on a line too long to draw whole.
pub(crate) fn touches_long_line(files: &SourceFiles, diagnostic: &Diagnostic) -> bool {
    diagnostic.labels.iter().any(|label| {
        let file = files.get(label.file);
        let span = file.clamp(label.span);
        line_bounds(file, span.start as usize).len() > LONG_LINE
            || line_bounds(file, span.end as usize).len() > LONG_LINE
    })
}

/// The diagnostic as text, ending with a newline: a header, then each label as a window of its
/// line with the label underlined, then the notes and help.
pub(crate) fn render(files: &SourceFiles, diagnostic: &Diagnostic, color: bool) -> String {
    let paint = |text: &str, code: &str| if color { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_owned() };
    let (severity, primary_colour) = match diagnostic.severity {
        Severity::Error => ("Error", "31"),
        Severity::Warning => ("Warning", "33"),
    };
    let mut labels: Vec<_> = diagnostic.labels.iter().collect();
    labels.sort_by_key(|l| (l.file, l.span.start, l.span.end));
    let windows: Vec<Window> = labels.iter().map(|l| Window::of(files.get(l.file), l.span)).collect();
    let width = windows.iter().map(|w| w.line.to_string().len()).max().unwrap_or(1);
    let margin = " ".repeat(width + 1);
    let escape = |text: &str| crate::terminal::escape(text).into_owned();

    let mut out = format!(
        "{} {severity}: {}\n",
        paint(&format!("[{}]", diagnostic.code.id), primary_colour),
        escape(&diagnostic.message)
    );
    let mut current: Option<FileId> = None;
    for (label, window) in labels.iter().zip(&windows) {
        if current != Some(label.file) {
            // The place in the header is the primary label's where it is in this file, as
            // ariadne gives it.
            let place = labels
                .iter()
                .zip(&windows)
                .filter(|(l, _)| l.file == label.file)
                .min_by_key(|(l, _)| !l.primary)
                .map_or(window, |(_, w)| w);
            let corner = if current.is_none() { "╭" } else { "├" };
            let name = escape(&files.get(label.file).name);
            out.push_str(&format!("{margin} {corner}─[ {name}:{}:{} ]\n{margin} │\n", place.line, place.column));
            current = Some(label.file);
        }
        let colour = if label.primary { primary_colour } else { "34" };
        out.push_str(&format!(" {:>width$} │ {}\n", window.line, window.text));
        let message = escape(label.message.as_deref().unwrap_or(""));
        let underline = paint(&"^".repeat(window.underline.1), colour);
        out.push_str(format!("{margin} │ {}{underline} {message}", " ".repeat(window.underline.0)).trim_end());
        out.push('\n');
    }
    out.push_str(&format!("{margin} │\n"));
    for note in &diagnostic.notes {
        out.push_str(&format!("{margin} │ Note: {}\n", escape(note)));
    }
    for help in &diagnostic.help {
        out.push_str(&format!("{margin} │ Help: {}\n", escape(help)));
    }
    out.push_str(&format!("{}╯\n", "─".repeat(width + 2)));
    out
}

/// One label's line as shown.
struct Window {
    /// 1-based line and column of the label's start.
    line: u32,
    column: u32,
    /// The part of the line shown, `…` where it is cut, control characters made visible.
    text: String,
    /// Where the underline starts in `text` and how long it is, in characters.
    underline: (usize, usize),
}

impl Window {
    fn of(file: &SourceFile, span: crate::Span) -> Window {
        let span = file.clamp(span);
        let (start, end) = (span.start as usize, span.end as usize);
        let line = line_bounds(file, start);
        let text = &file.text;
        // Back `BEFORE` characters from the label, forward `AFTER`, within the line.
        let from =
            text[line.start..start].char_indices().rev().take(BEFORE).last().map_or(start, |(at, _)| line.start + at);
        let to = text[start..line.end].char_indices().nth(AFTER).map_or(line.end, |(at, _)| start + at);
        let mut shown = String::new();
        if from > line.start {
            shown.push('…');
        }
        let lead = shown.chars().count() + text[from..start].chars().count();
        for c in text[from..to].chars() {
            shown.push(match c {
                '\t' => ' ',
                c if super::text::needs_escape(c) => super::text::picture(c),
                c => c,
            });
        }
        if to < line.end {
            shown.push('…');
        }
        let underlined = text[start..end.clamp(start, to)].chars().count().clamp(1, MAX_UNDERLINE);
        let at = file.line_col(span.start);
        Window { line: at.line, column: at.column, text: shown, underline: (lead, underlined) }
    }
}

/// The byte range of the line holding `offset`, without its line ending.
fn line_bounds(file: &SourceFile, offset: usize) -> std::ops::Range<usize> {
    let lines = file.lines();
    let line = lines.line(u32::try_from(offset).unwrap_or(u32::MAX));
    let start = lines.line_start(line).map_or(0, |s| s as usize);
    let next = lines.line_start(line + 1).map_or(file.text.len(), |s| s as usize);
    let end = start + file.text[start..next].trim_end_matches(['\n', '\r']).len();
    start..end.max(start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Span, codes, render::text::TextRenderer};

    /// A file whose second line is 300 KB long, and the offset and column of its `@`.
    fn long_file() -> (SourceFiles, FileId, usize, usize) {
        let mut files = SourceFiles::new();
        let line = format!("x = [{}\u{1b}[2J, @]\n", "1, ".repeat(100_000));
        let at = line.find('@').unwrap();
        let column = line[..at].chars().count() + 1;
        let file = files.add("main.cf", format!("y = 1\n{line}z = 2\n"));
        (files, file, 6 + at, column)
    }

    #[test]
    fn a_label_on_a_long_line_shows_a_window_of_it() {
        let (files, file, at, column) = long_file();
        let diagnostic = Diagnostic::new(&codes::ILLEGAL_CHARACTER, "illegal character `@`")
            .primary(file, Span::new(at, at + 1), "here")
            .secondary(file, Span::new(6, 7), "in this assignment")
            .help("remove it");
        let text = TextRenderer::new(&files, false).render(&diagnostic);
        assert!(text.len() < 2_000, "{} bytes", text.len());
        // The header gives the primary label's true place: its column in the whole line.
        assert!(text.contains(&format!("╭─[ main.cf:2:{column} ]")), "{text}");
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text:?}");
        assert!(text.contains("Help: remove it"), "{text}");
        // The underline sits under `@`.
        let lines: Vec<&str> = text.lines().collect();
        let shown = lines.iter().position(|l| l.contains("@]")).expect("the line with `@` is shown");
        let column_of = |s: &str, c: char| s.chars().position(|x| x == c).unwrap();
        assert_eq!(column_of(lines[shown], '@'), column_of(lines[shown + 1], '^'), "{text}");
        assert!(lines[shown + 1].ends_with("^ here"), "{text}");
    }

    #[test]
    fn short_lines_are_drawn_by_ariadne_as_before() {
        let mut files = SourceFiles::new();
        let file = files.add("main.cf", "x = @\n");
        let diagnostic = Diagnostic::new(&codes::ILLEGAL_CHARACTER, "illegal").primary(file, Span::new(4, 5), "here");
        assert!(!touches_long_line(&files, &diagnostic));
        let (files, file, at, _) = long_file();
        let diagnostic = Diagnostic::new(&codes::ILLEGAL_CHARACTER, "illegal").primary(file, Span::new(at, at + 1), "");
        assert!(touches_long_line(&files, &diagnostic));
    }
}
