//! Machine-readable rendering: one JSON object per diagnostic, with byte offsets and
//! 1-based line/column positions, for editors, CI annotations and scripts.

use serde::Serialize;

use crate::{Diagnostic, SourceFiles};

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    code: &'static str,
    name: &'static str,
    severity: &'static str,
    message: &'a str,
    labels: Vec<JsonLabel<'a>>,
    notes: &'a [String],
    help: &'a [String],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    fixes: Vec<JsonFix<'a>>,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    message: &'a str,
    applicability: &'static str,
    edits: Vec<JsonEdit<'a>>,
}

#[derive(Serialize)]
struct JsonEdit<'a> {
    file: &'a str,
    /// Byte offsets into the file.
    start: u32,
    end: u32,
    replacement: &'a str,
}

#[derive(Serialize)]
struct JsonLabel<'a> {
    file: &'a str,
    primary: bool,
    message: Option<&'a str>,
    /// Byte offsets into the file.
    start: u32,
    end: u32,
    /// 1-based; columns count characters.
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
}

/// A JSON value for one diagnostic, fields in a fixed order.
pub fn to_value(diagnostic: &Diagnostic, files: &SourceFiles) -> serde_json::Value {
    serde_json::to_value(to_json(diagnostic, files)).unwrap_or(serde_json::Value::Null)
}

fn to_json<'a>(diagnostic: &'a Diagnostic, files: &'a SourceFiles) -> JsonDiagnostic<'a> {
    let labels = diagnostic
        .labels
        .iter()
        .map(|label| {
            let file = files.get(label.file);
            let span = file.clamp(label.span);
            let (start, end) = (file.line_col(span.start), file.line_col(span.end));
            JsonLabel {
                file: &file.name,
                primary: label.primary,
                message: label.message.as_deref(),
                start: span.start,
                end: span.end,
                line: start.line,
                column: start.column,
                end_line: end.line,
                end_column: end.column,
            }
        })
        .collect();
    JsonDiagnostic {
        code: diagnostic.code.id,
        name: diagnostic.code.name,
        severity: diagnostic.severity.as_str(),
        message: &diagnostic.message,
        labels,
        notes: &diagnostic.notes,
        help: &diagnostic.help,
        fixes: diagnostic
            .fixes
            .iter()
            .map(|fix| JsonFix {
                message: &fix.message,
                applicability: fix.applicability.as_str(),
                edits: fix
                    .edits
                    .iter()
                    .map(|edit| {
                        let span = files.get(edit.file).clamp(edit.span);
                        JsonEdit {
                            file: &files.get(edit.file).name,
                            start: span.start,
                            end: span.end,
                            replacement: &edit.replacement,
                        }
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// A JSON array of diagnostics, pretty-printed, ending with a newline.
/// Every diagnostic as a JSON value (the list `render_all` prints), to embed in a larger
/// document.
pub fn list_value(diagnostics: &[Diagnostic], files: &SourceFiles) -> serde_json::Value {
    let values: Vec<JsonDiagnostic<'_>> = diagnostics.iter().map(|d| to_json(d, files)).collect();
    serde_json::to_value(values).unwrap_or_else(|_| serde_json::Value::Array(Vec::new()))
}

pub fn render_all(diagnostics: &[Diagnostic], files: &SourceFiles) -> String {
    let values: Vec<JsonDiagnostic<'_>> = diagnostics.iter().map(|d| to_json(d, files)).collect();
    let mut out = serde_json::to_string_pretty(&values).unwrap_or_else(|_| "[]".to_owned());
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Span, codes};

    #[test]
    fn positions_are_bytes_and_one_based_lines() {
        let mut files = SourceFiles::new();
        let file = files.add("main.cf", "x = 1\ncafé = @\n");
        let diagnostic = Diagnostic::new(&codes::ILLEGAL_CHARACTER, "illegal character `@`").primary(
            file,
            Span::new(14, 15),
            "not allowed here",
        );
        insta::assert_snapshot!(render_all(&[diagnostic], &files));
    }
}
