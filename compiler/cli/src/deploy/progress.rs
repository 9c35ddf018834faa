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
}

impl<'a, 'io> Progress<'a, 'io> {
    pub(super) fn new(io: &'a mut Io<'io>, format: Format, total: usize) -> Progress<'a, 'io> {
        let live = io.stderr_is_terminal && format == Format::Human;
        Progress { io: RefCell::new(io), format, total, done: RefCell::new(0), live }
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
        let _ = write!(io.stdout, "{}", describe(report));
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
        let _ = writeln!(
            io.stdout,
            "{verb:<13} {} ({} notification from {})",
            report.receiver,
            report.timing.as_str(),
            report.senders.join(", ")
        );
        if let Some(error) = &report.error {
            let _ = writeln!(io.stdout, "              {error}");
        }
    }
}

/// A finished resource as a few lines: result, id, why, and what changed.
pub(super) fn describe(report: &ResourceReport) -> String {
    let mut text = format!("{:<13} {}", report.result.as_str(), report.id);
    if report.refreshed {
        text.push_str(" (refreshed)");
    }
    if let Some(leader) = report.group.as_ref().filter(|leader| **leader != report.id) {
        text.push_str(&format!(" (applied with {leader})"));
    }
    text.push('\n');
    if let Some(error) = &report.error {
        text.push_str(&format!("              {error} ({})\n", report.source));
    }
    for change in &report.changes {
        let show = |v: &serde_json::Value| match v {
            serde_json::Value::Null => "(none)".to_owned(),
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        text.push_str(&format!("              {}: {} → {}\n", change.field, show(&change.old), show(&change.new)));
        if let Some(diff) = &change.diff {
            for line in diff.lines() {
                text.push_str(&format!("                {line}\n"));
            }
        }
    }
    text
}
