//! The parser's error recoveries, and the cap on them.
//!
//! At each syntax error LALRPOP searches every terminal to list what it expected, so a file
//! of garbage (a binary file renamed, a generated file gone wrong) took seconds to report the
//! same kind of error hundreds of thousands of times. After [`MAX_SYNTAX_ERRORS`] recoveries the
//! token stream ends, the parse stops there, and one diagnostic says so. Clang stops at 20
//! errors by default; this cap is far above anything a person fixes in one go.

use std::cell::Cell;
use std::rc::Rc;

use lalrpop_util::ErrorRecovery;
use modelc_diagnostics::{Span, codes};

use crate::lexer::{LexErrorKind, Spanned, Token};
use crate::sink::Sink;

/// The syntax errors after which the rest of a file is not parsed.
pub const MAX_SYNTAX_ERRORS: usize = 1_000;

/// The recoveries the grammar records (`recovered.push(e)` in `grammar.lalrpop`), counted
/// where the token stream can see them.
#[derive(Default)]
pub(crate) struct Recovered<'s> {
    pub(crate) errors: Vec<ErrorRecovery<usize, Token<'s>, LexErrorKind>>,
    count: Rc<Cell<usize>>,
}

impl<'s> Recovered<'s> {
    pub(crate) fn push(&mut self, recovery: ErrorRecovery<usize, Token<'s>, LexErrorKind>) {
        self.errors.push(recovery);
        self.count.set(self.count.get() + 1);
    }

    /// The tokens as the parser reads them: they end once the cap is reached, and `stopped`
    /// then holds the span of the first token left unread.
    pub(crate) fn stream<'t>(
        &self,
        tokens: &'t [Spanned<'s>],
        stopped: &'t Cell<Option<Span>>,
    ) -> impl Iterator<Item = Spanned<'s>> + 't
    where
        's: 't,
    {
        let count = Rc::clone(&self.count);
        tokens.iter().copied().take_while(move |(start, _, end)| {
            let go_on = count.get() < MAX_SYNTAX_ERRORS;
            if !go_on {
                stopped.set(Some(Span::new(*start, *end)));
            }
            go_on
        })
    }
}

/// Says that the parse stopped at `at`.
pub(crate) fn report_stop(at: Span, sink: &mut Sink) {
    let diagnostic = sink.report(
        &codes::TOO_MANY_SYNTAX_ERRORS,
        at,
        format!("too many syntax errors ({MAX_SYNTAX_ERRORS}): the rest of this file is not read"),
        "reading stopped here",
    );
    diagnostic.notes.push("fix the errors above, and the rest of the file is checked again".to_owned());
}
