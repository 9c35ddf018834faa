//! The registry of diagnostic codes. Every code is declared here exactly once, with its
//! default severity and the explanation `modelc explain` prints (`explanations/<ID>.md`).
//!
//! Codes are stable: a code is never renumbered or reused for another problem, even after the
//! problem it names stops being reported. Every code is produced by at least one test input
//! (`tests/tests/codes.rs`). E0026 and W0002 were drafted and withdrawn before any release;
//! they stay unused. Ranges: `E00xx` syntax, `E01xx` names and modules,
//! `E02xx` types, `E03xx` execution, `E04xx` resources and export; `W0xxx` mirror them.

use crate::Severity;

/// A stable diagnostic code.
#[derive(Debug, PartialEq, Eq)]
pub struct Code {
    /// `E0001`, `W0001`, ...
    pub id: &'static str,
    /// A short kebab-case name, for humans and for JSON consumers.
    pub name: &'static str,
    pub severity: Severity,
    /// Markdown: what the diagnostic means, an example, and how to fix it.
    pub explanation: &'static str,
}

macro_rules! codes {
    ($($konst:ident = $id:literal $name:literal $severity:ident;)*) => {
        $(
            pub static $konst: Code = Code {
                id: $id,
                name: $name,
                severity: Severity::$severity,
                explanation: include_str!(concat!("../explanations/", $id, ".md")),
            };
        )*
        /// Every code, in registry order.
        pub static ALL: &[&Code] = &[$(&$konst),*];
    };
}

codes! {
    ILLEGAL_CHARACTER = "E0001" "illegal-character" Error;
    UNTERMINATED_STRING = "E0002" "unterminated-string" Error;
    INVALID_ESCAPE = "E0003" "invalid-escape" Error;
    INVALID_FSTRING = "E0004" "invalid-fstring" Error;
    INVALID_REGEX = "E0005" "invalid-regex" Error;
    UNEXPECTED_TOKEN = "E0006" "unexpected-token" Error;
    UNEXPECTED_EOF = "E0007" "unexpected-end-of-file" Error;
    RESERVED_KEYWORD = "E0008" "reserved-keyword" Error;
    ENTITY_NAME_CASE = "E0009" "entity-name-case" Error;
    NAME_CASE = "E0010" "name-case" Error;
    HYPHEN_IN_NAME = "E0011" "hyphen-in-name" Error;
    EXTEND_VARIABLE = "E0012" "extend-on-variable" Error;
    INTERPOLATED_DICT_KEY = "E0013" "interpolated-dict-key" Error;
    DEFAULT_CONSTRUCTOR = "E0014" "default-constructor" Error;
    NAMESPACE_DOT = "E0015" "namespace-access-with-dot" Error;
    DICT_NULL_DEFAULT = "E0016" "dict-null-default" Error;
    CONDITIONAL_PARENTS = "E0017" "conditional-parents" Error;
    POSITIONAL_CONSTRUCTOR_ARGUMENT = "E0018" "positional-constructor-argument" Error;
    NON_STRING_DICT_KEY = "E0019" "non-string-dict-key" Error;
    NESTING_TOO_DEEP = "E0020" "nesting-too-deep" Error;
    TYPEDEF_WITHOUT_SELF = "E0021" "typedef-without-self" Error;
    DUPLICATE_DICT_KEY = "E0022" "duplicate-dict-key" Error;
    DUPLICATE_KEYWORD_ARGUMENT = "E0023" "duplicate-keyword-argument" Error;
    INVALID_LOOKUP = "E0024" "invalid-lookup" Error;
    INVALID_IS_DEFINED = "E0025" "invalid-is-defined" Error;
    INVALID_UTF8 = "E0027" "invalid-utf8" Error;
    DEFINITION_IN_BLOCK = "E0028" "definition-in-block" Error;
    UNKNOWN_ESCAPE = "W0001" "unknown-escape" Warning;
}

/// Looks a code up by its id, case-insensitively (`e0001` finds `E0001`).
pub fn lookup(id: &str) -> Option<&'static Code> {
    ALL.iter().copied().find(|c| c.id.eq_ignore_ascii_case(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_names_are_unique_and_well_formed() {
        let mut ids: Vec<&str> = ALL.iter().map(|c| c.id).collect();
        let mut names: Vec<&str> = ALL.iter().map(|c| c.name).collect();
        ids.sort_unstable();
        names.sort_unstable();
        assert!(ids.windows(2).all(|w| w[0] != w[1]), "duplicate code id");
        assert!(names.windows(2).all(|w| w[0] != w[1]), "duplicate code name");
        for code in ALL {
            let (letter, digits) = code.id.split_at(1);
            assert!(digits.len() == 4 && digits.bytes().all(|b| b.is_ascii_digit()), "{}", code.id);
            let expected = if code.severity == Severity::Error { "E" } else { "W" };
            assert_eq!(letter, expected, "{}: the letter follows the severity", code.id);
        }
    }

    #[test]
    fn every_explanation_has_the_standard_sections() {
        for code in ALL {
            for heading in ["## What it means", "## Example", "## How to fix it"] {
                assert!(code.explanation.contains(heading), "{} lacks `{heading}`", code.id);
            }
        }
    }

    #[test]
    fn lookup_ignores_case() {
        assert_eq!(lookup("e0001").map(|c| c.name), Some("illegal-character"));
        assert!(lookup("E9999").is_none());
    }
}
