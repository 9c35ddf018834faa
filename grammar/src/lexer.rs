//! The logos lexer: source text to `(start, Token, end)` triples with byte offsets.
//!
//! The reference lexer (PLY) tries its rules in a fixed order and takes the first that
//! matches; logos takes the longest match. For this language the two agree (checked rule by
//! rule against spec §1.2): the sign glued to a number (`1-2` is `1` `-2`), hyphens inside
//! identifiers (`a-b`), `--`/`->`/`<-` always being relation arrows, `//` starting a comment and
//! regex literals existing only after `matching` and whitespace.
//!
//! Lexing never fails. Text no rule matches becomes a [`Token::Error`] that carries what went
//! wrong; the parser skips such tokens (they are declared terminals, so LALRPOP can recover
//! over them) and the lexer's own message is the one the user sees.
//!
//! **IMPORTANT**: keep [`KEYWORDS`] in sync with the keyword variants below and with the
//! editor grammar in `editors/vscode/syntaxes/cf.tmLanguage.json`.

use logos::Logos;

/// What made a piece of text unlexable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LexErrorKind {
    /// A character no token starts with (`@`, `$`, `;`, a non-ASCII letter, ...).
    #[default]
    IllegalCharacter,
    /// A single-line string (plain, raw or f-string) without its closing quote on that line.
    UnterminatedString,
    /// A `"""` string without its closing `"""`.
    UnterminatedTripleString,
}

/// Every keyword of the language (spec §1.3), in the order the spec lists them.
pub const KEYWORDS: [&str; 28] = [
    "typedef",
    "as",
    "entity",
    "extends",
    "end",
    "in",
    "implementation",
    "for",
    "matching",
    "index",
    "implement",
    "using",
    "when",
    "and",
    "or",
    "not",
    "true",
    "false",
    "import",
    "is",
    "defined",
    "dict",
    "null",
    "undef",
    "parents",
    "if",
    "else",
    "elif",
];

/// A token. Payload variants borrow their text from the source; string-like tokens keep
/// their quotes and prefix so that spans of interpolations can be computed later.
#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
#[logos(error = LexErrorKind)]
#[logos(skip r"[ \t\r\n]+")]
// Comments and single-line strings end at `\r` too: the reference reads files with universal
// newlines, where a lone `\r` is a line break.
#[logos(skip(r"(#|//)[^\r\n]*", allow_greedy = true))]
pub enum Token<'s> {
    // Keywords.
    #[token("typedef")]
    Typedef,
    #[token("as")]
    As,
    #[token("entity")]
    Entity,
    #[token("extends")]
    Extends,
    #[token("end")]
    End,
    #[token("in")]
    In,
    #[token("implementation")]
    Implementation,
    #[token("for")]
    For,
    #[token("matching")]
    Matching,
    #[token("index")]
    Index,
    #[token("implement")]
    Implement,
    #[token("using")]
    Using,
    #[token("when")]
    When,
    #[token("and")]
    And,
    #[token("or")]
    Or,
    #[token("not")]
    Not,
    #[token("true")]
    True,
    #[token("false")]
    False,
    #[token("import")]
    Import,
    #[token("is")]
    Is,
    #[token("defined")]
    Defined,
    #[token("dict")]
    Dict,
    #[token("null")]
    Null,
    #[token("undef")]
    Undef,
    #[token("parents")]
    Parents,
    #[token("if")]
    If,
    #[token("else")]
    Else,
    #[token("elif")]
    Elif,
    /// `resource` starting a resource declaration. Not a keyword: the lexer reads it as an `ID`
    /// and token disambiguation turns it into this token only where it starts `resource Entity(`.
    Resource,

    // Names: a word starting with an ASCII capital is a CID (entity names), anything else an ID.
    #[regex(r"[a-z_][a-zA-Z0-9_-]*", |lex| lex.slice())]
    Id(&'s str),
    #[regex(r"[A-Z][a-zA-Z0-9_-]*", |lex| lex.slice())]
    Cid(&'s str),

    // Literals. Numbers carry their sign (spec §1.2).
    #[regex(r"-?[0-9]+", |lex| lex.slice())]
    Int(&'s str),
    #[regex(r"-?[0-9]*\.[0-9]+", |lex| lex.slice())]
    Float(&'s str),
    #[regex(r#""([^"\\\r\n]|\\[^\r\n])*""#, |lex| lex.slice(), allow_greedy = true)]
    #[regex(r#"'([^'\\\r\n]|\\[^\r\n])*'"#, |lex| lex.slice(), allow_greedy = true)]
    Str(&'s str),
    #[token(r#"""""#, lex_triple_string)]
    Mls(&'s str),
    #[regex(r#"r"([^"\\\r\n]|\\[^\r\n])*""#, |lex| lex.slice(), allow_greedy = true)]
    #[regex(r#"r'([^'\\\r\n]|\\[^\r\n])*'"#, |lex| lex.slice(), allow_greedy = true)]
    RStr(&'s str),
    #[regex(r#"f"([^"\\\r\n]|\\[^\r\n])*""#, |lex| lex.slice(), allow_greedy = true)]
    #[regex(r#"f'([^'\\\r\n]|\\[^\r\n])*'"#, |lex| lex.slice(), allow_greedy = true)]
    FStr(&'s str),
    /// `matching /body/`: the keyword, whitespace and the delimited body in one token.
    #[regex(r"matching[ \t\r\n]+/([^/\\\r\n]|\\[^\r\n])+/", |lex| lex.slice(), allow_greedy = true)]
    Regex(&'s str),

    // Punctuation and operators.
    #[token("::")]
    PathSep,
    #[token("--", |lex| lex.slice())]
    #[token("->", |lex| lex.slice())]
    #[token("<-", |lex| lex.slice())]
    RelArrow(&'s str),
    #[token("==", |lex| lex.slice())]
    #[token("!=", |lex| lex.slice())]
    #[token(">=", |lex| lex.slice())]
    #[token("<=", |lex| lex.slice())]
    #[token(">", |lex| lex.slice())]
    #[token("<", |lex| lex.slice())]
    Cmp(&'s str),
    #[token("+=")]
    PlusEq,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("/")]
    Slash,
    #[token("**")]
    DoubleStar,
    #[token("*")]
    Star,
    #[token("%")]
    Percent,
    #[token(":")]
    Colon,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("=")]
    Eq,
    #[token(",")]
    Comma,
    #[token(".")]
    Dot,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("?")]
    Question,

    // Unterminated single-line strings: matched only when the terminated form is not (logos
    // prefers the longer, terminated match). A trailing backslash is included so a failed line
    // continuation is reported as one unterminated string, not as a stray `\`.
    #[regex(r#"[rf]?"([^"\\\r\n]|\\[^\r\n])*\\?"#, |_| LexErrorKind::UnterminatedString, allow_greedy = true)]
    #[regex(r#"[rf]?'([^'\\\r\n]|\\[^\r\n])*\\?"#, |_| LexErrorKind::UnterminatedString, allow_greedy = true)]
    Error(LexErrorKind),

    // Produced by `disambiguate`, never by logos: the context-dependent forms of `(`, `[` and `not`
    // that let the LR(1) grammar mirror the reference parser's preference for shifting.
    /// `(` directly after a name: a call, constructor or index definition.
    CallParen,
    /// `[` that continues the expression before it: a lookup.
    LookupBracket,
    /// `not in` (two keywords, one operator).
    NotIn,
}

/// Lexes a `"""` string after logos matched its opening three quotes.
///
/// Mirrors the reference regex `"{3,5}` lazy-body `"{3,5}`: the opening run takes up to five
/// quotes, the body is the shortest text followed by at least three quotes, and the closing
/// run takes up to five. If no closing run exists for the longest opening, shorter openings
/// are tried (the regex engine's backtracking), so `""""""` is one empty string.
fn lex_triple_string<'s>(lex: &mut logos::Lexer<'s, Token<'s>>) -> Result<&'s str, LexErrorKind> {
    let start = lex.span().start;
    let bytes = lex.source().as_bytes();
    let run = bytes[start..].iter().take(5).take_while(|b| **b == b'"').count();
    for opening in (3..=run).rev() {
        let body_start = start + opening;
        let mut at = body_start;
        while at < bytes.len() {
            if bytes[at] == b'"' {
                let closing = bytes[at..].iter().take(5).take_while(|b| **b == b'"').count();
                if closing >= 3 {
                    let end = at + closing;
                    lex.bump(end - lex.span().end);
                    return Ok(&lex.source()[start..end]);
                }
            }
            at += 1;
        }
    }
    lex.bump(bytes.len() - lex.span().end);
    Err(LexErrorKind::UnterminatedTripleString)
}

/// A token with its byte span.
pub type Spanned<'s> = (usize, Token<'s>, usize);

/// Lexes `text` completely. Errors are tokens; consecutive illegal characters are merged into
/// one error token, and every span lies on character boundaries.
pub fn lex(text: &str) -> Vec<Spanned<'_>> {
    let mut out: Vec<Spanned<'_>> = Vec::with_capacity(text.len() / 4);
    let mut lexer = Token::lexer(text);
    while let Some(result) = lexer.next() {
        let span = lexer.span();
        let (start, mut end) = (span.start, span.end);
        let token = match result {
            Ok(token) => token,
            Err(kind) => {
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                if kind == LexErrorKind::IllegalCharacter
                    && let Some((_, Token::Error(LexErrorKind::IllegalCharacter), prev_end)) = out.last_mut()
                    && *prev_end >= start
                {
                    *prev_end = (*prev_end).max(end);
                    continue;
                }
                Token::Error(kind)
            }
        };
        if let Some((_, Token::Error(_), prev_end)) = out.last() {
            // An error token widened to a character boundary may swallow the next bytes.
            if *prev_end > start {
                continue;
            }
        }
        out.push((start, token, end));
    }
    out
}

impl Token<'_> {
    /// How the token is named in messages: its text for punctuation and keywords, its kind
    /// for names and literals.
    pub fn describe(&self) -> String {
        match self {
            Token::Id(s) | Token::Cid(s) => format!("`{s}`"),
            Token::Int(s) | Token::Float(s) => format!("number `{s}`"),
            Token::Str(_) | Token::RStr(_) | Token::FStr(_) => "string literal".to_owned(),
            Token::Mls(_) => "triple-quoted string".to_owned(),
            Token::Regex(_) => "regex literal".to_owned(),
            Token::RelArrow(s) | Token::Cmp(s) => format!("`{s}`"),
            Token::Error(_) => "invalid input".to_owned(),
            other => match other.fixed_text() {
                Some(text) if is_keyword(text) => format!("keyword `{text}`"),
                Some(text) => format!("`{text}`"),
                None => format!("{other:?}"),
            },
        }
    }

    /// The text of tokens that always look the same.
    pub fn fixed_text(&self) -> Option<&'static str> {
        Some(match self {
            Token::Typedef => "typedef",
            Token::As => "as",
            Token::Entity => "entity",
            Token::Extends => "extends",
            Token::End => "end",
            Token::In => "in",
            Token::Implementation => "implementation",
            Token::For => "for",
            Token::Matching => "matching",
            Token::Index => "index",
            Token::Implement => "implement",
            Token::Using => "using",
            Token::When => "when",
            Token::And => "and",
            Token::Or => "or",
            Token::Not => "not",
            Token::True => "true",
            Token::False => "false",
            Token::Import => "import",
            Token::Is => "is",
            Token::Defined => "defined",
            Token::Dict => "dict",
            Token::Null => "null",
            Token::Undef => "undef",
            Token::Parents => "parents",
            Token::If => "if",
            Token::Else => "else",
            Token::Elif => "elif",
            Token::Resource => "resource",
            Token::PathSep => "::",
            Token::PlusEq => "+=",
            Token::Plus => "+",
            Token::Minus => "-",
            Token::Slash => "/",
            Token::DoubleStar => "**",
            Token::Star => "*",
            Token::Percent => "%",
            Token::Colon => ":",
            Token::LBracket | Token::LookupBracket => "[",
            Token::RBracket => "]",
            Token::LParen | Token::CallParen => "(",
            Token::RParen => ")",
            Token::Eq => "=",
            Token::Comma => ",",
            Token::Dot => ".",
            Token::LBrace => "{",
            Token::RBrace => "}",
            Token::Question => "?",
            Token::NotIn => "not in",
            _ => return None,
        })
    }

    /// Whether this token opens a bracket: `(`, `[` or `{`, calls and lookups included.
    pub fn opens_bracket(&self) -> bool {
        matches!(self, Token::LParen | Token::CallParen | Token::LBracket | Token::LookupBracket | Token::LBrace)
    }

    /// Whether this token closes a bracket: `)`, `]` or `}`.
    pub fn closes_bracket(&self) -> bool {
        matches!(self, Token::RParen | Token::RBracket | Token::RBrace)
    }

    /// Whether this token is a keyword (so using it as a name is the likely mistake).
    pub fn is_keyword(&self) -> bool {
        self.fixed_text().is_some_and(is_keyword)
    }
}

/// Whether `word` is one of the language's keywords.
pub fn is_keyword(word: &str) -> bool {
    KEYWORDS.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Token<'_>> {
        lex(text).into_iter().map(|(_, t, _)| t).collect()
    }

    #[test]
    fn sign_is_part_of_numbers() {
        assert_eq!(kinds("1-2"), [Token::Int("1"), Token::Int("-2")]);
        assert_eq!(kinds("x - 1"), [Token::Id("x"), Token::Minus, Token::Int("1")]);
        assert_eq!(kinds("-.5 1.5"), [Token::Float("-.5"), Token::Float("1.5")]);
        assert_eq!(kinds("1."), [Token::Int("1"), Token::Dot]);
        assert_eq!(kinds("1e3"), [Token::Int("1"), Token::Id("e3")]);
    }

    #[test]
    fn hyphens_and_arrows() {
        assert_eq!(kinds("a-b"), [Token::Id("a-b")]);
        assert_eq!(kinds("5--1"), [Token::Int("5"), Token::RelArrow("--"), Token::Int("1")]);
        assert_eq!(kinds("3<-1"), [Token::Int("3"), Token::RelArrow("<-"), Token::Int("1")]);
        assert_eq!(kinds("a <= b"), [Token::Id("a"), Token::Cmp("<="), Token::Id("b")]);
    }

    #[test]
    fn comments_and_keywords() {
        assert_eq!(kinds("x = a // b"), [Token::Id("x"), Token::Eq, Token::Id("a")]);
        assert_eq!(kinds("# c\nend"), [Token::End]);
        assert_eq!(kinds("entity-x True"), [Token::Id("entity-x"), Token::Cid("True")]);
    }

    #[test]
    fn string_forms() {
        assert_eq!(kinds(r#"f"a" r'b' "c""#), [Token::FStr(r#"f"a""#), Token::RStr("r'b'"), Token::Str(r#""c""#)]);
        assert_eq!(kinds("'''abc'''"), [Token::Str("''"), Token::Str("'abc'"), Token::Str("''")]);
        assert_eq!(kinds("\"\"\"\"x\"\"\"\""), [Token::Mls("\"\"\"\"x\"\"\"\"")]);
        assert_eq!(kinds(r#""""""""#), [Token::Mls(r#""""""""#)]);
        assert_eq!(
            kinds("\"a\nb\""),
            [
                Token::Error(LexErrorKind::UnterminatedString),
                Token::Id("b"),
                Token::Error(LexErrorKind::UnterminatedString)
            ]
        );
        assert_eq!(kinds("\"\"\"abc"), [Token::Error(LexErrorKind::UnterminatedTripleString)]);
    }

    #[test]
    fn a_lone_carriage_return_ends_comments_and_strings() {
        assert_eq!(kinds("# c\rx"), [Token::Id("x")]);
        assert_eq!(kinds("x # c\r\ny"), [Token::Id("x"), Token::Id("y")]);
        assert_eq!(
            kinds("\"a\rb\""),
            [
                Token::Error(LexErrorKind::UnterminatedString),
                Token::Id("b"),
                Token::Error(LexErrorKind::UnterminatedString)
            ]
        );
    }

    #[test]
    fn regex_needs_whitespace_after_matching() {
        assert_eq!(kinds("matching /a\\/b/"), [Token::Regex("matching /a\\/b/")]);
        assert_eq!(kinds("matching/a/")[0], Token::Matching);
        assert_eq!(kinds("matching self")[0], Token::Matching);
    }

    #[test]
    fn illegal_characters_merge_on_char_boundaries() {
        let tokens = lex("café = @@ 1");
        assert_eq!(tokens[0], (0, Token::Id("caf"), 3));
        assert_eq!(tokens[1], (3, Token::Error(LexErrorKind::IllegalCharacter), 5));
        assert_eq!(tokens[3], (8, Token::Error(LexErrorKind::IllegalCharacter), 10));
    }
}
