//! Navigation over the lowered program: what a name at a position refers to, where that is
//! declared, everywhere it is used, what to show when hovering it, and a file's symbols.
//! Everything here reads `file_hir`'s definitions and references (names resolved once, by
//! lowering) and the type table; nothing resolves a name again.

use modelc_db::ProjectInput;
use modelc_diagnostics::{FileId, Span};
use modelc_sema::hir::{Definition, DefinitionKind, FileHir, Symbol};
use modelc_sema::index::AttrKind;

use crate::workspace::Workspace;

/// The analyses of one project.
pub(crate) struct Analysis<'w> {
    workspace: &'w Workspace,
    project: ProjectInput,
}

impl<'w> Analysis<'w> {
    /// The analysis of the project an open file is checked in.
    pub(crate) fn of(workspace: &'w Workspace, file: FileId) -> Option<Analysis<'w>> {
        let (_, project) = workspace.owner(file)?;
        Some(Analysis { workspace, project })
    }

    pub(crate) fn text(&self, file: FileId) -> std::sync::Arc<str> {
        self.workspace.text(file)
    }

    pub(crate) fn index(&self) -> &'w modelc_sema::ModelIndex {
        modelc_sema::model_index(&self.workspace.db, self.project)
    }

    /// The namespace a loaded file defines, and what it imports.
    pub(crate) fn scope_of(&self, file: FileId) -> Option<(String, &'w [modelc_db::ImportSummary])> {
        let loaded = modelc_sema::loaded_modules(&self.workspace.db, self.project);
        let (namespace, input) = loaded.files.iter().find(|(_, input)| input.id(&self.workspace.db) == file)?;
        Some((namespace.clone(), modelc_db::imports(&self.workspace.db, *input)))
    }

    pub(crate) fn hir(&self, file: FileId) -> Option<&'w FileHir> {
        let input = self.workspace.input(file)?;
        Some(modelc_sema::hir::file_hir(&self.workspace.db, self.project, input))
    }

    /// The loaded files of the project, in load order.
    fn files(&self) -> Vec<FileId> {
        let loaded = modelc_sema::loaded_modules(&self.workspace.db, self.project);
        loaded.files.values().map(|input| input.id(&self.workspace.db)).collect()
    }

    fn file_of_namespace(&self, namespace: &str) -> Option<FileId> {
        let loaded = modelc_sema::loaded_modules(&self.workspace.db, self.project);
        loaded.files.get(namespace).map(|input| input.id(&self.workspace.db))
    }

    /// The name at `offset` and what it refers to: the innermost reference around it.
    pub(crate) fn symbol_at(&self, file: FileId, offset: u32) -> Option<(Span, Symbol)> {
        let hir = self.hir(file)?;
        hir.references
            .iter()
            .filter(|r| r.span.start <= offset && offset <= r.span.end)
            .min_by_key(|r| r.span.len())
            .map(|r| (r.span, r.symbol.clone()))
    }

    /// The type of what a symbol holds, as a symbol: a relation's target entity, an attribute's
    /// typedef, the entity a variable certainly holds; an entity or typedef is its own type.
    pub(crate) fn type_of(&self, file: FileId, symbol: &Symbol) -> Option<Symbol> {
        let index = self.index();
        match symbol {
            Symbol::Entity(_) | Symbol::Typedef(_) => Some(symbol.clone()),
            Symbol::Attribute { entity, name } => match &index.attribute(entity, name)?.kind {
                AttrKind::Relation { target, .. } => Some(Symbol::Entity(target.clone())),
                AttrKind::Value { ty, .. } => match &ty.base {
                    modelc_sema::types::BaseType::Typedef(fqn) => Some(Symbol::Typedef(fqn.clone())),
                    _ => None,
                },
            },
            Symbol::Implementation(fqn) => index.implementations.get(fqn).map(|e| Symbol::Entity(e.clone())),
            Symbol::Local(_) | Symbol::Global { .. } => {
                let hir = self.hir(file)?;
                let (_, entity) = hir.variable_entities.iter().find(|(s, _)| s == symbol).or_else(|| {
                    // A top-level variable of another namespace: that file knows it.
                    let Symbol::Global { namespace, .. } = symbol else { return None };
                    let other = self.hir(self.file_of_namespace(namespace)?)?;
                    other.variable_entities.iter().find(|(s, _)| s == symbol)
                })?;
                Some(Symbol::Entity(entity.clone()))
            }
            Symbol::Plugin(_) => None,
        }
    }

    /// Every declaration of the project whose name contains `query` (case ignored), with the
    /// file it is in: entities, attributes, relations, implementations, typedefs, variables.
    pub(crate) fn workspace_symbols(&self, query: &str) -> Vec<(FileId, &'w Definition)> {
        let query = query.to_lowercase();
        let mut out = Vec::new();
        for file in self.files() {
            let Some(hir) = self.hir(file) else { continue };
            let text = self.workspace.text(file);
            for definition in &hir.definitions {
                let name = text.get(definition.name.range()).unwrap_or_default();
                if name.to_lowercase().contains(&query) {
                    out.push((file, definition));
                }
            }
        }
        out
    }

    /// Where a symbol is declared (a variable of a block: where it is first assigned).
    pub(crate) fn definition(&self, file: FileId, symbol: &Symbol) -> Option<(FileId, Span)> {
        let namespace = match symbol {
            Symbol::Local(span) => return Some((file, *span)),
            Symbol::Entity(fqn) | Symbol::Implementation(fqn) | Symbol::Typedef(fqn) => namespace_of(fqn),
            Symbol::Attribute { entity, .. } => namespace_of(entity),
            Symbol::Global { namespace, .. } => namespace.as_str(),
            // std's plugins are written in Rust: no source to go to.
            Symbol::Plugin(_) => return None,
        };
        let target = self.file_of_namespace(namespace)?;
        let definition = self.hir(target)?.definitions.iter().find(|d| d.symbol == *symbol)?;
        Some((target, definition.name))
    }

    fn declaration(&self, symbol: &Symbol) -> Option<(FileId, &'w Definition)> {
        let namespace = match symbol {
            Symbol::Entity(fqn) | Symbol::Implementation(fqn) | Symbol::Typedef(fqn) => namespace_of(fqn),
            Symbol::Attribute { entity, .. } => namespace_of(entity),
            Symbol::Global { namespace, .. } => namespace.as_str(),
            Symbol::Plugin(_) | Symbol::Local(_) => return None,
        };
        let target = self.file_of_namespace(namespace)?;
        Some((target, self.hir(target)?.definitions.iter().find(|d| d.symbol == *symbol)?))
    }

    /// Every place a symbol is written, its declaration included: in `file` alone for a
    /// block's variable, else in every loaded file.
    pub(crate) fn references(&self, file: FileId, symbol: &Symbol) -> Vec<(FileId, Span)> {
        let files = match symbol {
            Symbol::Local(_) => vec![file],
            _ => self.files(),
        };
        let mut out = Vec::new();
        for f in files {
            let Some(hir) = self.hir(f) else { continue };
            let mut spans: Vec<Span> = hir.references.iter().filter(|r| r.symbol == *symbol).map(|r| r.span).collect();
            spans.sort_by_key(|s| (s.start, s.end));
            spans.dedup();
            out.extend(spans.into_iter().map(|s| (f, s)));
        }
        out
    }

    /// The places a rename of `symbol` to `new_name` changes: the last segment of every name
    /// that refers to it (`web::Server` keeps its `web::`). An error says why it cannot be.
    pub(crate) fn rename(&self, file: FileId, symbol: &Symbol, new_name: &str) -> Result<Vec<(FileId, Span)>, String> {
        if let Symbol::Plugin(fqn) = symbol {
            return Err(format!("`{fqn}` is a plugin of std, which is part of modelc"));
        }
        let (declared_in, _) = self.definition(file, symbol).ok_or("this name has no declaration to rename")?;
        if self.workspace.path(declared_in).is_none() {
            return Err("this name is declared in std, which is part of modelc".to_owned());
        }
        let capital = matches!(symbol, Symbol::Entity(_));
        let mut chars = new_name.chars();
        let first_ok = chars
            .next()
            .is_some_and(|c| if capital { c.is_ascii_uppercase() } else { c.is_ascii_lowercase() || c == '_' });
        if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            let rule = if capital {
                "an entity name starts with a capital letter"
            } else {
                "this name starts with a lower-case letter or `_`"
            };
            return Err(format!("`{new_name}` is not a valid name: {rule}, then letters, digits, `_` or `-`"));
        }
        if modelc_syntax::lexer::KEYWORDS.contains(&new_name) {
            return Err(format!("`{new_name}` is a keyword"));
        }
        let mut out = Vec::new();
        for (f, span) in self.references(file, symbol) {
            let text = self.workspace.text(f);
            let written = text.get(span.range()).unwrap_or_default();
            let last = written.rsplit("::").next().unwrap_or(written);
            out.push((f, Span::new(span.end as usize - last.len(), span.end as usize)));
        }
        Ok(out)
    }

    /// What hovering a symbol shows, as Markdown.
    pub(crate) fn hover(&self, file: FileId, symbol: &Symbol) -> Option<String> {
        let index = modelc_sema::model_index(&self.workspace.db, self.project);
        let mut out = String::new();
        match symbol {
            Symbol::Plugin(fqn) => {
                let signature = index.plugin(fqn)?;
                out.push_str(&code(&signature.written()));
                if let Some(doc) = signature.documentation() {
                    out.push_str("\n\n");
                    out.push_str(doc);
                }
                if signature.deprecated {
                    out.push_str("\n\n*deprecated*");
                }
            }
            Symbol::Local(span) => {
                let text = self.workspace.text(file);
                let line_start = text[..span.start as usize].rfind(['\n', '\r']).map_or(0, |i| i + 1);
                let line_end =
                    text[span.start as usize..].find(['\n', '\r']).map_or(text.len(), |i| i + span.start as usize);
                out.push_str(&code(text[line_start..line_end].trim()));
                out.push_str("\n\nvariable of this block");
            }
            _ => {
                let (_, definition) = self.declaration(symbol)?;
                out.push_str(&code(&definition.header));
                if let Some(doc) = &definition.docstring {
                    out.push_str("\n\n");
                    out.push_str(doc.trim());
                }
                if let Symbol::Entity(fqn) = symbol {
                    out.push_str(&entity_members(index, fqn));
                }
            }
        }
        Some(out)
    }

    /// The file's declarations: entities with their attributes inside them, then the rest.
    pub(crate) fn symbols(&self, file: FileId) -> Vec<(&'w Definition, Vec<&'w Definition>)> {
        let Some(hir) = self.hir(file) else { return Vec::new() };
        let mut out: Vec<(&Definition, Vec<&Definition>)> = Vec::new();
        for definition in &hir.definitions {
            let inside = out.last_mut().filter(|(parent, _)| {
                parent.kind == DefinitionKind::Entity
                    && definition.kind == DefinitionKind::Attribute
                    && parent.full.start <= definition.full.start
                    && definition.full.end <= parent.full.end
            });
            match inside {
                Some((_, children)) => children.push(definition),
                None => out.push((definition, Vec::new())),
            }
        }
        out
    }
}

/// A plugin's signature as written: `std::replace(string string, string old, …) -> string`.
pub(crate) fn signature_text(index: &modelc_sema::ModelIndex, fqn: &str) -> Option<String> {
    index.plugin(fqn).map(|signature| signature.written())
}

fn namespace_of(fqn: &str) -> &str {
    fqn.rsplit_once("::").map_or(fqn, |(namespace, _)| namespace)
}

fn code(text: &str) -> String {
    format!("```inmanta\n{text}\n```")
}

/// An entity's attributes and relations, own and inherited, for its hover.
fn entity_members(index: &modelc_sema::ModelIndex, fqn: &str) -> String {
    let mut lines = Vec::new();
    for def in index.ancestry(fqn) {
        for (name, attribute) in &def.attributes {
            if lines.iter().any(|(n, _): &(String, String)| n == name) {
                continue;
            }
            let from = if def.fqn == fqn { String::new() } else { format!(" (from `{}`)", def.fqn) };
            let line = match &attribute.kind {
                AttrKind::Value { ty, .. } => format!("- `{ty} {name}`{from}"),
                AttrKind::Relation { target, bounds, .. } => {
                    let upper = bounds.upper.map_or(String::new(), |u| u.to_string());
                    let multiplicity = if bounds.upper == Some(bounds.lower) {
                        format!("[{}]", bounds.lower)
                    } else {
                        format!("[{}:{upper}]", bounds.lower)
                    };
                    format!("- `{name}`: `{target}` {multiplicity}{from}")
                }
            };
            lines.push((name.clone(), line));
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    let body: Vec<String> = lines.into_iter().map(|(_, line)| line).collect();
    format!("\n\n{}", body.join("\n"))
}
