//! The reference as Markdown: one section per namespace, declarations in `inmanta` code blocks
//! followed by their documentation.

use std::fmt::Write as _;

use crate::{Declared, Entity, Namespace, Plugin, Reference};

pub fn markdown(reference: &Reference) -> String {
    let mut out = String::new();
    for (k, namespace) in reference.namespaces.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        render_namespace(&mut out, namespace);
    }
    // Sections end with a blank line and start with one: keep one.
    while out.contains("\n\n\n") {
        out = out.replace("\n\n\n", "\n\n");
    }
    out
}

fn render_namespace(out: &mut String, ns: &Namespace) {
    let _ = writeln!(out, "# `{}`\n", ns.name);
    if let Some(doc) = &ns.doc {
        let _ = writeln!(out, "{doc}\n");
    }
    contents(out, ns);
    if !ns.entities.is_empty() {
        out.push_str("## Entities\n");
        for entity in &ns.entities {
            render_entity(out, entity);
        }
    }
    section(out, "Typedefs", None, &ns.typedefs);
    section(out, "Implementations", None, &ns.implementations);
    if !ns.plugins.is_empty() {
        out.push_str("\n## Plugins\n");
        for plugin in &ns.plugins {
            render_plugin(out, plugin);
        }
    }
    let variables = format!(
        "The module's top level runs in every model that imports `{}`, so these variables are set, \
         and the instances they construct exist, in every such model. Read them as `{}::NAME`.",
        ns.name, ns.name
    );
    section(out, "Variables", Some(&variables), &ns.variables);
}

/// One line per kind of declaration, naming each.
fn contents(out: &mut String, ns: &Namespace) {
    let short = |name: &str| name.rsplit("::").next().unwrap_or(name).to_owned();
    let mut line = |kind: &str, names: Vec<String>| {
        if !names.is_empty() {
            let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            let _ = writeln!(out, "- {kind}: {}", names.join(", "));
        }
    };
    line("Entities", ns.entities.iter().map(|e| short(&e.name)).collect());
    line("Typedefs", ns.typedefs.iter().map(|d| short(&d.name)).collect());
    line("Implementations", ns.implementations.iter().map(|d| short(&d.name)).collect());
    line("Plugins", ns.plugins.iter().map(|p| short(&p.name)).collect());
    line("Variables", ns.variables.iter().map(|d| short(&d.name)).collect());
    out.push('\n');
}

fn render_entity(out: &mut String, entity: &Entity) {
    let _ = writeln!(out, "\n### `{}`\n\n```inmanta\n{}:", entity.name, entity.header);
    for attribute in &entity.attributes {
        let _ = writeln!(out, "    {attribute}");
    }
    out.push_str("end\n");
    for statement in &entity.statements {
        let _ = writeln!(out, "{statement}");
    }
    out.push_str("```\n");
    if let Some(doc) = &entity.doc {
        let _ = writeln!(out, "\n{doc}");
    }
    if !entity.ancestors.is_empty() {
        let ancestors: Vec<String> = entity.ancestors.iter().map(|a| format!("`{a}`")).collect();
        let _ = writeln!(out, "\nExtends {}.", ancestors.join(", "));
    }
    if !entity.inherited.is_empty() {
        let from: Vec<String> = entity
            .inherited
            .iter()
            .map(|i| {
                let names: Vec<String> = i.names.iter().map(|n| format!("`{n}`")).collect();
                format!("{} from `{}`", names.join(", "), i.from)
            })
            .collect();
        let _ = writeln!(out, "Inherits {}.", from.join("; "));
    }
}

fn render_plugin(out: &mut String, plugin: &Plugin) {
    let _ = writeln!(out, "\n### `{}`\n\n```inmanta\n{}\n```", plugin.name, plugin.signature);
    if let Some(doc) = &plugin.doc {
        let _ = writeln!(out, "\n{doc}");
    }
    if plugin.deprecated {
        out.push_str("\nDeprecated: using it is warned about.\n");
    }
}

fn section(out: &mut String, title: &str, intro: Option<&str>, items: &[Declared]) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## {title}\n");
    if let Some(intro) = intro {
        let _ = writeln!(out, "{intro}\n");
    }
    // Declarations without documentation share one code block; documented ones get their own.
    let mut block: Vec<&str> = Vec::new();
    let flush = |out: &mut String, block: &mut Vec<&str>| {
        if !block.is_empty() {
            let _ = writeln!(out, "```inmanta\n{}\n```\n", block.join("\n"));
            block.clear();
        }
    };
    for item in items {
        match &item.doc {
            None => block.push(&item.declaration),
            Some(doc) => {
                flush(out, &mut block);
                let _ = writeln!(out, "```inmanta\n{}\n```\n\n{doc}\n", item.declaration);
            }
        }
    }
    flush(out, &mut block);
}
