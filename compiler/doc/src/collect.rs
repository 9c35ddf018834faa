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
        doc: d.docstring.as_deref().map(modelc_stdlib::docstring::clean),
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
    // std's plugins are modelc's own; a module's are its Python's, as the checker read them.
    let plugins = if name == "std" {
        modelc_stdlib::signatures::SIGNATURES.iter().map(plugin).collect()
    } else {
        index.python_plugins.values().filter(|s| s.namespace == name).map(|s| plugin(s)).collect()
    };
    Namespace {
        name: name.to_owned(),
        doc: parse
            .file
            .docstring
            .as_ref()
            .and_then(ast::StrLit::as_constant)
            .as_deref()
            .map(modelc_stdlib::docstring::clean),
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
        doc: definition.docstring.as_deref().map(modelc_stdlib::docstring::clean),
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

fn plugin(signature: &modelc_stdlib::PluginSignature) -> Plugin {
    Plugin {
        name: signature.fqn(),
        signature: signature.written(),
        doc: signature.documentation().map(str::to_owned),
        deprecated: signature.deprecated,
    }
}
