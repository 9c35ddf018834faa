//! Blocks left open. `entity`, `implementation`, `for` and `if` blocks each close with `end`.
//! When a file has fewer `end`s than blocks, the parser runs past the missing one: the next
//! `entity` reads as a keyword used as a name, an `implement` as a definition inside a block,
//! and what the unclosed block defined never exists, so other files report it missing.
//!
//! Before parsing, the tokens are repaired the way rustc guesses where an unclosed delimiter
//! should have closed: by indentation. Only a file that has more blocks than `end`s is touched,
//! and only as many `end`s are added as are missing, so a valid file (however it is indented)
//! parses as written. A block is taken to end before the first line at its header's
//! indentation or less (if its body is indented at all), before a definition that only the top
//! level may hold, or at the end of the file. Each repair is reported once, at the block's
//! header, and what follows parses as it was meant.

use modelc_diagnostics::{Span, codes};

use crate::lexer::{Spanned, Token};
use crate::sink::{Sink, add_help, add_secondary};

/// More missing `end`s than this is not a forgotten `end` but a file that is not a model (or
/// barely one): it is left to the parser's own errors.
const MAX_REPAIRS: usize = 20;

/// An open block, as the scan sees it.
struct Block {
    /// The token that opens it (`entity`, `implementation`, `for`, `if`).
    opener: usize,
    /// The column of its header's first token.
    header_column: usize,
    /// Whether its body is indented deeper than its header (known at its first body line):
    /// only then does a line back at the header's indentation say the block ended.
    indented: Option<bool>,
}

/// Why a block is taken to end where it is.
enum Reason {
    /// A line at the header's indentation or less.
    Dedent,
    /// A definition only the top level may hold.
    TopLevel,
    EndOfFile,
}

/// Adds the `:` a block header lacks (`if x` over an indented body), reporting each, so that the
/// block parses as meant instead of its body and `end` being reported one by one.
pub(crate) fn add_missing_colons<'a>(tokens: &mut Vec<Spanned<'a>>, text: &str, sink: &mut Sink) {
    let mut inserts: Vec<usize> = Vec::new();
    let mut brackets = 0usize;
    for (at, &(start, token, _)) in tokens.iter().enumerate() {
        match token {
            _ if token.opens_bracket() => brackets += 1,
            _ if token.closes_bracket() => brackets = brackets.saturating_sub(1),
            _ => {}
        }
        let header = match token {
            Token::Entity | Token::Implementation | Token::If | Token::Elif | Token::Else => true,
            Token::For => !(at >= 2 && tokens[at - 2].1 == Token::Implementation),
            _ => false,
        };
        if !header || brackets > 0 || !starts_line(text, start) || header_colon(tokens, at, text).is_some() {
            continue;
        }
        // The header's last token, and the first of the next line.
        let Some(next) = (at + 1..tokens.len()).find(|&i| starts_line(text, tokens[i].0)) else { continue };
        let last = next - 1;
        let indented = column(text, tokens[next].0) > column(text, first_on_line(text, start));
        let (_, ends_header, _) = tokens[last];
        let complete = !ends_header.opens_bracket()
            && ends_header != Token::Comma
            && !crate::errors::is_binary_operator(ends_header);
        if indented && complete {
            inserts.push(last);
        }
    }
    for &last in inserts.iter().rev() {
        let (_, _, end) = tokens[last];
        tokens.insert(last + 1, (end, Token::Colon, end));
    }
    for (shift, &last) in inserts.iter().enumerate() {
        // Earlier inserts moved this header's tokens by one each.
        let last = last + shift;
        let opener = (0..=last).rev().find(|&i| starts_line(text, tokens[i].0)).unwrap_or(last);
        let kind = tokens[opener].1.fixed_text().unwrap_or("block");
        let end = tokens[last].2;
        let diagnostic = sink.report(
            &codes::UNEXPECTED_TOKEN,
            Span::new(end, end),
            format!("the `{kind}` header has no `:` at its end"),
            "add `:` here",
        );
        add_help(diagnostic, "a block's header ends with `:`, and its body follows on the next lines");
        let file = diagnostic.labels.first().map_or(modelc_diagnostics::FileId(0), |l| l.file);
        diagnostic.fixes.push(modelc_diagnostics::Fix {
            message: "add `:`".to_owned(),
            edits: vec![modelc_diagnostics::Edit { file, span: Span::new(end, end), replacement: ":".to_owned() }],
            applicability: modelc_diagnostics::Applicability::MachineApplicable,
        });
    }
}

/// Adds the `end`s a file lacks where its indentation says they belong, reporting each.
pub(crate) fn close_unclosed_blocks<'a>(tokens: &mut Vec<Spanned<'a>>, text: &str, sink: &mut Sink) {
    let mut missing = unclosed_count(tokens, text);
    if missing == 0 || missing > MAX_REPAIRS {
        return;
    }
    let mut repaired: Vec<Spanned<'a>> = Vec::with_capacity(tokens.len() + missing);
    let mut open: Vec<Block> = Vec::new();
    let mut brackets = 0usize;
    for (at, &(start, token, end)) in tokens.iter().enumerate() {
        let line_start = brackets == 0 && starts_line(text, start);
        if line_start && missing > 0 {
            let column = column(text, start);
            if let Some(block) = open.last_mut()
                && block.indented.is_none()
                && text[tokens[block.opener].0..start].contains('\n')
            {
                block.indented = Some(column > block.header_column);
            }
            while let Some(block) = open.last() {
                let reason = if is_top_level_definition(tokens, at) {
                    Reason::TopLevel
                } else if block.indented == Some(true)
                    && dedented(token, tokens[block.opener].1, column, block.header_column)
                {
                    Reason::Dedent
                } else {
                    break;
                };
                let Some(block) = open.pop() else { break };
                close(&mut repaired, tokens, text, sink, &block, Some(at), &reason);
                missing -= 1;
                if missing == 0 {
                    break;
                }
            }
        }
        match token {
            _ if token.opens_bracket() => brackets += 1,
            _ if token.closes_bracket() => brackets = brackets.saturating_sub(1),
            Token::End if brackets == 0 => {
                open.pop();
            }
            _ if brackets == 0 && opens_block(tokens, at, text) => {
                let header_column = column(text, first_on_line(text, start));
                open.push(Block { opener: at, header_column, indented: None });
            }
            _ => {}
        }
        repaired.push((start, token, end));
    }
    while missing > 0 {
        let Some(block) = open.pop() else { break };
        close(&mut repaired, tokens, text, sink, &block, None, &Reason::EndOfFile);
        missing -= 1;
    }
    *tokens = repaired;
}

/// How many blocks the file leaves without `end` (brackets counted, so that `for` and `if` in
/// a list comprehension open nothing).
fn unclosed_count(tokens: &[Spanned<'_>], text: &str) -> usize {
    let mut open = 0usize;
    let mut brackets = 0usize;
    for (at, (start, token, _)) in tokens.iter().enumerate() {
        match token {
            _ if token.opens_bracket() => brackets += 1,
            _ if token.closes_bracket() => brackets = brackets.saturating_sub(1),
            // A block after an unclosed bracket: the bracket is the problem, not the block.
            _ if brackets > 0 && starts_line(text, *start) && opens_block(tokens, at, text) => return 0,
            Token::End if brackets == 0 => {
                if open == 0 {
                    // More `end`s than blocks somewhere: the counts say nothing about where.
                    return 0;
                }
                open -= 1;
            }
            _ if brackets == 0 && opens_block(tokens, at, text) => open += 1,
            _ => {}
        }
    }
    if brackets > 0 { 0 } else { open }
}

/// Whether the token at `at` opens a block: `entity`, `implementation`, and a statement `for`
/// or `if` (not the `for` of `implementation name for Entity:`), whose header ends with its `:`
/// on its line. A header without `:` is a mistake of its own, which the parser reports.
fn opens_block(tokens: &[Spanned<'_>], at: usize, text: &str) -> bool {
    let opener = match tokens[at].1 {
        Token::Entity | Token::Implementation | Token::If => true,
        Token::For => !(at >= 2 && tokens[at - 2].1 == Token::Implementation),
        _ => false,
    };
    opener && header_colon(tokens, at, text).is_some()
}

/// The end of the `:` that ends the header opened at `at`: the first at bracket depth 0 before
/// the next line.
fn header_colon(tokens: &[Spanned<'_>], at: usize, text: &str) -> Option<usize> {
    let mut brackets = 0usize;
    for &(start, token, end) in &tokens[at + 1..] {
        if brackets == 0 && starts_line(text, start) {
            return None;
        }
        match token {
            _ if token.opens_bracket() => brackets += 1,
            _ if token.closes_bracket() => brackets = brackets.saturating_sub(1),
            Token::Colon if brackets == 0 => return Some(end),
            _ => {}
        }
    }
    None
}

/// Whether a line starting with `token` at `column` lies outside a block opened by `opener` at
/// `header_column` (whose body is indented): a statement at the header's indentation or less, or
/// an `end` (or the `elif`/`else` of an `if`) to the left of the header, which belongs to an
/// enclosing block.
fn dedented(token: Token<'_>, opener: Token<'_>, column: usize, header_column: usize) -> bool {
    let own = token == Token::End || (opener == Token::If && matches!(token, Token::Elif | Token::Else));
    if own { column < header_column } else { column <= header_column }
}

/// A definition no block may hold: `entity`, `implementation`, `implement`, `typedef`, `index`
/// and `import`, starting a line.
fn is_top_level_definition(tokens: &[Spanned<'_>], at: usize) -> bool {
    matches!(
        tokens[at].1,
        Token::Entity | Token::Implementation | Token::Implement | Token::Typedef | Token::Index | Token::Import
    )
}

/// Adds the missing `end` of `block` before token `before` (`None`: at the end of the file),
/// after the last token already kept, and reports it.
fn close(
    repaired: &mut Vec<Spanned<'_>>,
    tokens: &[Spanned<'_>],
    text: &str,
    sink: &mut Sink,
    block: &Block,
    before: Option<usize>,
    reason: &Reason,
) {
    let after = repaired.last().map_or(0, |t| t.2);
    repaired.push((after, Token::End, after));
    let (start, opener, _) = tokens[block.opener];
    let kind = opener.fixed_text().unwrap_or("block");
    let header_end = header_colon(tokens, block.opener, text).unwrap_or(tokens[block.opener].2);
    let diagnostic = sink.report(
        &codes::UNCLOSED_BLOCK,
        Span::new(start, header_end),
        format!("this `{kind}` block has no `end`"),
        "this block is never closed",
    );
    // 1-based line of the last token kept (counted once per repair, and repairs are few).
    let last_line = text[..after].bytes().filter(|b| *b == b'\n').count() + 1;
    match (before, reason) {
        (Some(at), Reason::TopLevel) => {
            let (s, token, e) = tokens[at];
            let word = token.fixed_text().unwrap_or_default();
            add_secondary(
                diagnostic,
                Span::new(s, e),
                format!("a new `{word}` starts here, so the block ends before it"),
            );
        }
        (Some(at), _) => {
            let (s, token, e) = tokens[at];
            let label = match token {
                Token::End | Token::Elif | Token::Else => format!(
                    "this `{}` lines up with an enclosing block, so the `{kind}` block ends before it",
                    token.fixed_text().unwrap_or_default()
                ),
                _ => "indented no deeper than the block's header, so the block ends before this line".to_owned(),
            };
            add_secondary(diagnostic, Span::new(s, e), label);
        }
        (None, _) => {}
    }
    add_help(diagnostic, format!("add `end` after line {last_line}, at the indentation of the header"));
}

/// Whether only whitespace precedes `offset` on its line.
fn starts_line(text: &str, offset: usize) -> bool {
    text[..offset].chars().rev().take_while(|c| *c != '\n').all(|c| c == ' ' || c == '\t' || c == '\r')
}

/// The offset of the first non-blank character on `offset`'s line.
fn first_on_line(text: &str, offset: usize) -> usize {
    let line_start = text[..offset].rfind('\n').map_or(0, |n| n + 1);
    line_start + text[line_start..offset].len() - text[line_start..offset].trim_start().len()
}

/// The column of `offset` (characters from the start of its line; a tab counts as one).
fn column(text: &str, offset: usize) -> usize {
    let line_start = text[..offset].rfind('\n').map_or(0, |n| n + 1);
    text[line_start..offset].chars().count()
}

#[cfg(test)]
mod tests {
    use modelc_diagnostics::FileId;

    /// The codes of a parse's diagnostics, in order, and the lines (1-based) of their primary labels.
    fn codes(text: &str) -> Vec<(&'static str, usize)> {
        crate::parse(FileId(0), text)
            .diagnostics
            .iter()
            .map(|d| {
                let start = d.primary_label().map_or(0, |l| l.span.start as usize);
                (d.code.id, text[..start].matches('\n').count() + 1)
            })
            .collect()
    }

    #[test]
    fn a_valid_file_is_parsed_as_written_however_it_is_indented() {
        let text = "entity A:\nstring x\nend\nimplementation i for A:\nfor v in [1]:\nif true:\nx = 1\nend\nend\nend\n";
        assert_eq!(codes(text), []);
    }

    #[test]
    fn a_block_ends_at_the_first_line_back_at_its_header_indentation() {
        let text = "implementation i for A:\n    for v in [1]:\n        x = v\n    y = 2\nend\n";
        assert_eq!(codes(text), [("E0029", 2)]);
        let text = "implementation i for A:\n    if a:\n        x = 1\n    elif b:\n        x = 2\n    else:\n        x = 3\n    y = 2\nend\n";
        assert_eq!(codes(text), [("E0029", 2)], "`elif` and `else` continue the block");
        let text = "implementation i for A:\n    if a:\n        x = 1\nend\n";
        assert_eq!(codes(text), [("E0029", 2)], "an `end` left of the `if` closes the implementation");
        let text = "if a:\n    for v in [1]:\n        x = v\nelse:\n    y = 1\nend\n";
        assert_eq!(codes(text), [("E0029", 2)], "the `else` of the enclosing `if` ends the `for`");
    }

    #[test]
    fn a_top_level_definition_or_the_end_of_the_file_ends_every_open_block() {
        let text =
            "entity A:\n    string x\nimplementation i for A:\n    for v in [1]:\n        x = v\nimplement A using i\n";
        assert_eq!(codes(text), [("E0029", 1), ("E0029", 3), ("E0029", 4)]);
        assert_eq!(codes("entity A:\nstring x\n"), [("E0029", 1)], "no `end` before the end of the file");
    }

    #[test]
    fn a_header_without_its_colon_over_an_indented_body_gets_one() {
        assert_eq!(codes("if true\n    y = 1\nend\n"), [("E0006", 1)]);
        assert_eq!(codes("entity A extends B\n    string x\nend\n"), [("E0006", 1)]);
        let text = "if a:\n    x = 1\nelse\n    x = 2\nend\nfor v in [1]\n    y = v\nend\n";
        assert_eq!(codes(text), [("E0006", 3), ("E0006", 6)]);
        // With a missing `end` too: both are repaired, each reported once.
        assert_eq!(codes("implementation i for A\n    x = 1\nimplement A using i\n"), [("E0029", 1), ("E0006", 1)]);
        // An operator at the end: the header continues, it is not missing a `:`.
        assert!(codes("if a and\n    b:\n    x = 1\nend\n").is_empty());
    }

    #[test]
    fn comprehensions_open_no_block() {
        let text = "implementation i for A:\n    x = [v for v in [1, 2] if v > 1]\nentity B:\nend\n";
        assert_eq!(codes(text), [("E0029", 1)]);
    }

    #[test]
    fn files_whose_ends_do_not_say_where_one_is_missing_are_left_to_the_parser() {
        // One `end` too many: nothing is added.
        assert!(codes("entity A:\nend\nend\n").iter().all(|(code, _)| *code != "E0029"));
        // A header without its `:` and no body: the header is what is wrong.
        assert_eq!(codes("entity Broken\n"), [("E0007", 1)]);
        // An unclosed bracket: the bracket is what is wrong.
        assert!(codes("x = [1, 2\nentity A:\n    string y\n").iter().all(|(code, _)| *code != "E0029"));
    }
}
