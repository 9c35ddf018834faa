//! No input makes the parser panic or overflow its stack: random bytes, every truncation of
//! real files, and nesting ten thousand levels deep.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use modelc_diagnostics::FileId;
use modelc_syntax::{MAX_DEPTH, MAX_SYNTAX_ERRORS, parse};

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn random_bytes_and_token_soup_never_panic() {
    const PIECES: &[&str] = &[
        "entity",
        "A",
        "x",
        ":",
        "end",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "=",
        "+=",
        "\"s",
        "\"",
        "\"\"\"",
        "f\"{",
        "matching /",
        "/",
        ".",
        "::",
        "--",
        "if",
        "for",
        "in",
        "not",
        "?",
        ",",
        "\n",
        " ",
        "1",
        "-",
        "**",
        "é",
        "\\",
        "implement",
        "using",
        "when",
        "typedef",
        "as",
        "index",
        "import",
        "r'",
        "#",
        "is",
        "defined",
        "dict",
        "[]",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..2_000 {
        let len = (rng.next() % 200) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| (rng.next() % 256) as u8).collect();
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse(FileId(0), &text);
        let soup: String = (0..len).map(|_| PIECES[(rng.next() % PIECES.len() as u64) as usize]).collect();
        let result = parse(FileId(0), &soup);
        for diagnostic in &result.diagnostics {
            let label = diagnostic.primary_label().unwrap();
            assert!(label.span.end as usize <= soup.len(), "span past the end for {soup:?}");
            assert!(soup.is_char_boundary(label.span.start as usize), "span splits a character in {soup:?}");
        }
    }
}

/// Every corpus file (when `../shared` is present) and every fixture, cut at 50 points spread
/// over its length plus every one of its last 64 bytes, parses without panicking.
#[test]
fn truncated_files_never_panic() {
    let mut texts: Vec<String> = Vec::new();
    let roots = [
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data"),
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/inmanta-modules"),
    ];
    for root in &roots {
        collect(root, &mut texts);
    }
    assert!(texts.len() >= 15, "fixtures missing");
    for text in &texts {
        let cuts = (0..50).map(|i| text.len() * i / 50).chain(text.len().saturating_sub(64)..text.len());
        for cut in cuts.filter(|c| text.is_char_boundary(*c)) {
            let _ = parse(FileId(0), &text[..cut]);
        }
    }
}

fn collect(dir: &std::path::Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "cf") {
            out.push(std::fs::read_to_string(&path).unwrap());
        }
    }
}

fn assert_too_deep(text: &str) {
    let result = parse(FileId(0), text);
    assert!(
        result.diagnostics.iter().any(|d| d.code.id == "E0020"),
        "expected a nesting diagnostic for {}...: {:?}",
        &text[..40.min(text.len())],
        result.diagnostics.iter().map(|d| &d.message).collect::<Vec<_>>()
    );
    // The tree that remains is shallow enough to print recursively.
    let _ = modelc_syntax::dump::dump(&result.file);
}

#[test]
fn ten_thousand_levels_of_nesting_are_reported_not_fatal() {
    let n = 10_000;
    // Parentheses add no node, so any depth of them is simply accepted.
    assert!(parse(FileId(0), &format!("x = {}1{}", "(".repeat(n), ")".repeat(n))).diagnostics.is_empty());
    assert_too_deep(&format!("x = {}1{}", "[".repeat(n), "]".repeat(n)));
    assert_too_deep(&format!("x = {}true", "not ".repeat(n)));
    assert_too_deep(&format!("x = {}1", "c ? 1 : ".repeat(n)));
    assert_too_deep(&format!("{}x = 1\n{}", "if true:\n".repeat(n), "end\n".repeat(n)));
    assert_too_deep(&format!("{}x = 1\n{}", "for i in l:\n".repeat(n), "end\n".repeat(n)));
    // Unclosed, so the parser gives up with the deep tree half built.
    let _ = parse(FileId(0), &format!("x = {}1", "(".repeat(n)));
    let _ = parse(FileId(0), &format!("x = 1{} +", " + 1".repeat(n)));
}

#[test]
fn left_associative_chains_are_long_not_deep() {
    let n = 100_000;
    for text in [
        format!("x = 1{}", " + 1".repeat(n)),
        format!("x = 1{}", " ** 1".repeat(n)),
        format!("x = true{}", " or false".repeat(n)),
        format!("x = a{}", ".b".repeat(n)),
        format!("x = a{}", "[0]".repeat(n)),
    ] {
        let result = parse(FileId(0), &text);
        assert!(result.diagnostics.is_empty(), "{}...: {:?}", &text[..20], result.diagnostics.first());
        // Printing the tree walks the whole chain recursively, on this test's ordinary stack.
        assert!(modelc_syntax::dump::dump(&result.file).len() > n);
        // Cloning and comparing recurse too.
        assert_eq!(result.file.items.clone(), result.file.items);
    }
    // Nesting inside a chain's operands still counts.
    assert_too_deep(&format!("x = 1{}{}", " + [1".repeat(n), "]".repeat(n)));
}

#[test]
fn nesting_up_to_the_limit_is_accepted() {
    let depth = (MAX_DEPTH - 5) as usize;
    let text = format!("x = {}1{}", "[".repeat(depth), "]".repeat(depth));
    assert!(parse(FileId(0), &text).diagnostics.is_empty());
}

#[test]
fn long_flat_lists_and_elif_chains_are_fine() {
    let items: Vec<String> = (0..50_000).map(|i| i.to_string()).collect();
    let list = format!("x = [{}]", items.join(", "));
    assert!(parse(FileId(0), &list).diagnostics.is_empty());
    let chain = format!("if a:\n{}else:\nend\n", "elif b:\n  x = 1\n".repeat(5_000));
    assert!(parse(FileId(0), &chain).diagnostics.is_empty());
}

#[test]
fn a_file_of_errors_is_read_up_to_the_cap_and_says_where_it_stopped() {
    let line = "x = ) \n";
    let text = line.repeat(MAX_SYNTAX_ERRORS + 500);
    let parsed = parse(FileId(0), &text);
    let stops: Vec<_> = parsed.diagnostics.iter().filter(|d| d.code.id == "E0031").collect();
    assert_eq!(stops.len(), 1, "{:#?}", &parsed.diagnostics[parsed.diagnostics.len() - 3..]);
    // It points at the line where reading stopped, after the errors it did report.
    let at = stops[0].primary_label().unwrap().span.start as usize;
    assert_eq!(at / line.len(), MAX_SYNTAX_ERRORS, "stopped at byte {at}");
    let before = parsed.diagnostics.iter().filter(|d| d.code.id != "E0031").count();
    assert!((MAX_SYNTAX_ERRORS..=MAX_SYNTAX_ERRORS + 1).contains(&before), "{before} errors");
    assert!(parsed.diagnostics.iter().all(|d| d.primary_label().unwrap().span.start as usize <= at));
    // Under the cap, nothing stops.
    let parsed = parse(FileId(0), &line.repeat(MAX_SYNTAX_ERRORS - 1));
    assert!(parsed.diagnostics.iter().all(|d| d.code.id != "E0031"));
}
