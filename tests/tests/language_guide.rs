//! `docs/language.md`: every `cf` example compiles as written, with no error and no warning, so
//! the guide never teaches something modelc refuses.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use modelc_tests::{modelc, scratch_dir};

/// The `cf` code blocks of a Markdown text.
fn examples(markdown: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = markdown;
    while let Some(start) = rest.find("```cf\n") {
        let body = &rest[start + "```cf\n".len()..];
        let Some(end) = body.find("```") else { break };
        found.push(body[..end].to_owned());
        rest = &body[end..];
    }
    found
}

#[test]
fn every_example_of_the_language_guide_compiles() {
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/language.md")).unwrap();
    let examples = examples(&guide);
    assert!(examples.len() >= 10, "the guide has {} examples", examples.len());
    let dir = scratch_dir("language-guide");
    let mut wrong = Vec::new();
    for (n, example) in examples.iter().enumerate() {
        let file = format!("example-{n}.cf");
        std::fs::write(dir.join(&file), example).unwrap();
        let out = modelc(&["--color", "never", "compile", &file], &dir);
        if out.code != 0 || out.stderr.contains("Warning") {
            wrong.push(format!("example {n}:\n{example}\n{}", out.stderr));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
