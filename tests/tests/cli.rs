//! The command line as a user meets it: exit codes, output formats, colour, project discovery,
//! `explain` and shell completions.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use modelc_tests::{modelc, modelc_with, scratch_dir};

const BROKEN: &str = "x = = 1\ny = 2\nentity A:\n    string Name\nend\nz = 5->1\n";

#[test]
fn exit_codes_follow_the_model_and_usage() {
    let dir = scratch_dir("exit-codes");
    std::fs::write(dir.join("good.cf"), "x = 1\n").unwrap();
    std::fs::write(dir.join("bad.cf"), BROKEN).unwrap();
    std::fs::write(dir.join("warn.cf"), "x = \"a\\.b\"\n").unwrap();
    assert_eq!(modelc(&["parse", "good.cf"], &dir).code, 0);
    assert_eq!(modelc(&["parse", "warn.cf"], &dir).code, 0, "warnings alone do not fail");
    assert_eq!(modelc(&["parse", "good.cf", "bad.cf"], &dir).code, 1);
    let missing = modelc(&["parse", "missing.cf"], &dir);
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("missing.cf does not exist"), "{}", missing.stderr);
    assert_eq!(modelc(&["parse", "--no-such-flag", "good.cf"], &dir).code, 2);
    assert_eq!(modelc(&["parse"], &dir).code, 2, "FILE is required");
    assert_eq!(modelc(&["--help"], &dir).code, 0);
}

#[test]
fn human_output_shows_every_error_with_code_and_source() {
    let dir = scratch_dir("human");
    std::fs::write(dir.join("main.cf"), BROKEN).unwrap();
    let out = modelc(&["parse", "main.cf"], &dir);
    assert_eq!(out.code, 1);
    insta::assert_snapshot!(out.stderr);
}

#[test]
fn json_output_is_machine_readable() {
    let dir = scratch_dir("json");
    std::fs::write(dir.join("main.cf"), BROKEN).unwrap();
    let out = modelc(&["parse", "--format", "json", "main.cf"], &dir);
    let diagnostics: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap();
    let codes: Vec<&str> = diagnostics.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["E0006", "E0010", "E0006"]);
    let label = &diagnostics[1]["labels"][0];
    assert_eq!(
        (label["file"].as_str(), label["line"].as_u64(), label["column"].as_u64()),
        (Some("main.cf"), Some(4), Some(12))
    );
    assert!(out.stderr.is_empty(), "JSON mode keeps stderr clean: {}", out.stderr);
}

#[test]
fn colour_follows_the_flag_the_terminal_and_no_color() {
    let dir = scratch_dir("colour");
    std::fs::write(dir.join("main.cf"), BROKEN).unwrap();
    let has_escape = |out: modelc_tests::Output| out.stderr.contains('\u{1b}');
    assert!(has_escape(modelc(&["--color", "always", "parse", "main.cf"], &dir)));
    assert!(!has_escape(modelc_with(&["--color", "never", "parse", "main.cf"], &dir, true, false)));
    assert!(has_escape(modelc_with(&["parse", "main.cf"], &dir, true, false)), "auto colours a terminal");
    assert!(!has_escape(modelc_with(&["parse", "main.cf"], &dir, true, true)), "NO_COLOR wins in auto mode");
    assert!(!has_escape(modelc_with(&["parse", "main.cf"], &dir, false, false)), "auto does not colour a pipe");
}

#[test]
fn check_finds_the_project_by_walking_up() {
    let project = scratch_dir("walk-up");
    std::fs::write(project.join("project.yml"), "name: demo\nmodulepath: libs\n").unwrap();
    std::fs::write(project.join("main.cf"), "import web\nimport web::extra\nweb::Server(name=\"a\")\n").unwrap();
    std::fs::create_dir_all(project.join("libs/web/model")).unwrap();
    std::fs::write(
        project.join("libs/web/model/_init.cf"),
        "entity Server:\n    string name\nend\nimplement Server using std::none\n",
    )
    .unwrap();
    std::fs::write(project.join("libs/web/model/extra.cf"), "entity Broken\n").unwrap();
    std::fs::create_dir_all(project.join("deep/inside")).unwrap();
    let out = modelc(&["check"], &project.join("deep/inside"));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("extra.cf"), "module files are checked: {}", out.stderr);
    // main.cf, web, web::extra and std: the files the imports load.
    assert!(out.stderr.contains("checked 4 files: 1 error"), "{}", out.stderr);

    std::fs::write(project.join("libs/web/model/extra.cf"), "entity Fixed:\nend\n").unwrap();
    let out = modelc(&["check", project.to_str().unwrap()], &std::env::temp_dir());
    assert_eq!((out.code, out.stderr.trim()), (0, "checked 4 files: no problems"));

    let elsewhere = scratch_dir("no-project");
    let out = modelc(&["check"], &elsewhere);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no project.yml found"), "{}", out.stderr);
}

#[test]
fn check_reports_invalid_utf8_and_keeps_going() {
    let dir = scratch_dir("utf8");
    std::fs::write(dir.join("main.cf"), b"x = \"caf\xe9\"\ny = = 1\n").unwrap();
    let out = modelc(&["--format", "json", "check", "main.cf"], &dir);
    let diagnostics: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap();
    let codes: Vec<&str> = diagnostics.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["E0027", "E0006"]);
    assert_eq!(out.code, 1);
}

#[test]
fn explain_prints_the_registry_entry() {
    let dir = scratch_dir("explain");
    let out = modelc(&["explain", "e0012"], &dir);
    assert_eq!(out.code, 0);
    assert!(out.stdout.starts_with("# E0012"), "{}", out.stdout);
    assert!(out.stdout.contains("## How to fix it"));
    let unknown = modelc(&["explain", "E9999"], &dir);
    assert_eq!(unknown.code, 2);
    assert!(unknown.stderr.contains("not a modelc diagnostic code"));
}

#[test]
fn shell_completions_are_generated() {
    let dir = scratch_dir("completions");
    for shell in ["bash", "zsh", "fish"] {
        let out = modelc(&["completions", shell], &dir);
        assert_eq!(out.code, 0);
        assert!(out.stdout.contains("modelc") && out.stdout.contains("explain"), "{shell}: {}", out.stdout);
    }
}

#[test]
fn dump_ast_prints_the_tree() {
    let dir = scratch_dir("dump");
    std::fs::write(dir.join("main.cf"), "x = 1 + 2\n").unwrap();
    let out = modelc(&["parse", "--dump-ast", "main.cf"], &dir);
    assert_eq!(out.stdout, "Assign = 0..9\n  Var x 0..1\n  Binary + 4..9\n    Int 1 4..5\n    Int 2 8..9\n");
}

#[test]
fn compile_prints_the_models_output_and_a_summary_of_instances() {
    let dir = scratch_dir("compile");
    let model = "entity A:\n    int n\nend\nimplement A using std::none\nfor i in [1, 2]:\n    A(n=i)\nend\nstd::print(\"done\")\n";
    std::fs::write(dir.join("main.cf"), model).unwrap();
    let out = modelc(&["compile", "main.cf"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "done\n", "std::print goes to stdout");
    assert!(out.stderr.contains("compiled 2 files: no problems"), "{}", out.stderr);
    assert!(out.stderr.lines().any(|l| l.trim() == "2 __config__::A"), "{}", out.stderr);
    // In JSON mode stdout holds only the diagnostics; printed lines move to stderr.
    let json = modelc(&["--format", "json", "compile", "main.cf"], &dir);
    assert_eq!(serde_json::from_str::<Vec<serde_json::Value>>(&json.stdout).unwrap().len(), 0);
    assert_eq!(json.stderr, "done\n");
}

#[test]
fn compile_does_not_execute_a_model_with_static_errors() {
    let dir = scratch_dir("compile-static");
    std::fs::write(dir.join("main.cf"), "std::print(\"ran\")\nx = y\n").unwrap();
    let out = modelc(&["compile", "main.cf"], &dir);
    assert_eq!(out.code, 1);
    assert!(out.stdout.is_empty(), "nothing ran: {}", out.stdout);
    assert!(out.stderr.contains("E0106"), "{}", out.stderr);
}

const TWO_RESOURCES: &str = "import std::testing\n\
    a = std::testing::NullResource(name=\"a\")\n\
    b = std::testing::NullResource(name=\"b\", requires=[a])\n\
    s = std::ResourceSet(name=\"s\")\n\
    s.resources += a\n\
    s.resources += b\n";

#[test]
fn compile_writes_the_resources_and_keeps_the_old_file_when_the_model_is_wrong() {
    let dir = scratch_dir("compile-output");
    std::fs::write(dir.join("main.cf"), TWO_RESOURCES).unwrap();
    let out = modelc(&["compile", "main.cf", "-o", "out.json"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("2 resources, 1 dependency, 1 resource set (0 empty), 0 shared"), "{}", out.stderr);
    let written = std::fs::read_to_string(dir.join("out.json")).unwrap();
    let ir: serde_json::Value = serde_json::from_str(&written).unwrap();
    assert_eq!(ir["format_version"], 1);
    assert_eq!(ir["resources"][1]["requires"][0], "std::testing::NullResource[internal,name=a]");
    assert_eq!(ir["sets"][0]["name"], "s");
    // A model with a validation error: exit 1, and out.json is still the previous IR.
    std::fs::write(dir.join("main.cf"), format!("{TWO_RESOURCES}t = std::ResourceSet(name=\"t\")\nt.resources += a\n"))
        .unwrap();
    let out = modelc(&["compile", "main.cf", "-o", "out.json"], &dir);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("E0404"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(dir.join("out.json")).unwrap(), written);
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn compile_writes_the_reference_exporters_list() {
    let dir = scratch_dir("compile-reference");
    std::fs::write(dir.join("main.cf"), TWO_RESOURCES).unwrap();
    let out = modelc(&["compile", "main.cf", "--format", "reference"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let list: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(list[1]["id"], "std::testing::NullResource[internal,name=b],v=0");
    assert_eq!(list[1]["requires"], serde_json::json!(["std::testing::NullResource[internal,name=a]"]));
    assert_eq!(list[1]["version"], 0);
    assert_eq!(modelc(&["compile", "main.cf", "--format", "reference", "-o", "ref.json"], &dir).code, 0);
    assert_eq!(std::fs::read_to_string(dir.join("ref.json")).unwrap(), out.stdout.trim_end());
}

#[test]
fn graph_draws_dot_or_mermaid_and_formats_are_checked_per_command() {
    let dir = scratch_dir("graph");
    std::fs::write(dir.join("main.cf"), TWO_RESOURCES).unwrap();
    let dot = modelc(&["graph", "main.cf"], &dir);
    assert_eq!(dot.code, 0, "{}", dot.stderr);
    assert!(dot.stdout.contains("subgraph cluster_0 {\n        label=\"s\";") && dot.stdout.contains("r1 -> r0;"));
    let mermaid = modelc(&["--format", "mermaid", "graph", "main.cf"], &dir);
    assert!(mermaid.stdout.starts_with("flowchart LR\n") && mermaid.stdout.contains("r1 --> r0"));
    let wrong = modelc(&["--format", "dot", "check", "main.cf"], &dir);
    assert_eq!(wrong.code, 2);
    assert!(wrong.stderr.contains("`--format dot` is not an output of `modelc check`"), "{}", wrong.stderr);
    assert_eq!(modelc(&["--format", "reference", "graph", "main.cf"], &dir).code, 2);
}

/// Lines end at `\n`, `\r\n` or a lone `\r` in every layer: a second error on a CR-ended line
/// is not taken for the first one's line, and execution names the right line.
#[test]
fn carriage_returns_end_lines_in_every_layer() {
    let dir = modelc_tests::scratch_dir("cr-lines");
    std::fs::write(dir.join("check.cf"), "x = = 1\ry = nosuch\r").unwrap();
    let out = modelc(&["--color", "never", "check", "check.cf"], &dir);
    assert!(out.stderr.contains("E0006") && out.stderr.contains("E0106"), "{}", out.stderr);
    std::fs::write(dir.join("run.cf"), "entity A:\r    string x\rend\rimplement A using std::none\r\rA()\r").unwrap();
    let out = modelc(&["--color", "never", "compile", "run.cf"], &dir);
    assert!(out.stderr.contains("(instantiated at run.cf:6)"), "{}", out.stderr);
}

/// `std::generate_password` gives a random password once per id and keeps it with the project
/// (`.modelc/passwords.json`, mode 0600, ignored by git), so later compiles see the same one;
/// `check` and `graph` write nothing.
#[test]
fn generated_passwords_are_random_and_kept_with_the_project() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch_dir("passwords");
    std::fs::write(
        dir.join("main.cf"),
        "a = std::generate_password(\"db\", 24)\nstd::print(a)\nstd::print(std::generate_password(\"other\"))\n",
    )
    .unwrap();
    let file = dir.join(".modelc/passwords.json");
    assert_eq!(modelc(&["check", "main.cf"], &dir).code, 0);
    assert_eq!(modelc(&["graph", "main.cf"], &dir).code, 0);
    assert!(!file.exists(), "check and graph keep no password");

    let first = modelc(&["compile", "main.cf"], &dir);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let printed: Vec<&str> = first.stdout.lines().collect();
    assert_eq!(printed[0].len(), 24);
    assert_eq!(printed[1].len(), 20);
    assert!(printed.iter().all(|p| p.bytes().all(|b| b.is_ascii_alphanumeric()) && *p != "x".repeat(p.len())));
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(std::fs::read_to_string(dir.join(".modelc/.gitignore")).unwrap().contains('*'));
    let second = modelc(&["compile", "main.cf"], &dir);
    assert_eq!(second.stdout, first.stdout, "the kept passwords are used again");

    let elsewhere = scratch_dir("passwords-elsewhere");
    std::fs::copy(dir.join("main.cf"), elsewhere.join("main.cf")).unwrap();
    let other = modelc(&["compile", "main.cf"], &elsewhere);
    assert_ne!(other.stdout, first.stdout, "another project gets its own passwords");
}

/// Fixes travel as data in the JSON output: each "did you mean" is an edit a tool can apply.
#[test]
fn json_diagnostics_carry_their_fixes() {
    let dir = scratch_dir("json-fixes");
    std::fs::write(dir.join("main.cf"), "entity Server:\n    string name\nend\nServr(name=\"a\")\n").unwrap();
    let out = modelc(&["--format", "json", "check", "main.cf"], &dir);
    let diagnostics: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let fix = &diagnostics[0]["fixes"][0];
    assert_eq!(fix["message"], "replace with `Server`");
    assert_eq!(fix["applicability"], "maybe-incorrect");
    let edit = &fix["edits"][0];
    assert_eq!(
        (edit["file"].as_str(), edit["start"].as_u64(), edit["end"].as_u64()),
        (Some("main.cf"), Some(35), Some(40))
    );
    assert_eq!(edit["replacement"], "Server");
    // A diagnostic without a fix has no `fixes` field.
    std::fs::write(dir.join("other.cf"), "x = = 1\n").unwrap();
    let out = modelc(&["--format", "json", "check", "other.cf"], &dir);
    let diagnostics: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(diagnostics[0].get("fixes").is_none(), "{diagnostics}");
}

/// `modelc fmt`: formats in place, `--check` shows the diffs without changing, broken files are left
/// alone.
#[test]
fn fmt_formats_checks_and_leaves_broken_files_alone() {
    let dir = scratch_dir("fmt");
    std::fs::create_dir_all(dir.join("libs/m/model")).unwrap();
    std::fs::write(dir.join("main.cf"), "x=1 # one\n").unwrap();
    std::fs::write(dir.join("libs/m/model/_init.cf"), "entity A:\nstring a\nend\n").unwrap();
    std::fs::write(dir.join("clean.cf"), "y = 2\n").unwrap();
    let out = modelc(&["fmt", "--check"], &dir);
    assert_eq!(out.code, 1);
    // Each file that would change, with what would change in it.
    assert_eq!(
        out.stdout,
        "libs/m/model/_init.cf\n\
         --- libs/m/model/_init.cf (as it is)\n\
         +++ libs/m/model/_init.cf (formatted)\n\
         @@ -1,3 +1,3 @@\n entity A:\n-string a\n+    string a\n end\n\
         main.cf\n\
         --- main.cf (as it is)\n\
         +++ main.cf (formatted)\n\
         @@ -1 +1 @@\n-x=1 # one\n+x = 1  # one\n"
    );
    assert_eq!(std::fs::read_to_string(dir.join("main.cf")).unwrap(), "x=1 # one\n", "--check changes nothing");
    let out = modelc(&["fmt"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("formatted 2 of 3 files"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(dir.join("main.cf")).unwrap(), "x = 1  # one\n");
    assert_eq!(std::fs::read_to_string(dir.join("libs/m/model/_init.cf")).unwrap(), "entity A:\n    string a\nend\n");
    assert_eq!(modelc(&["fmt", "--check"], &dir).code, 0, "formatted files pass the check");
    // A file with a syntax error is left exactly as it was, and the run says so.
    std::fs::write(dir.join("broken.cf"), "x  = = 1\n").unwrap();
    let out = modelc(&["fmt", "broken.cf"], &dir);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("broken.cf: the file has a syntax error"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(dir.join("broken.cf")).unwrap(), "x  = = 1\n");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn untrusted_files_cannot_flood_or_drive_the_terminal() {
    let dir = scratch_dir("untrusted");
    // A binary file: one diagnostic, not thousands.
    let mut binary = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    binary.extend((0..20_000u32).map(|i| (i % 251) as u8));
    std::fs::write(dir.join("image.cf"), &binary).unwrap();
    let out = modelc(&["check", "image.cf"], &dir);
    assert_eq!(out.code, 1);
    assert_eq!(out.stderr.matches("E0030").count(), 1, "{}", out.stderr);
    assert!(out.stderr.len() < 1_000, "{} bytes of output for a binary file", out.stderr.len());
    // Control characters in a snippet or a message are shown, not sent to the terminal.
    std::fs::write(dir.join("escape.cf"), "x = \"\u{1b}[2J\u{1b}]0;owned\u{7}\" +\n").unwrap();
    let out = modelc(&["--color", "never", "check", "escape.cf"], &dir);
    assert_eq!(out.code, 1);
    assert!(!out.stderr.contains(['\u{1b}', '\u{7}']), "{:?}", out.stderr);
    assert!(out.stderr.contains("\u{241b}[2J"), "{}", out.stderr);
    // A file with a hundred errors shows fifty and counts the rest; JSON lists them all.
    let many: String = (0..100).map(|i| format!("x{i} = $\n")).collect();
    std::fs::write(dir.join("many.cf"), many).unwrap();
    let out = modelc(&["check", "many.cf"], &dir);
    assert_eq!(out.stderr.matches("[E0001]").count(), 50, "{}", out.stderr);
    assert!(out.stderr.contains("note: 50 more diagnostics in many.cf not shown"), "{}", out.stderr);
    assert!(out.stderr.contains("checked 2 files: 100 errors"), "{}", out.stderr);
    let json = modelc(&["--format", "json", "check", "many.cf"], &dir);
    assert_eq!(serde_json::from_str::<Vec<serde_json::Value>>(&json.stdout).unwrap().len(), 100);
}

#[test]
fn the_ir_is_the_same_from_any_directory() {
    let project = scratch_dir("ir-anywhere");
    std::fs::write(project.join("project.yml"), "modulepath: libs\n").unwrap();
    std::fs::write(project.join("main.cf"), "import web\nweb::Page(path=\"/index.html\")\n").unwrap();
    std::fs::create_dir_all(project.join("libs/web/model")).unwrap();
    std::fs::write(
        project.join("libs/web/model/_init.cf"),
        "entity Page extends std::Resource:\n    string path\nend\nindex Page(path)\nimplement Page using std::none\n",
    )
    .unwrap();
    let out = project.join("out.json");
    let out = out.to_str().unwrap();
    let parent = project.parent().unwrap();
    let name = project.file_name().unwrap().to_str().unwrap();
    let main = format!("{name}/main.cf");
    let runs = [
        (project.clone(), vec!["compile", "-o", out]),
        (parent.to_owned(), vec!["compile", name, "-o", out]),
        (parent.to_owned(), vec!["compile", &main, "-o", out]),
        (project.join("libs"), vec!["compile", "-o", out]),
    ];
    let mut written = Vec::new();
    for (cwd, args) in &runs {
        let run = modelc(args, cwd);
        assert_eq!(run.code, 0, "{args:?} in {}: {}", cwd.display(), run.stderr);
        written.push(std::fs::read_to_string(out).unwrap());
    }
    assert!(written.iter().all(|w| *w == written[0]), "the IR depends on the directory");
    assert!(written[0].contains("\"file\": \"main.cf\""), "{}", written[0]);
}

#[test]
fn quiet_prints_only_diagnostics_and_verbose_adds_phase_times() {
    let dir = scratch_dir("quiet-verbose");
    std::fs::write(dir.join("main.cf"), "import std::testing\nstd::testing::NullResource(name=\"a\")\n").unwrap();
    std::fs::write(dir.join("broken.cf"), "x = 1\nx = 2\n").unwrap();
    let quiet = modelc(&["--quiet", "export", "main.cf", "--store", "s.sqlite"], &dir);
    assert_eq!((quiet.code, quiet.stderr.as_str(), quiet.stdout.as_str()), (0, "", ""));
    let errors = modelc(&["-q", "check", "broken.cf"], &dir);
    assert_eq!(errors.code, 1);
    assert!(errors.stderr.contains("[E0301]") && !errors.stderr.contains("checked"), "{}", errors.stderr);
    let verbose = modelc(&["--verbose", "export", "main.cf", "--store", "s.sqlite", "--force"], &dir);
    assert_eq!(verbose.code, 0, "{}", verbose.stderr);
    assert!(verbose.stderr.contains("run ") && verbose.stderr.contains("refine "), "{}", verbose.stderr);
    assert!(verbose.stderr.contains("  store ") && verbose.stderr.contains("exported version 2"), "{}", verbose.stderr);
    assert_eq!(modelc(&["-q", "-v", "check", "main.cf"], &dir).code, 2, "quiet and verbose conflict");
}

#[test]
fn a_template_variable_that_is_not_there_names_the_template() {
    let dir = scratch_dir("template-variable");
    std::fs::create_dir_all(dir.join("libs/m/model")).unwrap();
    std::fs::create_dir_all(dir.join("libs/m/templates")).unwrap();
    std::fs::write(dir.join("project.yml"), "modulepath: libs\n").unwrap();
    std::fs::write(dir.join("libs/m/model/_init.cf"), "").unwrap();
    std::fs::write(dir.join("libs/m/templates/g.j2"), "{{ greeting }}\n").unwrap();
    std::fs::write(dir.join("main.cf"), "import m\nx = std::template(\"m/g.j2\", name=\"x\")\n").unwrap();
    let out = modelc(&["compile"], &dir);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("[E0106]") && out.stderr.contains("variable greeting not found"), "{}", out.stderr);
    assert!(out.stderr.contains("the template `m/g.j2` reads it"), "{}", out.stderr);
}

/// std finds a module's files as the reference does: `./path` is in the module of the file
/// that makes the call, `/path` in the project's own `files/` or `templates/` (these lines are
/// what the reference printed for this project), and `./path` outside any module is refused.
#[test]
fn files_of_the_calling_module_and_of_the_project() {
    let dir = scratch_dir("module-relative-paths");
    for (path, text) in [
        ("project.yml", "name: p\nmodulepath: libs\n"),
        ("libs/m/model/_init.cf", "greeting = std::template(\"./hello.j2\", name=\"m\")\n"),
        ("libs/m/templates/hello.j2", "hello from {{ name }}"),
        ("files/inventory.txt", "router1\n"),
        ("templates/own.j2", "own {{ n }}"),
        (
            "main.cf",
            "import m\nstd::print(m::greeting)\nstd::print(std::source(\"/inventory.txt\"))\nstd::print(std::template(\"/own.j2\", n=1))\n",
        ),
    ] {
        std::fs::create_dir_all(dir.join(path).parent().unwrap()).unwrap();
        std::fs::write(dir.join(path), text).unwrap();
    }
    let out = modelc(&["compile"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut lines: Vec<&str> = out.stdout.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["", "hello from m", "own 1", "router1"]);
    std::fs::write(dir.join("main.cf"), "x = std::source(\"./inventory.txt\")\n").unwrap();
    let out = modelc(&["compile"], &dir);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("Unable to determine current module for path ./inventory.txt, called from __config__"),
        "{}",
        out.stderr
    );
}

#[test]
fn every_argument_of_every_command_is_described_in_its_help() {
    let dir = scratch_dir("help-arguments");
    let top = modelc(&["--help"], &dir).stdout;
    let commands: Vec<String> = top
        .split("Commands:")
        .nth(1)
        .unwrap()
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() >= 15, "{commands:?}");
    let mut bare = Vec::new();
    for command in &commands {
        let help = modelc(&[command, "--help"], &dir).stdout;
        let Some(arguments) = help.split("Arguments:\n").nth(1) else { continue };
        let lines: Vec<&str> = arguments.lines().take_while(|l| !l.starts_with("Options:")).collect();
        for (k, line) in lines.iter().enumerate() {
            let argument = line.trim_start();
            if line.starts_with("  ")
                && !line.starts_with("   ")
                && (argument.starts_with('<') || argument.starts_with('['))
            {
                // A description, not just clap's `[default: …]` or `[possible values: …]`.
                let described = argument.contains("  ")
                    || lines.get(k + 1).is_some_and(|next| !next.trim().is_empty() && !next.trim().starts_with('['));
                if !described {
                    bare.push(format!("{command} {argument}"));
                }
            }
        }
    }
    assert!(bare.is_empty(), "arguments without a description: {bare:?}");
}
