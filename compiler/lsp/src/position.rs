//! LSP positions and byte offsets. A position is a 0-based line and a column counted in the
//! negotiated encoding's code units: UTF-16 (what VS Code and the LSP default use) or UTF-8.
//! Lines end at `\n`, `\r\n` or a lone `\r`, as the LSP says and as `LineIndex` counts them.

use std::sync::Arc;

use lsp_types::{Position, Range};
use modelc_diagnostics::{LineIndex, Span};

/// How columns are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

impl Encoding {
    /// UTF-8 when the client offers it (no conversion needed), else the LSP's default UTF-16.
    pub fn negotiate(capabilities: &lsp_types::ClientCapabilities) -> Encoding {
        let offered = capabilities.general.as_ref().and_then(|g| g.position_encodings.as_ref());
        if offered.is_some_and(|kinds| kinds.contains(&lsp_types::PositionEncodingKind::UTF8)) {
            Encoding::Utf8
        } else {
            Encoding::Utf16
        }
    }

    pub fn kind(self) -> lsp_types::PositionEncodingKind {
        match self {
            Encoding::Utf8 => lsp_types::PositionEncodingKind::UTF8,
            Encoding::Utf16 => lsp_types::PositionEncodingKind::UTF16,
        }
    }

    #[cfg(test)]
    fn units(self, c: char) -> usize {
        match self {
            Encoding::Utf8 => c.len_utf8(),
            Encoding::Utf16 => c.len_utf16(),
        }
    }
}

/// `offset` clamped to `text` and moved back to the start of the character it falls in, so
/// that slicing there cannot split a character.
pub(crate) fn char_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// Where the run of characters at the end of `text` that satisfy `keep` starts: a character
/// boundary, whatever the characters before it are (`rfind(..) + 1` is not, after `é`).
pub(crate) fn trailing_start(text: &str, keep: impl Fn(char) -> bool) -> usize {
    text.char_indices().rev().find(|&(_, c)| !keep(c)).map_or(0, |(at, c)| at + c.len_utf8())
}

/// A text with its line index, for converting positions both ways.
///
/// Every conversion costs a binary search, however long the line: a document of one 250 KB
/// line with thousands of names in it is converted name by name. Columns count code units,
/// which differ from bytes only at characters listed in `wide`.
pub struct Text {
    text: Arc<str>,
    lines: LineIndex,
    /// The characters whose byte length is not their length in code units, in text order.
    wide: Vec<Wide>,
}

struct Wide {
    at: u32,
    bytes: u32,
    units: u32,
    /// Bytes minus code units, summed over this character and every wide one before it.
    excess_through: u32,
}

impl Text {
    pub fn new(text: Arc<str>, encoding: Encoding) -> Text {
        let mut wide = Vec::new();
        let mut excess = 0;
        if encoding == Encoding::Utf16 {
            for (at, c) in text.char_indices().filter(|(_, c)| !c.is_ascii()) {
                let (bytes, units) = (c.len_utf8() as u32, c.len_utf16() as u32);
                excess += bytes - units;
                wide.push(Wide { at: at as u32, bytes, units, excess_through: excess });
            }
        }
        Text { lines: LineIndex::new(&text), text, wide }
    }

    /// The text converted.
    pub fn text(&self) -> &Arc<str> {
        &self.text
    }

    /// The byte range of 0-based line `line`, without its line ending.
    fn line(&self, line: u32) -> Option<(usize, usize)> {
        let start = self.lines.line_start(line.checked_add(1)?)? as usize;
        let next = self.lines.line_start(line + 2).map_or(self.text.len(), |n| n as usize);
        let content = &self.text[start..next];
        let end = start + content.trim_end_matches(['\n', '\r']).len();
        Some((start, end))
    }

    /// How many wide characters start before byte `offset`.
    fn wide_before(&self, offset: usize) -> usize {
        self.wide.partition_point(|w| (w.at as usize) < offset)
    }

    /// Bytes minus code units over the text before `offset`.
    fn excess_before(&self, offset: usize) -> usize {
        match self.wide_before(offset) {
            0 => 0,
            n => self.wide[n - 1].excess_through as usize,
        }
    }

    /// Code units from `start` to `end`, both character boundaries.
    fn units(&self, start: usize, end: usize) -> usize {
        (end - start) - (self.excess_before(end) - self.excess_before(start))
    }

    /// The byte offset of a position. A position past the end of its line is the line's end;
    /// a line past the end of the text is the text's end (clients may send either). A position
    /// inside a character (half a surrogate pair) is the character's end.
    pub fn offset(&self, position: Position) -> usize {
        let Some((start, end)) = self.line(position.line) else { return self.text.len() };
        let wanted = position.character as usize;
        if wanted >= self.units(start, end) {
            return end;
        }
        // The first wide character on the line with at least `wanted` units before it: the
        // offset is in the run of one-byte characters before it, or inside the one before.
        let (first, last) = (self.wide_before(start), self.wide_before(end));
        let next = first + self.wide[first..last].partition_point(|w| self.units(start, w.at as usize) < wanted);
        if next == first {
            // Counted in bytes (UTF-8 columns, or an ASCII run): inside a character is its end.
            let mut offset = start + wanted;
            while !self.text.is_char_boundary(offset) {
                offset += 1;
            }
            return offset;
        }
        let previous = &self.wide[next - 1];
        let after = previous.at as usize + previous.bytes as usize;
        let units_after = self.units(start, previous.at as usize) + previous.units as usize;
        after + wanted.saturating_sub(units_after)
    }

    /// The position of a byte offset (clamped to the text, and to a character boundary).
    pub fn position(&self, offset: usize) -> Position {
        let offset = char_boundary(&self.text, offset);
        let line = self.lines.line(offset as u32).saturating_sub(1);
        let start = self.lines.line_start(line + 1).unwrap_or(0) as usize;
        Position { line, character: self.units(start, offset) as u32 }
    }

    pub fn range(&self, span: Span) -> Range {
        Range { start: self.position(span.start as usize), end: self.position(span.end as usize) }
    }

    pub fn span(&self, range: Range) -> Span {
        let (start, end) = (self.offset(range.start), self.offset(range.end));
        Span::new(start.min(end), start.max(end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    #[test]
    fn utf16_counts_surrogate_pairs_and_utf8_counts_bytes() {
        let source = "a = \"é😀x\"\nb = 1\n";
        let text = Text::new(source.into(), Encoding::Utf16);
        let x = source.find('x').unwrap_or_default();
        // `a = "` is 5 units, é is 1, 😀 is 2 in UTF-16.
        assert_eq!(text.position(x), pos(0, 8));
        assert_eq!(text.offset(pos(0, 8)), x);
        let utf8 = Text::new(source.into(), Encoding::Utf8);
        assert_eq!(utf8.position(x), pos(0, 11));
        assert_eq!(utf8.offset(pos(0, 11)), x);
    }

    #[test]
    fn crlf_and_lone_cr_end_lines() {
        let source = "x = 1\r\ny = 2\rz = 3";
        let text = Text::new(source.into(), Encoding::Utf16);
        assert_eq!(text.offset(pos(1, 0)), source.find('y').unwrap_or_default());
        assert_eq!(text.offset(pos(2, 0)), source.find('z').unwrap_or_default());
        // Past the end of a line: the line's end, before its `\r\n`.
        assert_eq!(text.offset(pos(0, 99)), 5);
        assert_eq!(text.position(source.find('z').unwrap_or_default()), pos(2, 0));
        // Past the last line: the end of the text.
        assert_eq!(text.offset(pos(9, 0)), source.len());
    }

    #[test]
    fn scanning_back_over_names_stops_on_a_character_boundary() {
        assert_eq!(trailing_start("x = é", |c| c.is_ascii_alphanumeric()), "x = é".len());
        assert_eq!(trailing_start("éab", |c| c.is_ascii_alphanumeric()), "é".len());
        assert_eq!(trailing_start("ab", |c| c.is_ascii_alphanumeric()), 0);
        assert_eq!(char_boundary("é", 1), 0);
        assert_eq!(char_boundary("é", 9), 2);
    }

    /// The plain scans the tables replace: from the line's start, a character at a time.
    fn scanned_position(text: &str, encoding: Encoding, offset: usize) -> Position {
        let offset = char_boundary(text, offset);
        let lines = LineIndex::new(text);
        let line = lines.line(offset as u32) - 1;
        let start = lines.line_start(line + 1).unwrap_or(0) as usize;
        let character: usize = text[start..offset].chars().map(|c| encoding.units(c)).sum();
        pos(line, character as u32)
    }

    fn scanned_offset(text: &str, encoding: Encoding, position: Position) -> usize {
        let lines = LineIndex::new(text);
        let Some(start) = lines.line_start(position.line + 1) else { return text.len() };
        let start = start as usize;
        let next = lines.line_start(position.line + 2).map_or(text.len(), |n| n as usize);
        let end = start + text[start..next].trim_end_matches(['\n', '\r']).len();
        let mut units = 0;
        for (at, c) in text[start..end].char_indices() {
            if units >= position.character as usize {
                return start + at;
            }
            units += encoding.units(c);
        }
        end
    }

    #[test]
    fn conversions_agree_with_a_scan_of_the_line() {
        let sources = ["", "abc", "é", "aé😀b\r\nx😀😀\ry\n", "😀a\né\n\n日本語 x", "x = \"é😀x\"\nb = 1\n"];
        for source in sources {
            for encoding in [Encoding::Utf16, Encoding::Utf8] {
                let text = Text::new(source.into(), encoding);
                for offset in 0..=source.len() + 1 {
                    assert_eq!(
                        text.position(offset),
                        scanned_position(source, encoding, offset),
                        "{source:?} {offset}"
                    );
                }
                for line in 0..6 {
                    for character in 0..14 {
                        let position = pos(line, character);
                        let expected = scanned_offset(source, encoding, position);
                        assert_eq!(text.offset(position), expected, "{source:?} {position:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_position_inside_a_character_is_its_start() {
        let source = "😀";
        let text = Text::new(source.into(), Encoding::Utf16);
        assert_eq!(text.position(2), pos(0, 0));
        assert_eq!(text.offset(pos(0, 1)), 4);
    }
}
