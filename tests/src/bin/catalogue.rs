//! Prints the generated service catalogue (`modelc_tests::catalogue`) of N networks of 5 hosts,
//! the model the benchmarks compile and export, to try them by hand:
//! `cargo run -p modelc-tests --bin catalogue -- 100000 > main.cf`.
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a small tool printing a model")]

fn main() {
    let Some(networks) = std::env::args().nth(1).and_then(|n| n.parse().ok()) else {
        eprintln!("usage: catalogue NETWORKS [HOSTS]");
        std::process::exit(2);
    };
    let hosts = std::env::args().nth(2).and_then(|n| n.parse().ok()).unwrap_or(5);
    print!("{}", modelc_tests::catalogue::service_catalogue(networks, hosts));
}
