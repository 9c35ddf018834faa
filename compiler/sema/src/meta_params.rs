//! What is wrong with an invalid meta parameter (`std::Meta`, docs/runtime.md), said in the
//! parameter's terms rather than as a broken typedef constraint. Both the checker (constants)
//! and execution (computed values) report a value that breaks one of std's meta typedefs with
//! `E0222` and these words.

/// The explanation of one invalid value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaProblem {
    /// The headline.
    pub message: String,
    /// Under the value.
    pub label: String,
    /// How to fix it.
    pub help: String,
}

/// When `typedef` is one of std's meta parameter types, what is wrong with `value` (shown as
/// text: strings without quotes).
pub fn problem(typedef: &str, value: &str) -> Option<MetaProblem> {
    let (message, label, help) = match typedef {
        "std::meta_count" => (
            format!("invalid meta parameter: {value} is not a retry count"),
            "below -1".to_owned(),
            "`retry` is -1 (retry until it succeeds), 0 (never) or how many times to retry".to_owned(),
        ),
        "std::meta_seconds" => (
            format!("invalid meta parameter: {value} is negative"),
            "a negative number of seconds".to_owned(),
            "`delay`, `backoff_cap`, `timeout`, `poll` and `limit` are 0 or more".to_owned(),
        ),
        "std::meta_burst" => (
            format!("invalid meta parameter: a burst of {value} lets no run through"),
            "at least 1".to_owned(),
            "`burst` is how many runs the bucket lets through at once: 1 or more".to_owned(),
        ),
        "std::meta_backoff" => (
            format!("invalid meta parameter: `{value}` is not a back-off"),
            "not `none` or `exponential`".to_owned(),
            "`backoff` is \"none\" (the same delay every time) or \"exponential\" (doubling up to \
             `backoff_cap`)"
                .to_owned(),
        ),
        "std::semaphore" => semaphore(value),
        _ => return None,
    };
    Some(MetaProblem { message, label, help })
}

fn semaphore(id: &str) -> (String, String, String) {
    let form = "a semaphore is `name` (one holder at a time) or `name:N` (N at a time, N ≥ 1)";
    let (name, size) = match id.rsplit_once(':') {
        Some((name, size)) => (name, Some(size)),
        None => (id, None),
    };
    let name_ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if name_ok && size.is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b == b'0')) {
        return (
            format!("invalid meta parameter: semaphore `{id}` has size 0"),
            "no resource could ever hold it".to_owned(),
            format!("write `{name}` for one holder at a time, or `{name}:N` for N (mgmt silently makes 0 into 1)"),
        );
    }
    if name_ok {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_meta_type_is_explained_and_others_are_not() {
        assert!(problem("std::meta_count", "-2").unwrap().message.contains("retry count"));
        assert!(problem("std::meta_seconds", "-1.0").unwrap().message.contains("negative"));
        assert!(problem("std::meta_burst", "0").unwrap().message.contains("burst of 0"));
        assert!(problem("std::meta_backoff", "linear").unwrap().message.contains("not a back-off"));
        assert!(problem("std::port", "70000").is_none());
    }

    #[test]
    fn semaphores_say_what_is_wrong() {
        assert!(problem("std::semaphore", "disk:0").unwrap().message.contains("size 0"));
        assert!(problem("std::semaphore", "disk:00").unwrap().message.contains("size 0"));
        assert!(problem("std::semaphore", "disk:x").unwrap().message.contains("not a whole number"));
        assert!(problem("std::semaphore", "disk:").unwrap().message.contains("not a whole number"));
        assert!(problem("std::semaphore", "a b").unwrap().message.contains("not a semaphore name"));
        assert!(problem("std::semaphore", ":2").unwrap().message.contains("not a semaphore name"));
    }
}
