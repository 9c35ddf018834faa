//! The source files diagnostics point into, with line/column lookup.

use std::sync::Arc;

use crate::Span;

/// Identifies a file in a [`SourceFiles`] collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// A 1-based line and column (columns count characters, not bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineCol {
    pub line: u32,
    pub column: u32,
}

/// Where the lines of a text start. Lines end at `\n`, `\r\n` or a lone `\r` (universal
/// newlines, as the reference reads files and as ariadne draws them). Every layer that turns an
/// offset into a line uses this one index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    /// Byte offset of the start of each line.
    line_starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut line_starts = vec![0];
        let bytes = text.as_bytes();
        for (at, byte) in bytes.iter().enumerate() {
            let ends_line = *byte == b'\n' || (*byte == b'\r' && bytes.get(at + 1) != Some(&b'\n'));
            if ends_line {
                line_starts.push(u32::try_from(at + 1).unwrap_or(u32::MAX));
            }
        }
        LineIndex { line_starts }
    }

    /// The 1-based line of a byte offset.
    pub fn line(&self, offset: u32) -> u32 {
        u32::try_from(self.line_starts.partition_point(|start| *start <= offset)).unwrap_or(u32::MAX)
    }

    /// The byte offset where 1-based line `line` starts.
    pub fn line_start(&self, line: u32) -> Option<u32> {
        self.line_starts.get(usize::try_from(line).ok()?.checked_sub(1)?).copied()
    }
}

/// One file: the name shown to users and its text.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub name: String,
    pub text: Arc<str>,
    lines: LineIndex,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<Arc<str>>) -> SourceFile {
        let text: Arc<str> = text.into();
        let lines = LineIndex::new(&text);
        SourceFile { name: name.into(), text, lines }
    }

    /// The file's line index.
    pub fn lines(&self) -> &LineIndex {
        &self.lines
    }

    /// The line and column of a byte offset (clamped to the file).
    pub fn line_col(&self, offset: u32) -> LineCol {
        let offset = offset.min(u32::try_from(self.text.len()).unwrap_or(u32::MAX));
        let line = self.lines.line(offset) as usize - 1;
        let line_start = self.lines.line_starts[line] as usize;
        let mut end = offset as usize;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let column = self.text[line_start..end].chars().count();
        LineCol {
            line: u32::try_from(line + 1).unwrap_or(u32::MAX),
            column: u32::try_from(column + 1).unwrap_or(u32::MAX),
        }
    }

    /// The span of line `line` (1-based), without its indentation and line ending; `None` past
    /// the end of the file. For places known only by their line (a resource's `source`).
    pub fn line_span(&self, line: u32) -> Option<Span> {
        let start = self.lines.line_start(line)? as usize;
        let end = self.lines.line_start(line + 1).map_or(self.text.len(), |e| e as usize);
        let text = &self.text[start..end];
        let content = text.trim_end_matches(['\n', '\r']);
        let indent = content.len() - content.trim_start().len();
        Some(Span::new(start + indent, start + content.len()))
    }

    /// The span clamped to the file and to character boundaries, so it can always be sliced.
    pub fn clamp(&self, span: Span) -> Span {
        let len = self.text.len();
        let mut start = (span.start as usize).min(len);
        let mut end = (span.end as usize).clamp(start, len);
        while !self.text.is_char_boundary(start) {
            start -= 1;
        }
        while !self.text.is_char_boundary(end) {
            end += 1;
        }
        Span::new(start, end)
    }
}

/// Every file a run has read, indexed by [`FileId`].
#[derive(Debug, Clone, Default)]
pub struct SourceFiles {
    files: Vec<SourceFile>,
}

impl SourceFiles {
    pub fn new() -> SourceFiles {
        SourceFiles::default()
    }

    pub fn add(&mut self, name: impl Into<String>, text: impl Into<Arc<str>>) -> FileId {
        let id = FileId(u32::try_from(self.files.len()).expect("fewer than 4 billion files"));
        self.files.push(SourceFile::new(name, text));
        id
    }

    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn iter(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files.iter().enumerate().map(|(i, f)| (FileId(u32::try_from(i).unwrap_or(u32::MAX)), f))
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_count_characters() {
        let file = SourceFile::new("m.cf", "ab\ncafé x\n");
        assert_eq!(file.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(file.line_col(3), LineCol { line: 2, column: 1 });
        assert_eq!(file.line_col(9), LineCol { line: 2, column: 6 });
        assert_eq!(file.line_col(99), LineCol { line: 3, column: 1 });
    }

    #[test]
    fn carriage_returns_end_lines_like_universal_newlines() {
        let file = SourceFile::new("m.cf", "a\r\nb\rc\n");
        assert_eq!(file.line_col(3), LineCol { line: 2, column: 1 });
        assert_eq!(file.line_col(5), LineCol { line: 3, column: 1 });
    }

    #[test]
    fn clamping_respects_char_boundaries() {
        let file = SourceFile::new("m.cf", "é");
        assert_eq!(file.clamp(Span::new(1, 1)), Span::new(0, 2));
        assert_eq!(file.clamp(Span::new(5, 9)), Span::new(2, 2));
    }
}
