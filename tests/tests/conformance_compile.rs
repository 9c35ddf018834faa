//! `modelc compile` gives every conformance case the reference's verdict: it accepts what the
//! reference accepts, printing the same lines, and rejects what the reference rejects with a
//! code that fits the reference's error class and a label on the reference's line. The cases
//! where modelc differs on purpose are listed, with the reason, in
//! `tests/conformance/compile-differences.txt`, and that list is kept exact.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::path::Path;

use modelc_tests::verdicts::{Printed, assert_listed_differences_exact};
use modelc_tests::{conformance_cases, scratch_dir, shared_dir};

#[test]
fn compile_verdicts_match_the_reference() {
    let Some(shared) = shared_dir("compile_verdicts_match_the_reference") else { return };
    let listed_text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/compile-differences.txt"))
            .unwrap();
    let cases = conformance_cases(&shared);
    assert!(cases.len() > 400, "the conformance file looks truncated");
    let dir = scratch_dir("conformance-compile");
    assert_listed_differences_exact(&cases, &listed_text, "compile-differences.txt", &dir, Printed::InOrder);
}
