//! How each phase's cost grows with its input (issue 30): every shape below is generated at N
//! and 4N and run through the release `modelc` as a whole process, and the time and peak-memory
//! ratios are reported. N starts at the size the issue quoted and doubles until the 4N run
//! takes a second. Linear work gives about 4×; the target is at most 5× in every shape.
//! Shapes that were quadratic or worse before are the point: long attribute chains, many entity
//! types, deep and diamond inheritance, nested f-strings, strings of braces, deeply nested YAML,
//! long operator chains, wide lists and dicts, long relation chains, many implementations and
//! indexes, and a 50 MB file. (Diffs of large contents are bounded by construction: see
//! `modelc_ir::text_diff`.)
//!
//! Run with `cargo bench -p modelc-tests --bench scaling` (optionally followed by `--` and the
//! names of the shapes to run). It builds the release binary first; `MODELC_BENCH_BINARY=path`
//! measures another build instead (an older one, for a before-and-after).
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stdout, reason = "benchmark code")]

use std::fmt::Write as _;
use std::path::Path;

/// One generated input: its files (path → text) and the command run on it.
struct Shape {
    name: &'static str,
    /// The `modelc` arguments; `{dir}` is the project directory.
    args: &'static [&'static str],
    n: usize,
    files: fn(usize) -> Vec<(&'static str, String)>,
}

fn main_cf(text: String) -> Vec<(&'static str, String)> {
    vec![("main.cf", text)]
}

fn attribute_chain(n: usize) -> Vec<(&'static str, String)> {
    main_cf(format!("entity A:\n    string[] a{} = 1\nend\n", ".x".repeat(n)))
}

fn entity_types(n: usize) -> Vec<(&'static str, String)> {
    let mut out = String::new();
    for i in 0..n {
        writeln!(out, "entity E{i}:\n    string name\nend\nimplement E{i} using std::none\nE{i}(name=\"e{i}\")")
            .unwrap();
    }
    main_cf(out)
}

fn inheritance_depth(n: usize) -> Vec<(&'static str, String)> {
    let mut out = String::from("entity E0:\n    string a0 = \"x\"\nend\n");
    for i in 1..n {
        writeln!(out, "entity E{i} extends E{}:\n    string a{i} = \"x\"\nend", i - 1).unwrap();
    }
    writeln!(out, "implement E{} using std::none\nE{}()", n - 1, n - 1).unwrap();
    main_cf(out)
}

/// Every entity extends the two before it: the number of paths up the hierarchy is a
/// Fibonacci number, so a walk that follows paths instead of visiting each ancestor once never
/// ends.
fn inheritance_diamond(n: usize) -> Vec<(&'static str, String)> {
    let mut out = String::from("entity E0:\n    string a0 = \"x\"\nend\nentity E1 extends E0:\nend\n");
    for i in 2..n {
        writeln!(out, "entity E{i} extends E{}, E{}:\n    string a{i} = \"x\"\nend", i - 1, i - 2).unwrap();
    }
    writeln!(out, "implement E{} using std::none\nE{}()", n - 1, n - 1).unwrap();
    main_cf(out)
}

fn nested_fstrings(n: usize) -> Vec<(&'static str, String)> {
    main_cf(format!("x = 1\ny = {}x{}\n", "f\"{".repeat(n), "}\"".repeat(n)))
}

fn braces(n: usize) -> Vec<(&'static str, String)> {
    main_cf(format!("x = \"{}\"\nstd::print(x)\n", "{{".repeat(n)))
}

fn nested_yaml(n: usize) -> Vec<(&'static str, String)> {
    vec![("project.yml", format!("name: p\nmodulepath: {}\n", "[".repeat(n))), ("main.cf", "x = 1\n".to_owned())]
}

fn string_sum(n: usize) -> Vec<(&'static str, String)> {
    let terms: Vec<String> = (0..n).map(|i| format!("\"s{i}\"")).collect();
    main_cf(format!("x = {}\nstd::print(x)\n", terms.join(" + ")))
}

fn boolean_chain(n: usize) -> Vec<(&'static str, String)> {
    let terms: Vec<String> = (0..n).map(|i| format!("{i} > 0")).collect();
    main_cf(format!("x = {}\nstd::print(x)\n", terms.join(" or ")))
}

fn wide_list(n: usize) -> Vec<(&'static str, String)> {
    let items: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    main_cf(format!("x = [{}]\nstd::print(std::len(x))\n", items.join(", ")))
}

fn wide_dict(n: usize) -> Vec<(&'static str, String)> {
    let items: Vec<String> = (0..n).map(|i| format!("\"k{i}\": {i}")).collect();
    main_cf(format!("x = {{{}}}\nstd::print(x[\"k0\"])\n", items.join(", ")))
}

fn relation_chain(n: usize) -> Vec<(&'static str, String)> {
    let mut out = String::from(
        "entity Node:\n    int v = 1\nend\nNode.next [0:1] -- Node\nimplement Node using std::none\n\
         n = Node()\nn.next = n\n",
    );
    writeln!(out, "std::print(n{}.v)", ".next".repeat(n)).unwrap();
    main_cf(out)
}

fn implementations(n: usize) -> Vec<(&'static str, String)> {
    let mut out = String::from("entity A:\n    int v = 1\nend\n");
    for i in 0..n {
        writeln!(out, "implementation i{i} for A:\n    x{i} = self.v\nend\nimplement A using i{i}").unwrap();
    }
    out.push_str("A()\n");
    main_cf(out)
}

fn indexes(n: usize) -> Vec<(&'static str, String)> {
    let mut out = String::from("entity A:\n");
    for i in 0..n {
        writeln!(out, "    string a{i} = \"v{i}\"").unwrap();
    }
    out.push_str("end\nimplement A using std::none\n");
    for i in 0..n {
        writeln!(out, "index A(a{i})").unwrap();
    }
    out.push_str("A()\n");
    main_cf(out)
}

/// About 150 bytes an entity: 326,000 of them make the 50 MB file of the issue.
fn big_file(n: usize) -> Vec<(&'static str, String)> {
    let mut out = String::new();
    for i in 0..n {
        writeln!(
            out,
            "entity Entity{i:07}:\n    string name\n    int port = 80\nend\nimplement Entity{i:07} using std::none\n\
             Entity{i:07}(name=\"n\")"
        )
        .unwrap();
    }
    main_cf(out)
}

const SHAPES: &[Shape] = &[
    Shape { name: "attribute-chain", args: &["parse", "{dir}/main.cf"], n: 10_000, files: attribute_chain },
    Shape { name: "entity-types-check", args: &["check", "{dir}"], n: 5_000, files: entity_types },
    Shape { name: "entity-types-compile", args: &["compile", "{dir}"], n: 5_000, files: entity_types },
    Shape { name: "inheritance-depth", args: &["check", "{dir}"], n: 1_000, files: inheritance_depth },
    Shape { name: "inheritance-diamond", args: &["check", "{dir}"], n: 2_000, files: inheritance_diamond },
    Shape { name: "nested-fstrings", args: &["check", "{dir}"], n: 8_000, files: nested_fstrings },
    Shape { name: "braces", args: &["check", "{dir}"], n: 100_000, files: braces },
    Shape { name: "nested-yaml", args: &["check", "{dir}"], n: 40_000, files: nested_yaml },
    Shape { name: "string-sum", args: &["compile", "{dir}"], n: 10_000, files: string_sum },
    Shape { name: "boolean-chain", args: &["compile", "{dir}"], n: 10_000, files: boolean_chain },
    Shape { name: "wide-list", args: &["compile", "{dir}"], n: 100_000, files: wide_list },
    Shape { name: "wide-dict", args: &["compile", "{dir}"], n: 100_000, files: wide_dict },
    Shape { name: "relation-chain", args: &["compile", "{dir}"], n: 10_000, files: relation_chain },
    Shape { name: "implementations", args: &["compile", "{dir}"], n: 5_000, files: implementations },
    Shape { name: "indexes", args: &["compile", "{dir}"], n: 2_000, files: indexes },
    Shape { name: "big-file-parse", args: &["parse", "{dir}/main.cf"], n: 81_500, files: big_file },
    Shape { name: "big-file-check", args: &["check", "{dir}"], n: 81_500, files: big_file },
    Shape { name: "big-file-fmt", args: &["fmt", "--check", "{dir}/main.cf"], n: 81_500, files: big_file },
    Shape { name: "big-file-compile", args: &["compile", "{dir}"], n: 81_500, files: big_file },
];

fn write(dir: &Path, files: &[(&'static str, String)]) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    if !files.iter().any(|(name, _)| *name == "project.yml") {
        std::fs::write(dir.join("project.yml"), "name: scaling\n").unwrap();
    }
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

/// The shortest 4N run whose ratio is reported as measured.
const MEANINGFUL_SECONDS: f64 = 1.0;
/// Runs at each of the two sizes compared; the fastest counts.
const RUNS: usize = 3;
/// How far N may grow past the quoted size looking for a second's work.
const MAX_GROWTH: usize = 256;

fn main() {
    let wanted: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    // A binary to measure instead of this checkout's (an older build, to compare).
    let binary = match std::env::var_os("MODELC_BENCH_BINARY") {
        Some(path) => std::fs::canonicalize(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
        None => modelc_tests::process::release_binary(),
    };
    let root = std::env::temp_dir().join(format!("modelc-bench-scaling-{}", std::process::id()));
    println!(
        "{:<22} {:>8} {:>9} {:>9} {:>6} {:>8} {:>8} {:>6} {:>5}  verdict",
        "shape", "N", "t(N) s", "t(4N) s", "ratio", "MiB(N)", "MiB(4N)", "ratio", "exit"
    );
    for shape in SHAPES.iter().filter(|s| wanted.is_empty() || wanted.iter().any(|w| s.name.contains(w.as_str()))) {
        let run = |n: usize| {
            let dir = root.join(format!("{}-{n}", shape.name));
            write(&dir, &(shape.files)(n));
            let args: Vec<String> = shape.args.iter().map(|a| a.replace("{dir}", dir.to_str().unwrap())).collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let measured = modelc_tests::process::measured(&binary, &dir, &args);
            let _ = std::fs::remove_dir_all(&dir);
            measured
        };
        // N starts at the size the issue quoted and doubles until the 4N run takes a second, so
        // that the ratio is of times well above the process's start-up, on any machine.
        let mut n = shape.n;
        let mut large = run(4 * n);
        // (Some shapes end in diagnostics by design; a timeout or a failure to start ends it.)
        while large.seconds < MEANINGFUL_SECONDS
            && n < shape.n * MAX_GROWTH
            && !matches!(large.code, Some(124 | 126 | 127) | None)
        {
            n *= 2;
            large = run(4 * n);
        }
        // The ratio is of the best of three runs at each size: one slow run on a shared machine
        // moved a ratio by a whole point.
        let best = |first: modelc_tests::process::Measured, n: usize| {
            (1..RUNS).map(|_| run(n)).fold(first, |a, b| if b.seconds < a.seconds { b } else { a })
        };
        let large = if large.code == Some(124) { large } else { best(large, 4 * n) };
        let small = best(run(n), n);
        let (small, large) = (&small, &large);
        let ratio = large.seconds / small.seconds;
        let memory = large.peak_mib / small.peak_mib;
        let verdict = match large.code {
            Some(124) => "TIMEOUT (300 s)",
            Some(126 | 127) => "NOT RUN",
            _ if ratio <= 5.0 => "ok",
            _ => "SUPERLINEAR",
        };
        println!(
            "{:<22} {:>8} {:>9.3} {:>9.3} {:>6.2} {:>8.0} {:>8.0} {:>6.2} {:>5}  {verdict}",
            shape.name,
            n,
            small.seconds,
            large.seconds,
            ratio,
            small.peak_mib,
            large.peak_mib,
            memory,
            large.code.map_or("-".to_owned(), |c| c.to_string()),
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}
