//! Wrapping lines longer than [`WIDTH`]: the first bracket group (a call, constructor, lookup,
//! list or dict) that opens and closes on such a line is split after its `(`, `[` or `{`, after
//! each of its top-level commas and before its closing bracket, with a trailing comma after the
//! last element; the layout pass then indents the new lines. Inner groups that are still too
//! long are split the same way, outermost first.

use modelc_syntax::lexer::{Token, lex};

/// The widest a line of code may be, in characters (trailing comments aside).
pub const WIDTH: usize = 100;

/// How many groups one file may have split: far more than real files need, a bound on the work.
const MAX_SPLITS: usize = 10_000;

/// Splits one too-long group of `source`, if there is one: the text with the line breaks and
/// trailing comma inserted.
pub(crate) fn split_one(source: &str) -> Option<String> {
    let tokens = lex(source);
    let line_starts: Vec<usize> = std::iter::once(0).chain(source.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let line_of = |offset: usize| line_starts.partition_point(|start| *start <= offset) - 1;
    // Matching brackets, by token index.
    let mut pairs = Vec::new();
    let mut stack = Vec::new();
    for (i, (_, token, _)) in tokens.iter().enumerate() {
        match token {
            Token::LParen | Token::LBracket | Token::LBrace => stack.push(i),
            Token::RParen | Token::RBracket | Token::RBrace => {
                if let Some(open) = stack.pop() {
                    pairs.push((open, i));
                }
            }
            _ => {}
        }
    }
    pairs.sort_unstable();
    // Where each line's code ends: the end of its last token.
    let mut code_end = vec![0usize; line_starts.len()];
    for (start, _, end) in &tokens {
        let line = line_of(*start);
        code_end[line] = code_end[line].max(*end);
    }
    for (open, close) in pairs {
        let (start, open_token, open_end) = tokens[open];
        let (close_start, _, _) = tokens[close];
        let line = line_of(start);
        if line_of(close_start) != line || close == open + 1 {
            continue;
        }
        let width = source[line_starts[line]..code_end[line]].chars().count();
        if width <= WIDTH {
            continue;
        }
        // A `(` right after a name is a call or constructor; any other `(` groups an
        // expression, which has no commas to split at and takes no trailing comma.
        let previous = open.checked_sub(1).map(|p| tokens[p].1);
        let grouping = matches!(open_token, Token::LParen)
            && !matches!(previous, Some(Token::Id(_) | Token::Cid(_) | Token::RParen | Token::RBracket));
        // A multiplicity `[0:1]` is no list.
        let multiplicity = tokens[open + 1..close].iter().any(|(_, t, _)| matches!(t, Token::Colon))
            && matches!(open_token, Token::LBracket);
        if grouping || multiplicity {
            continue;
        }
        let mut breaks = vec![open_end];
        let mut depth = 0;
        for (_, token, end) in &tokens[open + 1..close] {
            match token {
                Token::LParen | Token::LBracket | Token::LBrace => depth += 1,
                Token::RParen | Token::RBracket | Token::RBrace => depth -= 1,
                Token::Comma if depth == 0 => breaks.push(*end),
                _ => {}
            }
        }
        let last = tokens[close - 1];
        let trailing_comma = !matches!(last.1, Token::Comma);
        if !trailing_comma {
            // It has one: the line break after it is the one before the closing bracket.
            breaks.pop();
        }
        let mut out = String::with_capacity(source.len() + breaks.len() + 2);
        let mut at = 0;
        for position in &breaks {
            out.push_str(&source[at..*position]);
            out.push('\n');
            at = *position;
        }
        out.push_str(&source[at..last.2]);
        if trailing_comma {
            out.push(',');
        }
        out.push('\n');
        out.push_str(&source[last.2..]);
        return Some(out);
    }
    None
}

/// Splits groups until no line is too long, or none that is can be split.
pub(crate) fn wrap(source: String, layout: impl Fn(&str) -> String) -> String {
    let mut current = source;
    for _ in 0..MAX_SPLITS {
        match split_one(&current) {
            Some(split) => current = layout(&split),
            None => break,
        }
    }
    current
}
