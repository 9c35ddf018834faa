//! Feeds arbitrary bytes to the lexer and parser: nothing may panic, every diagnostic span
//! must lie inside the input on character boundaries, and rendering them must succeed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelc_diagnostics::render::text::TextRenderer;
use modelc_diagnostics::{FileId, SourceFiles};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let parse = modelc_syntax::parse(FileId(0), &text);
    let mut files = SourceFiles::new();
    files.add("fuzz.cf", text.as_ref());
    let mut renderer = TextRenderer::new(&files, false);
    for diagnostic in &parse.diagnostics {
        for label in &diagnostic.labels {
            let (start, end) = (label.span.start as usize, label.span.end as usize);
            assert!(start <= end && end <= text.len(), "span {start}..{end} outside {} bytes", text.len());
            assert!(text.is_char_boundary(start) && text.is_char_boundary(end), "span splits a character");
        }
        let _ = renderer.render(diagnostic);
    }
    let _ = modelc_syntax::dump::dump(&parse.file);
});
