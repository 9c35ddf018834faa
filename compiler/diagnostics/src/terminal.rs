//! Text for a terminal from sources we do not control (a model, a store, a file system): the
//! characters a terminal would act on rather than show are written as escapes, so that a
//! resource id or an export message holding `\x1b[2J` cannot clear the screen, set the window's
//! title or hide what follows. One rule for every command: diagnostics use [`escape`], and the
//! text output of the store and deploy commands goes through [`SafeWriter`].

use std::borrow::Cow;
use std::io::{self, Write};

/// A character a terminal would act on rather than show: C0 and C1 controls (but tab and line
/// feed) and DEL, and the bidirectional overrides, which make text read differently from what
/// it holds.
pub fn needs_escape(c: char) -> bool {
    (c.is_control() && !matches!(c, '\t' | '\n')) || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `text` with the characters [`needs_escape`] accepts written as Rust escapes (`\u{1b}`).
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if needs_escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A writer that escapes what it is given with [`escape`] on its way to `inner`. Characters
/// split across writes are held until whole; bytes that are not UTF-8 are written as `\xNN`.
pub struct SafeWriter<W: Write> {
    inner: W,
    /// The start of a character whose other bytes have not come yet.
    pending: Vec<u8>,
}

impl<W: Write> SafeWriter<W> {
    pub fn new(inner: W) -> SafeWriter<W> {
        SafeWriter { inner, pending: Vec::new() }
    }

    fn write_invalid(&mut self, bytes: &[u8]) -> io::Result<()> {
        for byte in bytes {
            write!(self.inner, "\\x{byte:02x}")?;
        }
        Ok(())
    }
}

impl<W: Write> Write for SafeWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let mut bytes = std::mem::take(&mut self.pending);
        let mut start = 0;
        loop {
            match std::str::from_utf8(&bytes[start..]) {
                Ok(text) => {
                    self.inner.write_all(escape(text).as_bytes())?;
                    break;
                }
                Err(error) => {
                    let valid = start + error.valid_up_to();
                    let text = std::str::from_utf8(&bytes[start..valid]).unwrap_or_default();
                    self.inner.write_all(escape(text).as_bytes())?;
                    match error.error_len() {
                        Some(len) => {
                            let invalid = bytes[valid..valid + len].to_vec();
                            self.write_invalid(&invalid)?;
                            start = valid + len;
                        }
                        None => {
                            // An incomplete character at the end: kept for the next write.
                            bytes.drain(..valid);
                            self.pending = bytes;
                            break;
                        }
                    }
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let pending = std::mem::take(&mut self.pending);
        self.write_invalid(&pending)?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for SafeWriter<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_text_is_kept() {
        assert_eq!(escape("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(escape("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(escape("\u{1b}]0;title\u{7}"), "\\u{1b}]0;title\\u{7}");
        assert_eq!(escape("x\u{202e}y\r"), "x\\u{202e}y\\r");
        assert_eq!(escape("café"), "café");
    }

    #[test]
    fn the_writer_escapes_across_split_writes() {
        let mut out = Vec::new();
        {
            let mut writer = SafeWriter::new(&mut out);
            let text = "é\u{9b}\u{1b}[31m".as_bytes();
            // Byte by byte: every multi-byte character arrives split.
            for byte in text {
                writer.write_all(std::slice::from_ref(byte)).unwrap();
            }
            writer.write_all(b"\xff!").unwrap();
        }
        assert_eq!(String::from_utf8(out).unwrap(), "é\\u{9b}\\u{1b}[31m\\xff!");
    }
}
