//! Unified diffs of text attributes (file content), for people: `deploy --dry-run` and
//! `modelc diff` show them. Their cost is bounded whatever the texts: the lines both keep at
//! the start and the end are set aside in linear time, and when what remains between them is
//! longer than [`MAX_CHANGED_LINES`] a one-line summary with both texts' sha1 stands in for the
//! line-by-line diff (Myers' algorithm costs the product of the lines and the changes, so a
//! 20,000-line file with every line changed took a minute). The bound is a line count, not a
//! time, so the same texts always give the same output.

use sha1::{Digest, Sha1};

/// The most lines (old and new together) that may differ for the diff to be computed line by
/// line: at most about 4,000² steps.
pub const MAX_CHANGED_LINES: usize = 4_000;

/// A unified diff from `old` to `new`, with `context` lines around each change, or the summary
/// that stands in for it; `names` (old, new) are shown in a `---`/`+++` header.
pub fn unified(old: &str, new: &str, names: Option<(&str, &str)>, context: usize) -> String {
    let header = names.map_or(String::new(), |(old_name, new_name)| format!("--- {old_name}\n+++ {new_name}\n"));
    let (old_lines, new_lines) = (line_count(old), line_count(new));
    let kept = kept_lines(old, new);
    let changed = (old_lines - kept) + (new_lines - kept);
    if changed > MAX_CHANGED_LINES {
        return format!(
            "{header}@@ {} of {old_lines} lines (sha1 {}) become {} of {new_lines} lines \
             (sha1 {}): too many changes to show line by line @@\n",
            old_lines - kept,
            sha1_hex(old),
            new_lines - kept,
            sha1_hex(new),
        );
    }
    let diff = similar::TextDiff::from_lines(old, new);
    let mut unified = diff.unified_diff();
    unified.context_radius(context);
    if let Some((old_name, new_name)) = names {
        unified.header(old_name, new_name);
    }
    unified.to_string()
}

fn line_count(text: &str) -> usize {
    text.split_inclusive('\n').count()
}

/// How many lines the texts share at their start and end (not overlapping).
fn kept_lines(old: &str, new: &str) -> usize {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.split_inclusive('\n').collect(), new.split_inclusive('\n').collect());
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let longest_suffix = a.len().min(b.len()) - prefix;
    let suffix = a.iter().rev().zip(b.iter().rev()).take(longest_suffix).take_while(|(x, y)| x == y).count();
    prefix + suffix
}

fn sha1_hex(text: &str) -> String {
    Sha1::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize, tag: &str) -> String {
        (0..n).map(|i| format!("{tag} {i}\n")).collect()
    }

    #[test]
    fn a_small_change_in_a_large_text_is_shown_line_by_line() {
        let old = numbered(50_000, "line");
        let new = old.replacen("line 25000\n", "changed\n", 1);
        let diff = unified(&old, &new, Some(("a", "b")), 1);
        assert_eq!(diff, "--- a\n+++ b\n@@ -25000,3 +25000,3 @@\n line 24999\n-line 25000\n+changed\n line 25001\n");
    }

    #[test]
    fn many_changes_are_summarised_with_hashes() {
        let old = numbered(10_000, "old");
        let new = format!("header\n{}footer\n", numbered(10_000, "new"));
        let diff = unified(&old, &new, Some(("a", "b")), 3);
        assert!(diff.starts_with("--- a\n+++ b\n@@ 10000 of 10000 lines (sha1 "), "{diff}");
        assert!(diff.contains(") become 10002 of 10002 lines (sha1 "), "{diff}");
        assert_eq!(diff.lines().count(), 3);
        // The same texts, the same summary.
        assert_eq!(diff, unified(&old, &new, Some(("a", "b")), 3));
    }

    #[test]
    fn kept_lines_do_not_overlap() {
        assert_eq!(kept_lines("a\na\n", "a\n"), 1);
        assert_eq!(kept_lines("x\ny\n", "x\nz\ny\n"), 2);
        assert_eq!(kept_lines("", "a\n"), 0);
    }
}
