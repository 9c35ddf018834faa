//! Counts in messages, in correct English: "1 resource", "2 resources", "1 dependency",
//! "only 1 is set".

/// `n` followed by `noun`, in the plural unless `n` is 1 (`y` after a consonant becomes `ies`;
/// words ending in `s`, `x`, `ch` or `sh` take `es`).
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 { format!("1 {noun}") } else { format!("{n} {}", plural(noun)) }
}

/// The plural of a regular English noun.
pub fn plural(noun: &str) -> String {
    let consonant_y =
        noun.len() > 1 && noun.ends_with('y') && !noun[..noun.len() - 1].ends_with(['a', 'e', 'i', 'o', 'u']);
    if consonant_y {
        format!("{}ies", &noun[..noun.len() - 1])
    } else if noun.ends_with(['s', 'x']) || noun.ends_with("ch") || noun.ends_with("sh") {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

/// `is` or `are`, agreeing with `n`.
pub fn is_are(n: impl Into<u64>) -> &'static str {
    if n.into() == 1 { "is" } else { "are" }
}

/// `was` or `were`, agreeing with `n`.
pub fn was_were(n: impl Into<u64>) -> &'static str {
    if n.into() == 1 { "was" } else { "were" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_agree_with_their_number() {
        assert_eq!(count(1u64, "resource"), "1 resource");
        assert_eq!(count(0u64, "resource"), "0 resources");
        assert_eq!(count(2u64, "dependency"), "2 dependencies");
        assert_eq!(count(2u64, "key"), "2 keys");
        assert_eq!(count(3u64, "class"), "3 classes");
        assert_eq!(format!("only {} {} set", 1, is_are(1u64)), "only 1 is set");
    }
}
