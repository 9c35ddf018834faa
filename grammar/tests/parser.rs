//! Parser fixtures. Every file in `test_data/ok` must parse without errors and every file in
//! `test_data/err` must produce at least one; each is snapshotted as its source, its syntax
//! tree and its rendered diagnostics, so a change in either shows up in review.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stdout, reason = "test code")]

use std::fmt::Write as _;
use std::path::Path;

use modelc_diagnostics::SourceFiles;
use modelc_diagnostics::render::text::TextRenderer;

/// Parses a fixture and renders the snapshot text; returns it with the number of errors.
fn render(path: &Path) -> (String, usize) {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut files = SourceFiles::new();
    let id = files.add(name, text.as_str());
    let parse = modelc_syntax::parse(id, &text);
    let mut out = String::new();
    writeln!(out, "---- source").unwrap();
    out.push_str(&text);
    writeln!(out, "---- syntax tree").unwrap();
    out.push_str(&modelc_syntax::dump::dump(&parse.file));
    writeln!(out, "---- diagnostics ({})", parse.diagnostics.len()).unwrap();
    let mut renderer = TextRenderer::new(&files, false);
    for diagnostic in &parse.diagnostics {
        out.push_str(&renderer.render(diagnostic));
    }
    let errors = parse.diagnostics.iter().filter(|d| d.is_error()).count();
    (out, errors)
}

#[test]
fn valid_fixtures_parse_cleanly() {
    insta::glob!("../test_data/ok", "*.cf", |path| {
        let (snapshot, errors) = render(path);
        assert_eq!(errors, 0, "{} should parse without errors:\n{snapshot}", path.display());
        insta::assert_snapshot!(snapshot);
    });
}

#[test]
fn invalid_fixtures_report_errors() {
    insta::glob!("../test_data/err", "*.cf", |path| {
        let (snapshot, errors) = render(path);
        assert!(errors > 0, "{} should have errors:\n{snapshot}", path.display());
        insta::assert_snapshot!(snapshot);
    });
}

/// One mistake per statement gives one diagnostic per statement, not a cascade.
#[test]
fn independent_errors_are_each_reported_once() {
    let text = "x = = 1\ny = 2\nentity A:\n    string Name\nend\nz = 5->1\nok = 3\n";
    let parse = modelc_syntax::parse(modelc_diagnostics::FileId(0), text);
    let codes: Vec<&str> = parse.diagnostics.iter().map(|d| d.code.id).collect();
    assert_eq!(codes, ["E0006", "E0010", "E0006"], "{:#?}", parse.diagnostics);
    // Recovery keeps the statements around the errors.
    let rendered = modelc_syntax::dump::dump(&parse.file);
    assert!(rendered.contains("Var y") && rendered.contains("Var ok"), "{rendered}");
}

/// A lone carriage return ends a line (universal newlines), so errors on two such lines are
/// two mistakes, not one repeated.
#[test]
fn errors_on_lines_ended_by_carriage_returns_are_each_reported() {
    let parse = modelc_syntax::parse(modelc_diagnostics::FileId(0), "x = = 1\ry = = 2\r");
    let codes: Vec<&str> = parse.diagnostics.iter().map(|d| d.code.id).collect();
    assert_eq!(codes, ["E0006", "E0006"], "{:#?}", parse.diagnostics);
}
