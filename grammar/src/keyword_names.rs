//! `int if = 1` in an entity: a keyword as an attribute's name. Read as written, the
//! declaration does not parse and what follows it (`end`, then every use of the entity) is
//! reported too. On a line that is only a type, the keyword and an optional default, the keyword
//! is reported and read as a name, so the entity is kept.

use modelc_diagnostics::{Span, codes};

use crate::lexer::{Spanned, Token};
use crate::sink::{Sink, add_help};

pub(crate) fn keywords_as_attribute_names<'a>(tokens: &mut [Spanned<'a>], text: &'a str, sink: &mut Sink) {
    let new_line = |from: usize, to: usize| text[from..to].contains(['\n', '\r']);
    let mut line_start = 0;
    for at in 0..tokens.len() {
        if at > 0 && new_line(tokens[at - 1].2, tokens[at].0) {
            line_start = at;
        }
        let (start, token, end) = tokens[at];
        if !token.is_keyword() || at == line_start {
            continue;
        }
        let type_before = tokens[line_start..at].iter().all(|t| {
            matches!(
                t.1,
                Token::Id(_)
                    | Token::Cid(_)
                    | Token::PathSep
                    | Token::LookupBracket
                    | Token::RBracket
                    | Token::Question
                    | Token::Dict
            )
        });
        let ends_declaration = match tokens.get(at + 1) {
            None => true,
            Some((next_start, next, _)) => *next == Token::Eq || new_line(end, *next_start),
        };
        if !type_before || !ends_declaration {
            continue;
        }
        let word = &text[start..end];
        let diagnostic = sink.report(
            &codes::RESERVED_KEYWORD,
            Span::new(start, end),
            format!("`{word}` is a reserved keyword and cannot be used as a name"),
            "a keyword where a name is expected",
        );
        add_help(diagnostic, format!("choose another name, such as `{word}_`"));
        tokens[at].1 = Token::Id(word);
    }
}
