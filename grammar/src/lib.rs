//! The concrete syntax of the `.cf` modelling language: lexer, parser and syntax tree.
//!
//! [`parse`] never fails: it always returns a tree, together with every syntax diagnostic of
//! the file. The crate knows nothing of files on disk, salsa or editors; it depends only on the
//! diagnostic *model* (codes and spans), not on any renderer.
//!
//! The pipeline inside: [`lexer`] (logos) → `disambiguate` (context-dependent tokens that stand in
//! for the reference parser's shift preference) → `dangling` (an operator ending a line before a
//! new statement, reported and left out) → `blocks` (a header's missing `:` and the `end`s
//! a file lacks, added where its indentation says, each reported once) → the LALRPOP grammar (`grammar.lalrpop`,
//! with `actions` building nodes and making the parse-time checks) → `depth` (caps nesting; chains are
//! not nesting, and recursive passes walk them through [`stack::deep`]). `literals` decodes strings, f-strings and regexes;
//! `recovery` stops a parse after a thousand syntax errors.

mod actions;
pub mod ast;
mod blocks;
mod conditions;
mod dangling;
mod depth;
mod disambiguate;
pub mod dump;
mod errors;
mod keyword_names;
pub mod lexer;
mod literals;
mod recovery;
mod sink;
pub mod stack;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, clippy::restriction, unused_parens, unreachable_pub, dead_code)]
    grammar
);

use modelc_diagnostics::{Diagnostic, FileId};

pub use depth::MAX_DEPTH;
pub use recovery::MAX_SYNTAX_ERRORS;

/// The result of parsing one file.
#[derive(Debug)]
pub struct Parse {
    pub file: ast::File,
    /// Every lexical and syntax diagnostic, in source order.
    pub diagnostics: Vec<Diagnostic>,
}

impl Parse {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Parses `text`, the contents of `file`. Never fails and never panics: malformed input gives
/// a partial tree and diagnostics.
pub fn parse(file: FileId, text: &str) -> Parse {
    let mut tokens = lexer::lex(text);
    disambiguate::disambiguate(&mut tokens);
    let mut sink = sink::Sink::new(file);
    errors::report_lex_errors(&tokens, text, &mut sink);
    keyword_names::keywords_as_attribute_names(&mut tokens, text, &mut sink);
    dangling::drop_dangling_operators(&mut tokens, text, &mut sink);
    conditions::compare_in_conditions(&mut tokens, text, &mut sink);
    blocks::add_missing_colons(&mut tokens, text, &mut sink);
    blocks::close_unclosed_blocks(&mut tokens, text, &mut sink);

    let mut recovered = recovery::Recovered::default();
    let stopped = std::cell::Cell::new(None);
    let stream = recovered.stream(&tokens, &stopped).map(Ok);
    let result = grammar::FileParser::new().parse(&mut sink, &mut recovered, stream);
    let mut parse_errors: Vec<_> = recovered.errors.into_iter().map(|r| r.error).collect();
    let mut tree = match result {
        Ok(tree) => tree,
        Err(error) => {
            parse_errors.push(error);
            ast::File::default()
        }
    };
    // Past the cap the stream ended early: what the parser said of that end is not true.
    let stopped = stopped.get();
    if stopped.is_some() {
        parse_errors.truncate(MAX_SYNTAX_ERRORS);
    }
    errors::report_parse_errors(parse_errors, &tokens, text, &mut sink);
    if let Some(at) = stopped {
        recovery::report_stop(at, &mut sink);
    }
    depth::limit_depth(&mut tree, &mut sink);

    let mut diagnostics = sink.diagnostics;
    modelc_diagnostics::sort(&mut diagnostics);
    diagnostics.dedup_by(|a, b| a.code == b.code && a.primary_label() == b.primary_label());
    Parse { file: tree, diagnostics }
}
