//! Every input the fuzzer ever found failing (and the reproductions of the same kind),
//! kept in `regressions/<target>/`, runs clean through every target: a crash of one target is
//! worth trying on the others.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use modelc_fuzz::targets::Kind;

#[test]
fn every_kept_failure_runs_clean_through_every_target() {
    modelc_fuzz::targets::quiet_panics();
    let kept: Vec<_> = Kind::ALL.into_iter().flat_map(modelc_fuzz::regressions).collect();
    assert!(kept.len() >= 6, "the kept inputs are missing: {kept:?}");
    for kind in Kind::ALL {
        let mut target = kind.start();
        for file in &kept {
            let input = std::fs::read(file).unwrap();
            if let Err(failure) = target.run(&input) {
                panic!("{} fails in {}: {failure}", file.display(), kind.name());
            }
        }
    }
}
