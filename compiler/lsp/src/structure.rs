//! What editors draw from a file's structure: folding ranges (definitions and `for`/`if` blocks
//! that span lines) and semantic tokens (every resolved name coloured by what it refers to:
//! entities, typedefs, attributes, relations, implementations, plugins, variables, and the
//! namespace before `::`).

use lsp_types::{FoldingRange, SemanticToken, SemanticTokenType};
use modelc_diagnostics::{FileId, Span};
use modelc_sema::hir::{Block, DefinitionKind, Stmt, Symbol};

use crate::navigation::Analysis;
use crate::position::Text;

/// The token types, in the order of the legend the server announces.
pub(crate) const TOKEN_TYPES: [SemanticTokenType; 7] = [
    SemanticTokenType::NAMESPACE,
    SemanticTokenType::CLASS,
    SemanticTokenType::TYPE,
    SemanticTokenType::PROPERTY,
    SemanticTokenType::FUNCTION,
    SemanticTokenType::VARIABLE,
    SemanticTokenType::METHOD,
];

const NAMESPACE: u32 = 0;
const CLASS: u32 = 1;
const TYPE: u32 = 2;
const PROPERTY: u32 = 3;
const FUNCTION: u32 = 4;
const VARIABLE: u32 = 5;
const IMPLEMENTATION: u32 = 6;

/// The spans of a file's definitions and blocks that cover more than one line.
pub(crate) fn folding_ranges(analysis: &Analysis<'_>, file: FileId, text: &Text) -> Vec<FoldingRange> {
    let Some(hir) = analysis.hir(file) else { return Vec::new() };
    let mut spans: Vec<Span> = hir
        .definitions
        .iter()
        .filter(|d| {
            matches!(d.kind, DefinitionKind::Entity | DefinitionKind::Implementation | DefinitionKind::Relation)
        })
        .map(|d| d.full)
        .collect();
    blocks(&hir.top_level, &mut spans);
    for implementation in &hir.implementations {
        blocks(&implementation.body, &mut spans);
    }
    spans.sort_by_key(|s| (s.start, s.end));
    spans.dedup();
    spans
        .into_iter()
        .filter_map(|span| {
            let range = text.range(span);
            (range.end.line > range.start.line).then(|| FoldingRange {
                start_line: range.start.line,
                start_character: None,
                // The last line (`end`) stays visible.
                end_line: range.end.line.saturating_sub(1).max(range.start.line),
                end_character: None,
                kind: None,
                collapsed_text: None,
            })
        })
        .collect()
}

fn blocks(block: &Block, out: &mut Vec<Span>) {
    for stmt in &block.stmts {
        match stmt {
            Stmt::For(for_) => {
                out.push(for_.span);
                blocks(&for_.body, out);
            }
            Stmt::If(if_) => {
                out.push(if_.span);
                for (_, body) in &if_.branches {
                    blocks(body, out);
                }
                if let Some(body) = &if_.else_body {
                    blocks(body, out);
                }
            }
            Stmt::Assign(_) | Stmt::Expr(_) => {}
        }
    }
}

/// Every resolved name of the file, as LSP's relative token encoding.
pub(crate) fn semantic_tokens(analysis: &Analysis<'_>, file: FileId, source: &str, text: &Text) -> Vec<SemanticToken> {
    let Some(hir) = analysis.hir(file) else { return Vec::new() };
    // (start, end, type), absolute byte offsets.
    let mut tokens: Vec<(usize, usize, u32)> = Vec::new();
    for reference in &hir.references {
        let kind = match &reference.symbol {
            Symbol::Entity(_) => CLASS,
            Symbol::Typedef(_) => TYPE,
            Symbol::Attribute { .. } => PROPERTY,
            Symbol::Implementation(_) => IMPLEMENTATION,
            Symbol::Plugin(_) => FUNCTION,
            Symbol::Global { .. } | Symbol::Local(_) => VARIABLE,
        };
        let (start, end) = (reference.span.start as usize, reference.span.end as usize);
        let Some(written) = source.get(start..end) else { continue };
        // `web::Server`: the namespace, then the name.
        match written.rfind("::") {
            Some(split) => {
                tokens.push((start, start + split, NAMESPACE));
                tokens.push((start + split + 2, end, kind));
            }
            None => tokens.push((start, end, kind)),
        }
    }
    tokens.sort();
    tokens.dedup_by(|b, a| b.0 < a.1);
    let mut out = Vec::with_capacity(tokens.len());
    let (mut line, mut character) = (0, 0);
    for (start, end, kind) in tokens {
        let from = text.position(start);
        let to = text.position(end);
        if to.line != from.line || to.character <= from.character {
            continue;
        }
        let delta_line = from.line - line;
        let delta_start = if delta_line == 0 { from.character - character } else { from.character };
        out.push(SemanticToken {
            delta_line,
            delta_start,
            length: to.character - from.character,
            token_type: kind,
            token_modifiers_bitset: 0,
        });
        (line, character) = (from.line, from.character);
    }
    out
}
