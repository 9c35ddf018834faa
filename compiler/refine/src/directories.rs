//! Ordering by directory (the fs module's `dir_before_file`): a resource that occupies a path
//! (`paths=[…]` in its declaration) inside a directory resource (`directory=…`) of the same
//! agent requires that directory, for every managed ancestor directory. When the directory is
//! purged, what is inside must be purged too, and is removed first (the edge turns around);
//! anything else deployed inside a purged directory is error E0408.

use modelc_diagnostics::{Diagnostic, codes};
use modelc_ir::Ir;
use modelc_value::Value;
use rustc_hash::FxHashMap;

use crate::Refinery;
use crate::shapes::Shapes;

impl Refinery<'_> {
    pub(crate) fn directories(&mut self, ir: &mut Ir, shapes: &Shapes<'_>) {
        let graph = self.graph;
        let path_at = |p: usize, at: usize| match &graph.values(self.instances[p])[at] {
            Value::Str(path) => Some(normalise(path)),
            _ => None,
        };
        let shape_of = |p: usize| shapes.shape(graph.get(self.instances[p]).entity);
        let mut directories: FxHashMap<(&str, String), usize> = FxHashMap::default();
        for p in 0..ir.resources.len() {
            if let Some(path) = shape_of(p).and_then(|s| s.directory).and_then(|at| path_at(p, at)) {
                directories.insert((ir.resources[p].agent.as_str(), path), p);
            }
        }
        if directories.is_empty() {
            return;
        }
        let purged = |p: usize| ir.resources[p].attributes.get("purged") == Some(&serde_json::Value::Bool(true));
        // (from, to): `from` requires `to`.
        let mut edges: Vec<(usize, usize)> = Vec::new();
        let mut conflicts: Vec<(usize, usize)> = Vec::new();
        for p in 0..ir.resources.len() {
            let Some(shape) = shape_of(p) else { continue };
            for &at in &shape.paths {
                let Some(path) = path_at(p, at) else { continue };
                for ancestor in ancestors(&path) {
                    let Some(&dir) = directories.get(&(ir.resources[p].agent.as_str(), ancestor.to_owned())) else {
                        continue;
                    };
                    match (purged(dir), purged(p)) {
                        (false, _) => edges.push((p, dir)),
                        (true, true) => edges.push((dir, p)),
                        (true, false) => conflicts.push((dir, p)),
                    }
                }
            }
        }
        for (dir, inside) in conflicts {
            let (d, i) = (self.instances[dir], self.instances[inside]);
            let node = graph.get(i);
            let diagnostic = Diagnostic::new(
                &codes::CONTENT_IN_PURGED_DIRECTORY,
                format!("`{}` is deployed inside `{}`, which is purged", ir.resources[inside].id, ir.resources[dir].id),
            )
            .primary(node.file, node.span, "deployed inside a purged directory")
            .secondary(graph.get(d).file, graph.get(d).span, "the directory is purged here")
            .help("purge it too (`purged=true`), move it out of the directory, or stop purging the directory");
            self.diagnostics.push(diagnostic);
        }
        edges.sort_unstable();
        edges.dedup();
        for (from, to) in edges {
            let found = &mut self.requires[from];
            // Requires stay in queue order.
            if let Err(at) = found.binary_search(&(to as u32)) {
                found.insert(at, to as u32);
                let ids = found.iter().map(|q| ir.resources[*q as usize].id.clone()).collect();
                ir.resources[from].requires = ids;
            }
        }
    }
}

/// A path as Python's `os.path.normpath` writes it: no repeated or trailing slashes, no `.`,
/// `..` taken back lexically.
fn normalise(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if absolute => {}
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_owned(),
        (false, false) => joined,
    }
}

/// The directories above `path`, nearest first; never `/` itself (the reference's prefix test
/// never matches the root).
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let mut rest = path;
    std::iter::from_fn(move || {
        let cut = rest.rfind('/')?;
        rest = &rest[..cut];
        (!rest.is_empty()).then_some(rest)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_normalised_as_python_does() {
        assert_eq!(normalise("/etc//app/./conf/"), "/etc/app/conf");
        assert_eq!(normalise("/a/b/../c"), "/a/c");
        assert_eq!(normalise("/../a"), "/a");
        assert_eq!(normalise("a/../../b"), "../b");
        assert_eq!(normalise("/"), "/");
    }

    #[test]
    fn ancestors_stop_before_the_root() {
        assert_eq!(ancestors("/a/b/c").collect::<Vec<_>>(), ["/a/b", "/a"]);
        assert_eq!(ancestors("/a").count(), 0);
        assert_eq!(ancestors("x/y").collect::<Vec<_>>(), ["x"]);
    }
}
