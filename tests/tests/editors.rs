//! The editor grammar highlights exactly the language's keywords.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

use std::path::Path;

#[test]
fn the_textmate_grammar_knows_every_keyword() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../editors/vscode/syntaxes/cf.tmLanguage.json");
    let grammar: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut highlighted: Vec<String> = Vec::new();
    for pattern in grammar["repository"]["keywords"]["patterns"].as_array().unwrap() {
        let regex = pattern["match"].as_str().unwrap();
        let inner = &regex[regex.find('(').unwrap() + 1..regex.find(')').unwrap()];
        highlighted.extend(inner.split('|').map(str::to_owned));
    }
    highlighted.sort();
    let mut keywords: Vec<String> = modelc_syntax::lexer::KEYWORDS.iter().map(|k| (*k).to_owned()).collect();
    keywords.sort();
    assert_eq!(highlighted, keywords, "editors/vscode keyword lists and grammar/src/lexer.rs KEYWORDS differ");
}
