//! Every rule of the canonical layout (`docs/fmt.md`), each with a before and an after.
#![allow(clippy::unwrap_used, reason = "test code")]

fn fmt(source: &str) -> String {
    modelc_fmt::format(source).unwrap()
}

#[test]
fn rule_1_blocks_are_indented_four_spaces_per_level() {
    let before = "implementation i for A:\n  for x in [1]:\n        if x > 0:\n   std::print(x)\n  end\n end\nend\n";
    let after = "implementation i for A:\n    for x in [1]:\n        if x > 0:\n            std::print(x)\n        end\n    end\nend\n";
    assert_eq!(fmt(before), after);
    let before = "if a:\nx = 1\nelif b:\nx = 2\nelse:\nx = 3\nend\n";
    assert_eq!(fmt(before), "if a:\n    x = 1\nelif b:\n    x = 2\nelse:\n    x = 3\nend\n");
}

#[test]
fn rule_2_assignments_are_spaced_keyword_arguments_are_not() {
    assert_eq!(fmt("x=A( name = \"a\" ,port=1)\nx.b+=x\n"), "x = A(name=\"a\", port=1)\nx.b += x\n");
    assert_eq!(fmt("entity A:\n    string name=\"a\"\nend\n"), "entity A:\n    string name = \"a\"\nend\n");
}

#[test]
fn rule_3_operators_are_spaced_and_brackets_dots_and_paths_are_tight() {
    assert_eq!(
        fmt("x = [ 1,2 ,3 ]\ny = a.b.c+1*2\nz = std :: print\n"),
        "x = [1, 2, 3]\ny = a.b.c + 1 * 2\nz = std::print\n"
    );
    assert_eq!(fmt("c = x==1 and not y or z in [1]\n"), "c = x == 1 and not y or z in [1]\n");
    assert_eq!(fmt("A.b [0:1]--B.a [1]\n"), "A.b [0:1] -- B.a [1]\n");
    assert_eq!(fmt("f(** d)\ng(a, **d)\np = 2**3\n"), "f(**d)\ng(a, **d)\np = 2 ** 3\n");
    // A type's `?` (nullable) is tight; a conditional's is spaced.
    assert_eq!(
        fmt("entity A:\n    string ? a = null\n    int[] ?b\nend\nx = a ?b : c\n"),
        "entity A:\n    string? a = null\n    int[]? b\nend\n\nx = a ? b : c\n"
    );
}

#[test]
fn rule_4_colons_depend_on_what_they_mean() {
    assert_eq!(fmt("d = {\"a\" : 1}\n"), "d = {\"a\": 1}\n");
    assert_eq!(fmt("x = a ?b: c\n"), "x = a ? b : c\n");
    assert_eq!(fmt("A.b [ 0 : 1 ] -- B\n"), "A.b [0:1] -- B\n");
    assert_eq!(fmt("entity A :\nend\n"), "entity A:\nend\n");
}

#[test]
fn rule_5_calls_and_lookups_are_tight_multiplicities_are_not() {
    assert_eq!(fmt("x = A [name=\"a\"]\ny = std::print (1)\n"), "x = A[name=\"a\"]\ny = std::print(1)\n");
    assert_eq!(fmt("A.b[1] -- B\n"), "A.b [1] -- B\n");
}

#[test]
fn rule_6_blank_lines() {
    // At most one; none at the start of a block or before `end`.
    assert_eq!(fmt("x = 1\n\n\n\ny = 2\n"), "x = 1\n\ny = 2\n");
    assert_eq!(fmt("entity A:\n\n    string a\n\nend\n"), "entity A:\n    string a\nend\n");
    // One around top-level entities and implementations.
    let before = "import std\nentity A:\nend\nimplementation i for A:\nend\nimplement A using i\n";
    let after = "import std\n\nentity A:\nend\n\nimplementation i for A:\nend\n\nimplement A using i\n";
    assert_eq!(fmt(before), after);
}

#[test]
fn rule_7_comments_stay_where_they_are() {
    let before = "# header\nx = 1 # about x\n\n  # about the entity\nentity A: // trailing\n# inside\n    string a\n    # before end\nend\n# last\n";
    let after = "# header\nx = 1  # about x\n\n# about the entity\nentity A:  // trailing\n    # inside\n    string a\n    # before end\nend\n# last\n";
    assert_eq!(fmt(before), after);
}

#[test]
fn rule_8_literals_are_kept_as_written() {
    let source =
        "a = 'single'\nb = r\"C:\\no\\escape\"\nc = f\"{x!r:>10}\"\nd = \"\"\"\n  kept   as is  \n\"\"\"\ne = -1.50\n";
    assert_eq!(fmt(source), source);
    assert_eq!(fmt("typedef t as string matching   /^a+$/\n"), "typedef t as string matching /^a+$/\n");
}

#[test]
fn rule_9_no_trailing_whitespace_and_one_final_newline() {
    assert_eq!(fmt("x = 1   \ny = 2\n\n\n"), "x = 1\ny = 2\n");
    assert_eq!(fmt("x = 1"), "x = 1\n");
}

#[test]
fn rule_10_continuation_lines_indent_per_open_bracket() {
    let before = "x = A(\nname=\"a\",\n      tags=[\n  1,\n    2,\n        ],\n)\n";
    let after = "x = A(\n    name=\"a\",\n    tags=[\n        1,\n        2,\n    ],\n)\n";
    assert_eq!(fmt(before), after);
}

#[test]
fn rule_11_line_breaks_stay_where_the_author_put_them() {
    let source = "x = A(name=\"a\", port=1)\ny = A(\n    name=\"b\",\n)\n";
    assert_eq!(fmt(source), source);
}

#[test]
fn every_comment_and_docstring_is_kept_in_order() {
    let source = "\"\"\"module doc\"\"\"\n# one\nentity A:  # two\n    \"\"\"doc of A\"\"\"\n    # three\n    string a  // four\nend\n# five\n";
    let formatted = fmt(source);
    let find = |text: &str, needle: &str| text.find(needle).unwrap();
    let order = ["module doc", "# one", "# two", "doc of A", "# three", "// four", "# five"];
    let positions: Vec<usize> = order.iter().map(|n| find(&formatted, n)).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{formatted}");
}

#[test]
fn formatting_is_idempotent_and_refuses_broken_files() {
    let source = "entity  A :\n string a\nend\nx=A(a=\"1\")\n";
    let once = fmt(source);
    assert_eq!(fmt(&once), once);
    assert_eq!(modelc_fmt::format("x = = 1\n"), Err(modelc_fmt::Error::Syntax(1)));
}

#[test]
fn rule_12_long_lines_split_their_calls_and_lists_one_element_per_line() {
    let long = format!("x = A(name=\"{}\", port=8080, tags=[\"a\", \"b\"])\n", "n".repeat(80));
    let after = format!("x = A(\n    name=\"{}\",\n    port=8080,\n    tags=[\"a\", \"b\"],\n)\n", "n".repeat(80));
    assert_eq!(fmt(&long), after);
    // Still too long inside: the inner list is split too.
    let inner = format!("x = A(tags=[\"{0}\", \"{0}\"])\n", "t".repeat(60));
    let after = format!("x = A(\n    tags=[\n        \"{0}\",\n        \"{0}\",\n    ],\n)\n", "t".repeat(60));
    assert_eq!(fmt(&inner), after);
    // Short lines are never joined, and a line without a group to split stays long.
    let short = "x = A(\n    name=\"a\",\n)\n";
    assert_eq!(fmt(short), short);
    let string = format!("x = \"{}\"\n", "s".repeat(120));
    assert_eq!(fmt(&string), string);
    // A map lookup holds one key: it is no group to split (`d[k,]` means something else). The
    // fuzzer found `ent[1][1]…` made a file the formatter refused, after seconds.
    let lookups = format!("x = d{}\n", "[\"key\"]".repeat(40));
    assert_eq!(fmt(&lookups), lookups);
    // Every long line is split, each in its own place.
    let lines: String = (0..3).map(|i| format!("x{i} = [{}]\n", ["\"element\""; 12].join(", "))).collect();
    let formatted = fmt(&lines);
    assert_eq!(formatted.matches("\"element\",\n").count(), 36, "{formatted}");
}
