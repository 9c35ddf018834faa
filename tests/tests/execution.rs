//! Execution semantics the conformance cases do not pin down, each checked against what the
//! reference compiler does (found by differential testing): what a model prints and which
//! diagnostic codes it gets.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use modelc_tests::{modelc, scratch_dir};

/// Compiles `source` as `main.cf`: the exit status, the printed lines, the diagnostic codes.
fn compile(source: &str) -> (u8, String, Vec<String>) {
    let dir = scratch_dir("execution");
    std::fs::write(dir.join("main.cf"), source).unwrap();
    let out = modelc(&["--format", "json", "compile", "main.cf"], &dir);
    let diagnostics: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap();
    let codes = diagnostics.iter().map(|d| d["code"].as_str().unwrap().to_owned()).collect();
    (out.code, out.stderr, codes)
}

#[test]
fn a_loop_sees_every_value_of_a_relation_that_fills_to_its_upper_bound() {
    let (code, printed, codes) = compile(
        "entity A:\nend\nentity B:\n  int n\nend\nA.bs [0:2] -- B\nimplement A using std::none\n\
         implement B using std::none\na = A()\nfor b in a.bs:\n  std::print(b.n)\nend\n\
         if true:\n  a.bs = [B(n=1), B(n=2)]\nend\n",
    );
    assert_eq!((code, printed.as_str(), codes), (0, "1\n2\n", vec![]));
}

#[test]
fn implement_using_parents_alone_selects_no_implementation() {
    let (code, _, codes) =
        compile("entity A:\nend\nentity B extends A:\nend\nimplement B using parents\nB()\nstd::print(\"done\")\n");
    assert_eq!((code, codes), (1, vec!["E0303".to_owned()]));
}

#[test]
fn a_value_for_an_optional_relation_set_to_null_comes_after_its_freeze() {
    let (code, _, codes) = compile(
        "entity A:\nend\nentity B:\nend\nA.b [0:1] -- B.a [0:]\nimplement A using std::none\n\
         implement B using std::none\na = A(b=null)\nb = B()\nb.a += a\n",
    );
    assert_eq!((code, codes), (1, vec!["E0304".to_owned()]));
}

#[test]
fn many_top_level_variables_each_have_their_slot() {
    // Thousands of variables in one scope, each read back: each is a slot lowering resolved.
    let mut source = String::new();
    for i in 0..3000 {
        source.push_str(&format!("v{i} = {i}\n"));
    }
    source.push_str("std::print(v0 + v1234 + v2999)\n");
    let (code, printed, _) = compile(&source);
    assert_eq!((code, printed.as_str()), (0, "4233\n"));
}

#[test]
fn unknown_index_keys_never_merge_instances() {
    let (code, printed, _) = compile(
        "entity A:\n  string name\n  int v\nend\nindex A(name)\nimplement A using std::none\n\
         x = A(name=std::get_env(\"MODELC_TEST_UNSET_X\"), v=1)\n\
         y = A(name=std::get_env(\"MODELC_TEST_UNSET_Y\"), v=2)\nstd::print(x == y)\n",
    );
    assert_eq!((code, printed.as_str()), (0, "False\n"));
}

#[test]
fn assigning_the_same_unknown_value_again_is_no_double_set() {
    let (code, printed, codes) = compile(
        "entity A:\n  string name\n  string v\nend\nindex A(name)\nimplement A using std::none\n\
         u = std::get_env(\"MODELC_TEST_UNSET\")\nA(name=\"x\", v=u)\nA(name=\"x\", v=u)\nstd::print(\"ok\")\n",
    );
    assert_eq!((code, printed.as_str()), (0, "ok\n"));
    assert_eq!(codes, ["W0105"], "the unset variable is reported once, as a warning");
}

#[test]
fn an_unknown_element_gives_an_unknown_comprehension_element() {
    let (code, printed, _) = compile("u = std::get_env(\"MODELC_TEST_UNSET\")\nstd::print([1 for x in [u, 2]])\n");
    assert_eq!((code, printed.as_str()), (0, "@[Unknown, 1]\n"));
}

#[test]
fn freezing_takes_relations_in_the_order_they_could_complete() {
    // `w` is frozen first (its condition waits); its implementation makes a C that waits for
    // `x`, but `x` was set aside with no waiters, so `y` (queued, and waited for) goes next:
    // the reference's wait-queue order (spec execution §1.3).
    let source = "entity A:\nend\nentity B:\nend\nentity C:\nend\nA.x [0:] -- B\nA.w [0:] -- B\nA.y [0:] -- B\n\
        C.a [1] -- A\nimplementation wimpl for A:\n  C(a=self)\nend\nimplementation yimpl for A:\n\
        std::print(\"y frozen empty\")\n  self.x += B()\nend\nimplementation cimpl for C:\n\
        std::print(\"x frozen empty\")\n  a.y += B()\nend\nimplement A using std::none\n\
        implement A using wimpl when std::count(self.w) == 0\nimplement A using yimpl when std::count(self.y) == 0\n\
        implement C using std::none\nimplement C using cimpl when std::count(a.x) == 0\n\
        implement B using std::none\na = A()\n";
    let (code, printed, _) = compile(source);
    assert_eq!((code, printed.as_str()), (0, "y frozen empty\n"));
}

#[test]
fn copying_a_relation_into_another_is_gradual() {
    // `A(xs=b.ys)` does not wait for `b.ys` to be complete, so the addition after it is not
    // too late, as in the reference.
    let (code, printed, codes) = compile(
        "entity A:\nend\nentity B:\nend\nentity C:\nend\nA.xs [0:] -- C\nB.ys [0:] -- C\nA.c [1] -- C\n\
         implement A using std::none\nimplement B using std::none\nimplement C using std::none\n\
         b = B()\na = A(xs=b.ys, c=C())\nb.ys += a.c\nstd::print(std::count(a.xs))\n",
    );
    assert_eq!((code, printed.as_str(), codes), (0, "1\n", vec![]));
}

#[test]
fn an_if_promises_relations_reached_through_a_chain() {
    let (code, printed, codes) = compile(
        "entity A:\nend\nentity B:\nend\nentity C:\nend\nA.b [1] -- B\nB.cs [0:] -- C\nA.xs [0:] -- C\n\
         implement A using std::none\nimplement B using std::none\nimplement C using std::none\n\
         a = A(b=B())\nif std::count(a.xs) == 0:\n  a.b.cs += C()\nend\nstd::print(std::count(a.b.cs))\n",
    );
    assert_eq!((code, printed.as_str(), codes), (0, "1\n", vec![]));
}

#[test]
fn an_if_promises_relations_of_variables_set_after_it() {
    let (code, printed, codes) = compile(
        "entity A:\n  string n\nend\nindex A(n)\nentity B:\nend\nA.bs [0:] -- B\nA.xs [0:] -- B\n\
         implement A using std::none\nimplement B using std::none\nx = A(n=\"a\")\nother = A(n=\"o\")\n\
         if std::count(other.xs) == 0:\n  a.bs += B()\nend\na = A[n=\"a\"]\nstd::print(std::count(a.bs))\n",
    );
    assert_eq!((code, printed.as_str(), codes), (0, "1\n", vec![]));
}

#[test]
fn relations_inside_a_list_literal_are_copied_gradually() {
    let (code, printed, codes) = compile(
        "entity A:\nend\nentity B:\nend\nentity C:\nend\nA.xs [0:] -- C\nB.ys [0:] -- C\nA.c [1] -- C\n\
         implement A using std::none\nimplement B using std::none\nimplement C using std::none\n\
         b = B()\nc2 = C()\na = A(c=C())\na.xs = [b.ys, c2]\nb.ys += a.c\nstd::print(std::count(a.xs))\n",
    );
    assert_eq!((code, printed.as_str(), codes), (0, "2\n", vec![]));
}

#[test]
fn a_relation_copy_takes_the_values_already_there_at_once() {
    // The values of `d0.bs` reach `d1.bs` (and, through the inverse, `b1.ds`) when the copy
    // runs, before the statements after it: the order of `b1.ds` is the reference's.
    let (code, printed, _) = compile(
        "entity D:\n    string name\nend\nentity B:\n    string name\nend\nB.ds [0:] -- D.bs [0:]\n\
         implement B using std::none\nimplement D using std::none\nd0 = D(name=\"d0\")\nd1 = D(name=\"d1\")\n\
         b1 = B(name=\"b1\", ds=d0)\nd1.bs = d0.bs\nb1.ds += D(name=\"fix\")\nstd::print([d.name for d in b1.ds])\n",
    );
    assert_eq!((code, printed.as_str()), (0, "@['d0', 'd1', 'fix']\n"));
}

#[test]
fn a_relation_copy_also_copies_what_it_adds_to_its_own_source() {
    // Copying `a1.as2` into `a0.ars2` adds `a0` to `a1.as2` (the inverse end): that value is
    // copied too, before `a0.as2` is read as complete.
    let (code, printed, codes) = compile(
        "entity A:\n    string name\nend\nA.as2 [0:] -- A.ars2 [0:]\nimplement A using std::none\n\
         a0 = A(name=\"a0\")\na0.ars2 = a1.as2\na1 = A(name=\"a1\")\na1.as2 += a1\n\
         std::print([x.name for x in a0.as2])\n",
    );
    assert_eq!((code, printed.as_str(), codes), (0, "@['a0']\n", vec![]));
}

#[test]
fn the_wait_cycle_breaker_takes_the_relation_of_the_earliest_waiting_statement() {
    // Two `if`s wait on each other's relation and a print waits on one of them: the reference
    // freezes the relation the earliest waiting statement needs (`a0.bs`), so the `if` that
    // adds to it afterwards fails.
    let (code, printed, codes) = compile(
        "entity A:\nend\nentity B:\nend\nA.bs [1:] -- B.aa [0:]\nimplement A using std::none\nimplement B using std::none\nb0 = B()\na0 = A(bs=b0)\nstd::print(std::count(a0.bs))\nif std::count(b0.aa) > 0:\n    a0.bs += B()\nend\nif std::count(a0.bs) == 0:\n    b0.aa += A(bs=b0)\nend\n",
    );
    assert_eq!((code, printed.as_str(), codes), (1, "1\n", vec!["E0304".to_owned()]));
}

/// Names in an implementation resolve through its blocks, then the instance's attributes (an
/// attribute only a subtype has included), then the file's top level: as the reference does.
#[test]
fn names_in_implementations_resolve_through_blocks_instance_and_top_level() {
    let (code, printed, codes) = compile(
        "label = \"top\"\nlimit = 1\nentity A:\n    int v = 1\nend\nentity B extends A:\n    string label = \"b\"\nend\n\
         implementation show for A:\n    base = 10\n    if true:\n        for n in [1, 2]:\n\
         \x20           std::print(\"{{label}} {{base}} {{n}} {{v}}\")\n        end\n    end\nend\n\
         implement A using show when v > limit\nimplement A using std::none when v <= limit\n\
         implement B using show\nA(v=1)\nA(v=5)\nB(v=0)\n",
    );
    assert_eq!((code, printed.as_str(), codes), (0, "b 10 1 0\nb 10 2 0\ntop 10 1 5\ntop 10 2 5\n", vec![]));
}

/// Each `for` clause of a comprehension sees the variables of the clauses before it.
#[test]
fn comprehension_clauses_see_the_variables_before_them() {
    let (code, printed, _) = compile("std::print([x * 10 + y for x in [1, 2] for y in [x, 3] if y != 2])\n");
    // The reference prints a list with an `@` in front (its proxy of a list).
    assert_eq!((code, printed.as_str()), (0, "@[11, 13, 23]\n"));
}

/// A loop variable assigned in the body, a variable of an inner block with the name of an
/// outer one's attribute, and `self` read from a nested block all find their own slots.
#[test]
fn loop_variables_and_self_in_nested_blocks() {
    let (code, printed, codes) = compile(
        "entity A:\n    string name\nend\nimplementation i for A:\n    for n in [1, 2]:\n        if n == 2:\n\
         \x20           std::print(\"{{self.name}} {{name}} {{n}}\")\n        end\n    end\nend\n\
         implement A using i\nA(name=\"a\")\n",
    );
    assert_eq!((code, printed.as_str(), codes), (0, "a a 2\n", vec![]));
}

/// Issue 30: `std::template` and `std::source` followed links out of their module (a
/// `templates/link.j2 → /elsewhere/secret.txt` printed the secret) and `std::list_files` listed a
/// linked directory outside. Links that lead out are refused, saying so; links inside the module
/// still work; `..` and absolute paths are refused by name.
#[test]
fn module_files_are_confined_to_their_module_after_links() {
    let dir = scratch_dir("confinement");
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(elsewhere.join("dir")).unwrap();
    std::fs::write(elsewhere.join("secret.txt"), "the secret\n").unwrap();
    std::fs::write(elsewhere.join("dir/inner.txt"), "inner secret\n").unwrap();
    let module = dir.join("libs/web");
    std::fs::create_dir_all(module.join("model")).unwrap();
    std::fs::create_dir_all(module.join("templates")).unwrap();
    std::fs::create_dir_all(module.join("files/own")).unwrap();
    std::fs::write(module.join("model/_init.cf"), "").unwrap();
    std::fs::write(module.join("files/own/a.txt"), "mine\n").unwrap();
    std::os::unix::fs::symlink(elsewhere.join("secret.txt"), module.join("templates/link.j2")).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("secret.txt"), module.join("files/link.txt")).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("dir"), module.join("files/outside")).unwrap();
    std::os::unix::fs::symlink(module.join("files/own/a.txt"), module.join("files/inside.txt")).unwrap();
    std::fs::write(dir.join("project.yml"), "name: c\nmodulepath: libs\n").unwrap();
    let run = |body: &str| {
        std::fs::write(dir.join("main.cf"), format!("import web\n{body}\n")).unwrap();
        modelc(&["--color", "never", "compile", "."], &dir)
    };
    // Inside the module: read, also through a link.
    let fine = run("std::print(std::source(\"web/inside.txt\"))\nstd::print(std::list_files(\"web/\"))");
    assert_eq!(fine.code, 0, "{}", fine.stderr);
    assert!(fine.stdout.contains("mine"), "{}", fine.stdout);
    assert!(!fine.stdout.contains("outside") && !fine.stdout.contains("link.txt"), "listed: {}", fine.stdout);
    for call in
        ["std::template(\"web/link.j2\")", "std::source(\"web/link.txt\")", "std::source(\"web/outside/inner.txt\")"]
    {
        let out = run(&format!("std::print({call})"));
        assert_eq!(out.code, 1, "{call}: {}", out.stdout);
        assert!(!out.stdout.contains("secret") && !out.stderr.contains("the secret"), "{call} read it");
        assert!(
            out.stderr.contains("refused: it leads to") && out.stderr.contains("outside the module"),
            "{call}: {}",
            out.stderr
        );
    }
    let up = run("std::print(std::source(\"web/../../elsewhere/secret.txt\"))");
    assert!(up.stderr.contains("refused: `..` would leave the module"), "{}", up.stderr);
    let absolute = run("std::print(std::source(\"web//etc/passwd\"))");
    assert!(absolute.stderr.contains("refused: an absolute path"), "{}", absolute.stderr);
}
