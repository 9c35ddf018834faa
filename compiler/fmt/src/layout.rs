//! The layout pass: tokens and the comments between them, written out again with canonical
//! indentation, spaces and blank lines (see `docs/fmt.md`).

use modelc_syntax::lexer::{Token, lex};

const INDENT: &str = "    ";

/// A comment found between two tokens.
struct Comment<'s> {
    text: &'s str,
    /// On the same line as the token before it.
    trailing: bool,
    /// Line breaks between the token (or comment) before it and it.
    breaks_before: usize,
}

/// What lies between two tokens: comments, and how many line breaks precede the next token.
struct Gap<'s> {
    comments: Vec<Comment<'s>>,
    /// Line breaks between the last comment (or the token before) and the next token.
    breaks_after: usize,
}

fn gap(text: &str, first: bool) -> Gap<'_> {
    let mut comments = Vec::new();
    let mut breaks = 0;
    let mut seen_break = first;
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'\n' => {
                breaks += 1;
                seen_break = true;
                at += 1;
            }
            b'\r' => {
                breaks += 1;
                seen_break = true;
                at += if bytes.get(at + 1) == Some(&b'\n') { 2 } else { 1 };
            }
            b'#' | b'/' if bytes[at] == b'#' || bytes.get(at + 1) == Some(&b'/') => {
                let end = text[at..].find(['\n', '\r']).map_or(text.len(), |n| at + n);
                comments.push(Comment { text: text[at..end].trim_end(), trailing: !seen_break, breaks_before: breaks });
                breaks = 0;
                at = end;
            }
            _ => at += 1,
        }
    }
    Gap { comments, breaks_after: breaks }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Bracket {
    Paren,
    Square,
    Brace,
}

struct Writer {
    out: String,
    /// Open blocks (`entity`, `implementation`, `for`, `if`).
    blocks: usize,
    brackets: Vec<Bracket>,
    /// The current output line has something on it.
    line_used: bool,
    /// The last line written was blank (or nothing was written yet).
    blank: bool,
    /// The last line written opened a block.
    opened: bool,
    /// The last line written was a comment line.
    comment_line: bool,
}

impl Writer {
    fn newline(&mut self) {
        while self.out.ends_with(' ') {
            self.out.pop();
        }
        self.out.push('\n');
        self.blank = !self.line_used;
        self.line_used = false;
    }

    fn blank_line(&mut self) {
        if self.line_used {
            self.newline();
        }
        if !self.blank && !self.out.is_empty() {
            self.out.push('\n');
            self.blank = true;
        }
    }

    fn start_line(&mut self, level: usize) {
        if self.line_used {
            self.newline();
        }
        for _ in 0..level {
            self.out.push_str(INDENT);
        }
        self.line_used = true;
        self.opened = false;
        self.comment_line = false;
    }

    fn push(&mut self, text: &str) {
        self.out.push_str(text);
        self.line_used = true;
    }
}

/// Whether the token starts a block header at bracket depth 0: `Some(true)` when the header's
/// `:` opens a new block, `Some(false)` for `elif` and `else`, which continue their `if`'s.
fn header_of(token: &Token<'_>) -> Option<bool> {
    match token {
        Token::Entity | Token::Implementation | Token::For | Token::If => Some(true),
        Token::Elif | Token::Else => Some(false),
        _ => None,
    }
}

fn is_name(token: &Token<'_>) -> bool {
    matches!(token, Token::Id(_) | Token::Cid(_))
}

fn is_open(token: &Token<'_>) -> bool {
    matches!(token, Token::LParen | Token::LBracket | Token::LBrace)
}

fn is_close(token: &Token<'_>) -> bool {
    matches!(token, Token::RParen | Token::RBracket | Token::RBrace)
}

/// The tokens of each logical line (bracket depth 0) that hold a relation arrow: there,
/// `[` starts a multiplicity and is written after a space (`A.b [1] -- B`).
fn relation_lines(tokens: &[(usize, Token<'_>, usize)], source: &str) -> Vec<bool> {
    let mut out = vec![false; tokens.len()];
    let mut start = 0;
    let mut depth = 0i32;
    for i in 0..=tokens.len() {
        let ends = i == tokens.len()
            || (depth == 0 && i > start && source[tokens[i - 1].2..tokens[i].0].contains(['\n', '\r']));
        if ends {
            let relation = tokens[start..i].iter().any(|(_, t, _)| matches!(t, Token::RelArrow(_)));
            for flag in &mut out[start..i] {
                *flag = relation;
            }
            start = i;
        }
        if let Some((_, token, _)) = tokens.get(i) {
            if is_open(token) {
                depth += 1;
            } else if is_close(token) {
                depth -= 1;
            }
        }
    }
    out
}

pub(crate) fn layout(source: &str) -> String {
    let tokens = lex(source);
    let relation = relation_lines(&tokens, source);
    let mut w = Writer {
        out: String::with_capacity(source.len() + source.len() / 8),
        blocks: 0,
        brackets: Vec::new(),
        line_used: false,
        blank: true,
        opened: false,
        comment_line: false,
    };
    // A block header is being written: the next `:` at depth 0 (not a conditional's) ends it,
    // and opens a block unless the header is an `elif` or `else`.
    let mut header: Option<bool> = None;
    // Conditional expressions (`?`) waiting for their `:`, per bracket depth 0.
    let mut questions = 0usize;
    let mut previous: Option<Token<'_>> = None;
    // `**` right after `(` or `,` unpacks a dict: no space after it.
    let mut splat = false;
    let mut prev_end = 0;
    for (i, (start, token, end)) in tokens.iter().enumerate() {
        let g = gap(&source[prev_end..*start], i == 0);
        let depth = w.brackets.len();
        let dedent = depth == 0 && matches!(token, Token::End | Token::Elif | Token::Else);
        let level = w.blocks.saturating_sub(usize::from(dedent));
        // Comments before the token: a trailing one stays on its line; the others go on their
        // own lines, indented like what follows (inside the block before `end`).
        for comment in &g.comments {
            if comment.trailing && w.line_used {
                w.push("  ");
                w.push(comment.text);
                continue;
            }
            if comment.breaks_before >= 2 && !w.opened {
                w.blank_line();
            }
            let comment_level = (if dedent { w.blocks } else { level }) + depth;
            w.start_line(comment_level);
            w.push(comment.text);
            w.comment_line = true;
        }
        let breaks = g.breaks_after;
        let new_line = i == 0 || breaks > 0 || g.comments.iter().any(|c| !c.trailing);
        if new_line {
            let top_level_definition =
                depth == 0 && w.blocks == 0 && matches!(token, Token::Entity | Token::Implementation);
            let after_top_block = depth == 0 && w.blocks == 0 && matches!(previous, Some(Token::End));
            let wants_blank = breaks >= 2 || ((top_level_definition || after_top_block) && !w.comment_line);
            if wants_blank && !w.opened && !dedent && !w.out.is_empty() {
                w.blank_line();
            }
            // Continuation lines inside brackets are indented one level per open bracket; a
            // closing bracket that starts a line lines up with the line that opened it.
            let continuation = depth.saturating_sub(usize::from(is_close(token)));
            w.start_line(level + continuation);
        } else if let Some(prev) = &previous
            && !nullable_marker(&tokens, i, source)
            && space_between(prev, token, &w.brackets, relation[i], splat, header.is_some() && questions == 0)
        {
            w.push(" ");
        }
        // The token itself, as written (a regex's `matching` and pattern separated by one space).
        let text = &source[*start..*end];
        match token {
            Token::Regex(_) => {
                let pattern = text.trim_start_matches("matching").trim_start();
                w.push("matching ");
                w.push(pattern);
            }
            _ => w.push(text),
        }
        splat = matches!(token, Token::DoubleStar)
            && matches!(previous, None | Some(Token::LParen | Token::Comma | Token::LBrace));
        // Structure.
        match token {
            Token::LParen => w.brackets.push(Bracket::Paren),
            Token::LBracket => w.brackets.push(Bracket::Square),
            Token::LBrace => w.brackets.push(Bracket::Brace),
            Token::RParen | Token::RBracket | Token::RBrace => {
                w.brackets.pop();
            }
            _ => {}
        }
        if depth == 0 {
            match token {
                t if header_of(t).is_some() && header.is_none() => {
                    header = header_of(t);
                    questions = 0;
                }
                Token::Question if !nullable_marker(&tokens, i, source) => questions += 1,
                Token::Colon if questions > 0 => questions -= 1,
                Token::Colon if header.is_some() => {
                    if header == Some(true) {
                        w.blocks += 1;
                    }
                    header = None;
                    w.opened = true;
                }
                Token::End => w.blocks = w.blocks.saturating_sub(1),
                _ => {}
            }
        }
        previous = Some(*token);
        prev_end = *end;
    }
    // Comments after the last token.
    let g = gap(&source[prev_end..], tokens.is_empty());
    for comment in &g.comments {
        if comment.trailing && w.line_used {
            w.push("  ");
            w.push(comment.text);
            continue;
        }
        if comment.breaks_before >= 2 {
            w.blank_line();
        }
        w.start_line(w.blocks);
        w.push(comment.text);
    }
    if w.line_used {
        w.newline();
    }
    while w.out.ends_with("\n\n") {
        w.out.pop();
    }
    w.out
}

/// Whether the `?` at `at` marks an attribute type as nullable (`string? name = null`,
/// written tight) rather than being a conditional's (`c ? a : b`): an attribute's name follows
/// it, and after the name a default or the end of the line.
fn nullable_marker(tokens: &[(usize, Token<'_>, usize)], at: usize, source: &str) -> bool {
    if tokens[at].1 != Token::Question {
        return false;
    }
    let Some((_, Token::Id(_), name_end)) = tokens.get(at + 1) else { return false };
    match tokens.get(at + 2) {
        None => true,
        Some((start, next, _)) => *next == Token::Eq || source[*name_end..*start].contains(['\n', '\r']),
    }
}

/// Whether one space separates two tokens on a line.
fn space_between(
    prev: &Token<'_>,
    token: &Token<'_>,
    brackets: &[Bracket],
    relation_line: bool,
    after_splat: bool,
    ends_header: bool,
) -> bool {
    let inside = brackets.last().copied();
    if is_open(prev) || after_splat || (matches!(prev, Token::Eq) && inside.is_some()) {
        return false;
    }
    if is_close(token) || matches!(token, Token::Comma) {
        return false;
    }
    if matches!(prev, Token::Dot | Token::PathSep) || matches!(token, Token::Dot | Token::PathSep) {
        return false;
    }
    match token {
        Token::Colon => {
            // `[0:1]`, `{"a": 1}`, and the end of a block header are tight; a conditional's
            // `a ? b : c` is spaced.
            return !(matches!(inside, Some(Bracket::Square | Bracket::Brace)) || ends_header);
        }
        Token::Eq => return inside.is_none(),
        Token::LParen => return !(is_name(prev) || is_close(prev)),
        Token::LBracket => {
            return !((is_name(prev) || is_close(prev)) && !relation_line);
        }
        _ => {}
    }
    match prev {
        Token::Colon => !matches!(inside, Some(Bracket::Square)),
        Token::Eq => inside.is_none(),
        _ => true,
    }
}
