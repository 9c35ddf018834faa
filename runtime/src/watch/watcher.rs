//! File-system events for continuous mode, through the `notify` crate (inotify on Linux): one
//! non-recursive watch per directory that holds a watched resource or the store, kept in step
//! with the current version and with the directories that exist (checked after each step, so a
//! directory a step creates is watched from then on), so a long run holds no more watches than
//! the version needs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crossbeam_channel::Sender;
use modelc_ir::Resource;
use notify::{RecursiveMode, Watcher as _};

/// The path a resource manages, when file-system events can tell that it drifted: the `path` of
/// `fs::File`, `fs::Directory` and `fs::Symlink` on this machine. Other kinds, and resources on
/// other machines (a context other than `mitogen::Local`), are polled or checked once.
pub fn watched_path(resource: &Resource) -> Option<PathBuf> {
    if !matches!(crate::remote::Target::of(resource), Ok(crate::remote::Target::Local)) {
        return None;
    }
    // A symlink's own path is its `dst` (what it points at is `src`).
    let field = match resource.entity_type.as_str() {
        "fs::File" | "fs::Directory" => "path",
        "fs::Symlink" => "dst",
        _ => return None,
    };
    let path = PathBuf::from(resource.attributes.get(field)?.as_str()?);
    path.is_absolute().then_some(path)
}

/// Directories watched, each event sent as the path it is about.
pub struct Watcher {
    inner: notify::RecommendedWatcher,
    watching: BTreeSet<PathBuf>,
}

impl Watcher {
    /// A watcher that sends the path of every event on `events`.
    pub fn new(events: Sender<PathBuf>) -> Result<Watcher, String> {
        let inner = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let Ok(event) = event else { return };
            // Reading a file is no drift, and the runtime reads what it checks: only a write
            // finished counts among the access events.
            if let notify::EventKind::Access(access) = event.kind
                && access != notify::event::AccessKind::Close(notify::event::AccessMode::Write)
            {
                return;
            }
            for path in event.paths {
                let _ = events.send(path);
            }
        })
        .map_err(|e| format!("cannot watch the file system: {e}"))?;
        Ok(Watcher { inner, watching: BTreeSet::new() })
    }

    /// Watches exactly `directories` (those that exist): adds the new ones, drops the others,
    /// and forgets those that are gone (the kernel dropped their watch), so a directory made or
    /// made again later is watched once this is called again.
    pub fn watch_exactly(&mut self, directories: &BTreeSet<PathBuf>) {
        let stale: Vec<PathBuf> =
            self.watching.iter().filter(|d| !directories.contains(*d) || !d.is_dir()).cloned().collect();
        for dir in stale {
            let _ = self.inner.unwatch(&dir);
            self.watching.remove(&dir);
        }
        for dir in directories {
            if !self.watching.contains(dir)
                && dir.is_dir()
                && self.inner.watch(dir, RecursiveMode::NonRecursive).is_ok()
            {
                self.watching.insert(dir.clone());
            }
        }
    }

    /// Whether `dir` is watched.
    pub fn is_watching(&self, dir: &Path) -> bool {
        self.watching.contains(dir)
    }

    /// How many directories are watched.
    pub fn count(&self) -> usize {
        self.watching.len()
    }
}
