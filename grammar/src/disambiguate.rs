//! Token disambiguation: gives `(`, `[` and `not in` the meaning the reference parser gives them.
//!
//! The language has no statement separator, so `x = y` newline `(1)` is ambiguous: a call
//! `y((1))` or two statements. The reference (an LALR parser built by PLY) resolves every such
//! shift/reduce conflict by shifting, i.e. by continuing the current expression. LALRPOP does
//! not accept conflicts, so we make the decision on tokens instead, before parsing:
//!
//! * `(` right after a name (`ID`/`CID`) is a [`Token::CallParen`]: the only places a name can
//!   be followed by `(` inside an expression are calls and constructors.
//! * `[` right after a name, or right after the `]` of a lookup that can itself be continued
//!   (`a[1][2]`), is a [`Token::LookupBracket`]. A bracket holding keyword arguments
//!   (`E[k=v]`, `x.rel[k=v]`) or a multiplicity (`[0:1]`) cannot be continued.
//! * `not` followed by `in` is one [`Token::NotIn`] operator, so that a prefix `not` never
//!   competes with it.
//! * A multiplicity `[n]` after the unnamed end of a relation (`A.b [1] -- B [1]`) is dropped:
//!   the reference accepts and ignores it (but not a range such as `[0:]`), as no relation end
//!   is there to hold it.
//! * The word `resource` followed by an entity name and `(` is [`Token::Resource`], which starts a
//!   resource declaration (`resource Host(id=name)`), unless it ends an expression (`x = resource`
//!   then a constructor `Host(...)` on the next line). `resource` stays an ordinary name
//!   everywhere else, so models that use it as a variable or attribute keep working.
//!
//! The grammar accepts the refined tokens where a call or lookup may continue an expression and
//! the plain ones where a new expression starts. Where the reference could *not* continue (a
//! statement starting with `(` right after `import x`), we now reject what it accepts; those
//! spots are listed in `grammar/README.md` and are absurd in practice.

use crate::lexer::{Spanned, Token};

/// Rewrites the context-dependent tokens of `tokens` in place and merges `not in`.
pub(crate) fn disambiguate(tokens: &mut Vec<Spanned<'_>>) {
    merge_not_in(tokens);
    drop_unnamed_end_multiplicities(tokens);
    mark_resource_declarations(tokens);
    // Open `[`s: (index, is a lookup bracket).
    let mut open_brackets: Vec<(usize, bool)> = Vec::new();
    // Whether the previous token is the `]` of a lookup that may be continued by another `[`.
    let mut after_continuable_lookup = false;
    for at in 0..tokens.len() {
        let previous_is_name = at > 0 && matches!(tokens[at - 1].1, Token::Id(_) | Token::Cid(_));
        let mut closes_continuable_lookup = false;
        match tokens[at].1 {
            Token::LParen if previous_is_name => tokens[at].1 = Token::CallParen,
            Token::LBracket => {
                let lookup = previous_is_name || after_continuable_lookup;
                if lookup {
                    tokens[at].1 = Token::LookupBracket;
                }
                open_brackets.push((at, lookup));
            }
            Token::RBracket => {
                if let Some((open, true)) = open_brackets.pop() {
                    closes_continuable_lookup = is_expression_subscript(&tokens[open + 1..at]);
                }
            }
            _ => {}
        }
        after_continuable_lookup = closes_continuable_lookup;
    }
}

/// Whether the tokens between a lookup's brackets form a map subscript (`a[expr]`) rather than
/// keyword arguments (`E[k=v]`, `E[]`, `E[**d]`) or a relation multiplicity (`[1:]`, `[:2]`).
fn is_expression_subscript(inside: &[Spanned<'_>]) -> bool {
    let kinds: Vec<&Token<'_>> = inside.iter().map(|(_, t, _)| t).collect();
    !matches!(
        kinds.as_slice(),
        [] | [Token::DoubleStar, ..]
            | [Token::Id(_), Token::Eq, ..]
            | [Token::Int(_), Token::Colon]
            | [Token::Colon, Token::Int(_)]
            | [Token::Int(_), Token::Colon, Token::Int(_)]
    )
}

/// Removes `[n]` after `-- Entity` (or `-- mod::Entity`) when no `.name` follows the entity.
fn drop_unnamed_end_multiplicities(tokens: &mut Vec<Spanned<'_>>) {
    let mut dropped = false;
    for at in 0..tokens.len() {
        if !matches!(tokens[at].1, Token::RelArrow(_)) {
            continue;
        }
        let mut end = at + 1;
        while let (Some(Token::Id(_)), Some(Token::PathSep)) =
            (tokens.get(end).map(|t| &t.1), tokens.get(end + 1).map(|t| &t.1))
        {
            end += 2;
        }
        if !matches!(tokens.get(end).map(|t| &t.1), Some(Token::Cid(_))) {
            continue;
        }
        let open = end + 1;
        if !matches!(tokens.get(open).map(|t| &t.1), Some(Token::LBracket)) {
            continue;
        }
        let Some(close) = tokens[open..].iter().position(|t| t.1 == Token::RBracket).map(|p| open + p) else {
            continue;
        };
        let inside: Vec<&Token<'_>> = tokens[open + 1..close].iter().map(|(_, t, _)| t).collect();
        // Only `[n]`: the reference rejects `[0:]` there.
        if matches!(inside.as_slice(), [Token::Int(_)]) {
            for token in &mut tokens[open..=close] {
                token.0 = usize::MAX;
            }
            dropped = true;
        }
    }
    if dropped {
        tokens.retain(|(start, _, _)| *start != usize::MAX);
    }
}

/// Turns `resource` into [`Token::Resource`] where it starts `resource Entity(` or
/// `resource mod::Entity(` and the token before it cannot be continued by a name.
fn mark_resource_declarations(tokens: &mut [Spanned<'_>]) {
    for at in 0..tokens.len() {
        if tokens[at].1 != Token::Id("resource") || !names_an_entity_then_paren(&tokens[at + 1..]) {
            continue;
        }
        let continues_expression = at > 0 && expects_operand(&tokens[at - 1].1);
        if !continues_expression {
            tokens[at].1 = Token::Resource;
        }
    }
}

/// Whether `rest` starts with `Entity (` or `a::b::Entity (`.
fn names_an_entity_then_paren(rest: &[Spanned<'_>]) -> bool {
    let mut at = 0;
    while let (Some(Token::Id(_)), Some(Token::PathSep)) = (rest.get(at).map(|t| &t.1), rest.get(at + 1).map(|t| &t.1))
    {
        at += 2;
    }
    matches!(rest.get(at).map(|t| &t.1), Some(Token::Cid(_)))
        && matches!(rest.get(at + 1).map(|t| &t.1), Some(Token::LParen | Token::CallParen))
}

/// Whether a name after `token` would continue an expression (an operand is expected).
fn expects_operand(token: &Token<'_>) -> bool {
    !matches!(
        token,
        Token::End
            | Token::RParen
            | Token::RBracket
            | Token::RBrace
            | Token::Id(_)
            | Token::Cid(_)
            | Token::Int(_)
            | Token::Float(_)
            | Token::Str(_)
            | Token::Mls(_)
            | Token::True
            | Token::False
            | Token::Null
    )
}

/// Replaces each `not` directly followed by `in` with one `not in` token spanning both.
fn merge_not_in(tokens: &mut Vec<Spanned<'_>>) {
    let mut merged = false;
    for at in 0..tokens.len().saturating_sub(1) {
        if tokens[at].1 == Token::Not && tokens[at + 1].1 == Token::In {
            tokens[at] = (tokens[at].0, Token::NotIn, tokens[at + 1].2);
            // Marks the `in` for removal; `Token::Not` never follows a merged pair.
            tokens[at + 1].1 = Token::Not;
            tokens[at + 1].0 = usize::MAX;
            merged = true;
        }
    }
    if merged {
        tokens.retain(|(start, _, _)| *start != usize::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;

    fn refined(text: &str) -> Vec<Token<'_>> {
        let mut tokens = lex(text);
        disambiguate(&mut tokens);
        tokens.into_iter().map(|(_, t, _)| t).collect()
    }

    #[test]
    fn paren_after_name_is_a_call() {
        assert_eq!(refined("f (1)")[1], Token::CallParen);
        assert_eq!(refined("A(x=1)")[1], Token::CallParen);
        assert_eq!(refined("x = (1)")[2], Token::LParen);
        assert_eq!(refined("f(1)(2)")[4], Token::LParen);
    }

    #[test]
    fn bracket_continues_names_and_map_lookups_only() {
        assert_eq!(refined("y\n[1, 2]")[1], Token::LookupBracket);
        let chained = refined("a[1][2]");
        assert_eq!((chained[1], chained[4]), (Token::LookupBracket, Token::LookupBracket));
        assert_eq!(refined("E[k=v][0]")[6], Token::LBracket);
        assert_eq!(refined("x = [1] [2]")[5], Token::LBracket);
        assert_eq!(refined("A.b [0:] -- B.c [0:]\n[1]")[15], Token::LBracket);
    }

    #[test]
    fn resource_starts_a_declaration_only_where_a_statement_can_start() {
        assert_eq!(refined("resource Host(id=name)")[0], Token::Resource);
        assert_eq!(refined("x = 1\nresource std::Host(id=name)")[3], Token::Resource);
        // An expression that ends in the name `resource`, then a constructor.
        assert_eq!(refined("x = resource\nHost(id=1)")[2], Token::Id("resource"));
        assert_eq!(refined("x = a.resource\nHost(id=1)")[4], Token::Id("resource"));
        assert_eq!(refined("resource = 1")[0], Token::Id("resource"));
        assert_eq!(refined("resource.x = Host()")[0], Token::Id("resource"));
    }

    #[test]
    fn not_in_is_one_operator() {
        assert_eq!(refined("a not in b"), [Token::Id("a"), Token::NotIn, Token::Id("b")]);
        assert_eq!(refined("not a in b")[0], Token::Not);
        let spans: Vec<_> = {
            let mut tokens = lex("a not  in b");
            disambiguate(&mut tokens);
            tokens.into_iter().map(|(s, _, e)| (s, e)).collect()
        };
        assert_eq!(spans[1], (2, 9));
    }
}
