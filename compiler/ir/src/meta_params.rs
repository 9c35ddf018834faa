//! The one home of the meta parameters' rules (docs/runtime.md): each parameter's name, the
//! kind of value it takes and the rule that value keeps, its default, and the words said of a
//! value that breaks the rule. Everything that reads meta parameters goes through this table:
//! the checker and execution word E0222 with [`Kind::explain`], refine builds the IR's [`Meta`]
//! with [`meta_of`], and the YAML graph front end checks and builds with the same function.
//!
//! std's `Meta` entity (`stdlib/model/_init.cf`) declares the same parameters for the model, its
//! typedefs' `matching` clauses spelling these rules in the model's language; the test
//! `tests/tests/meta_params.rs`, generated from [`PARAMS`], proves the two agree value by value
//! and default by default.

use crate::meta::{Backoff, Meta};

/// The kind of value a meta parameter takes, with its rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `true` or `false`.
    Flag,
    /// A number of retries: -1 (no limit) or more (`std::meta_count`).
    Count,
    /// Seconds: a finite float, 0 or more (`std::meta_seconds`; a whole number is of another
    /// type, as for any float attribute of the model).
    Seconds,
    /// Runs let through at once: 1 or more (`std::meta_burst`).
    Burst,
    /// `none` or `exponential` (`std::meta_backoff`).
    Backoff,
    /// A list of counting semaphores, `name` or `name:N` (`std::semaphore[]`).
    Semaphores,
    /// A command or a path.
    Text,
}

/// A value a rule is asked about, whoever read it (the model's values, JSON from a YAML graph).
#[derive(Debug, Clone, PartialEq)]
pub enum Given<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a str),
    List(Vec<Given<'a>>),
    /// A map, which no parameter takes.
    Map,
}

/// The default of a parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DefaultValue {
    /// `null`: not set.
    Unset,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'static str),
    /// `[]`.
    Empty,
}

/// One meta parameter.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub name: &'static str,
    pub kind: Kind,
    /// May be `null` (not set).
    pub nullable: bool,
    pub default: DefaultValue,
}

const fn param(name: &'static str, kind: Kind, default: DefaultValue) -> Param {
    Param { name, kind, nullable: matches!(default, DefaultValue::Unset), default }
}

/// Every meta parameter, in the order `std::Meta` declares them.
pub const PARAMS: &[Param] = &[
    param("noop", Kind::Flag, DefaultValue::Bool(false)),
    param("retry", Kind::Count, DefaultValue::Int(0)),
    param("retry_reset", Kind::Flag, DefaultValue::Bool(false)),
    param("delay", Kind::Seconds, DefaultValue::Float(0.0)),
    param("backoff", Kind::Backoff, DefaultValue::Str("none")),
    param("backoff_cap", Kind::Seconds, DefaultValue::Float(60.0)),
    param("jitter", Kind::Flag, DefaultValue::Bool(false)),
    param("timeout", Kind::Seconds, DefaultValue::Unset),
    param("poll", Kind::Seconds, DefaultValue::Unset),
    param("limit", Kind::Seconds, DefaultValue::Unset),
    param("burst", Kind::Burst, DefaultValue::Int(1)),
    param("sema", Kind::Semaphores, DefaultValue::Empty),
    param("autoedge", Kind::Flag, DefaultValue::Bool(true)),
    param("autogroup", Kind::Flag, DefaultValue::Bool(true)),
    param("only_if", Kind::Text, DefaultValue::Unset),
    param("not_if", Kind::Text, DefaultValue::Unset),
    param("creates", Kind::Text, DefaultValue::Unset),
];

/// What is wrong with a value, in the parameter's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The headline.
    pub message: String,
    /// Under the value.
    pub label: String,
    /// How to fix it.
    pub help: String,
}

impl Kind {
    /// The type std declares the parameter with (of each element, for a list).
    pub fn typedef(self) -> &'static str {
        match self {
            Kind::Flag => "bool",
            Kind::Count => "std::meta_count",
            Kind::Seconds => "std::meta_seconds",
            Kind::Burst => "std::meta_burst",
            Kind::Backoff => "std::meta_backoff",
            Kind::Semaphores => "std::semaphore",
            Kind::Text => "string",
        }
    }

    /// The kind whose rule std's typedef `typedef` spells, for the ones with a rule of their own.
    pub fn of_typedef(typedef: &str) -> Option<Kind> {
        [Kind::Count, Kind::Seconds, Kind::Burst, Kind::Backoff, Kind::Semaphores]
            .into_iter()
            .find(|kind| kind.typedef() == typedef)
    }

    /// Whether one value (one element, for a list) keeps the rule; `None` for a value of the
    /// wrong type, which is a type error rather than a broken rule.
    pub fn keeps(self, value: &Given<'_>) -> Option<bool> {
        match (self, value) {
            (Kind::Flag, Given::Bool(_)) | (Kind::Text, Given::Str(_)) => Some(true),
            (Kind::Count, Given::Int(n)) => Some(*n >= -1),
            // A whole number is not one, as a float attribute of the model takes none.
            (Kind::Seconds, Given::Float(f)) => Some(f.is_finite() && *f >= 0.0),
            (Kind::Burst, Given::Int(n)) => Some(*n >= 1),
            (Kind::Backoff, Given::Str(s)) => Some(matches!(*s, "none" | "exponential")),
            (Kind::Semaphores, Given::Str(s)) => Some(crate::meta::parse_semaphore(s).is_some()),
            _ => None,
        }
    }

    /// What to say of `value` (as text: strings without quotes), which breaks this kind's rule.
    pub fn explain(self, value: &str) -> Problem {
        let (message, label, help) = match self {
            Kind::Count => (
                format!("invalid meta parameter: {value} is not a retry count"),
                "below -1".to_owned(),
                "`retry` is -1 (retry until it succeeds), 0 (never) or how many times to retry".to_owned(),
            ),
            Kind::Seconds if value.parse::<f64>().is_ok_and(f64::is_finite) => (
                format!("invalid meta parameter: {value} is negative"),
                "a negative number of seconds".to_owned(),
                "`delay`, `backoff_cap`, `timeout`, `poll` and `limit` are 0 or more".to_owned(),
            ),
            Kind::Seconds => (
                format!("invalid meta parameter: {value} is not a finite number of seconds"),
                "not finite".to_owned(),
                "`delay`, `backoff_cap`, `timeout`, `poll` and `limit` are 0 or more, and finite".to_owned(),
            ),
            Kind::Burst => (
                format!("invalid meta parameter: a burst of {value} lets no run through"),
                "at least 1".to_owned(),
                "`burst` is how many runs the bucket lets through at once: 1 or more".to_owned(),
            ),
            Kind::Backoff => (
                format!("invalid meta parameter: `{value}` is not a back-off"),
                "not `none` or `exponential`".to_owned(),
                "`backoff` is \"none\" (the same delay every time) or \"exponential\" (doubling up to \
                 `backoff_cap`)"
                    .to_owned(),
            ),
            Kind::Semaphores => semaphore(value),
            Kind::Flag | Kind::Text => (
                format!("invalid meta parameter: {value}"),
                "not a value of this parameter".to_owned(),
                format!("a {} is expected", self.typedef()),
            ),
        };
        Problem { message, label, help }
    }

    /// What a value of this kind is called, for a value of the wrong type.
    fn expected(self) -> &'static str {
        match self {
            Kind::Flag => "true or false",
            Kind::Count | Kind::Burst => "a whole number",
            Kind::Seconds => "a number of seconds with a decimal point (`3.0`)",
            Kind::Backoff | Kind::Text => "a string",
            Kind::Semaphores => "a list of semaphores",
        }
    }
}

fn semaphore(id: &str) -> (String, String, String) {
    let form = "a semaphore is `name` (one holder at a time) or `name:N` (N at a time, N ≥ 1)";
    let (name, size) = match id.rsplit_once(':') {
        Some((name, size)) => (name, Some(size)),
        None => (id, None),
    };
    if crate::meta::semaphore_name(name) && size.is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b == b'0')) {
        return (
            format!("invalid meta parameter: semaphore `{id}` has size 0"),
            "no resource could ever hold it".to_owned(),
            format!("write `{name}` for one holder at a time, or `{name}:N` for N (mgmt silently makes 0 into 1)"),
        );
    }
    if crate::meta::semaphore_name(name)
        && size.is_some_and(|s| s.starts_with('0') && s.bytes().all(|b| b.is_ascii_digit()))
    {
        let size = size.unwrap_or_default().trim_start_matches('0');
        return (
            format!("invalid meta parameter: the size of semaphore `{id}` has a leading 0"),
            "a size is written without one".to_owned(),
            format!("write `{name}:{size}`"),
        );
    }
    if crate::meta::semaphore_name(name) {
        return (
            format!("invalid meta parameter: the size of semaphore `{id}` is not a whole number"),
            "not a size".to_owned(),
            form.to_owned(),
        );
    }
    (
        format!("invalid meta parameter: `{id}` is not a semaphore name"),
        "names are letters, digits, `_`, `.` and `-`".to_owned(),
        form.to_owned(),
    )
}

/// A value shown as the compiler shows it in a message: strings without quotes.
fn shown(value: &Given<'_>) -> String {
    match value {
        Given::Null => "null".to_owned(),
        Given::Bool(b) => b.to_string(),
        Given::Int(n) => n.to_string(),
        Given::Float(f) => format!("{f:?}"),
        Given::Str(s) => (*s).to_owned(),
        Given::List(items) => format!("[{}]", items.iter().map(shown).collect::<Vec<_>>().join(", ")),
        Given::Map => "a map".to_owned(),
    }
}

/// The [`Meta`] of the parameters `get` gives (by name; `None`: not given, so the default),
/// each checked against its rule; or what is wrong with each that breaks one, by parameter.
pub fn meta_of<'a>(get: impl Fn(&str) -> Option<Given<'a>>) -> Result<Meta, Vec<(&'static str, Problem)>> {
    let mut problems = Vec::new();
    let mut values: Vec<Given<'a>> = Vec::with_capacity(PARAMS.len());
    for param in PARAMS {
        let value = get(param.name).unwrap_or_else(|| default_value(param.default));
        if let Err(problem) = check(param, &value) {
            problems.push((param.name, problem));
            values.push(default_value(param.default));
        } else {
            values.push(value);
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(assemble(&values))
}

/// The parameters' defaults, as [`Meta::default`] gives them.
pub(crate) fn defaults() -> Meta {
    let values: Vec<Given<'static>> = PARAMS.iter().map(|p| default_value(p.default)).collect();
    assemble(&values)
}

/// The [`Meta`] of checked values, one per [`PARAMS`] entry, in its order.
fn assemble(values: &[Given<'_>]) -> Meta {
    let at = |name: &str| &values[PARAMS.iter().position(|p| p.name == name).unwrap_or_default()];
    let flag = |name: &str| matches!(at(name), Given::Bool(true));
    let int = |name: &str| match at(name) {
        Given::Int(n) => *n,
        _ => 0,
    };
    let seconds = |name: &str| match at(name) {
        Given::Int(n) => Some(*n as f64),
        Given::Float(f) => Some(*f),
        _ => None,
    };
    let text = |name: &str| match at(name) {
        Given::Str(s) => Some((*s).to_owned()),
        _ => None,
    };
    let backoff = match at("backoff") {
        Given::Str("exponential") => {
            Backoff::Exponential { cap: seconds("backoff_cap").unwrap_or_default(), jitter: flag("jitter") }
        }
        _ => Backoff::None,
    };
    let sema = match at("sema") {
        Given::List(items) => items.iter().map(shown).collect(),
        _ => Vec::new(),
    };
    Meta {
        noop: flag("noop"),
        retry: int("retry"),
        retry_reset: flag("retry_reset"),
        delay: seconds("delay").unwrap_or_default(),
        backoff,
        timeout: seconds("timeout"),
        poll: seconds("poll"),
        limit: seconds("limit"),
        burst: u32::try_from(int("burst")).unwrap_or(u32::MAX),
        sema,
        autoedge: flag("autoedge"),
        autogroup: flag("autogroup"),
        only_if: text("only_if"),
        not_if: text("not_if"),
        creates: text("creates"),
    }
}

fn default_value(default: DefaultValue) -> Given<'static> {
    match default {
        DefaultValue::Unset => Given::Null,
        DefaultValue::Bool(b) => Given::Bool(b),
        DefaultValue::Int(n) => Given::Int(n),
        DefaultValue::Float(f) => Given::Float(f),
        DefaultValue::Str(s) => Given::Str(s),
        DefaultValue::Empty => Given::List(Vec::new()),
    }
}

/// Whether `value` is one `param` takes: of its type, and keeping its rule.
fn check(param: &Param, value: &Given<'_>) -> Result<(), Problem> {
    let wrong_type = || Problem {
        message: format!("invalid meta parameter: `{}` is {}, not {}", param.name, shown(value), param.kind.expected()),
        label: "not of the parameter's type".to_owned(),
        help: format!("`{}` is {}", param.name, param.kind.expected()),
    };
    let one = |item: &Given<'_>| match param.kind.keeps(item) {
        Some(true) => Ok(()),
        Some(false) => Err(param.kind.explain(&shown(item))),
        None => Err(wrong_type()),
    };
    match (value, param.kind) {
        (Given::Null, _) if param.nullable => Ok(()),
        (Given::List(items), Kind::Semaphores) => items.iter().try_for_each(one),
        (_, Kind::Semaphores) => Err(wrong_type()),
        (item, _) => one(item),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_keep_the_rules() {
        assert_eq!(meta_of(|_| None).unwrap(), Meta::default());
        assert_eq!(Meta::default().backoff, Backoff::None);
        assert_eq!((Meta::default().retry, Meta::default().burst, Meta::default().autoedge), (0, 1, true));
    }

    #[test]
    fn each_rule_refuses_in_its_own_words() {
        let refused = |name: &str, value: Given<'static>| {
            let problems = meta_of(|n| (n == name).then(|| value.clone())).unwrap_err();
            assert_eq!(problems.len(), 1);
            problems[0].1.message.clone()
        };
        assert!(refused("retry", Given::Int(-2)).contains("not a retry count"));
        assert!(refused("delay", Given::Float(-1.0)).contains("-1.0 is negative"));
        assert!(refused("timeout", Given::Float(f64::INFINITY)).contains("not a finite number of seconds"));
        assert!(refused("burst", Given::Int(0)).contains("burst of 0"));
        assert!(refused("backoff", Given::Str("linear")).contains("not a back-off"));
        assert!(refused("sema", Given::List(vec![Given::Str("disk:0")])).contains("size 0"));
        assert!(refused("sema", Given::List(vec![Given::Str("disk:01")])).contains("has a leading 0"));
        assert!(refused("sema", Given::List(vec![Given::Str("disk:+3")])).contains("not a whole number"));
        assert!(refused("sema", Given::List(vec![Given::Str("a b")])).contains("not a semaphore name"));
        assert!(refused("retry", Given::Str("3")).contains("not a whole number"));
        assert!(refused("noop", Given::Null).contains("not true or false"));
    }

    #[test]
    fn typedefs_name_their_kinds() {
        assert_eq!(Kind::of_typedef("std::meta_count"), Some(Kind::Count));
        assert_eq!(Kind::of_typedef("std::semaphore"), Some(Kind::Semaphores));
        assert_eq!(Kind::of_typedef("std::port"), None);
    }
}
