//! Generates the parser from `src/grammar.lalrpop`. LALRPOP is the slowest step of the build,
//! so it reruns only when the grammar changes.

fn main() {
    lalrpop::Configuration::new()
        .use_cargo_dir_conventions()
        .emit_rerun_directives(true)
        .process()
        .expect("the grammar must compile (LALRPOP prints the conflict above)");
}
