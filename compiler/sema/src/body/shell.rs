//! W0202: shell syntax in a command that no shell runs. The exec module's handler (and
//! modelc's) splits an `exec::Run` command into words as a shell would (Python's `shlex.split`)
//! and starts the program directly, so `>`, `<`, `|`, `&&`, `;` and `$(` are handed to it as
//! words: `echo hi > /tmp/x` prints `hi > /tmp/x` and writes nothing, and is reported changed.

use modelc_diagnostics::{Applicability, Diagnostic, codes};

use crate::hir::{Expr, ExprKind};

use crate::check::Checker;

/// The entity whose commands run without a shell, and its attributes that hold commands.
const RUN_ENTITY: &str = "exec::Run";
const COMMAND_ATTRIBUTES: &[&str] = &["command", "reload", "onlyif", "unless"];

impl Checker<'_> {
    /// W0202 for a constant command of an `exec::Run` (or a subtype) that uses shell syntax
    /// outside quotes, with the fix of running it through `sh -c`.
    pub(crate) fn check_shell_syntax(&mut self, entity: &str, attribute: &str, value: &Expr) {
        if !COMMAND_ATTRIBUTES.contains(&attribute)
            || !(entity == RUN_ENTITY || self.index.is_subtype(entity, RUN_ENTITY))
        {
            return;
        }
        let ExprKind::Str(parts) = &value.kind else { return };
        let Some(command) = crate::hir::constant_text(parts) else { return };
        let Some(operator) = shell_operator(&command) else { return };
        let mut d = Diagnostic::new(
            &codes::SHELL_SYNTAX_WITHOUT_SHELL,
            format!("`{operator}` in this command is passed to the program as a word: no shell runs it"),
        )
        .primary(self.file, value.span, format!("`{attribute}` of `{entity}` runs without a shell"))
        .note("exec::Run splits the command into words as a shell would and starts the program itself");
        let wrapped = format!("sh -c {}", single_quoted(&command));
        d = d.help(format!("to use shell syntax, run it through a shell: `{wrapped}`"));
        // A raw string (`r"…"`) can not hold the quotes the fix needs.
        let raw = self.text.get(value.span.range()).is_some_and(|written| written.starts_with('r'));
        if !raw {
            d = d.replace(self.file, value.span, cf_string(&wrapped), Applicability::MachineApplicable);
        }
        self.diagnostics.push(d);
    }
}

/// The first shell operator in `command` outside quotes, as a shell would read it.
pub(crate) fn shell_operator(command: &str) -> Option<&'static str> {
    #[derive(PartialEq)]
    enum Quote {
        None,
        Single,
        Double,
    }
    let mut quote = Quote::None;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match (&quote, c) {
            (Quote::Single, '\'') | (Quote::Double, '"') => quote = Quote::None,
            (Quote::Single, _) => {}
            (Quote::Double, '\\') => {
                chars.next();
            }
            (Quote::Double, _) => {}
            (Quote::None, '\\') => {
                chars.next();
            }
            (Quote::None, '\'') => quote = Quote::Single,
            (Quote::None, '"') => quote = Quote::Double,
            (Quote::None, '>') => return Some(">"),
            (Quote::None, '<') => return Some("<"),
            (Quote::None, '|') => return Some("|"),
            (Quote::None, ';') => return Some(";"),
            (Quote::None, '&') if chars.peek() == Some(&'&') => return Some("&&"),
            (Quote::None, '$') if chars.peek() == Some(&'(') => return Some("$("),
            (Quote::None, _) => {}
        }
    }
    None
}

/// `text` as one shell word in single quotes (a `'` inside becomes `'\''`).
fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// `text` as a `.cf` string literal in double quotes.
fn cf_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operators_outside_quotes_are_found() {
        assert_eq!(shell_operator("echo hi > /tmp/x"), Some(">"));
        assert_eq!(shell_operator("sort < in"), Some("<"));
        assert_eq!(shell_operator("ls | wc -l"), Some("|"));
        assert_eq!(shell_operator("make && make install"), Some("&&"));
        assert_eq!(shell_operator("cd /srv; ls"), Some(";"));
        assert_eq!(shell_operator("echo $(date)"), Some("$("));
    }

    #[test]
    fn quoted_or_escaped_operators_are_words() {
        assert_eq!(shell_operator("sh -c 'echo hi > /tmp/x'"), None);
        assert_eq!(shell_operator("grep \"a|b\" file"), None);
        assert_eq!(shell_operator("echo a\\;b"), None);
        assert_eq!(shell_operator("echo $HOME & wait"), None);
        assert_eq!(shell_operator("test -f /etc/motd"), None);
    }

    #[test]
    fn the_fix_quotes_for_the_shell_and_for_the_model() {
        let wrapped = format!("sh -c {}", single_quoted("echo 'hi' > \"/tmp/x\""));
        assert_eq!(wrapped, r#"sh -c 'echo '\''hi'\'' > "/tmp/x"'"#);
        assert_eq!(cf_string(&wrapped), r#""sh -c 'echo '\\''hi'\\'' > \"/tmp/x\"'""#);
    }
}
