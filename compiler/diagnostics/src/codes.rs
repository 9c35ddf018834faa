//! The registry of diagnostic codes. Every code is declared here exactly once, with its
//! default severity and the explanation `modelc explain` prints (`explanations/<ID>.md`).
//!
//! Codes are stable: a code is never renumbered or reused for another problem, even after the
//! problem it names stops being reported. Every code is produced by at least one test input
//! (`tests/tests/codes.rs`). E0026 and W0002 were drafted and withdrawn before any release;
//! they stay unused. E0401 (a resource type without identity) became the warning W0403 when
//! the reference was found to accept such models. Ranges: `E00xx` syntax, `E01xx` names and modules,
//! `E02xx` types, `E03xx` execution, `E04xx` resources, `E05xx` the store and export; `W0xxx` mirror them.

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

impl Code {
    /// A syntax diagnostic (`E00xx`, `W00xx`): found in one file before anything is resolved.
    pub fn is_syntax(&self) -> bool {
        self.id.get(1..3) == Some("00")
    }
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
    UNCLOSED_BLOCK = "E0029" "unclosed-block" Error;
    BINARY_FILE = "E0030" "binary-file" Error;
    TOO_MANY_SYNTAX_ERRORS = "E0031" "too-many-syntax-errors" Error;
    UNKNOWN_ESCAPE = "W0001" "unknown-escape" Warning;
    INTERPOLATION_NOT_A_NAME = "W0003" "interpolation-not-a-name" Warning;
    UNKNOWN_MODULE = "E0101" "unknown-module" Error;
    DUPLICATE_IMPORT = "E0102" "duplicate-import" Error;
    UNKNOWN_TYPE = "E0103" "unknown-type" Error;
    MISSING_IMPORT = "E0104" "missing-import" Error;
    UNKNOWN_NAMESPACE = "E0105" "unknown-namespace" Error;
    UNDEFINED_VARIABLE = "E0106" "undefined-variable" Error;
    DUPLICATE_DEFINITION = "E0107" "duplicate-definition" Error;
    AMBIGUOUS_TYPE = "E0108" "ambiguous-type" Error;
    UNAVAILABLE_PLUGIN = "E0109" "unavailable-plugin" Error;
    ASSIGN_TO_QUALIFIED_NAME = "E0110" "assign-to-qualified-name" Error;
    NOT_CALLABLE = "E0111" "not-callable" Error;
    IMPORT_CYCLE = "W0101" "import-cycle" Warning;
    BUILTIN_TYPE_SHADOWED = "W0102" "builtin-type-shadowed" Warning;
    DEPRECATED = "W0103" "deprecated" Warning;
    VARIABLE_SHADOWED = "W0104" "variable-shadowed" Warning;
    PLUGIN_WARNING = "W0105" "plugin-warning" Warning;
    PROJECT_SETTING = "W0106" "project-setting" Warning;
    UNREADABLE_PYTHON = "W0107" "unreadable-python" Warning;
    SHADOWED_MODULE = "W0108" "shadowed-module" Warning;
    DUPLICATE_ATTRIBUTE = "E0201" "duplicate-attribute" Error;
    INCOMPATIBLE_ATTRIBUTE = "E0202" "incompatible-attribute" Error;
    INHERITANCE_CYCLE = "E0203" "inheritance-cycle" Error;
    DUPLICATE_PARENT = "E0204" "duplicate-parent" Error;
    INVALID_DEFAULT = "E0205" "invalid-default" Error;
    INVALID_INDEX = "E0206" "invalid-index" Error;
    UNKNOWN_ATTRIBUTE = "E0207" "unknown-attribute" Error;
    IMPLEMENTATION_TYPE_MISMATCH = "E0208" "implementation-type-mismatch" Error;
    MISSING_INDEX_ATTRIBUTE = "E0209" "missing-index-attribute" Error;
    TYPE_MISMATCH = "E0210" "type-mismatch" Error;
    INVALID_OPERAND = "E0211" "invalid-operand" Error;
    NOT_ITERABLE = "E0212" "not-iterable" Error;
    NON_BOOLEAN_CONDITION = "E0213" "non-boolean-condition" Error;
    INVALID_ARGUMENTS = "E0214" "invalid-arguments" Error;
    INVALID_DICT_LOOKUP = "E0215" "invalid-dict-lookup" Error;
    NO_MATCHING_INDEX = "E0216" "no-matching-index" Error;
    EXTEND_SINGLE_VALUED = "E0217" "extend-single-valued" Error;
    CONSTRAINT_VIOLATION = "E0218" "constraint-violation" Error;
    WRONG_KIND_OF_NAME = "E0219" "wrong-kind-of-name" Error;
    INVALID_RESOURCE_DECLARATION = "E0220" "invalid-resource-declaration" Error;
    DUPLICATE_RESOURCE_DECLARATION = "E0221" "duplicate-resource-declaration" Error;
    INVALID_META_PARAMETER = "E0222" "invalid-meta-parameter" Error;
    IMPOSSIBLE_MULTIPLICITY = "W0201" "impossible-multiplicity" Warning;
    SHELL_SYNTAX_WITHOUT_SHELL = "W0202" "shell-syntax-without-shell" Warning;
    ATTRIBUTE_OF_SOME_SUBTYPES = "W0203" "attribute-of-some-subtypes" Warning;
    DOUBLE_SET = "E0301" "double-set" Error;
    UNSET_ATTRIBUTE = "E0302" "unset-attribute" Error;
    NO_IMPLEMENTATION = "E0303" "no-implementation" Error;
    MODIFIED_AFTER_FREEZE = "E0304" "modified-after-freeze" Error;
    RELATION_ARITY_EXCEEDED = "E0305" "relation-arity-exceeded" Error;
    UNMATCHED_INDEX_LOOKUP = "E0306" "unmatched-index-lookup" Error;
    INDEX_CONFLICT = "E0307" "index-conflict" Error;
    MISSING_OPTIONAL_VALUE = "E0308" "missing-optional-value" Error;
    PLUGIN_FAILED = "E0309" "plugin-failed" Error;
    MISSING_DICT_KEY = "E0310" "missing-dict-key" Error;
    INCOMPLETE_EXECUTION = "E0311" "incomplete-execution" Error;
    PYTHON_FAILED = "E0312" "python-failed" Error;
    DUPLICATE_RESOURCE_ID = "E0402" "duplicate-resource-id" Error;
    INVALID_RESOURCE_VALUE = "E0403" "invalid-resource-value" Error;
    RESOURCE_IN_TWO_SETS = "E0404" "resource-in-two-sets" Error;
    CROSS_SET_DEPENDENCY = "E0405" "cross-set-dependency" Error;
    DEPENDENCY_CYCLE = "E0406" "dependency-cycle" Error;
    SET_MEMBER_NOT_OWNED = "E0407" "set-member-not-owned" Error;
    CONTENT_IN_PURGED_DIRECTORY = "E0408" "content-in-purged-directory" Error;
    UNUSABLE_RESOURCE_CLASS = "E0409" "unusable-resource-class" Error;
    RESOURCE_MAPPER_FAILED = "E0410" "resource-mapper-failed" Error;
    DEPENDENCY_MANAGER_FAILED = "E0411" "dependency-manager-failed" Error;
    NO_BASE_VERSION = "E0501" "no-base-version" Error;
    SET_EXPORTED_AND_DELETED = "E0502" "set-exported-and-deleted" Error;
    RESOURCE_MOVED = "E0503" "resource-moved" Error;
    SHARED_RESOURCE_CHANGED = "E0504" "shared-resource-changed" Error;
    CROSS_SET_DEPENDENCY_IN_STORE = "E0505" "cross-set-dependency-in-store" Error;
    DANGLING_DEPENDENCY = "E0506" "dangling-dependency" Error;
    STORE_UNAVAILABLE = "E0507" "store-unavailable" Error;
    DUPLICATE_RESOURCE_IN_EXPORT = "E0508" "duplicate-resource-in-export" Error;
    SET_MEMBERSHIP_MISMATCH = "E0509" "set-membership-mismatch" Error;
    UNKNOWN_RESOURCE_SET = "E0510" "unknown-resource-set" Error;
    REQUIREMENTS_LOST = "W0401" "requirements-lost" Warning;
    SET_MEMBER_NOT_EXPORTED = "W0402" "set-member-not-exported" Warning;
    RESOURCE_WITHOUT_IDENTITY = "W0403" "resource-without-identity" Warning;
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
