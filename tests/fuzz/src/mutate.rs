//! Mutations of a `.cf` text: bytes, and the language's own tokens, so that mutants get past
//! the lexer and reach the parser's, checker's and formatter's deeper paths.

use crate::rng::Rng;

/// The largest input tried: mutations that would grow past it are cut back.
pub const MAX_INPUT: usize = 64 * 1024;

/// Tokens and fragments worth inserting: keywords, operators, literals of every kind, and the
/// characters that have broken position arithmetic and terminals before.
const DICTIONARY: &[&str] = &[
    "entity ",
    "end",
    "implementation ",
    "implement ",
    " using ",
    " when ",
    "for ",
    " in ",
    "if ",
    "elif ",
    "else:",
    "index ",
    "typedef ",
    " as ",
    " matching ",
    "import ",
    " extends ",
    " is defined",
    "not ",
    " and ",
    " or ",
    "true",
    "false",
    "null",
    "self",
    "parents",
    " -- ",
    "[0:1]",
    "[1]",
    "[0:]",
    "std::",
    "::",
    ".",
    ",",
    ":",
    " = ",
    " += ",
    " == ",
    " != ",
    " < ",
    " >= ",
    " ** ",
    " + ",
    " - ",
    " * ",
    " / ",
    " % ",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "\"",
    "'",
    "\"\"\"",
    "r\"",
    "f\"",
    "{{",
    "}}",
    "{x}",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "    ",
    "# ",
    "é",
    "😀",
    "\u{0}",
    "\u{1b}[2J",
    "\\",
    "\\N{BULLET}",
    "\\u00e9",
    "1e999",
    "99999999999999999999",
    "-0.0",
    "string",
    "int",
    "bool",
    "dict",
    "list",
    "number",
    "float",
    "string[]",
    "int?",
    "std::Entity",
    "std::print(",
    "std::template(\"",
    "std::source(\"",
    "[k=1]",
    "A(",
    "x.",
    "x = ",
    "/re.*/",
    "?",
    "**",
    "std::len(",
    "\"${x}\"",
    "@",
    "$",
    "~",
    "^",
    "|",
    "&",
];

/// A mutant of `input`: one to four mutations, some of them splicing from `corpus`.
pub fn mutate(input: &[u8], corpus: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        mutate_once(&mut out, corpus, rng);
    }
    out.truncate(MAX_INPUT);
    out
}

fn mutate_once(out: &mut Vec<u8>, corpus: &[Vec<u8>], rng: &mut Rng) {
    let at = rng.below(out.len() + 1);
    match rng.below(11) {
        0 | 1 => {
            let token = DICTIONARY[rng.below(DICTIONARY.len())];
            out.splice(at..at, token.bytes());
        }
        2 => {
            let end = (at + rng.small(out.len().max(1))).min(out.len());
            out.drain(at..end);
        }
        3 => {
            if let Some(byte) = out.get_mut(at) {
                *byte = rng.next_u64() as u8;
            }
        }
        4 => {
            // A chunk of the input again, elsewhere.
            let start = rng.below(out.len() + 1);
            let end = (start + rng.small(256)).min(out.len());
            let chunk = out[start..end].to_vec();
            out.splice(at..at, chunk);
        }
        5 => {
            // A token many times over: deep nesting, long chains, long lines.
            let token = DICTIONARY[rng.below(DICTIONARY.len())];
            let longest = if rng.one_in(8) { 2_000 } else { 40 };
            let times = rng.small(longest);
            let repeated = token.repeat(times);
            out.splice(at..at, repeated.bytes().take(MAX_INPUT / 2));
        }
        6 | 7 => {
            // A piece of another file: declarations meet code they were not written for.
            if let Some(other) = corpus.get(rng.below(corpus.len())) {
                let start = rng.below(other.len() + 1);
                let end = (start + rng.small(512)).min(other.len());
                let piece = other[start..end].to_vec();
                if rng.one_in(2) {
                    let replaced = (at + piece.len()).min(out.len());
                    out.splice(at..replaced, piece);
                } else {
                    out.splice(at..at, piece);
                }
            }
        }
        8 => out.truncate(at),
        9 => swap_lines(out, rng),
        _ => {
            // A number or a name changed by one character.
            if let Some(byte) = out.get_mut(at) {
                *byte = match *byte {
                    b'0'..=b'8' => *byte + 1,
                    b'9' => b'0',
                    b'a'..=b'z' => byte.to_ascii_uppercase(),
                    b'A'..=b'Z' => byte.to_ascii_lowercase(),
                    b' ' => b'\t',
                    other => other,
                };
            }
        }
    }
}

fn swap_lines(out: &mut Vec<u8>, rng: &mut Rng) {
    let text = std::mem::take(out);
    let mut lines: Vec<&[u8]> = text.split(|b| *b == b'\n').collect();
    if lines.len() > 1 {
        let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
        lines.swap(a, b);
    }
    *out = lines.join(&b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutants_are_bounded_and_a_seed_repeats_them() {
        let corpus = vec![b"entity A:\n    string x\nend\n".to_vec(), b"x = 1\n".to_vec()];
        let (mut first, mut second) = (Rng::new(7), Rng::new(7));
        let mut input = corpus[0].clone();
        for _ in 0..2_000 {
            let a = mutate(&input, &corpus, &mut first);
            assert_eq!(a, mutate(&input, &corpus, &mut second));
            assert!(a.len() <= MAX_INPUT);
            input = a;
        }
    }
}
