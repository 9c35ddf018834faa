//! Reads a module's reference out of the resolved program.

use modelc_db::{Db, FileInput, ProjectInput};
use modelc_sema::hir::{Definition, DefinitionKind, FileHir, Symbol};
use modelc_syntax::ast;

use crate::{Declared, Entity, Inherited, Namespace, Plugin, Reference};

/// The reference of `module` (`std`, `web`) and its submodules as the project loads them;
/// `None` when the project loads no namespace of that module.
pub fn collect(db: &dyn Db, project: ProjectInput, module: &str) -> Option<Reference> {
    let loaded = modelc_sema::loaded_modules(db, project);
    let index = modelc_sema::model_index(db, project);
    let mut names: Vec<&String> = loaded
        .files
        .keys()
        .filter(|ns| *ns == module || ns.strip_prefix(module).is_some_and(|rest| rest.starts_with("::")))
        .collect();
    // The module itself first, then its submodules by name: the same order whatever the
    // model imports first.
    names.sort_by_key(|ns| (*ns != module, (*ns).clone()));
    let namespaces: Vec<Namespace> =
        names.into_iter().filter_map(|ns| Some(namespace(db, project, index, ns, loaded.file(ns)?))).collect();
    (!namespaces.is_empty()).then(|| Reference { module: module.to_owned(), namespaces })
}

fn namespace(
    db: &dyn Db,
    project: ProjectInput,
    index: &modelc_sema::ModelIndex,
    name: &str,
    file: FileInput,
) -> Namespace {
    let hir = modelc_sema::hir::file_hir(db, project, file);
    let parse = modelc_db::parse(db, file);
    let text: &str = file.text(db);
    let written = |span: modelc_diagnostics::Span| text.get(span.range()).unwrap_or_default().trim_end().to_owned();
    let of_kind = |kind: DefinitionKind| hir.definitions.iter().filter(move |d| d.kind == kind);
    let declared = |d: &Definition, name: String, declaration: String| Declared {
        name,
        declaration,
        doc: d.docstring.as_deref().map(clean_doc),
    };
    let entities = of_kind(DefinitionKind::Entity)
        .filter_map(|d| match &d.symbol {
            Symbol::Entity(fqn) => Some(entity(index, hir, &parse.file, d, fqn, &written)),
            _ => None,
        })
        .collect();
    let typedefs = of_kind(DefinitionKind::Typedef)
        .filter_map(|d| match &d.symbol {
            Symbol::Typedef(fqn) => Some(declared(d, fqn.clone(), written(d.full))),
            _ => None,
        })
        .collect();
    let implementations = of_kind(DefinitionKind::Implementation)
        .filter_map(|d| match &d.symbol {
            Symbol::Implementation(fqn) => Some(declared(d, fqn.clone(), d.header.clone())),
            _ => None,
        })
        .collect();
    let variables = of_kind(DefinitionKind::Variable)
        .filter_map(|d| match &d.symbol {
            Symbol::Global { namespace, name } => Some(declared(d, format!("{namespace}::{name}"), written(d.full))),
            _ => None,
        })
        .collect();
    // Only std has plugins modelc can run; a module's Python plugins are not read yet.
    let plugins = if name == "std" {
        modelc_stdlib::signatures::SIGNATURES
            .iter()
            .map(|s| Plugin {
                name: format!("std::{}", s.name),
                signature: s.written(),
                doc: modelc_stdlib::plugin_docs::doc(s.name).map(str::to_owned),
                deprecated: s.deprecated,
            })
            .collect()
    } else {
        Vec::new()
    };
    Namespace {
        name: name.to_owned(),
        doc: parse.file.docstring.as_ref().and_then(ast::StrLit::as_constant).as_deref().map(clean_doc),
        entities,
        typedefs,
        implementations,
        plugins,
        variables,
    }
}

fn entity(
    index: &modelc_sema::ModelIndex,
    hir: &FileHir,
    file: &ast::File,
    definition: &Definition,
    fqn: &str,
    written: &dyn Fn(modelc_diagnostics::Span) -> String,
) -> Entity {
    let is_own_member = |d: &&Definition| matches!(&d.symbol, Symbol::Attribute { entity, .. } if entity == fqn);
    let attributes = hir
        .definitions
        .iter()
        .filter(|d| d.kind == DefinitionKind::Attribute)
        .filter(is_own_member)
        .map(|d| d.header.clone())
        .collect();
    // Statements about the entity, in source order: relations with an end on it, and the
    // index, implement and resource statements that name it.
    let mut statements: Vec<modelc_diagnostics::Span> = hir
        .definitions
        .iter()
        .filter(|d| d.kind == DefinitionKind::Relation)
        .filter(is_own_member)
        .map(|d| d.full)
        .collect();
    let names_it = |entity: &ast::TypeRef| {
        hir.references.iter().any(|r| {
            entity.span.start <= r.span.start
                && r.span.end <= entity.span.end
                && matches!(&r.symbol, Symbol::Entity(name) if name == fqn)
        })
    };
    for item in &file.items {
        let about = match item {
            ast::Item::Index(i) => names_it(&i.entity).then_some(i.span),
            ast::Item::Implement(i) => names_it(&i.entity).then_some(i.span),
            ast::Item::Resource(r) => names_it(&r.entity).then_some(r.span),
            _ => None,
        };
        statements.extend(about);
    }
    statements.sort_by_key(|s| s.start);
    statements.dedup();
    let ancestors = ancestors(index, fqn);
    // What it inherits: each name from the nearest ancestor that declares it, unless the entity
    // declares it again itself.
    let mut seen: Vec<&str> =
        index.entities.get(fqn).map(|d| d.attributes.keys().map(String::as_str).collect()).unwrap_or_default();
    let mut inherited = Vec::new();
    for ancestor in ancestors.iter().filter_map(|a| index.entities.get(a)) {
        let names: Vec<String> = ancestor.attributes.keys().filter(|n| !seen.contains(&n.as_str())).cloned().collect();
        seen.extend(ancestor.attributes.keys().map(String::as_str));
        if !names.is_empty() {
            inherited.push(Inherited { from: ancestor.fqn.clone(), names });
        }
    }
    Entity {
        name: fqn.to_owned(),
        header: definition.header.clone(),
        doc: definition.docstring.as_deref().map(clean_doc),
        attributes,
        statements: statements.into_iter().map(written).collect(),
        ancestors,
        inherited,
    }
}

/// Every ancestor of `fqn`, each after all the entities that extend it, parents in the order
/// they are written (as Python orders a class's bases): `NullResource extends ManagedResource,
/// PurgeableResource` gives ManagedResource, PurgeableResource, Resource, Entity.
fn ancestors(index: &modelc_sema::ModelIndex, fqn: &str) -> Vec<String> {
    fn visit(index: &modelc_sema::ModelIndex, fqn: &str, done: &mut Vec<String>) {
        if done.iter().any(|d| d == fqn) {
            return;
        }
        if let Some(def) = index.entities.get(fqn) {
            for parent in def.parents.iter().rev() {
                visit(index, parent, done);
            }
        }
        done.push(fqn.to_owned());
    }
    let mut done = Vec::new();
    visit(index, fqn, &mut done);
    done.reverse();
    done.remove(0);
    done
}

/// A docstring without the indentation it has in the source, and without blank lines around
/// it (as Python's `inspect.cleandoc` does).
fn clean_doc(doc: &str) -> String {
    let mut lines = doc.lines();
    let first = lines.next().unwrap_or_default().trim();
    let rest: Vec<&str> = lines.collect();
    let indent =
        rest.iter().filter(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start().len()).min().unwrap_or(0);
    let mut out: Vec<&str> = vec![first];
    out.extend(rest.iter().map(|l| l.get(indent..).unwrap_or("").trim_end()));
    while out.first().is_some_and(|l| l.is_empty()) {
        out.remove(0);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::clean_doc;

    #[test]
    fn docstrings_lose_their_source_indentation() {
        assert_eq!(clean_doc(" One line. "), "One line.");
        assert_eq!(clean_doc("\n    First.\n\n    Second,\n      indented.\n    "), "First.\n\nSecond,\n  indented.");
    }
}
