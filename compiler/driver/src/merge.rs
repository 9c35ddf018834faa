//! Putting what `check` found and what the run found into one list without saying anything
//! twice. Where code may not run, `check` warns of an error the run may meet (an entity with no
//! `implement`, an attribute that does not exist); when the run meets it at the same place,
//! the warning becomes the error (its text has the suggestions) and the run's report is dropped.
//! A run reports the same error once per instance that meets it: identical reports (an
//! implementation that runs for three instances) are kept once.

use modelc_diagnostics::{Diagnostic, Severity};

/// Adds the run's diagnostics to `check`'s.
pub(crate) fn merge_run(check: &mut Vec<Diagnostic>, run: Vec<Diagnostic>) {
    let from_check = check.len();
    for found in run {
        if check[from_check..].contains(&found) {
            continue;
        }
        match check[..from_check].iter_mut().find(|w| w.code == found.code && same_place(w, &found)) {
            Some(warned) if found.severity == Severity::Error => {
                warned.severity = Severity::Error;
                warned.notes.retain(|n| !n.starts_with(modelc_sema::MAY_NOT_RUN));
            }
            Some(_) => {}
            None => check.push(found),
        }
    }
}

/// Whether two diagnostics point at the same code: one's primary span holds the other's (check
/// points at a constructor's name, the run at the whole call).
fn same_place(a: &Diagnostic, b: &Diagnostic) -> bool {
    let (Some(a), Some(b)) = (a.primary_label(), b.primary_label()) else { return false };
    let holds = |outer: modelc_diagnostics::Span, inner: modelc_diagnostics::Span| {
        outer.start <= inner.start && inner.end <= outer.end
    };
    a.file == b.file && (holds(a.span, b.span) || holds(b.span, a.span))
}

#[cfg(test)]
mod tests {
    use super::merge_run;
    use modelc_diagnostics::{Diagnostic, FileId, Severity, Span, codes};

    fn at(code: &'static modelc_diagnostics::Code, start: usize, message: &str) -> Diagnostic {
        Diagnostic::new(code, message).primary(FileId(0), Span::new(start, start + 3), "")
    }

    #[test]
    fn a_warning_the_run_confirms_becomes_the_error_and_repeats_are_kept_once() {
        let mut warning = at(&codes::NO_IMPLEMENTATION, 10, "no implement for A");
        warning.severity = Severity::Warning;
        let mut found = vec![warning];
        let run = vec![
            Diagnostic::new(&codes::NO_IMPLEMENTATION, "unable to select implementation for entity A").primary(
                FileId(0),
                Span::new(10, 20),
                "",
            ),
            at(&codes::NO_IMPLEMENTATION, 40, "unable to select implementation for entity A"),
            at(&codes::NO_IMPLEMENTATION, 40, "unable to select implementation for entity A"),
            at(&codes::DOUBLE_SET, 10, "set twice"),
        ];
        merge_run(&mut found, run);
        let summary: Vec<(&str, u32, Severity)> =
            found.iter().map(|d| (d.code.id, d.primary_label().unwrap().span.start, d.severity)).collect();
        assert_eq!(
            summary,
            [("E0303", 10, Severity::Error), ("E0303", 40, Severity::Error), ("E0301", 10, Severity::Error)]
        );
        assert_eq!(found[0].message, "no implement for A", "the warning's text is kept");
    }
}
