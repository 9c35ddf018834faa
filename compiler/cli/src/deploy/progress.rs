//! The live display of a run: a status line on a terminal, a line per finished resource.

use super::*;

/// The live display: on a terminal, a status line rewritten in place; otherwise nothing live.
/// Each finished resource is printed as a line (human format only).
pub(super) struct Progress<'a, 'io> {
    io: RefCell<&'a mut Io<'io>>,
    format: Format,
    total: usize,
    done: RefCell<usize>,
    live: bool,
    /// Colour the results (`--color`, or a terminal without NO_COLOR).
    color: bool,
}

impl<'a, 'io> Progress<'a, 'io> {
    pub(super) fn new(io: &'a mut Io<'io>, format: Format, total: usize, color: bool) -> Progress<'a, 'io> {
        let live = io.stderr_is_terminal && format == Format::Human;
        Progress { io: RefCell::new(io), format, total, done: RefCell::new(0), live, color }
    }

    pub(super) fn header(&self, desired: &Desired, agents: &[String], plan: &Plan, options: &Options) {
        let handled = plan.dispositions.iter().filter(|d| **d != Disposition::NotHandled).count();
        let version = desired.version.map(|v| format!(", version {v}")).unwrap_or_default();
        let mode = if options.dry_run { "dry run: checking" } else { "deploying" };
        let mut io = self.io.borrow_mut();
        let _ = writeln!(
            io.stderr,
            "{mode} {handled} of {} ({}{version}) for {} {} with {}",
            modelc_diagnostics::count(plan.len() as u64, "resource"),
            modelc_diagnostics::terminal::escape(&desired.source.to_string()),
            if agents.len() == 1 { "agent" } else { "agents" },
            modelc_diagnostics::terminal::escape(
                &agents.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ")
            ),
            modelc_diagnostics::count(options.jobs as u64, "job")
        );
    }

    /// A line of its own on stderr (human format only).
    pub(super) fn say(&self, text: &str) {
        if self.format != Format::Human {
            return;
        }
        self.clear();
        let mut io = self.io.borrow_mut();
        let _ = writeln!(io.stderr, "{}", modelc_diagnostics::terminal::escape(text));
    }

    pub(super) fn clear(&self) {
        if self.live {
            let mut io = self.io.borrow_mut();
            let _ = write!(io.stderr, "\r\x1b[K");
        }
    }
}

impl Observer for Progress<'_, '_> {
    fn started(&self, resource: &Resource) {
        if self.live {
            let done = *self.done.borrow();
            let mut io = self.io.borrow_mut();
            let id = modelc_diagnostics::terminal::escape(resource.id.as_str());
            let _ = write!(io.stderr, "\r\x1b[K[{done}/{}] {id}", self.total);
            let _ = io.stderr.flush();
        }
    }

    fn finished(&self, _resource: &Resource, report: &ResourceReport) {
        *self.done.borrow_mut() += 1;
        if self.format != Format::Human || report.result == Outcome::NotHandled {
            return;
        }
        let mut io = self.io.borrow_mut();
        if self.live {
            let _ = write!(io.stderr, "\r\x1b[K");
        }
        let _ = write!(io.stdout, "{}", describe(report, self.color));
    }

    fn notified(&self, report: &NotificationReport) {
        if self.format != Format::Human {
            return;
        }
        let mut io = self.io.borrow_mut();
        if self.live {
            let _ = write!(io.stderr, "\r\x1b[K");
        }
        let verb = match report.result {
            Outcome::WouldChange => "would refresh",
            Outcome::Failed => "refresh failed",
            _ => "refreshed",
        };
        let verb = paint(&format!("{verb:<13}"), outcome_colour(report.result), self.color);
        let _ = writeln!(
            io.stdout,
            "{verb} {} ({} notification from {})",
            escape(&report.receiver),
            report.timing.as_str(),
            escape(&report.senders.join(", "))
        );
        if let Some(error) = &report.error {
            let _ = writeln!(io.stdout, "              {}", escape(error));
        }
    }
}

/// The ANSI colour of an outcome: problems red, changes yellow, the rest green or dim.
fn outcome_colour(outcome: Outcome) -> &'static str {
    match outcome {
        _ if outcome.is_problem() => "1;31",
        Outcome::Changed | Outcome::WouldChange => "33",
        Outcome::Unchanged | Outcome::Guarded => "32",
        _ => "2",
    }
}

/// `text` in ANSI colour `code` when `color`.
fn paint(text: &str, code: &str, color: bool) -> String {
    if color { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_owned() }
}

/// A line of a unified diff, escaped and coloured as `git diff` colours it.
fn diff_line(line: &str, color: bool) -> String {
    let code = match line.as_bytes().first() {
        _ if line.starts_with("+++") || line.starts_with("---") => "1",
        Some(b'+') => "32",
        Some(b'-') => "31",
        Some(b'@') => "36",
        _ => return escape(line).into_owned(),
    };
    paint(&escape(line), code, color)
}

/// What the model and the machine put in a line, made safe for a terminal. Deploy's results
/// are escaped here, piece by piece, rather than by the escaping writer other commands print
/// through, so that the colours around them reach the terminal.
fn escape(text: &str) -> std::borrow::Cow<'_, str> {
    modelc_diagnostics::terminal::escape(text)
}

/// A finished resource as a few lines: result, id, why, and what changed.
pub(super) fn describe(report: &ResourceReport, color: bool) -> String {
    let result = paint(&format!("{:<13}", report.result.as_str()), outcome_colour(report.result), color);
    let mut text = format!("{result} {}", escape(&report.id));
    if report.refreshed {
        text.push_str(" (refreshed)");
    }
    if let Some(leader) = report.group.as_ref().filter(|leader| **leader != report.id) {
        text.push_str(&format!(" (applied with {})", escape(leader)));
    }
    text.push('\n');
    if let Some(error) = &report.error {
        text.push_str(&format!("              {} ({})\n", escape(error), escape(&report.source)));
    }
    let applied = report.result == Outcome::Changed;
    for change in &report.changes {
        text.push_str(&format!("              {}\n", escape(&change.summary(applied))));
        if let Some(diff) = &change.diff {
            for line in diff.lines() {
                text.push_str(&format!("                {}\n", diff_line(line, color)));
            }
        }
    }
    text
}
