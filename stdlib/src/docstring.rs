//! Docstrings as readers see them, for the `.cf` files' and the Python plugins' alike.

/// A docstring without the indentation it has in the source, and without blank lines around
/// it (as Python's `inspect.cleandoc` does).
pub fn clean(doc: &str) -> String {
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
    use super::clean;

    #[test]
    fn docstrings_lose_their_source_indentation() {
        assert_eq!(clean(" One line. "), "One line.");
        assert_eq!(clean("\n    First.\n\n    Second,\n      indented.\n    "), "First.\n\nSecond,\n  indented.");
    }
}
