//! Turns string, f-string and regex tokens into their syntax-tree values.
//!
//! Escapes are decoded the way the reference's Python `unicode_escape` codec does, except for
//! its defect (spec §1.5): the reference encodes the text to UTF-8 first and decodes it back as
//! Latin-1, so `"café"` becomes `"cafÃ©"`. We keep non-ASCII text intact.
//!
//! Interpolations and f-string fields are found while scanning the raw token text, so each
//! interpolated name gets the exact span it has in the source.

use modelc_diagnostics::{Span, codes};

use crate::ast::{FStrField, FStrLit, FStrPart, Ident, RegexLit, StrLit, StrPart, StrStyle};
use crate::sink::{Sink, add_help};

/// A string token (`"…"`, `'…'`, `"""…"""` or `r"…"`) starting at byte `start`.
pub(crate) fn string(raw: &str, start: usize, sink: &mut Sink) -> StrLit {
    let span = Span::new(start, start + raw.len());
    let (style, body_offset, body) = if let Some(rest) = raw.strip_prefix('r') {
        (StrStyle::Raw, 2, &rest[1..rest.len() - 1])
    } else if raw.starts_with("\"\"\"") {
        // The reference keeps the text between the first three and the last three characters,
        // so extra quotes of a 4- or 5-quote delimiter belong to the value.
        (StrStyle::Triple, 3, &raw[3..raw.len() - 3])
    } else {
        (StrStyle::Plain, 1, &raw[1..raw.len() - 1])
    };
    let parts = if style == StrStyle::Raw {
        vec![StrPart::Text(body.to_owned())]
    } else {
        split_interpolations(body, start + body_offset, sink)
    };
    StrLit { style, parts, span }
}

/// Decodes escapes and splits out `{{ a.b }}` interpolations.
fn split_interpolations(body: &str, body_start: usize, sink: &mut Sink) -> Vec<StrPart> {
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut at = 0;
    while at < body.len() {
        let rest = &body[at..];
        if rest.starts_with('\\') {
            at += decode_escape(body, at, body_start, &mut text, sink);
        } else if let Some((path, used)) = interpolation_at(rest, body_start + at) {
            if !text.is_empty() {
                parts.push(StrPart::Text(std::mem::take(&mut text)));
            }
            parts.push(StrPart::Interpolation(path));
            at += used;
        } else if let Some(used) = not_an_interpolation(rest) {
            // Kept as text, as the reference does, but never what was meant.
            let span = Span::new(body_start + at, body_start + at + used);
            let diagnostic = sink.report(
                &codes::INTERPOLATION_NOT_A_NAME,
                span,
                format!("`{}` is not interpolated: it is left in the string as written", &rest[..used]),
                "only a name or a dotted chain of names is interpolated",
            );
            add_help(
                diagnostic,
                "`{{ name }}` and `{{ a.b.c }}` are interpolated; for anything else, assign the value \
                 to a variable first and interpolate the variable",
            );
            text.push_str(&rest[..used]);
            at += used;
        } else {
            let c = rest.chars().next().expect("in bounds");
            text.push(c);
            at += c.len_utf8();
        }
    }
    if !text.is_empty() || parts.is_empty() {
        parts.push(StrPart::Text(text));
    }
    parts
}

/// `{{ … }}` at the start of `text` that holds something other than a name chain (an index, a
/// call, an operator: `{{ a.b[0] }}`, `{{ x + 1 }}`) on one line: how long it is. Empty braces
/// and text with no name in it (`{{}}`, `{{ }}`, templates' `{{-`) are not taken for attempts.
fn not_an_interpolation(text: &str) -> Option<usize> {
    const LONGEST: usize = 80;
    let inner = text.strip_prefix("{{")?;
    // Only the first bytes can hold the closing braces of an attempt: searching the whole rest
    // from every `{{` made a string of braces quadratic.
    let window = &inner.as_bytes()[..inner.len().min(LONGEST + 2)];
    let close = window.windows(2).position(|pair| pair == b"}}")?;
    let content = &inner[..close];
    let attempted = content.trim().chars().next().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && !content.contains(['\n', '\r', '{', '"', '\''])
        && content.len() <= LONGEST;
    attempted.then_some(2 + close + 2)
}

/// Matches `{{`, optional whitespace, a name of `[.A-Za-z0-9_-]+`, optional whitespace, `}}`
/// at the start of `text` (which starts at byte `offset` of the file).
fn interpolation_at(text: &str, offset: usize) -> Option<(Vec<Ident>, usize)> {
    let inner = text.strip_prefix("{{")?;
    let leading = inner.len() - inner.trim_start().len();
    let name_len =
        inner[leading..].bytes().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')).count();
    if name_len == 0 {
        return None;
    }
    let after_name = &inner[leading + name_len..];
    let trailing = after_name.len() - after_name.trim_start().len();
    if !after_name[trailing..].starts_with("}}") {
        return None;
    }
    let name_start = offset + 2 + leading;
    let name = &inner[leading..leading + name_len];
    Some((split_path(name, name_start), 2 + leading + name_len + trailing + 2))
}

/// Splits `a.b.c` (starting at byte `start`) into identifiers with their own spans.
/// The names of a dotted chain, each without the whitespace around it: the reference accepts
/// spaces, tabs and newlines around the names and dots of an f-string field (`{ a .b }`).
fn split_path(name: &str, start: usize) -> Vec<Ident> {
    let mut out = Vec::new();
    let mut offset = start;
    for segment in name.split('.') {
        let leading = segment.len() - segment.trim_start_matches(is_blank).len();
        let trimmed = segment.trim_matches(is_blank);
        let at = offset + leading;
        out.push(Ident { name: trimmed.to_owned(), span: Span::new(at, at + trimmed.len()) });
        offset += segment.len() + 1;
    }
    out
}

fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// Decodes the escape at `body[at..]` (which starts with a backslash) into `out` and returns
/// how many bytes it used.
fn decode_escape(body: &str, at: usize, body_start: usize, out: &mut String, sink: &mut Sink) -> usize {
    let bytes = body.as_bytes();
    let Some(&next) = bytes.get(at + 1) else {
        let span = Span::new(body_start + at, body_start + at + 1);
        sink.report(
            &codes::INVALID_ESCAPE,
            span,
            "a string cannot end with a lone backslash",
            "this backslash escapes nothing",
        );
        return 1;
    };
    let simple = match next {
        b'\\' => Some('\\'),
        b'\'' => Some('\''),
        b'"' => Some('"'),
        b'a' => Some('\u{07}'),
        b'b' => Some('\u{08}'),
        b'f' => Some('\u{0c}'),
        b'n' => Some('\n'),
        b'r' => Some('\r'),
        b't' => Some('\t'),
        b'v' => Some('\u{0b}'),
        _ => None,
    };
    if let Some(c) = simple {
        out.push(c);
        return 2;
    }
    let span_of = |len: usize| Span::new(body_start + at, body_start + at + len);
    match next {
        b'\n' => 2, // a line continuation inside a triple-quoted string
        b'0'..=b'7' => {
            let digits = bytes[at + 1..].iter().take(3).take_while(|b| (b'0'..=b'7').contains(*b)).count();
            let value = u32::from_str_radix(&body[at + 1..at + 1 + digits], 8).unwrap_or(0);
            out.push(char::from_u32(value).unwrap_or('\u{fffd}'));
            1 + digits
        }
        b'x' | b'u' | b'U' => {
            let width = match next {
                b'x' => 2,
                b'u' => 4,
                _ => 8,
            };
            let digits = bytes[at + 2..].iter().take(width).take_while(|b| b.is_ascii_hexdigit()).count();
            let value = u32::from_str_radix(&body[at + 2..at + 2 + digits], 16).ok();
            match value.and_then(char::from_u32).filter(|_| digits == width) {
                Some(c) => out.push(c),
                None => {
                    let escape = &body[at..at + 2 + digits];
                    let diagnostic = sink.report(
                        &codes::INVALID_ESCAPE,
                        span_of(2 + digits),
                        format!("invalid escape `{escape}`"),
                        if digits == width {
                            "not a valid character".to_owned()
                        } else {
                            format!("`\\{}` needs exactly {width} hex digits", next as char)
                        },
                    );
                    add_help(diagnostic, "use a raw string (r\"...\") to keep backslashes as written");
                    out.push('\u{fffd}');
                }
            }
            2 + digits
        }
        b'N' => {
            // `\N{NAME}`: a character by its Unicode name (or alias), case-insensitively.
            let closing = body[at..].find('}').filter(|_| bytes.get(at + 2) == Some(&b'{'));
            let named = closing.and_then(|end| character_named(&body[at + 3..at + end]));
            match (closing, named) {
                (Some(end), Some(c)) => {
                    out.push(c);
                    end + 1
                }
                _ => {
                    let len = closing.map_or(2, |end| end + 1);
                    let diagnostic = sink.report(
                        &codes::INVALID_ESCAPE,
                        span_of(len),
                        format!("invalid escape `{}`", &body[at..at + len]),
                        if closing.is_some() {
                            "no character has this name"
                        } else {
                            "`\\N` needs a name in braces: `\\N{NAME}`"
                        },
                    );
                    add_help(diagnostic, "write the character itself, or `\\u` followed by its code point");
                    out.push('\u{fffd}');
                    len
                }
            }
        }
        _ => {
            // Unknown escapes are kept as written. Only the backslash is consumed here, so the
            // next character is scanned normally (it may start an interpolation).
            let c = body[at + 1..].chars().next().expect("in bounds");
            let diagnostic = sink.report(
                &codes::UNKNOWN_ESCAPE,
                span_of(1 + c.len_utf8()),
                format!("unknown escape `\\{c}` is kept as written"),
                "not an escape sequence",
            );
            add_help(diagnostic, format!("write `\\\\{c}` for a backslash, or use a raw string (r\"...\")"));
            out.push('\\');
            1
        }
    }
}

/// The character with this Unicode name or alias, matched loosely as Python does.
fn character_named(name: &str) -> Option<char> {
    // unicode_names2 4.0 underflows on a name starting with `-` (found by fuzzing); no Unicode
    // name does, and none contains characters other than these.
    let plausible =
        !name.starts_with('-') && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b' ' | b'-' | b'_'));
    if plausible { unicode_names2::character(name) } else { None }
}

/// An f-string token (`f"…"`) starting at byte `start`.
pub(crate) fn fstring(raw: &str, start: usize, sink: &mut Sink) -> FStrLit {
    let span = Span::new(start, start + raw.len());
    let body = &raw[2..raw.len() - 1];
    let mut parser = FormatParser { body, body_start: start + 2, at: 0, sink };
    let parts = match parser.parts(0) {
        Ok(parts) => parts,
        Err((message, at)) => {
            let width = body[at..].chars().next().map_or(0, char::len_utf8);
            let span = Span::new(start + 2 + at, start + 2 + at + width);
            let span = if span.is_empty() { Span::new(start, start + raw.len()) } else { span };
            let diagnostic = sink.report(&codes::INVALID_FSTRING, span, format!("invalid f-string: {message}"), "here");
            add_help(
                diagnostic,
                "a field is `{name}` or `{a.b.c}`, then optionally `!r`, `!s` or `!a`, then optionally `:` and a \
                 format spec (`{port:>5}`); write `{{` and `}}` for literal braces",
            );
            Vec::new()
        }
    };
    FStrLit { parts, span }
}

/// A parser for Python's `str.format` mini-language over an f-string body.
struct FormatParser<'b, 's> {
    body: &'b str,
    body_start: usize,
    at: usize,
    sink: &'s mut Sink,
}

type FormatResult<T> = Result<T, (&'static str, usize)>;

impl FormatParser<'_, '_> {
    /// Literal text and fields up to the end of the body, or (inside a format spec) up to the
    /// `}` closing the enclosing field. `depth` counts enclosing fields.
    fn parts(&mut self, depth: usize) -> FormatResult<Vec<FStrPart>> {
        let mut parts = Vec::new();
        let mut text = String::new();
        while self.at < self.body.len() {
            let rest = &self.body[self.at..];
            if depth > 0 && rest.starts_with('}') {
                break;
            }
            if rest.starts_with("{{") && depth == 0 {
                text.push('{');
                self.at += 2;
            } else if rest.starts_with("}}") && depth == 0 {
                text.push('}');
                self.at += 2;
            } else if rest.starts_with('{') {
                if depth >= 2 {
                    return Err(("format specs nest at most two levels deep", self.at));
                }
                if !text.is_empty() {
                    parts.push(FStrPart::Text(std::mem::take(&mut text)));
                }
                parts.push(FStrPart::Field(self.field(depth)?));
            } else if rest.starts_with('}') {
                return Err(("single '}' encountered", self.at));
            } else if rest.starts_with('\\') {
                self.at += decode_escape(self.body, self.at, self.body_start, &mut text, self.sink);
            } else {
                let c = rest.chars().next().expect("in bounds");
                text.push(c);
                self.at += c.len_utf8();
            }
        }
        if !text.is_empty() {
            parts.push(FStrPart::Text(text));
        }
        Ok(parts)
    }

    /// A replacement field; `self.at` is on its `{`.
    fn field(&mut self, depth: usize) -> FormatResult<FStrField> {
        let open = self.at;
        self.at += 1;
        let name_start = self.at;
        let mut brackets = 0usize;
        while let Some(b) = self.body.as_bytes().get(self.at) {
            match b {
                b'[' => brackets += 1,
                b']' => brackets = brackets.saturating_sub(1),
                b'!' | b':' | b'}' if brackets == 0 => break,
                b'{' if brackets == 0 => return Err(("unexpected '{' in field name", self.at)),
                _ => {}
            }
            self.at += 1;
        }
        let name = &self.body[name_start..self.at];
        let mut conversion = None;
        if self.peek() == Some(b'!') {
            let c = self.body[self.at + 1..].chars().next().ok_or(("expected '}' before end of string", self.at))?;
            if !matches!(c, 'r' | 's' | 'a') {
                return Err(("unknown conversion specifier", self.at + 1));
            }
            conversion = Some(c);
            self.at += 1 + c.len_utf8();
            if !matches!(self.peek(), Some(b':' | b'}')) {
                return Err(("expected ':' after conversion specifier", self.at));
            }
        }
        let mut spec = Vec::new();
        if self.peek() == Some(b':') {
            self.at += 1;
            spec = self.parts(depth + 1)?;
        }
        if self.peek() != Some(b'}') {
            return Err(("expected '}' before end of string", self.at));
        }
        self.at += 1;
        let path = if name.trim_matches(is_blank).is_empty() {
            Vec::new()
        } else {
            split_path(name, self.body_start + name_start)
        };
        Ok(FStrField { path, conversion, spec, span: Span::new(self.body_start + open, self.body_start + self.at) })
    }

    fn peek(&self) -> Option<u8> {
        self.body.as_bytes().get(self.at).copied()
    }
}

/// A regex token (`matching /…/`) starting at byte `start`; checks that the pattern compiles.
pub(crate) fn regex(raw: &str, start: usize, sink: &mut Sink) -> RegexLit {
    let open = raw.find('/').expect("the lexer only makes regex tokens with a `/`");
    let pattern = &raw[open + 1..raw.len() - 1];
    let span = Span::new(start + open, start + raw.len());
    if let Err(error) = fancy_regex::Regex::new(&python_to_rust_regex(pattern)) {
        let message = error.to_string();
        let diagnostic = sink.report(
            &codes::INVALID_REGEX,
            span,
            format!("invalid regex /{pattern}/"),
            message.lines().last().unwrap_or("does not compile").trim().to_owned(),
        );
        add_help(diagnostic, "patterns use Python's `re` syntax; escape special characters with `\\`");
    }
    RegexLit { pattern: pattern.to_owned(), span }
}

/// Rewrites the Python-only spellings of a pattern into their Rust equivalents, for checking.
fn python_to_rust_regex(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('Z') => out.push_str("\\z"),
                Some(next) => {
                    out.push('\\');
                    out.push(next);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use modelc_diagnostics::FileId;

    fn parts(raw: &str) -> (Vec<StrPart>, Vec<&'static str>) {
        let mut sink = Sink::new(FileId(0));
        let lit = string(raw, 0, &mut sink);
        (lit.parts, sink.diagnostics.iter().map(|d| d.code.id).collect())
    }

    fn text(s: &str) -> StrPart {
        StrPart::Text(s.to_owned())
    }

    #[test]
    fn escapes_decode_and_non_ascii_survives() {
        assert_eq!(parts(r#""a\tb\x41\u00e9\101""#).0, [text("a\tbAéA")]);
        assert_eq!(parts("\"café\"").0, [text("café")]);
        assert_eq!(parts(r#"r"a\tb""#).0, [text(r"a\tb")]);
        assert_eq!(parts(r#""a\.b""#), (vec![text(r"a\.b")], vec!["W0001"]));
        assert_eq!(parts(r#""\x4""#).1, ["E0003"]);
        assert_eq!(parts(r#""\N{latin small letter e with acute}!""#).0, [text("é!")]);
        assert_eq!(parts(r#""\N{NO SUCH CHARACTER}""#).1, ["E0003"]);
        // Found by fuzzing: a leading hyphen made the name lookup underflow.
        assert_eq!(parts(r#""\N{-LATIN SMALL LETTER E}""#).1, ["E0003"]);
        assert_eq!(parts(r#""\N{é}""#).1, ["E0003"]);
    }

    #[test]
    fn triple_quotes_keep_extra_quotes() {
        assert_eq!(parts("\"\"\"\"x\"\"\"\"").0, [text("\"x\"")]);
        assert_eq!(parts("\"\"\"a\\\nb\"\"\"").0, [text("ab")]);
    }

    #[test]
    fn interpolations_have_their_own_spans() {
        let (p, _) = parts(r#""x{{ a.b }}y{{}}""#);
        assert_eq!(p.len(), 3);
        let StrPart::Interpolation(path) = &p[1] else { panic!("{p:?}") };
        assert_eq!((path[0].name.as_str(), path[0].span), ("a", Span::new(5, 6)));
        assert_eq!((path[1].name.as_str(), path[1].span), ("b", Span::new(7, 8)));
        assert_eq!(p[2], text("y{{}}"));
        assert_eq!(parts(r#"r"{{a}}""#).0, [text("{{a}}")]);
    }

    fn fields(raw: &str) -> Result<Vec<FStrPart>, String> {
        let mut sink = Sink::new(FileId(0));
        let lit = fstring(raw, 0, &mut sink);
        match sink.diagnostics.first() {
            Some(d) => Err(d.message.clone()),
            None => Ok(lit.parts),
        }
    }

    #[test]
    fn fstring_fields() {
        let parts = fields(r#"f"{{x}} { a.b !r:>{w}} {}""#).expect("valid");
        let FStrPart::Field(field) = &parts[1] else { panic!("{parts:?}") };
        let names: Vec<&str> = field.path.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(
            (names.as_slice(), field.conversion, field.path[0].span),
            (["a", "b"].as_slice(), Some('r'), Span::new(10, 11))
        );
        assert_eq!(field.spec.len(), 2);
        assert_eq!(parts[0], FStrPart::Text("{x} ".to_owned()));
        let FStrPart::Field(positional) = &parts[3] else { panic!("{parts:?}") };
        assert!(positional.path.is_empty());
    }

    #[test]
    fn whitespace_around_field_names_and_dots_is_dropped() {
        let parts = fields("f\"{ \ta .\tb  . c }\"").expect("valid");
        let FStrPart::Field(field) = &parts[0] else { panic!("{parts:?}") };
        let names: Vec<&str> = field.path.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(field.path[0].span, Span::new(5, 6));
    }

    #[test]
    fn malformed_fstrings() {
        assert_eq!(fields(r#"f"{a""#), Err("invalid f-string: expected '}' before end of string".to_owned()));
        assert_eq!(fields(r#"f"a}""#), Err("invalid f-string: single '}' encountered".to_owned()));
        assert!(fields(r#"f"{a!x}""#).is_err());
        // Found by fuzzing: a multi-byte conversion character must not split the error span.
        let mut sink = Sink::new(modelc_diagnostics::FileId(0));
        let raw = "f\"{name!r\u{fffd}x}\"";
        fstring(raw, 0, &mut sink);
        let span = sink.diagnostics[0].labels[0].span;
        assert!(raw.is_char_boundary(span.start as usize) && raw.is_char_boundary(span.end as usize));
    }

    #[test]
    fn regexes_are_checked() {
        let mut sink = Sink::new(FileId(0));
        let lit = regex("matching /^a\\/b(?=c)\\Z/", 0, &mut sink);
        assert_eq!(lit.pattern, "^a\\/b(?=c)\\Z");
        assert!(sink.diagnostics.is_empty(), "{:?}", sink.diagnostics);
        regex("matching /a(/", 0, &mut sink);
        assert_eq!(sink.diagnostics.len(), 1);
    }
}
