//! `modelc compile` gives every conformance case the reference's verdict: it accepts what the
//! reference accepts, printing the same lines, and rejects what the reference rejects with a
//! code that fits the reference's error class and a label on the reference's line. The cases
//! where modelc differs on purpose are listed, with the reason, in
//! `tests/conformance/compile-differences.txt`, and that list is kept exact.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::path::Path;

use modelc_tests::verdicts::{Printed, disagreement, listed_differences};
use modelc_tests::{conformance_cases, scratch_dir, shared_dir};

#[test]
fn compile_verdicts_match_the_reference() {
    let Some(shared) = shared_dir("compile_verdicts_match_the_reference") else { return };
    let listed_text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/compile-differences.txt"))
            .unwrap();
    let listed = listed_differences(&listed_text);
    let cases = conformance_cases(&shared);
    assert!(cases.len() > 400, "the conformance file looks truncated");
    let dir = scratch_dir("conformance-compile");
    let mut failures = Vec::new();
    let mut agreeing = 0;
    for case in &cases {
        let recorded = listed.iter().find(|(id, _)| *id == case.id).map(|(_, result)| *result);
        match (disagreement(case, &dir, Printed::InOrder), recorded) {
            (None, None) => agreeing += 1,
            (None, Some(_)) => {
                failures.push(format!("{}: agrees now; remove it from compile-differences.txt", case.id))
            }
            (Some(why), None) => failures.push(format!("{}: {why}", case.id)),
            (Some(why), Some(result)) if why != result => {
                failures.push(format!("{}: the listed result changed; it is now\n  = {why}", case.id));
            }
            (Some(_), Some(_)) => {}
        }
    }
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(agreeing + listed.len(), cases.len());
}
