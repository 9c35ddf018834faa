//! `if x = 1:`: an assignment's `=` in an `if` or `elif` condition, where a comparison was
//! meant. Read as written, the statement does not parse and its body and `end` are reported as
//! strays. Each `=` of a header is reported and read as `==`, so the block
//! parses as meant.

use modelc_diagnostics::{Applicability, Edit, Fix, Span, codes};

use crate::lexer::{Spanned, Token};
use crate::sink::{Sink, add_help};

pub(crate) fn compare_in_conditions(tokens: &mut [Spanned<'_>], text: &str, sink: &mut Sink) {
    let new_line = |from: usize, to: usize| text[from..to].contains(['\n', '\r']);
    for at in 0..tokens.len() {
        if !matches!(tokens[at].1, Token::If | Token::Elif) {
            continue;
        }
        // The header's `=`s outside brackets, up to the `:` that ends its line.
        let mut depth = 0i32;
        let mut equals = Vec::new();
        let mut complete = false;
        for k in at + 1..tokens.len() {
            let (start, token, end) = tokens[k];
            if depth == 0 && new_line(tokens[k - 1].2, start) {
                break;
            }
            match token {
                _ if token.opens_bracket() => depth += 1,
                _ if token.closes_bracket() => depth -= 1,
                Token::Eq if depth == 0 => equals.push(k),
                Token::Colon if depth == 0 && tokens.get(k + 1).is_none_or(|next| new_line(end, next.0)) => {
                    complete = true;
                    break;
                }
                _ => {}
            }
        }
        if !complete {
            continue;
        }
        for k in equals {
            let (start, _, end) = tokens[k];
            let span = Span::new(start, end);
            let file = sink.file;
            let diagnostic = sink.report(
                &codes::UNEXPECTED_TOKEN,
                span,
                "`=` in a condition assigns; it does not compare",
                "read as `==`",
            );
            add_help(diagnostic, "to compare, write `==`");
            diagnostic.fixes.push(Fix {
                message: "replace with `==`".to_owned(),
                edits: vec![Edit { file, span, replacement: "==".to_owned() }],
                applicability: Applicability::MachineApplicable,
            });
            tokens[k].1 = Token::Cmp("==");
        }
    }
}
