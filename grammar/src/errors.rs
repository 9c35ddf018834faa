//! Turns lexer and LALRPOP errors into diagnostics people can act on.
//!
//! LALRPOP reports the offending token and the terminals it would have accepted. We name the
//! token in words, fold long expected-lists into categories ("an expression", "an operator"),
//! recognise a keyword used as a name, and on an unexpected end of file point at the bracket or
//! block that is still open.

use lalrpop_util::ParseError;
use modelc_diagnostics::{Span, codes};

use crate::lexer::{LexErrorKind, Spanned, Token};
use crate::sink::{Sink, add_help, add_secondary};

/// Reports every error token the lexer produced.
pub(crate) fn report_lex_errors(tokens: &[Spanned<'_>], text: &str, sink: &mut Sink) {
    for (start, token, end) in tokens {
        let Token::Error(kind) = token else { continue };
        let span = Span::new(*start, *end);
        match kind {
            LexErrorKind::IllegalCharacter => {
                let chars = &text[*start..*end];
                let shown = if chars.chars().count() == 1 {
                    format!("character {chars:?}")
                } else {
                    format!("characters {chars:?}")
                };
                let diagnostic = sink.report(
                    &codes::ILLEGAL_CHARACTER,
                    span,
                    format!("illegal {shown}"),
                    "not part of the language",
                );
                let help = match chars.chars().next() {
                    Some(';') => "statements need no separator; remove the `;`",
                    Some('\u{feff}') => "this is a byte-order mark; save the file as UTF-8 without BOM",
                    Some('!') => "negation is written `not`; inequality is `!=`",
                    Some('&' | '|') => "boolean operators are written `and` and `or`",
                    Some(c) if !c.is_ascii() => {
                        "names use ASCII letters, digits, `_` and `-`; other text belongs in strings"
                    }
                    _ => "remove it, or put it inside a string",
                };
                add_help(diagnostic, help);
            }
            LexErrorKind::UnterminatedString => {
                let diagnostic = sink.report(
                    &codes::UNTERMINATED_STRING,
                    span,
                    "unterminated string",
                    "this string has no closing quote on its line",
                );
                add_help(
                    diagnostic,
                    "single-line strings cannot span lines; use a triple-quoted string (\"\"\"...\"\"\") for text over several lines",
                );
            }
            LexErrorKind::UnterminatedTripleString => {
                let opening = Span::new(*start, *start + 3);
                sink.report(
                    &codes::UNTERMINATED_STRING,
                    opening,
                    "unterminated triple-quoted string",
                    "this string is never closed with `\"\"\"`",
                );
            }
        }
    }
}

/// How many tokens must follow a reported syntax error before another one is reported
/// (yacc's rule): errors closer than this are almost always the same mistake seen again.
const ERROR_DISTANCE: usize = 3;

/// Reports the parser's errors in order, dropping those that merely echo an earlier one.
pub(crate) fn report_parse_errors(
    errors: Vec<ParseError<usize, Token<'_>, LexErrorKind>>,
    tokens: &[Spanned<'_>],
    text: &str,
    sink: &mut Sink,
) {
    // (token index, byte offset) of the last reported error.
    let mut last_reported: Option<(usize, usize)> = None;
    let reported_before = sink.diagnostics.iter().any(|d| d.is_error());
    // Lines are compared by number: scanning the text between two errors for a line break
    // made a long line of errors quadratic.
    let lines = modelc_diagnostics::LineIndex::new(text);
    let line_of = |offset: usize| lines.line(u32::try_from(offset).unwrap_or(u32::MAX));
    for error in errors {
        let index = match &error {
            ParseError::UnrecognizedToken { token: (start, ..), .. }
            | ParseError::ExtraToken { token: (start, ..) } => tokens.partition_point(|(s, _, _)| s < start),
            ParseError::UnrecognizedEof { .. } => {
                if (last_reported.is_some() || reported_before) && innermost_unclosed(tokens, text).is_none() {
                    continue;
                }
                tokens.len()
            }
            ParseError::InvalidToken { .. } | ParseError::User { .. } => tokens.len(),
        };
        let offset = tokens.get(index).map_or(text.len(), |t| t.0);
        // Too close to the previous error, or on its line: the same mistake seen again.
        let echo = last_reported.is_some_and(|(last_index, last_offset)| {
            index < last_index + ERROR_DISTANCE || offset <= last_offset || line_of(last_offset) == line_of(offset)
        });
        if echo {
            continue;
        }
        last_reported = Some((index, offset));
        report_parse_error(error, tokens, text, sink);
    }
}

/// Reports one LALRPOP error.
fn report_parse_error(
    error: ParseError<usize, Token<'_>, LexErrorKind>,
    tokens: &[Spanned<'_>],
    text: &str,
    sink: &mut Sink,
) {
    match error {
        ParseError::UnrecognizedToken { token: (start, token, end), expected } => {
            unexpected_token(sink, tokens, text, Span::new(start, end), token, &expected);
        }
        ParseError::ExtraToken { token: (start, token, end) } => {
            unexpected_token(sink, tokens, text, Span::new(start, end), token, &[]);
        }
        ParseError::UnrecognizedEof { location, expected } => {
            // `x = True` as the file's last line: the mistake is the word.
            if let Some(&(start, Token::Cid(word @ ("True" | "False" | "None" | "Null")), end)) = tokens.last() {
                // Still the end of the file's error (the reference reports reaching it).
                capitalised_literal(sink, &codes::UNEXPECTED_EOF, word, Span::new(start, end));
                return;
            }
            let at = Span::new(location, location);
            let wanted = describe_expected(&expected);
            let message = match &wanted {
                Some(wanted) => format!("unexpected end of file, expected {wanted}"),
                None => "unexpected end of file".to_owned(),
            };
            let diagnostic = sink.report(&codes::UNEXPECTED_EOF, at, message, "the file ends here");
            if let Some((span, what)) = innermost_unclosed(tokens, text) {
                add_secondary(diagnostic, span, what);
            }
        }
        // The lexer never fails (errors are tokens), and we do not use LALRPOP's own lexer.
        ParseError::InvalidToken { location } => {
            sink.report(&codes::UNEXPECTED_TOKEN, Span::new(location, location + 1), "invalid token", "here");
        }
        ParseError::User { .. } => {}
    }
}

fn unexpected_token(
    sink: &mut Sink,
    tokens: &[Spanned<'_>],
    text: &str,
    span: Span,
    token: Token<'_>,
    expected: &[String],
) {
    if matches!(token, Token::Error(_)) {
        return; // The lexer already explained it.
    }
    let at = tokens.iter().position(|(s, _, _)| *s == span.start as usize);
    let previous = at.and_then(|at| at.checked_sub(1)).map(|p| tokens[p]);
    let next = at.and_then(|at| tokens.get(at + 1)).map(|t| t.1);
    let wanted = describe_expected(expected);
    let expected_text = wanted.as_ref().map(|w| format!(", expected {w}")).unwrap_or_default();

    // A keyword in a name's place: `for = 1` fails at `=`, `string end` at `end`.
    let keyword_as_name = match (previous, token) {
        (Some((start, previous, end)), Token::Eq | Token::PlusEq) if previous.is_keyword() => {
            Some((Span::new(start, end), previous))
        }
        _ if token.is_keyword()
            && expected.iter().any(|e| e == "\"ID\"")
            && (matches!(next, Some(Token::Eq | Token::PlusEq | Token::Dot | Token::CallParen | Token::Comma))
                || matches!(
                    previous.map(|p| p.1),
                    Some(
                        Token::Id(_)
                            | Token::As
                            | Token::Import
                            | Token::Typedef
                            | Token::Implementation
                            | Token::Question
                            | Token::RBracket
                    )
                )) =>
        {
            Some((span, token))
        }
        _ => None,
    };
    if let Some((span, keyword)) = keyword_as_name {
        let word = keyword.fixed_text().unwrap_or_default();
        let diagnostic = sink.report(
            &codes::RESERVED_KEYWORD,
            span,
            format!("`{word}` is a reserved keyword and cannot be used as a name"),
            "a keyword where a name is expected",
        );
        add_help(diagnostic, format!("choose another name, such as `{word}_`"));
        return;
    }
    // `x = True` parses as far as `True` (an entity name, as in a constructor): the parser stops
    // at what follows, but the mistake is the word before.
    if let Some((start, Token::Cid(word @ ("True" | "False" | "None" | "Null")), end)) = previous {
        capitalised_literal(sink, &codes::UNEXPECTED_TOKEN, word, Span::new(start, end));
        return;
    }
    if let Some(at) = at
        && across_lines(sink, tokens, text, at, expected)
    {
        return;
    }
    let found = token.describe();
    let label = match &wanted {
        Some(wanted) => format!("expected {wanted}"),
        None => "not expected here".to_owned(),
    };
    let diagnostic = sink.report(&codes::UNEXPECTED_TOKEN, span, format!("unexpected {found}{expected_text}"), label);
    let help = hint(previous.map(|p| p.1), token, expected)
        .or_else(|| at.and_then(|at| lookup_across_lines(tokens, at, text)));
    if let Some(help) = help {
        add_help(diagnostic, help);
    }
}

/// `True`, `False`, `None` or `Null` where a value was meant: Python's words, read as an entity.
fn capitalised_literal(sink: &mut Sink, code: &'static modelc_diagnostics::Code, word: &str, span: Span) {
    let fixed = match word {
        "True" => "true",
        "False" => "false",
        _ => "null",
    };
    let diagnostic =
        sink.report(code, span, format!("`{word}` is not a value of the language"), "read as an entity name");
    add_help(diagnostic, format!("booleans are `true` and `false`, and no value is `null`: write `{fixed}`"));
}

/// Errors whose cause is on an earlier line than where the parser stopped: an operator that
/// ends a line, a bracket never closed, a comma missing between elements on separate lines.
/// Reported at the cause; returns whether it reported.
fn across_lines(sink: &mut Sink, tokens: &[Spanned<'_>], text: &str, at: usize, expected: &[String]) -> bool {
    let (start, token, end) = tokens[at];
    // The first token of the error's line, and the last of the line before.
    let first = (0..=at).rev().take_while(|&i| i == at || !ends_line_before(text, tokens[i].2, tokens[i + 1].0)).last();
    let Some(first) = first.filter(|&f| f > 0) else { return false };
    let (op_start, before, op_end) = tokens[first - 1];
    if is_binary_operator(before) {
        let word = before.fixed_text().map_or_else(|| before.describe(), |t| format!("`{t}`"));
        let diagnostic = sink.report(
            &codes::UNEXPECTED_TOKEN,
            Span::new(op_start, op_end),
            format!("the line ends with {word}, so the expression runs on into the next line"),
            "nothing follows this operator on its line",
        );
        add_secondary(
            diagnostic,
            Span::new(start, end),
            format!("{} cannot continue the expression", token.describe()),
        );
        add_help(diagnostic, format!("complete the expression after {word}, or remove it"));
        return true;
    }
    if first != at {
        return false;
    }
    // The error starts a line: is it inside a bracket opened on an earlier line?
    let Some(open) = innermost_open_bracket(tokens, at) else { return false };
    let (b_start, bracket, b_end) = tokens[open];
    let opener = bracket.fixed_text().unwrap_or("(");
    if closes_later(tokens, open) {
        if !expected.iter().any(|e| e == "\",\"") {
            return false;
        }
        // Elements on separate lines without a comma between them.
        let (_, _, last_end) = tokens[at - 1];
        let diagnostic = sink.report(
            &codes::UNEXPECTED_TOKEN,
            Span::new(last_end, last_end),
            "a comma is missing between two elements",
            "add `,` here",
        );
        add_secondary(diagnostic, Span::new(b_start, b_end), format!("inside this `{opener}`"));
        return true;
    }
    let closer = match bracket {
        Token::LBracket | Token::LookupBracket => "]",
        Token::LBrace => "}",
        _ => ")",
    };
    let diagnostic = sink.report(
        &codes::UNEXPECTED_TOKEN,
        Span::new(b_start, b_end),
        format!("this `{opener}` is never closed"),
        format!("no `{closer}` closes this"),
    );
    add_secondary(diagnostic, Span::new(start, end), "the next line starts a new statement");
    let line = text[..tokens[at - 1].2].matches('\n').count() + 1;
    add_help(diagnostic, format!("add `{closer}` at the end of line {line}"));
    true
}

/// Whether a line break lies between offsets `a` and `b`.
fn ends_line_before(text: &str, a: usize, b: usize) -> bool {
    text[a..b].contains(['\n', '\r'])
}

/// An operator that needs an operand on its right.
pub(crate) fn is_binary_operator(token: Token<'_>) -> bool {
    matches!(
        token,
        Token::Plus
            | Token::Minus
            | Token::Star
            | Token::Slash
            | Token::Percent
            | Token::DoubleStar
            | Token::Cmp(_)
            | Token::And
            | Token::Or
            | Token::Not
            | Token::NotIn
            | Token::In
            | Token::Eq
            | Token::PlusEq
    )
}

/// The innermost bracket open before token `at`.
fn innermost_open_bracket(tokens: &[Spanned<'_>], at: usize) -> Option<usize> {
    let mut open = Vec::new();
    for (i, (_, token, _)) in tokens[..at].iter().enumerate() {
        if token.opens_bracket() {
            open.push(i);
        } else if token.closes_bracket() {
            open.pop();
        }
    }
    open.pop()
}

/// Whether the bracket at `open` is closed somewhere after it.
fn closes_later(tokens: &[Spanned<'_>], open: usize) -> bool {
    let mut depth = 0usize;
    for (_, token, _) in &tokens[open..] {
        if token.opens_bracket() {
            depth += 1;
        } else if token.closes_bracket() {
            depth -= 1;
            if depth == 0 {
                return true;
            }
        }
    }
    false
}

/// A targeted hint for common mistakes, judged from the tokens around the error.
fn hint(previous: Option<Token<'_>>, token: Token<'_>, expected: &[String]) -> Option<String> {
    let inside_block = expected.iter().any(|e| e == "\"end\"");
    match (previous, token) {
        (Some(Token::Cid(word)), Token::Eq) => Some(format!(
            "capitalised names are entity types; variables start with a lower-case letter: `{}`",
            word.to_ascii_lowercase()
        )),
        (
            _,
            Token::Entity | Token::Implementation | Token::Implement | Token::Typedef | Token::Index | Token::Import,
        ) if inside_block => {
            Some("definitions are only allowed at the top level of a file, not inside blocks".to_owned())
        }
        (_, Token::Undef) => {
            Some("`undef` is only allowed as an attribute default, to remove an inherited one".to_owned())
        }
        (Some(Token::Matching), Token::Slash) => {
            Some("a regex needs whitespace after `matching`: `matching /.../`".to_owned())
        }
        (_, Token::RelArrow(arrow)) => {
            Some(format!("`{arrow}` is a relation arrow; put spaces around operators (`5 - -1`, `3 < -1`)"))
        }
        (_, Token::Minus) => {
            Some("there is no unary minus; write `0 - x`, or a negative number without a space (`-1`)".to_owned())
        }
        (Some(Token::RParen), Token::Dot) => {
            Some("attributes can only be read from names; assign the result to a variable first".to_owned())
        }
        (Some(Token::Int(_)), Token::Dot) => Some("a float needs digits after the dot: `1.0`".to_owned()),
        _ => None,
    }
}

/// A hint for `x = y` followed by a list on the next line: the `[` continued `y` as a lookup.
fn lookup_across_lines(tokens: &[Spanned<'_>], at: usize, text: &str) -> Option<String> {
    let mut depth = 0usize;
    for open in (0..at).rev() {
        match tokens[open].1 {
            Token::RBracket | Token::RParen | Token::RBrace => depth += 1,
            Token::LBracket | Token::LParen | Token::LBrace | Token::CallParen if depth > 0 => depth -= 1,
            Token::LookupBracket if depth > 0 => depth -= 1,
            Token::LookupBracket => {
                let name_end = open.checked_sub(1).map(|p| tokens[p].2)?;
                return text[name_end..tokens[open].0].contains(['\n', '\r']).then(|| {
                    "a `[` after a name continues it as a lookup, even on the next line; \
                     start the list on the line of its statement, or assign it to a variable"
                        .to_owned()
                });
            }
            Token::LBracket | Token::LParen | Token::LBrace | Token::CallParen => return None,
            _ => {}
        }
    }
    None
}

/// Describes what the parser expected, or `None` when the list says nothing useful.
fn describe_expected(expected: &[String]) -> Option<String> {
    const EXPRESSION_START: [&str; 16] = [
        "\"ID\"",
        "\"CID\"",
        "\"INT\"",
        "\"FLOAT\"",
        "\"STRING\"",
        "\"MLS\"",
        "\"RSTRING\"",
        "\"FSTRING\"",
        "\"REGEX\"",
        "\"true\"",
        "\"false\"",
        "\"null\"",
        "\"(\"",
        "\"[\"",
        "\"{\"",
        "\"not\"",
    ];
    const OPERATORS: [&str; 12] = [
        "\"+\"",
        "\"-\"",
        "\"*\"",
        "\"/\"",
        "\"%\"",
        "\"**\"",
        "\"CMP\"",
        "\"and\"",
        "\"or\"",
        "\"in\"",
        "\"not in\"",
        "\"?\"",
    ];
    let mut parts: Vec<String> = Vec::new();
    let mut rest: Vec<&str> = expected.iter().map(String::as_str).filter(|e| *e != "\"ERROR\"").collect();
    if EXPRESSION_START.iter().filter(|s| rest.contains(s)).count() >= 8 {
        rest.retain(|e| !EXPRESSION_START.contains(e));
        parts.push("an expression".to_owned());
    }
    if OPERATORS.iter().filter(|s| rest.contains(s)).count() >= 6 {
        rest.retain(|e| !OPERATORS.contains(e));
        parts.push("an operator".to_owned());
    }
    for terminal in rest {
        let name = match terminal {
            "\"ID\"" => "a name".to_owned(),
            "\"CID\"" => "an entity name".to_owned(),
            "\"INT\"" => "an integer".to_owned(),
            "\"FLOAT\"" => "a number".to_owned(),
            "\"STRING\"" | "\"RSTRING\"" | "\"FSTRING\"" => "a string".to_owned(),
            "\"MLS\"" => "a docstring".to_owned(),
            "\"REGEX\"" => "`matching /regex/`".to_owned(),
            "\"REL\"" => "`--`".to_owned(),
            "\"CMP\"" => "a comparison".to_owned(),
            "\"CALL(\"" => "`(`".to_owned(),
            "\"LOOKUP[\"" => "`[`".to_owned(),
            other => format!("`{}`", other.trim_matches('"')),
        };
        if !parts.contains(&name) {
            parts.push(name);
        }
    }
    match parts.len() {
        0 => None,
        1 => Some(parts.remove(0)),
        n if n > 8 => None,
        _ => {
            let last = parts.pop().expect("at least two");
            Some(format!("{} or {last}", parts.join(", ")))
        }
    }
}

/// Whether only whitespace precedes byte `at` on its line (lines end at `\n` or `\r`, as in
/// the lexer).
fn starts_line(text: &str, at: usize) -> bool {
    text[..at].bytes().rev().take_while(|b| !matches!(b, b'\n' | b'\r')).all(|b| b == b' ' || b == b'\t')
}

/// The innermost bracket or block still open at the end of the token stream.
fn innermost_unclosed(tokens: &[Spanned<'_>], text: &str) -> Option<(Span, String)> {
    // (span, what it is, closing text)
    let mut open: Vec<(Span, &'static str, &'static str)> = Vec::new();
    for (at, (start, token, end)) in tokens.iter().enumerate() {
        let span = Span::new(*start, *end);
        // `implementation name for Entity:` has a `for` that opens nothing.
        let implementation_header = at >= 2 && tokens[at - 2].1 == Token::Implementation;
        let in_brackets = open.last().is_some_and(|(_, _, close)| *close != "end");
        match token {
            Token::LParen | Token::CallParen => open.push((span, "(", ")")),
            Token::LBracket | Token::LookupBracket => open.push((span, "[", "]")),
            Token::LBrace => open.push((span, "{", "}")),
            Token::Entity => open.push((span, "entity", "end")),
            Token::Implementation => open.push((span, "implementation", "end")),
            // `for` and `if` inside brackets belong to a list comprehension, unless they start
            // a line (a block after an unclosed bracket).
            Token::For | Token::If if !implementation_header && (!in_brackets || starts_line(text, *start)) => {
                open.push((span, if *token == Token::For { "for" } else { "if" }, "end"));
            }
            Token::RParen | Token::RBracket | Token::RBrace | Token::End => {
                let closing = token.fixed_text().unwrap_or_default();
                if let Some(at) = open.iter().rposition(|(_, _, close)| *close == closing) {
                    open.truncate(at);
                }
            }
            _ => {}
        }
    }
    open.pop().map(|(span, what, close)| {
        let message = if close == "end" {
            format!("this `{what}` block has no `end`")
        } else {
            format!("this `{what}` is not closed")
        };
        (span, message)
    })
}
