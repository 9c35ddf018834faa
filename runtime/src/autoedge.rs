//! Autoedges: the order the resources themselves imply, added at deploy time to what the model
//! states (the IR and its export are left as they are):
//!
//! * a file, directory or symlink after the `fs::Directory` that contains it (the nearest one);
//! * a symlink after the file, directory or symlink it points to;
//! * an `exec::Run` after the directory its `cwd` names, and after the file its command runs
//!   (an absolute program path).
//!
//! An edge is added only when both ends are in the plan and have `autoedge` on, when the model
//! does not state it already, and when it would not close a cycle.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use modelc_ir::Resource;

/// The path a resource puts on the machine, for the types that put one there.
fn own_path(resource: &Resource) -> Option<PathBuf> {
    let field = match resource.entity_type.as_str() {
        "fs::File" | "fs::Directory" => "path",
        "fs::Symlink" => "dst",
        _ => return None,
    };
    resource.attributes.get(field)?.as_str().filter(|p| p.starts_with('/')).map(PathBuf::from)
}

/// The paths a resource needs to exist before it: what it implies it comes after.
fn needs(resource: &Resource) -> Vec<PathBuf> {
    let text = |field: &str| resource.attributes.get(field).and_then(|v| v.as_str()).filter(|p| p.starts_with('/'));
    let mut out = Vec::new();
    if let Some(path) = own_path(resource) {
        out.extend(path.parent().map(Path::to_path_buf));
    }
    match resource.entity_type.as_str() {
        "fs::Symlink" => out.extend(text("src").map(PathBuf::from)),
        "exec::Run" => {
            out.extend(text("cwd").map(PathBuf::from));
            let command = resource.attributes.get("command").and_then(|v| v.as_str()).unwrap_or_default();
            if let Some(program) = shlex::split(command).and_then(|words| words.into_iter().next())
                && program.starts_with('/')
            {
                out.push(PathBuf::from(program));
            }
        }
        _ => {}
    }
    out
}

/// The implied edges `(after, before)` of the resources, given what each one requires.
pub fn implied(resources: &[Resource], requires: &[Vec<usize>]) -> Vec<(usize, usize)> {
    let by_path: HashMap<PathBuf, usize> = resources
        .iter()
        .enumerate()
        .filter(|(_, r)| r.meta.autoedge)
        .filter_map(|(i, r)| Some((own_path(r)?, i)))
        .collect();
    let mut requires: Vec<Vec<usize>> = requires.to_vec();
    let mut edges = Vec::new();
    for (i, resource) in resources.iter().enumerate() {
        if !resource.meta.autoedge {
            continue;
        }
        for needed in needs(resource) {
            // The nearest resource at the path or above it: a file in `/a/b/c` waits for the
            // directory `/a/b`, or `/a` when only that one is managed.
            let found = needed.ancestors().find_map(|p| by_path.get(p).copied());
            let Some(j) = found.filter(|j| *j != i) else { continue };
            if requires[i].contains(&j) || reaches(&requires, j, i) {
                continue;
            }
            requires[i].push(j);
            edges.push((i, j));
        }
    }
    edges
}

/// Whether `from` requires `to`, directly or through others.
pub(crate) fn reaches(requires: &[Vec<usize>], from: usize, to: usize) -> bool {
    let mut seen = vec![false; requires.len()];
    let mut stack = vec![from];
    while let Some(n) = stack.pop() {
        if n == to {
            return true;
        }
        if std::mem::replace(&mut seen[n], true) {
            continue;
        }
        stack.extend(requires[n].iter().copied());
    }
    false
}
