//! Prints the plugins of the Python files named: `cargo run -p modelc-pyplugins --example read -- FILE.py…`.
#![allow(clippy::print_stdout, clippy::disallowed_methods, reason = "a command-line example")]

fn main() {
    for path in std::env::args().skip(1) {
        let source = std::fs::read_to_string(&path).unwrap_or_default();
        match modelc_pyplugins::read_plugins(&source, &path) {
            Ok(plugins) => {
                for p in plugins {
                    let params: Vec<String> = p.params.iter().map(|q| format!("{} {}", q.ty, q.name)).collect();
                    println!("{path}: {}({}) -> {}", p.name, params.join(", "), p.returns);
                }
            }
            Err(e) => println!("{path}: {e}"),
        }
    }
}
