//! Execution diagnostics: what only running the model finds (a relation left empty, an index
//! conflict, a plugin that fails). They come after a short pause in typing, from a worker
//! thread with its own handle on the database, and the next edit cancels them. The worker
//! first checks the files of the project no open document is (execution runs only when the
//! whole project is free of errors), then lowers and runs it; it polls a flag between files
//! and every few hundred execution steps, stops when it is set, and its results are dropped.
//! Under the server, execution writes nothing (generated passwords are placeholders, nothing
//! is stored).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crossbeam_channel::{Receiver, Sender};
use modelc_db::ProjectInput;
use modelc_diagnostics::Diagnostic;
use modelc_driver::RootDatabase;

/// How long typing must pause before the model is executed.
pub(crate) const PAUSE: Duration = Duration::from_millis(300);

/// A finished run: its diagnostics, for the text of generation `generation`.
pub(crate) struct Finished {
    generation: u64,
    diagnostics: Vec<Diagnostic>,
}

pub(crate) struct Execution {
    running: Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>,
    sender: Sender<Finished>,
    pub(crate) receiver: Receiver<Finished>,
    /// Counts changes: results of an earlier generation are stale.
    generation: u64,
    /// When to start the next run (the end of the pause), if one is wanted.
    pub(crate) due: Option<Instant>,
    /// The text changed since the last run was started.
    stale: bool,
    /// The diagnostics of the last run that finished for the current text.
    pub(crate) diagnostics: Vec<Diagnostic>,
}

impl Execution {
    pub(crate) fn new() -> Execution {
        let (sender, receiver) = crossbeam_channel::unbounded();
        Execution { running: None, sender, receiver, generation: 0, due: None, stale: true, diagnostics: Vec::new() }
    }

    /// The model is about to change: a run in progress stops (before the database may be
    /// written, which waits for every other handle on it), and what runs found is forgotten.
    pub(crate) fn invalidate(&mut self) {
        if let Some((flag, handle)) = self.running.take() {
            flag.store(true, Ordering::Relaxed);
            let _ = handle.join();
        }
        self.generation += 1;
        self.diagnostics.clear();
        self.due = None;
        self.stale = true;
    }

    /// The open documents have no errors: run the model after the pause, if the text changed
    /// since the last run.
    pub(crate) fn schedule(&mut self) {
        if self.stale && self.running.is_none() {
            self.due = Some(Instant::now() + PAUSE);
        }
    }

    /// Starts running the projects on a worker thread.
    pub(crate) fn start(&mut self, db: RootDatabase, projects: Vec<ProjectInput>, files: modelc_exec::ModuleFiles) {
        self.due = None;
        self.stale = false;
        let flag = Arc::new(AtomicBool::new(false));
        let (cancel, sender, generation) = (Arc::clone(&flag), self.sender.clone(), self.generation);
        let handle = std::thread::spawn(move || {
            let mut diagnostics = Vec::new();
            for project in projects {
                match whole_project_clean(&db, project, &cancel) {
                    None => return,
                    Some(false) => continue,
                    Some(true) => {}
                }
                let world = world(files.clone(), Arc::clone(&cancel));
                let outcome = modelc_driver::execute(&db, project, world);
                if outcome.cancelled {
                    return;
                }
                diagnostics.extend(outcome.diagnostics);
            }
            // The database handle goes before the results, so a write after them never waits.
            drop(db);
            let _ = sender.send(Finished { generation, diagnostics });
        });
        self.running = Some((flag, handle));
    }

    /// A run finished: whether its results are for the current text (and now shown).
    pub(crate) fn finished(&mut self, finished: Finished) -> bool {
        if finished.generation != self.generation {
            return false;
        }
        if let Some((_, handle)) = self.running.take() {
            let _ = handle.join();
        }
        self.diagnostics = finished.diagnostics;
        true
    }
}

/// Whether every loaded file of `project` is free of errors (only such a model is run), or
/// `None` when the run was cancelled first. Each file's check is the one the server publishes
/// (kept by the database), so the open documents' are not done again.
fn whole_project_clean(db: &RootDatabase, project: ProjectInput, cancel: &AtomicBool) -> Option<bool> {
    for file in modelc_sema::loaded_modules(db, project).files.values() {
        if cancel.load(Ordering::Relaxed) {
            return None;
        }
        if modelc_sema::checked_file(db, project, *file).iter().any(Diagnostic::is_error) {
            return Some(false);
        }
    }
    Some(true)
}

/// What a model run by the server may read: the environment and the clock, as `modelc compile`;
/// passwords `std::generate_password` would generate are placeholders and kept nowhere; modules'
/// Python plugins are not run (their values are unknown).
fn world(module_files: modelc_exec::ModuleFiles, cancel: Arc<AtomicBool>) -> modelc_exec::World {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0));
    modelc_exec::World {
        env: std::env::vars().collect(),
        now,
        module_files,
        cancel: Some(cancel),
        foreign: Some(Arc::new(modelc_exec::NotRun)),
        ..modelc_exec::World::default()
    }
}
