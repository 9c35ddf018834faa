//! An operator that ends a line before a new statement: `total = 5 +` followed by
//! `count = 1`. Read as written, the next line continues the expression (`5 + count`), and the
//! parser stops at its `=`, while `count` reads as a variable the file never defines. When the
//! next line can only be a new statement (a name assigned to, or a keyword that starts a
//! statement), the operator is reported where it is and left out, so the rest parses as meant.

use modelc_diagnostics::{Span, codes};

use crate::lexer::{Spanned, Token};
use crate::sink::{Sink, add_help, add_secondary};

/// Reports and removes every binary operator that ends a line before a new statement.
pub(crate) fn drop_dangling_operators(tokens: &mut Vec<Spanned<'_>>, text: &str, sink: &mut Sink) {
    let mut dangling = Vec::new();
    for at in 0..tokens.len().saturating_sub(1) {
        let (_, token, end) = tokens[at];
        let next = at + 1;
        if !crate::errors::is_binary_operator(token)
            || matches!(token, Token::Eq | Token::PlusEq)
            || !text[end..tokens[next].0].contains(['\n', '\r'])
            || !starts_statement(tokens, next)
        {
            continue;
        }
        dangling.push(at);
    }
    for &at in dangling.iter().rev() {
        let (start, token, end) = tokens.remove(at);
        let (next_start, next, next_end) = tokens[at];
        let word = token.fixed_text().map_or_else(|| token.describe(), |t| format!("`{t}`"));
        let diagnostic = sink.report(
            &codes::UNEXPECTED_TOKEN,
            Span::new(start, end),
            format!("the line ends with {word}, which has nothing on its right"),
            "nothing follows this operator",
        );
        add_secondary(
            diagnostic,
            Span::new(next_start, next_end),
            format!("{} starts a new statement, so it cannot continue the expression", next.describe()),
        );
        add_help(diagnostic, format!("complete the expression after {word}, or remove it"));
    }
}

/// Whether the tokens from `at` can only start a statement: a keyword that starts one, or a
/// name (possibly dotted) followed by `=` or `+=`.
fn starts_statement(tokens: &[Spanned<'_>], at: usize) -> bool {
    match tokens[at].1 {
        Token::Entity
        | Token::Implementation
        | Token::Implement
        | Token::Typedef
        | Token::Index
        | Token::Import
        | Token::End
        | Token::Elif
        | Token::Else => true,
        Token::Id(_) => {
            let mut i = at + 1;
            while i + 1 < tokens.len() && tokens[i].1 == Token::Dot && matches!(tokens[i + 1].1, Token::Id(_)) {
                i += 2;
            }
            matches!(tokens.get(i).map(|t| t.1), Some(Token::Eq | Token::PlusEq))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use modelc_diagnostics::FileId;

    fn codes(text: &str) -> Vec<(&'static str, String)> {
        crate::parse(FileId(0), text).diagnostics.iter().map(|d| (d.code.id, d.message.clone())).collect()
    }

    #[test]
    fn an_operator_before_a_new_statement_is_reported_and_left_out() {
        let found = codes("total = 5 +\ncount = 1\n");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].1.contains("ends with `+`"), "{found:?}");
        assert_eq!(codes("ok = true and\nend\n").len(), 2, "an `end` with no block is still an error");
    }

    #[test]
    fn an_expression_that_continues_on_the_next_line_is_left_alone() {
        assert!(codes("total = 5 +\n    6\n").is_empty());
        assert!(codes("ok = a and\nb\n").is_empty());
    }
}
