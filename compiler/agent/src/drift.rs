//! Drift of the files an agent manages: file-system events on their directories, and what a
//! file looked like when its resource settled, so that a change made before the watch is in
//! place is drift too.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_channel::{Receiver, Sender, unbounded};

use crate::poller::Wake;
use crate::state::Desired;

/// What a managed path looked like: for a directory, what its resource manages (its entries
/// change as files are written in it); for anything else, its change time too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fingerprint {
    inode: (u64, u64),
    mode: u32,
    owner: (u32, u32),
    changed: Option<(u64, i64, i64)>,
}

impl Fingerprint {
    pub(crate) fn of(path: &Path) -> Option<Fingerprint> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        Some(Fingerprint {
            inode: (meta.dev(), meta.ino()),
            mode: meta.mode(),
            owner: (meta.uid(), meta.gid()),
            changed: (!meta.is_dir()).then(|| (meta.size(), meta.ctime(), meta.ctime_nsec())),
        })
    }
}

/// File-system events on the files the desired state manages: they wake a repair, one wake
/// for however many events arrive before it starts.
pub(crate) struct FileEvents {
    wake: Sender<Wake>,
    watcher: Option<modelc_runtime::watch::watcher::Watcher>,
    /// An event arrived that no repair has started for yet.
    pending: Arc<AtomicBool>,
    _forward: Option<std::thread::JoinHandle<()>>,
}

impl FileEvents {
    pub(crate) fn new(enabled: bool, wake: Sender<Wake>) -> FileEvents {
        let pending = Arc::new(AtomicBool::new(false));
        if !enabled {
            return FileEvents { wake, watcher: None, pending, _forward: None };
        }
        let (paths_tx, paths_rx): (Sender<PathBuf>, Receiver<PathBuf>) = unbounded();
        let Ok(watcher) = modelc_runtime::watch::watcher::Watcher::new(paths_tx) else {
            return FileEvents { wake, watcher: None, pending, _forward: None };
        };
        let (flag, forward_wake) = (Arc::clone(&pending), wake.clone());
        let forward = std::thread::spawn(move || {
            for _ in paths_rx.iter() {
                if !flag.swap(true, Ordering::SeqCst) && forward_wake.send(Wake::File).is_err() {
                    return;
                }
            }
        });
        FileEvents { wake, watcher: Some(watcher), pending, _forward: Some(forward) }
    }

    /// A repair is about to start: later events wake another.
    pub(crate) fn settle(&self) {
        self.pending.store(false, Ordering::SeqCst);
    }

    /// Watches the directories of the files `desired` manages; a file of `settled` that changed
    /// since its resource finished (before the watch saw it) wakes a repair at once.
    pub(crate) fn watch(&mut self, desired: Option<&Desired>, settled: &[(PathBuf, Option<Fingerprint>)]) {
        let (Some(watcher), Some(desired)) = (&mut self.watcher, desired) else { return };
        let directories: BTreeSet<PathBuf> = desired
            .resources
            .iter()
            .filter_map(modelc_runtime::watch::watcher::watched_path)
            .filter_map(|p| p.parent().map(PathBuf::from))
            .collect();
        watcher.watch_exactly(&directories);
        if settled.iter().any(|(path, before)| Fingerprint::of(path) != *before) {
            self.changed();
        }
    }

    /// A change was seen: one wake until the repair it starts settles.
    fn changed(&self) {
        if !self.pending.swap(true, Ordering::SeqCst) {
            let _ = self.wake.send(Wake::File);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn file_resource(path: &Path) -> modelc_ir::Resource {
        let value = serde_json::json!({
            "id": format!("fs::File[a,path={}]", path.display()), "type": "fs::File", "agent": "a",
            "attributes": {"path": path.display().to_string(), "hash": "h", "purged": false,
                "via": {"method_name": "local", "name": ""}},
            "requires": [], "send_event": false, "receive_events": false, "resource_set": null,
            "state": "available", "source": {"entity": "fs::File", "file": "main.cf", "line": 1}
        });
        serde_json::from_value(value).unwrap()
    }

    /// The race a server test once lost: a file changed after its resource finished and before
    /// the agent watched its directory again is repaired all the same.
    #[test]
    fn a_change_before_the_watch_is_in_place_wakes_a_repair() {
        let dir = tempfile::tempdir().unwrap();
        let (path, other) = (dir.path().join("motd"), dir.path().join("other"));
        std::fs::write(&path, "hello\n").unwrap();
        std::fs::write(&other, "kept\n").unwrap();
        let desired =
            Desired { version: 1, resources: vec![file_resource(&path), file_resource(&other)], foreign: vec![] };
        let settled: Vec<_> = [&path, &other].iter().map(|p| (p.to_path_buf(), Fingerprint::of(p))).collect();
        let (wake, woken) = unbounded();
        FileEvents::new(true, wake).watch(Some(&desired), &settled);
        assert!(woken.recv_timeout(Duration::from_millis(200)).is_err(), "nothing changed: no repair");

        std::fs::write(&path, "tampered\n").unwrap();
        let (wake, woken) = unbounded();
        let events = {
            let mut events = FileEvents::new(true, wake);
            events.watch(Some(&desired), &settled);
            events
        };
        assert!(matches!(woken.recv_timeout(Duration::from_secs(5)), Ok(Wake::File)));
        // One wake until a repair settles, however many changes follow.
        std::fs::write(&path, "again\n").unwrap();
        assert!(woken.recv_timeout(Duration::from_millis(300)).is_err(), "one wake for one repair");
        events.settle();
        std::fs::write(&path, "and again\n").unwrap();
        assert!(matches!(woken.recv_timeout(Duration::from_secs(5)), Ok(Wake::File)));
    }

    #[test]
    fn a_directory_is_unchanged_when_only_its_entries_change() {
        let dir = tempfile::tempdir().unwrap();
        let before = Fingerprint::of(dir.path());
        std::fs::write(dir.path().join("new"), "x").unwrap();
        assert_eq!(Fingerprint::of(dir.path()), before);
        std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        assert_ne!(Fingerprint::of(dir.path()), before);
        assert_eq!(Fingerprint::of(&dir.path().join("missing")), None);
    }
}
