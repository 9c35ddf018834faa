//! Completion. The context is read from the text before the cursor, which is usually half
//! typed and does not parse; what a name there means comes from the rest of the file's
//! lowered program and the type table:
//!
//! * after `import `: module names;
//! * after `x.` (a chain `a.b.`): the attributes and relations of the entity the chain certainly
//!   holds (`self`, an attribute of the implementation's entity, a variable assigned a
//!   constructor, relations followed from them);
//! * after `ns::`: what that namespace declares;
//! * inside a constructor's parentheses: its keyword arguments, required ones first, those
//!   already given left out;
//! * anywhere else: keywords and snippets, the entities and typedefs in scope (those of modules
//!   the file does not import yet come with the `import` to add), std's plugins, and variables.

use lsp_types::{CompletionItem, CompletionItemKind, InsertTextFormat, Position, Range, TextEdit};
use modelc_diagnostics::FileId;
use modelc_sema::hir::{DefinitionKind, Symbol};
use modelc_sema::index::{AttrDef, AttrKind, TypeKind};
use modelc_sema::resolve::FileScope;

use crate::navigation::Analysis;
use crate::position::{char_boundary, trailing_start};

/// What a name may be made of.
fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// The completions at byte `offset` of `text`. `import_at` is where an `import` line would go
/// (for entities of modules the file does not import yet).
pub(crate) fn complete(
    analysis: &Analysis<'_>,
    file: FileId,
    text: &str,
    offset: usize,
    import_at: Position,
) -> Vec<CompletionItem> {
    let offset = char_boundary(text, offset);
    let line_start = trailing_start(&text[..offset], |c| c != '\n' && c != '\r');
    let before = &text[line_start..offset];
    let partial_start = trailing_start(before, is_name_char);
    let head = &before[..partial_start];
    let Some((namespace, imports)) = analysis.scope_of(file) else { return Vec::new() };
    let scope = FileScope { namespace: &namespace, imports };
    if head.trim_start() == "import " {
        return modules(analysis);
    }
    if let Some(chain) = head.strip_suffix('.') {
        let start = trailing_start(chain, |c| is_name_char(c) || c == '.');
        let names: Vec<&str> = chain[start..].split('.').collect();
        return match chain_entity(analysis, file, line_start + partial_start, &names) {
            Some(entity) => members(analysis, &entity),
            None => Vec::new(),
        };
    }
    if let Some(prefix) = head.strip_suffix("::") {
        let start = trailing_start(prefix, |c| is_name_char(c) || c == ':');
        return match scope.namespace_of(analysis.index(), &prefix[start..]) {
            Ok(target) => namespace_members(analysis, &target),
            Err(_) => Vec::new(),
        };
    }
    if let Some((callee, given)) = open_call(text, line_start + partial_start)
        && let Ok(resolved) = scope.resolve_type(analysis.index(), &callee)
        && resolved.kind == TypeKind::Entity
    {
        return keyword_arguments(analysis, &resolved.fqn, &given);
    }
    everything(analysis, file, &scope, offset as u32, import_at)
}

fn item(label: String, kind: CompletionItemKind, detail: Option<String>) -> CompletionItem {
    CompletionItem { label, kind: Some(kind), detail, ..CompletionItem::default() }
}

fn modules(analysis: &Analysis<'_>) -> Vec<CompletionItem> {
    let available = analysis.index().available.iter().filter(|m| *m != "__config__");
    available.map(|m| item(m.clone(), CompletionItemKind::MODULE, None)).collect()
}

/// The entity the chain `names` (`self`, `host`, `s.host`) certainly holds, written at `at`.
fn chain_entity(analysis: &Analysis<'_>, file: FileId, at: usize, names: &[&str]) -> Option<String> {
    let (root, rest) = names.split_first()?;
    let hir = analysis.hir(file)?;
    // The implementation the cursor is in, and its entity.
    let implementation = hir
        .definitions
        .iter()
        .filter(|d| {
            d.kind == DefinitionKind::Implementation && d.full.start as usize <= at && at <= d.full.end as usize
        })
        .find_map(|d| hir.implementations.iter().find(|i| i.name.span == d.name))
        .and_then(|i| i.entity)
        .map(|id| hir.entity_name(id).to_owned());
    let index = analysis.index();
    let mut entity = if *root == "self" {
        implementation?
    } else if let Some(entity) = implementation.as_ref().and_then(|e| relation_target(index.attribute(e, root)?)) {
        entity
    } else {
        // A variable assigned a constructor: the nearest declaration of that name before the cursor.
        let text = analysis.text(file);
        hir.variable_entities
            .iter()
            .filter_map(|(symbol, entity)| {
                let span = match symbol {
                    Symbol::Local(span) => *span,
                    Symbol::Global { name, .. } if name == root => {
                        hir.definitions.iter().find(|d| d.symbol == *symbol)?.name
                    }
                    _ => return None,
                };
                (text.get(span.range()) == Some(*root) && span.start as usize <= at).then_some((span.start, entity))
            })
            .max_by_key(|(start, _)| *start)
            .map(|(_, entity)| entity.clone())?
    };
    for name in rest {
        entity = relation_target(index.attribute(&entity, name)?)?;
    }
    Some(entity)
}

fn relation_target(def: &AttrDef) -> Option<String> {
    match &def.kind {
        AttrKind::Relation { target, .. } if !target.is_empty() => Some(target.clone()),
        _ => None,
    }
}

/// An attribute's type as shown: `string`, `int[]?`, `web::Host [0:]`.
fn describe(def: &AttrDef) -> String {
    match &def.kind {
        AttrKind::Value { ty, .. } => ty.to_string(),
        AttrKind::Relation { target, bounds, .. } => match bounds.upper {
            Some(upper) if upper == bounds.lower => format!("{target} [{upper}]"),
            Some(upper) => format!("{target} [{}:{upper}]", bounds.lower),
            None => format!("{target} [{}:]", bounds.lower),
        },
    }
}

/// The attributes and relations of an entity, own and inherited.
fn attributes<'i>(index: &'i modelc_sema::ModelIndex, entity: &str) -> Vec<&'i AttrDef> {
    let mut out: Vec<&AttrDef> = Vec::new();
    for def in index.ancestry(entity) {
        for attribute in def.attributes.values() {
            if !out.iter().any(|a| a.name == attribute.name) {
                out.push(attribute);
            }
        }
    }
    out
}

fn members(analysis: &Analysis<'_>, entity: &str) -> Vec<CompletionItem> {
    attributes(analysis.index(), entity)
        .into_iter()
        .map(|def| {
            let kind = match def.kind {
                AttrKind::Value { .. } => CompletionItemKind::FIELD,
                AttrKind::Relation { .. } => CompletionItemKind::PROPERTY,
            };
            item(def.name.clone(), kind, Some(describe(def)))
        })
        .collect()
}

fn namespace_members(analysis: &Analysis<'_>, namespace: &str) -> Vec<CompletionItem> {
    let index = analysis.index();
    let Some(table) = index.namespaces.get(namespace) else { return Vec::new() };
    let mut out: Vec<CompletionItem> = table
        .types
        .iter()
        .map(|(name, kind)| {
            let (kind, detail) = match kind {
                TypeKind::Entity => (CompletionItemKind::CLASS, "entity"),
                TypeKind::Typedef => (CompletionItemKind::TYPE_PARAMETER, "typedef"),
                TypeKind::Implementation => (CompletionItemKind::FUNCTION, "implementation"),
                TypeKind::Plugin => (CompletionItemKind::FUNCTION, "plugin"),
            };
            item(name.clone(), kind, Some(detail.to_owned()))
        })
        .collect();
    out.extend(table.variables.iter().map(|v| item(v.clone(), CompletionItemKind::VARIABLE, None)));
    out
}

/// The constructor whose parentheses the cursor is in (`web::Server(name="a", |`), and the
/// keywords already given, if the cursor is where an argument starts.
fn open_call(text: &str, at: usize) -> Option<(String, Vec<String>)> {
    let before = &text[..char_boundary(text, at)];
    if !before.trim_end().ends_with(['(', ',']) {
        return None;
    }
    let open = unmatched_paren(before)?;
    let callee_start = trailing_start(&before[..open], |c| is_name_char(c) || c == ':');
    let callee = &before[callee_start..open];
    let last = callee.rsplit("::").next()?;
    if !last.starts_with(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    let given = before[open + 1..]
        .split(',')
        .filter_map(|arg| arg.split_once('=').map(|(name, _)| name.trim().to_owned()))
        .collect();
    Some((callee.to_owned(), given))
}

/// Where the call the text ends inside opens: back to the unmatched `(`, skipping nested
/// brackets (strings with brackets in them are rare enough here).
fn unmatched_paren(before: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in before.char_indices().rev().take(4000) {
        match c {
            ')' | ']' | '}' => depth += 1,
            '(' | '[' | '{' if depth > 0 => depth -= 1,
            '(' => return Some(i),
            '[' | '{' => return None,
            _ => {}
        }
    }
    None
}

/// The signature of the std plugin whose call the cursor is in, its argument under the cursor
/// highlighted.
pub(crate) fn signature_help(
    analysis: &Analysis<'_>,
    file: FileId,
    text: &str,
    offset: usize,
) -> Option<lsp_types::SignatureHelp> {
    let before = &text[..char_boundary(text, offset)];
    let open = unmatched_paren(before)?;
    let callee_start = trailing_start(&before[..open], |c| is_name_char(c) || c == ':');
    let callee = &before[callee_start..open];
    let (namespace, imports) = analysis.scope_of(file)?;
    let scope = FileScope { namespace: &namespace, imports };
    let resolved = scope.resolve_type(analysis.index(), callee).ok()?;
    let signature = analysis.index().plugin(&resolved.fqn)?;
    // The argument under the cursor: commas outside nested brackets.
    let mut depth = 0usize;
    let mut active = 0u32;
    for c in before[open + 1..].chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => active += 1,
            _ => {}
        }
    }
    let mut label = format!("{}(", resolved.fqn);
    let mut parameters = Vec::new();
    for (n, param) in signature.params.iter().enumerate() {
        if n > 0 {
            label.push_str(", ");
        }
        let start = label.encode_utf16().count() as u32;
        label.push_str(&format!("{} {}", param.ty, param.name));
        if let Some(default) = param.default {
            label.push_str(&format!(" = {default}"));
        }
        let end = label.encode_utf16().count() as u32;
        parameters.push(lsp_types::ParameterInformation {
            label: lsp_types::ParameterLabel::LabelOffsets([start, end]),
            documentation: None,
        });
    }
    label.push_str(&format!(") -> {}", signature.returns));
    Some(lsp_types::SignatureHelp {
        signatures: vec![lsp_types::SignatureInformation {
            label,
            documentation: None,
            parameters: Some(parameters),
            active_parameter: Some(active),
        }],
        active_signature: Some(0),
        active_parameter: Some(active),
    })
}

fn keyword_arguments(analysis: &Analysis<'_>, entity: &str, given: &[String]) -> Vec<CompletionItem> {
    let index = analysis.index();
    attributes(index, entity)
        .into_iter()
        .filter(|def| !given.contains(&def.name))
        .map(|def| {
            let required = match &def.kind {
                AttrKind::Value { ty, default } => {
                    !ty.nullable
                        && !ty.list
                        && *default != modelc_db::DefaultSummary::Value
                        && !index.has_default(entity, &def.name)
                }
                AttrKind::Relation { bounds, .. } => bounds.lower > 0,
            };
            let mut completion = item(format!("{}=", def.name), CompletionItemKind::FIELD, Some(describe(def)));
            completion.insert_text = Some(format!("{}=", def.name));
            // Required ones first, each group in declaration order.
            completion.sort_text = Some(format!("{}{}", if required { 0 } else { 1 }, def.name));
            if required {
                completion.label_details = Some(lsp_types::CompletionItemLabelDetails {
                    detail: Some(" (required)".to_owned()),
                    description: None,
                });
            }
            completion
        })
        .collect()
}

const SNIPPETS: [(&str, &str); 7] = [
    ("entity", "entity ${1:Name}:\n    ${2:string name}\nend"),
    ("implementation", "implementation ${1:name} for ${2:Entity}:\n    $0\nend"),
    ("implement", "implement ${1:Entity} using ${2:implementation}"),
    ("for", "for ${1:item} in ${2:items}:\n    $0\nend"),
    ("if", "if ${1:condition}:\n    $0\nend"),
    ("typedef", "typedef ${1:name} as ${2:string} matching ${3:self != \"\"}"),
    ("index", "index ${1:Entity}(${2:name})"),
];

fn everything(
    analysis: &Analysis<'_>,
    file: FileId,
    scope: &FileScope<'_>,
    offset: u32,
    import_at: Position,
) -> Vec<CompletionItem> {
    let index = analysis.index();
    let mut out = Vec::new();
    for keyword in modelc_syntax::lexer::KEYWORDS {
        match SNIPPETS.iter().find(|(k, _)| *k == keyword) {
            Some((_, body)) => {
                let mut snippet = item(keyword.to_owned(), CompletionItemKind::SNIPPET, Some(format!("{keyword} …")));
                snippet.insert_text = Some((*body).to_owned());
                snippet.insert_text_format = Some(InsertTextFormat::SNIPPET);
                out.push(snippet);
            }
            None => out.push(item(keyword.to_owned(), CompletionItemKind::KEYWORD, None)),
        }
    }
    // Types: the file's own namespace unqualified, the others through what the file imports
    // (or with the import to add).
    for (namespace, table) in &index.namespaces {
        let imported = scope.imports.iter().find(|i| i.module == *namespace).map(|i| i.visible_name().to_owned());
        let own = namespace == scope.namespace;
        for (name, kind) in &table.types {
            let completion_kind = match kind {
                TypeKind::Entity => CompletionItemKind::CLASS,
                TypeKind::Typedef => CompletionItemKind::TYPE_PARAMETER,
                TypeKind::Plugin => CompletionItemKind::FUNCTION,
                TypeKind::Implementation => continue,
            };
            let label = match (&imported, own) {
                (_, true) => name.clone(),
                (Some(visible), _) => format!("{visible}::{name}"),
                (None, _) => format!("{namespace}::{name}"),
            };
            let fqn = format!("{namespace}::{name}");
            let detail = crate::navigation::signature_text(index, &fqn).unwrap_or(fqn);
            let mut completion = item(label, completion_kind, Some(detail));
            let needs_import = imported.is_none() && !own && namespace != "std";
            if needs_import {
                completion.additional_text_edits = Some(vec![TextEdit {
                    range: Range { start: import_at, end: import_at },
                    new_text: format!("import {namespace}\n"),
                }]);
                completion.label_details = Some(lsp_types::CompletionItemLabelDetails {
                    detail: None,
                    description: Some(format!("import {namespace}")),
                });
                completion.sort_text = Some(format!("~{}", completion.label));
            }
            out.push(completion);
        }
    }
    // Variables: the file's top-level ones, and block variables declared before the cursor.
    let Some(hir) = analysis.hir(file) else { return out };
    let text = analysis.text(file);
    let mut seen: Vec<String> = Vec::new();
    for local in &hir.top_level.locals {
        seen.push(local.text.clone());
        out.push(item(local.text.clone(), CompletionItemKind::VARIABLE, None));
    }
    for reference in &hir.references {
        if let Symbol::Local(span) = &reference.symbol
            && span.start < offset
            && let Some(name) = text.get(span.range())
            && !seen.iter().any(|s| s == name)
        {
            seen.push(name.to_owned());
            out.push(item(name.to_owned(), CompletionItemKind::VARIABLE, None));
        }
    }
    out
}
