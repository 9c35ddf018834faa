//! Printing a run's diagnostics and its summary line, and choosing the exit status.

use modelc_diagnostics::render::{json, text::TextRenderer};
use modelc_diagnostics::{Diagnostic, FileId, Severity, SourceFiles};

/// Diagnostics shown per file in text: beyond this many, one file is rarely the model it was
/// meant to be, and the rest are counted instead.
const MAX_SHOWN_PER_FILE: usize = 50;

use crate::{EXIT_MODEL_ERRORS, EXIT_OK, Format, Io};

pub(crate) struct Reporter<'f> {
    pub(crate) files: &'f SourceFiles,
    pub(crate) format: Format,
    pub(crate) color: bool,
    /// How many files the summary line says were processed.
    pub(crate) file_count: usize,
}

impl Reporter<'_> {
    /// Prints every diagnostic in source order, then a summary; returns the exit status.
    pub(crate) fn finish(&self, io: &mut Io<'_>, diagnostics: &mut [Diagnostic], verb: &str) -> u8 {
        let status = self.report(io, diagnostics);
        if self.format != Format::Json && crate::chatty() {
            let errors = diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
            let warnings = diagnostics.len() - errors;
            let _ = writeln!(io.stderr, "{}", summary(verb, self.file_count, errors, warnings));
        }
        status
    }

    /// As `finish`, for commands whose JSON output is one object: `{"diagnostics": [...]}` with
    /// the command's own keys (`result`), instead of the bare list of diagnostics. In text, the
    /// caller prints its result itself.
    pub(crate) fn finish_object(
        &self,
        io: &mut Io<'_>,
        diagnostics: &mut [Diagnostic],
        verb: &str,
        result: serde_json::Map<String, serde_json::Value>,
    ) -> u8 {
        if self.format != Format::Json {
            return self.finish(io, diagnostics, verb);
        }
        modelc_diagnostics::sort(diagnostics);
        let mut object = serde_json::Map::new();
        object.insert("diagnostics".to_owned(), json::list_value(diagnostics, self.files));
        object.extend(result);
        let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(&object).unwrap_or_default());
        if diagnostics.iter().any(|d| d.severity == Severity::Error) { EXIT_MODEL_ERRORS } else { EXIT_OK }
    }

    /// Prints every diagnostic in source order; returns the exit status.
    pub(crate) fn report(&self, io: &mut Io<'_>, diagnostics: &mut [Diagnostic]) -> u8 {
        modelc_diagnostics::sort(diagnostics);
        match self.format {
            Format::Json => {
                let _ = write!(io.stdout, "{}", json::render_all(diagnostics, self.files));
            }
            Format::Human | Format::Reference | Format::Dot | Format::Mermaid => {
                let mut renderer = TextRenderer::new(self.files, self.color);
                // (file, diagnostics of it shown, not shown), in the order files come up.
                let mut per_file: Vec<(Option<FileId>, usize, usize)> = Vec::new();
                for diagnostic in diagnostics.iter() {
                    let file = diagnostic.primary_label().map(|l| l.file);
                    let at = match per_file.iter().position(|(f, _, _)| *f == file) {
                        Some(at) => at,
                        None => {
                            per_file.push((file, 0, 0));
                            per_file.len() - 1
                        }
                    };
                    let counts = &mut per_file[at];
                    if counts.1 == MAX_SHOWN_PER_FILE && file.is_some() {
                        counts.2 += 1;
                        continue;
                    }
                    counts.1 += 1;
                    let _ = writeln!(io.stderr, "{}", renderer.render(diagnostic));
                }
                for (file, _, hidden) in per_file {
                    if let (Some(file), 1..) = (file, hidden) {
                        let _ = writeln!(
                            io.stderr,
                            "note: {hidden} more {} in {} not shown (`--format json` lists every one)\n",
                            if hidden == 1 { "diagnostic" } else { "diagnostics" },
                            self.files.get(file).name
                        );
                    }
                }
            }
        }
        if diagnostics.iter().any(|d| d.severity == Severity::Error) { EXIT_MODEL_ERRORS } else { EXIT_OK }
    }
}

fn summary(verb: &str, files: usize, errors: usize, warnings: usize) -> String {
    let plural = |n: usize, word: &str| if n == 1 { format!("{n} {word}") } else { format!("{n} {word}s") };
    let found = match (errors, warnings) {
        (0, 0) => "no problems".to_owned(),
        (e, 0) => plural(e, "error"),
        (0, w) => plural(w, "warning"),
        (e, w) => format!("{}, {}", plural(e, "error"), plural(w, "warning")),
    };
    format!("{verb} {}: {found}", plural(files, "file"))
}
