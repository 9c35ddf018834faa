fn main() {
    let n = 10_000;
    let which: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let cases = [
        format!("x = {}1{}", "[".repeat(n), "]".repeat(n)),
        format!("x = {}true", "not ".repeat(n)),
        format!("x = 1{}", " + 1".repeat(n)),
        format!("x = {}1", "c ? 1 : ".repeat(n)),
        format!("x = a{}", ".b".repeat(n)),
        format!("{}x = 1\n{}", "if true:\n".repeat(n), "end\n".repeat(n)),
    ];
    let text = &cases[which];
    let h = std::thread::Builder::new().stack_size(2 << 20).spawn({ let t = text.clone(); move || {
        let p = modelc_syntax::parse(modelc_diagnostics::FileId(0), &t);
        eprintln!("parsed {}", p.diagnostics.len());
        let d = modelc_syntax::dump::dump(&p.file);
        eprintln!("dumped {}", d.len());
    }}).unwrap();
    let _ = h.join();
}
