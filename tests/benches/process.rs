//! `modelc compile` as a whole process on the seed model (the service catalogue of
//! `modelc_tests::catalogue`: N networks of 5 hosts), at 1,000 / 10,000 / 100,000 networks:
//! wall time (measured here around the process, to the microsecond: `/usr/bin/time`'s 10 ms
//! steps are half of a small compile) and peak memory as `/usr/bin/time` reports it (maximum
//! resident set size), the way a user meets them. It builds the release binary first. Run with
//! `cargo bench -p modelc-tests --bench process` (optionally followed by `--` and the sizes).
//!
//! Targets (issue 18): 100,000 networks in at most 2 s and 512 MiB; 1,000 networks at least
//! 100 times faster than the reference as a whole process (3.1 s).
#![allow(clippy::disallowed_methods, clippy::unwrap_used, clippy::print_stdout, reason = "benchmark code")]

const DEFAULT_SIZES: [usize; 3] = [1_000, 10_000, 100_000];
/// Runs per size: more for the small models, whose times the machine's noise moves most.
fn runs(size: usize) -> usize {
    if size >= 100_000 { 3 } else { 9 }
}
const REFERENCE_1000_SECONDS: f64 = 3.1;

fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { DEFAULT_SIZES.to_vec() } else { sizes };
    let binary = modelc_tests::process::release_binary();
    let dir = std::env::temp_dir().join(format!("modelc-bench-process-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    println!("{:>9} {:>12} {:>12} {:>10}", "networks", "best (s)", "median (s)", "peak MiB");
    for size in sizes {
        let model = dir.join(format!("catalogue-{size}.cf"));
        std::fs::write(&model, modelc_tests::catalogue::service_catalogue(size, 5)).unwrap();
        let count = runs(size);
        let mut runs: Vec<(f64, f64)> = (0..count)
            .map(|_| {
                let run = modelc_tests::process::timed(&binary, &dir, &["compile", model.to_str().unwrap()]);
                (run.seconds, run.peak_mib)
            })
            .collect();
        runs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let peak = runs.iter().map(|r| r.1).fold(0.0, f64::max);
        print!("{size:>9} {:>12.3} {:>12.3} {:>10.0}", runs[0].0, runs[count / 2].0, peak);
        if size == 1_000 {
            print!("   {:.0}x the reference's {REFERENCE_1000_SECONDS} s", REFERENCE_1000_SECONDS / runs[0].0);
        }
        println!();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
