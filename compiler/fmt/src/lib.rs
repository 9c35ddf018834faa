//! `modelc fmt`: one canonical layout for `.cf` files.
//!
//! The formatter works on the token stream, with the comments found between tokens, so every
//! comment and docstring stays where it was, in order. It re-indents blocks (`entity`,
//! `implementation`, `for`, `if` … `end`) by four spaces, normalises the spaces between tokens,
//! and the blank lines between statements (`docs/fmt.md` lists every rule, each tested in `tests/rules.rs`). It keeps line breaks
//! where the author put them and keeps strings, numbers and regexes exactly as written. A line
//! longer than [`WIDTH`] has its first call, list or dict split one element per line, with a
//! trailing comma (`wrap.rs`); short lines are never joined.
//!
//! It refuses a file with syntax errors, and it checks its own work: the output must parse to
//! the same syntax tree as the input (spans aside), or the file is left as it was and an error
//! says so. Formatting a formatted file changes nothing.

mod layout;
mod wrap;

pub use wrap::WIDTH;

use modelc_diagnostics::FileId;

/// Why a file was not formatted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The file has syntax errors (how many): what it means is not certain, so it is not touched.
    Syntax(usize),
    /// The formatted text would mean something else: a bug in the formatter, never written.
    Changed,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Syntax(1) => write!(f, "the file has a syntax error; fix it first (`modelc parse` shows it)"),
            Error::Syntax(n) => write!(f, "the file has {n} syntax errors; fix them first (`modelc parse` shows them)"),
            Error::Changed => {
                write!(f, "formatting would change what the file means (a formatter bug); left as it was")
            }
        }
    }
}

impl std::error::Error for Error {}

/// The canonical layout of `source`.
pub fn format(source: &str) -> Result<String, Error> {
    let before = modelc_syntax::parse(FileId(0), source);
    let errors = before.diagnostics.iter().filter(|d| d.is_error()).count();
    if errors > 0 {
        return Err(Error::Syntax(errors));
    }
    let formatted = wrap::wrap(layout::layout(source), layout::layout);
    let after = modelc_syntax::parse(FileId(0), &formatted);
    if after.has_errors() || tree(&before.file) != tree(&after.file) {
        return Err(Error::Changed);
    }
    Ok(formatted)
}

/// The syntax tree as text without its spans (`12..40`, `name@12..16`): what the file means.
fn tree(file: &modelc_syntax::ast::File) -> String {
    let dump = modelc_syntax::dump::dump(file);
    let bytes = dump.as_bytes();
    let mut out = String::with_capacity(dump.len());
    let mut at = 0;
    while at < bytes.len() {
        if let Some(len) = span_at(&bytes[at..]) {
            at += len;
            continue;
        }
        let c = dump[at..].chars().next().unwrap_or(' ');
        out.push(c);
        at += c.len_utf8();
    }
    out
}

/// The length of a span written at the start of `bytes` (`@`? digits `..` digits), if one is.
fn span_at(bytes: &[u8]) -> Option<usize> {
    let mut at = usize::from(bytes.first() == Some(&b'@'));
    let digits = |from: usize| bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    let first = digits(at);
    if first == 0 || bytes.get(at + first..at + first + 2) != Some(b"..") {
        return None;
    }
    at += first + 2;
    let second = digits(at);
    (second > 0).then_some(at + second)
}
