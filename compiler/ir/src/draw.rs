//! Pictures of the resource graph: DOT (Graphviz) and Mermaid, with resource sets as clusters,
//! and the summary table printed on the terminal. An edge `a → b` means `a` requires `b`, as in
//! the reference's `export -g`. Notifications are drawn from sender to receiver, bold, labelled
//! with their timing.

use std::fmt::Write as _;

use indexmap::IndexMap;

use crate::Ir;

/// The graph in Graphviz's DOT language.
pub fn dot(ir: &Ir) -> String {
    dot_with(ir, &[])
}

/// The graph in DOT with `implied` edges `(after, before)` (a runtime's autoedges) drawn dashed.
pub fn dot_with(ir: &Ir, implied: &[(usize, usize)]) -> String {
    let mut out = String::from("digraph resources {\n    node [shape=box, fontname=\"monospace\"];\n");
    let node = |i: usize| format!("r{i}");
    let positions = positions(ir);
    for (s, set) in ir.sets.iter().enumerate() {
        let _ = writeln!(out, "    subgraph cluster_{s} {{\n        label=\"{}\";", dot_escape(&set.name));
        for member in &set.resources {
            if let Some(&i) = positions.get(member.as_str()) {
                let _ = writeln!(out, "        {} [label=\"{}\"];", node(i), dot_escape(member));
            }
        }
        out.push_str("    }\n");
    }
    for (i, resource) in ir.resources.iter().enumerate() {
        if resource.resource_set.is_none() {
            let _ = writeln!(out, "    {} [label=\"{}\"];", node(i), dot_escape(&resource.id));
        }
    }
    for (i, resource) in ir.resources.iter().enumerate() {
        for required in &resource.requires {
            if let Some(&j) = positions.get(required.as_str()) {
                let _ = writeln!(out, "    {} -> {};", node(i), node(j));
            }
        }
    }
    for (i, j) in implied {
        let _ = writeln!(out, "    {} -> {} [style=dashed, label=\"auto\"];", node(*i), node(*j));
    }
    for (i, j, timing) in notifications(ir, &positions) {
        let _ = writeln!(out, "    {} -> {} [style=bold, color=blue, label=\"notify {timing}\"];", node(i), node(j));
    }
    out.push_str("}\n");
    out
}

/// The graph as a Mermaid flowchart.
pub fn mermaid(ir: &Ir) -> String {
    mermaid_with(ir, &[])
}

/// The Mermaid flowchart with `implied` edges `(after, before)` drawn dotted.
pub fn mermaid_with(ir: &Ir, implied: &[(usize, usize)]) -> String {
    let mut out = String::from("flowchart LR\n");
    let positions = positions(ir);
    for (s, set) in ir.sets.iter().enumerate() {
        let _ = writeln!(out, "    subgraph set{s}[\"{}\"]", mermaid_escape(&set.name));
        for member in &set.resources {
            if let Some(&i) = positions.get(member.as_str()) {
                let _ = writeln!(out, "        r{i}[\"{}\"]", mermaid_escape(member));
            }
        }
        out.push_str("    end\n");
    }
    for (i, resource) in ir.resources.iter().enumerate() {
        if resource.resource_set.is_none() {
            let _ = writeln!(out, "    r{i}[\"{}\"]", mermaid_escape(&resource.id));
        }
    }
    for (i, resource) in ir.resources.iter().enumerate() {
        for required in &resource.requires {
            if let Some(&j) = positions.get(required.as_str()) {
                let _ = writeln!(out, "    r{i} --> r{j}");
            }
        }
    }
    for (i, j) in implied {
        let _ = writeln!(out, "    r{i} -.->|auto| r{j}");
    }
    for (i, j, timing) in notifications(ir, &positions) {
        let _ = writeln!(out, "    r{i} ==>|notify {timing}| r{j}");
    }
    out
}

/// The terminal summary: resources by type (in sets, shared), then the sets by size.
pub fn summary(ir: &Ir, max_sets: usize) -> String {
    let mut by_type: IndexMap<&str, (usize, usize)> = IndexMap::new();
    for resource in &ir.resources {
        let counts = by_type.entry(&resource.entity_type).or_default();
        match resource.resource_set {
            Some(_) => counts.0 += 1,
            None => counts.1 += 1,
        }
    }
    by_type.sort_keys();
    let width = by_type.keys().map(|t| t.len()).chain([4]).max().unwrap_or(4);
    let mut out = String::new();
    let _ = writeln!(out, "{:<width$}  {:>9}  {:>7}  {:>6}", "type", "resources", "in sets", "shared");
    for (ty, (in_sets, shared)) in &by_type {
        let _ = writeln!(out, "{ty:<width$}  {:>9}  {in_sets:>7}  {shared:>6}", in_sets + shared);
    }
    let edges: usize = ir.resources.iter().map(|r| r.requires.len()).sum();
    let empty = ir.sets.iter().filter(|s| s.resources.is_empty()).count();
    let _ = writeln!(
        out,
        "{}, {}, {} ({empty} empty), {} shared",
        count(ir.resources.len(), "resource", "resources"),
        count(edges, "dependency", "dependencies"),
        count(ir.sets.len(), "resource set", "resource sets"),
        ir.shared().count()
    );
    if !ir.sets.is_empty() && max_sets > 0 {
        let width = ir.sets.iter().take(max_sets).map(|s| s.name.len()).chain([3]).max().unwrap_or(3);
        let _ = writeln!(out, "{:<width$}  {:>9}", "set", "resources");
        for set in ir.sets.iter().take(max_sets) {
            let _ = writeln!(out, "{:<width$}  {:>9}", set.name, set.resources.len());
        }
        if ir.sets.len() > max_sets {
            let _ = writeln!(out, "… and {} more sets", ir.sets.len() - max_sets);
        }
    }
    out
}

/// Every notification as `(sender, receiver, timing)`, by position.
fn notifications<'a>(
    ir: &'a Ir,
    positions: &'a std::collections::HashMap<&str, usize>,
) -> impl Iterator<Item = (usize, usize, &'static str)> + 'a {
    ir.resources.iter().enumerate().flat_map(move |(i, r)| {
        r.notify.iter().filter_map(move |n| Some((i, *positions.get(n.target.as_str())?, n.timing.as_str())))
    })
}

fn positions(ir: &Ir) -> std::collections::HashMap<&str, usize> {
    ir.resources.iter().enumerate().map(|(i, r)| (r.id.as_str(), i)).collect()
}

fn dot_escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

fn mermaid_escape(text: &str) -> String {
    text.replace('"', "#quot;").replace('\n', " ")
}

/// `n` and the noun that agrees with it: "1 resource", "2 resources".
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_draws_sets_as_clusters_and_requires_as_edges() {
        let text = dot(&crate::tests::sample());
        assert!(
            text.contains(
                "subgraph cluster_0 {\n        label=\"s\";\n        r0 [label=\"test::R[internal,name=a]\"];"
            )
        );
        assert!(text.contains("    r2 [label=\"test::R[internal,name=c]\"];\n"));
        assert!(text.contains("    r1 -> r0;\n    r2 -> r1;\n"));
    }

    #[test]
    fn notifications_are_drawn_from_sender_to_receiver_with_their_timing() {
        let mut ir = crate::tests::sample();
        let target = ir.resources[0].id.clone();
        ir.resources[1].notify.push(crate::Notify { target, timing: crate::Timing::Delayed });
        assert!(dot(&ir).contains("r1 -> r0 [style=bold, color=blue, label=\"notify delayed\"];"), "{}", dot(&ir));
        assert!(mermaid(&ir).contains("r1 ==>|notify delayed| r0"), "{}", mermaid(&ir));
        assert!(!dot(&crate::tests::sample()).contains("notify"));
    }

    #[test]
    fn mermaid_draws_the_same_graph() {
        let text = mermaid(&crate::tests::sample());
        assert!(text.starts_with("flowchart LR\n    subgraph set0[\"s\"]\n        r0[\"test::R[internal,name=a]\"]"));
        assert!(text.ends_with("    r1 --> r0\n    r2 --> r1\n"));
    }

    #[test]
    fn summary_counts_by_type_and_set() {
        let text = summary(&crate::tests::sample(), 10);
        assert!(text.contains("test::R          3        2       1"), "{text}");
        assert!(text.contains("3 resources, 2 dependencies, 1 resource set (0 empty), 1 shared"), "{text}");
        assert!(text.contains("s            2"), "{text}");
    }
}
