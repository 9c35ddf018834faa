//! Writes the generated parity models (`modelc_tests::generate`) into a directory, for
//! `scripts/record-parity` to record the reference's results for them.
#![allow(clippy::disallowed_methods, clippy::print_stderr, reason = "a small tool writing files")]

fn main() {
    let Some(out) = std::env::args().nth(1).map(std::path::PathBuf::from) else {
        eprintln!("usage: parity-generate DIR");
        std::process::exit(2);
    };
    let _ = std::fs::remove_dir_all(&out);
    for (name, source) in modelc_tests::generate::models(modelc_tests::generate::COUNT) {
        // The name is `generated/<kind>-<n>`; DIR stands for `generated`.
        let file = out.join(format!("{}.cf", name.trim_start_matches("generated/")));
        std::fs::create_dir_all(file.parent().unwrap_or(&out)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&file, source).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    }
}
