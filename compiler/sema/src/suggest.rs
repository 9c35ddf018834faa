//! "Did you mean" suggestions for misspelt names.

/// Whether `candidate` is close enough to `written` to suggest it.
pub(crate) fn close(written: &str, candidate: &str) -> bool {
    if written == candidate {
        return false;
    }
    if written.eq_ignore_ascii_case(candidate) {
        return true;
    }
    let (a, b) = (written.chars().count(), candidate.chars().count());
    // Short names tolerate one edit, longer ones about a third of their length. Names whose
    // lengths differ by more than that cannot be close; very long ones are not compared (the
    // distance costs time and memory proportional to the product of the lengths).
    // One- and two-letter names differ from almost everything by one edit: only case counts.
    if a.max(b) < 3 {
        return false;
    }
    let allowed = (a.max(b) / 3).max(1);
    if a.abs_diff(b) > allowed || a.max(b) > 128 {
        return false;
    }
    strsim::damerau_levenshtein(written, candidate) <= allowed
}

/// Up to three candidates close to `written`, closest first, ties in the order given.
pub(crate) fn similar<'a>(written: &str, candidates: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut scored: Vec<(usize, usize, &str)> = candidates
        .enumerate()
        .filter(|(_, c)| close(written, c))
        .map(|(i, c)| (strsim::damerau_levenshtein(written, c), i, c))
        .collect();
    scored.sort_unstable();
    let mut out: Vec<String> = Vec::new();
    for (_, _, c) in scored {
        if !out.iter().any(|o| o == c) {
            out.push(c.to_owned());
        }
        if out.len() == 3 {
            break;
        }
    }
    out
}

/// "did you mean" help for the names similar to what was written at `span`, and a fix for each
/// that writes it there instead.
pub(crate) fn suggest(
    mut diagnostic: modelc_diagnostics::Diagnostic,
    file: modelc_diagnostics::FileId,
    span: modelc_diagnostics::Span,
    suggestions: &[String],
) -> modelc_diagnostics::Diagnostic {
    if let Some(help) = did_you_mean(suggestions) {
        diagnostic = diagnostic.help(help);
    }
    for suggestion in suggestions {
        let applicability = modelc_diagnostics::Applicability::MaybeIncorrect;
        diagnostic = diagnostic.replace(file, span, suggestion.clone(), applicability);
    }
    diagnostic
}

/// `did you mean `a`?` / `did you mean `a` or `b`?`, or nothing.
pub(crate) fn did_you_mean(suggestions: &[String]) -> Option<String> {
    match suggestions {
        [] => None,
        [one] => Some(format!("did you mean `{one}`?")),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(|s| format!("`{s}`")).collect();
            Some(format!("did you mean {} or `{last}`?", init.join(", ")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(similar("Enitty", ["Entity", "Host", "Resource"].into_iter()), ["Entity"]);
        assert!(similar("x", ["y", "zz"].into_iter()).is_empty());
        assert_eq!(similar("a", ["A", "b"].into_iter()), ["A"]);
        assert!(similar("completely", ["other"].into_iter()).is_empty());
        assert_eq!(did_you_mean(&["a".into(), "b".into()]).unwrap_or_default(), "did you mean `a` or `b`?");
    }
}
