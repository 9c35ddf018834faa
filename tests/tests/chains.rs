//! Long left-associative chains (`a + b + …`, `x or y or …`, `n.next.next…`) are long, not
//! deep: every command takes them, in the ordinary stack of a test thread, and computes them.
//! Nesting is capped at `MAX_DEPTH`; a chain of 300 terms was refused as nesting.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::fmt::Write as _;

use modelc_tests::{modelc, scratch_dir};

/// Long enough that a recursive walk without room to grow would overflow a test thread's stack.
const N: usize = 20_000;

/// Runs `check`, `compile`, `fmt`, `fmt --check` and `export` on `source` as `main.cf`; returns
/// what `compile` printed.
fn every_command(name: &str, source: &str) -> String {
    let dir = scratch_dir(name);
    std::fs::write(dir.join("project.yml"), "name: chains\n").unwrap();
    std::fs::write(dir.join("main.cf"), source).unwrap();
    for args in [&["check"][..], &["fmt", "main.cf"], &["fmt", "--check", "main.cf"], &["export"]] {
        let out = modelc(args, &dir);
        assert_eq!(out.code, 0, "{name}: modelc {args:?}: {}", &out.stderr[..out.stderr.len().min(2000)]);
    }
    // With JSON diagnostics on stdout, stderr holds only what the model printed.
    let out = modelc(&["--format", "json", "compile"], &dir);
    assert_eq!(out.code, 0, "{name}: compile: {}", &out.stdout[..out.stdout.len().min(2000)]);
    out.stderr
}

#[test]
fn a_long_sum_of_strings_is_computed() {
    let terms: Vec<String> = (0..N).map(|i| format!("\"{}\"", i % 10)).collect();
    let expected: String = (0..N).map(|i| char::from(b'0' + (i % 10) as u8)).collect();
    let source = format!("x = {}\nstd::print(x)\n", terms.join(" + "));
    assert_eq!(every_command("string-sum", &source), format!("{expected}\n"));
    // The 300 terms the issue quotes, as a plugin's argument.
    let terms: Vec<String> = (0..300).map(|i| format!("\"s{i}\"")).collect();
    let expected: String = (0..300).map(|i| format!("s{i}")).collect();
    assert_eq!(
        every_command("string-sum-300", &format!("std::print({})\n", terms.join(" + "))),
        format!("{expected}\n")
    );
}

#[test]
fn a_long_chain_of_integer_operators_is_computed() {
    let source = format!("x = {N}{}\nstd::print(x)\n", " - 1".repeat(N));
    assert_eq!(every_command("int-chain", &source), "0\n");
}

#[test]
fn a_long_or_chain_is_computed_in_a_condition_a_typedef_and_an_implement() {
    let falses = (0..N).map(|i| format!("self > {}", i + 1_000_000)).collect::<Vec<_>>().join(" or ");
    let mut source = String::new();
    writeln!(source, "typedef small as int matching {falses} or self < 10").unwrap();
    writeln!(source, "entity A:\n    small v\nend").unwrap();
    let when = (0..N).map(|i| format!("self.v == {}", i + 100)).collect::<Vec<_>>().join(" or ");
    writeln!(source, "implementation show for A:\n    std::print(self.v)\nend").unwrap();
    writeln!(source, "implement A using std::none\nimplement A using show when {when} or self.v == 3").unwrap();
    writeln!(source, "A(v=3)\nA(v=4)").unwrap();
    let chain = (0..N).map(|i| format!("{i} < 0")).collect::<Vec<_>>().join(" or ");
    writeln!(source, "if {chain}:\n    std::print(\"wrong\")\nelse:\n    std::print(\"right\")\nend").unwrap();
    assert_eq!(every_command("or-chain", &source), "right\n3\n");
}

#[test]
fn a_long_chain_of_relation_steps_is_followed() {
    let source = format!(
        "entity Node:\n    int v = 1\nend\nNode.next [0:1] -- Node\nimplement Node using std::none\n\
         n = Node(v=7)\nn.next = n\nstd::print(n{}.v)\n",
        ".next".repeat(N)
    );
    assert_eq!(every_command("relation-chain", &source), "7\n");
}
