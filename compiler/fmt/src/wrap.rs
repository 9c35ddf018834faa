//! Wrapping lines longer than [`WIDTH`]: the first bracket group (a call, constructor, lookup,
//! list or dict) that opens and closes on such a line is split after its `(`, `[` or `{`, after
//! each of its top-level commas and before its closing bracket, with a trailing comma after the
//! last element; the layout pass then indents the new lines. Inner groups that are still too
//! long are split the same way, outermost first.

use modelc_syntax::lexer::{Token, lex};

/// The widest a line of code may be, in characters (trailing comments aside).
pub const WIDTH: usize = 100;

/// How many rounds of splitting one file may take: nesting is capped at `MAX_DEPTH`, so this
/// is a bound on the work that real files never reach.
const MAX_ROUNDS: usize = modelc_syntax::MAX_DEPTH as usize + 1;

/// Splits the first too-long group of each line of `source` that has one (lines are split
/// independently, so one pass serves them all): the text with the line breaks and trailing
/// commas inserted, or `None` when no line has a group to split.
pub(crate) fn split_lines(source: &str) -> Option<String> {
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
    let mut split_lines = vec![false; line_starts.len()];
    // What to insert where: line breaks, and trailing commas before them.
    let mut insertions: Vec<(usize, &'static str)> = Vec::new();
    for (open, close) in pairs {
        let (start, open_token, open_end) = tokens[open];
        let (close_start, _, _) = tokens[close];
        let line = line_of(start);
        if split_lines[line] || line_of(close_start) != line || close == open + 1 {
            continue;
        }
        let width = source[line_starts[line]..code_end[line]].chars().count();
        if width <= WIDTH {
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
        // A `(` right after a name is a call or constructor; any other `(` groups an
        // expression, which has no commas to split at and takes no trailing comma.
        let previous = open.checked_sub(1).map(|p| tokens[p].1);
        let after_operand = matches!(previous, Some(Token::Id(_) | Token::Cid(_) | Token::RParen | Token::RBracket));
        let grouping = matches!(open_token, Token::LParen) && !after_operand;
        // A `[` right after an operand is a lookup: `d[key]` holds one key and takes no
        // trailing comma (`d[key,]` is another thing); `E[k=1, l=2]` splits like a call.
        let single_lookup = matches!(open_token, Token::LBracket) && after_operand && breaks.len() == 1;
        // A multiplicity `[0:1]` is no list.
        let multiplicity = tokens[open + 1..close].iter().any(|(_, t, _)| matches!(t, Token::Colon))
            && matches!(open_token, Token::LBracket);
        if grouping || single_lookup || multiplicity {
            continue;
        }
        let last = tokens[close - 1];
        if matches!(last.1, Token::Comma) {
            // It has a trailing comma: the line break after it is the one before the bracket.
            breaks.pop();
            insertions.push((last.2, "\n"));
        } else {
            insertions.push((last.2, ",\n"));
        }
        insertions.extend(breaks.into_iter().map(|at| (at, "\n")));
        split_lines[line] = true;
    }
    if insertions.is_empty() {
        return None;
    }
    insertions.sort_by_key(|(at, _)| *at);
    let mut out = String::with_capacity(source.len() + 2 * insertions.len());
    let mut at = 0;
    for (position, text) in insertions {
        out.push_str(&source[at..position]);
        out.push_str(text);
        at = position;
    }
    out.push_str(&source[at..]);
    Some(out)
}

/// Splits groups until no line is too long, or none that is can be split. Each round splits
/// one group on every long line and lays the file out again, so the rounds are as many as
/// groups nest, not as many as there are long lines.
pub(crate) fn wrap(source: String, layout: impl Fn(&str) -> String) -> String {
    let mut current = source;
    for _ in 0..MAX_ROUNDS {
        match split_lines(&current) {
            Some(split) => current = layout(&split),
            None => break,
        }
    }
    current
}
