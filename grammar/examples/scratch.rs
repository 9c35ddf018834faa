use modelc_diagnostics::{FileId, SourceFiles, render::text::TextRenderer};
fn main() {
    let mut files = SourceFiles::new();
    let mut all = Vec::new();
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).unwrap();
        let id = files.add(path.clone(), text.clone());
        let parse = modelc_syntax::parse(id, &text);
        all.extend(parse.diagnostics);
    }
    let mut r = TextRenderer::new(&files, false);
    for d in &all { print!("{}", r.render(d)); }
    println!("{} diagnostics", all.len());
    let _ = FileId(0);
}
