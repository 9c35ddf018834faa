//! What the file-system handlers share: reading a path's state, permissions as the fs module
//! writes them (`644` meaning octal 0644), owners and groups by name, and atomic writes. All
//! through system calls; no `cp`, `chmod` or `chown` is run.

use std::fs::{self, Metadata, OpenOptions, Permissions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use nix::unistd::{Gid, Group, Uid, User};
use sha1::{Digest, Sha1};

use crate::report::Change;

/// What is at a path, without following a final symlink; `None` when nothing is.
pub(crate) fn lstat(path: &Path) -> Result<Option<Metadata>, String> {
    match fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_message(&format!("cannot look at {}", path.display()), &e)),
    }
}

/// An I/O error in words, naming the symlink loops and permission problems users hit.
pub(crate) fn io_message(what: &str, error: &std::io::Error) -> String {
    match error.raw_os_error() {
        Some(code) if code == nix::errno::Errno::ELOOP as i32 => {
            format!("{what}: a symbolic link loop (a link that leads back to itself)")
        }
        _ if error.kind() == ErrorKind::PermissionDenied => {
            format!("{what}: permission denied (modelc runs as {})", whoami())
        }
        _ => format!("{what}: {error}"),
    }
}

/// The user this process runs as, for messages.
pub(crate) fn whoami() -> String {
    let uid = Uid::effective();
    match User::from_uid(uid) {
        Ok(Some(user)) => format!("`{}`, uid {uid}", user.name),
        _ => format!("uid {uid}"),
    }
}

/// A path's permission bits as the fs module writes them: the octal digits read as a decimal
/// number (0o644 → 644, 0o4755 → 4755).
pub(crate) fn permissions_of(meta: &Metadata) -> i64 {
    format!("{:o}", meta.mode() & 0o7777).parse().unwrap_or(0)
}

/// The mode bits that `permissions` (octal digits written as a decimal number) stands for.
pub(crate) fn mode_of(permissions: i64) -> Result<u32, String> {
    let digits = permissions.to_string();
    u32::from_str_radix(&digits, 8)
        .ok()
        .filter(|mode| *mode <= 0o7777)
        .ok_or_else(|| format!("its permissions {permissions} are not an octal mode (digits 0-7, at most 7777)"))
}

/// The owner of a path by name (its uid when no user has it), as the fs module compares it.
pub fn owner_name(meta: &Metadata) -> String {
    match User::from_uid(Uid::from_raw(meta.uid())) {
        Ok(Some(user)) => user.name,
        _ => meta.uid().to_string(),
    }
}

/// The group of a path by name (its gid when no group has it).
pub(crate) fn group_name(meta: &Metadata) -> String {
    match Group::from_gid(Gid::from_raw(meta.gid())) {
        Ok(Some(group)) => group.name,
        _ => meta.gid().to_string(),
    }
}

fn uid_of(name: &str) -> Result<u32, String> {
    match User::from_name(name) {
        Ok(Some(user)) => Ok(user.uid.as_raw()),
        _ => name.parse().map_err(|_| format!("there is no user `{name}` on this machine")),
    }
}

fn gid_of(name: &str) -> Result<u32, String> {
    match Group::from_name(name) {
        Ok(Some(group)) => Ok(group.gid.as_raw()),
        _ => name.parse().map_err(|_| format!("there is no group `{name}` on this machine")),
    }
}

/// The desired permissions, owner and group of a path (each `None`: left as it is).
#[derive(Debug, Clone, Default)]
pub(crate) struct Attributes {
    pub permissions: Option<i64>,
    pub owner: Option<String>,
    pub group: Option<String>,
}

impl Attributes {
    /// The `permissions`, `owner` and `group` fields of an fs resource.
    pub(crate) fn of(resource: &modelc_ir::Resource) -> Result<Attributes, String> {
        Ok(Attributes {
            permissions: super::optional_int(resource, "permissions")?,
            owner: super::optional_string(resource, "owner")?.map(str::to_owned),
            group: super::optional_string(resource, "group")?.map(str::to_owned),
        })
    }

    /// The differences between `meta` (what is there) and these; `None` for a path that does
    /// not exist yet.
    pub(crate) fn changes(&self, meta: Option<&Metadata>) -> Vec<Change> {
        let mut changes = Vec::new();
        if let Some(want) = self.permissions {
            let have = meta.map(permissions_of);
            if have != Some(want) {
                changes.push(Change::new("permissions", have, want));
            }
        }
        if let Some(want) = &self.owner {
            let have = meta.map(owner_name);
            if have.as_deref() != Some(want.as_str()) {
                changes.push(Change::new("owner", have, want.clone()));
            }
        }
        if let Some(want) = &self.group {
            let have = meta.map(group_name);
            if have.as_deref() != Some(want.as_str()) {
                changes.push(Change::new("group", have, want.clone()));
            }
        }
        changes
    }

    /// Checks the values before anything is changed: an unknown user is an error before a file
    /// is written, not after.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if let Some(p) = self.permissions {
            mode_of(p)?;
        }
        if let Some(owner) = &self.owner {
            uid_of(owner)?;
        }
        if let Some(group) = &self.group {
            gid_of(group)?;
        }
        Ok(())
    }

    /// Sets the permissions, owner and group that `changes` name on `path`.
    pub(crate) fn apply(&self, path: &Path, changes: &[Change]) -> Result<(), String> {
        let changed = |field: &str| changes.iter().any(|c| c.field == field);
        if changed("owner") || changed("group") {
            chown(path, self.owner.as_deref(), self.group.as_deref())?;
        }
        // After chown, which clears the set-uid bits.
        if changed("permissions")
            && let Some(p) = self.permissions
        {
            set_mode(path, mode_of(p)?)?;
        }
        Ok(())
    }
}

pub(crate) fn set_mode(path: &Path, mode: u32) -> Result<(), String> {
    fs::set_permissions(path, Permissions::from_mode(mode))
        .map_err(|e| io_message(&format!("cannot set the permissions of {}", path.display()), &e))
}

/// Changes the owner and group of `path` (not following a symlink). Giving a path away needs
/// root; the message says so.
pub(crate) fn chown(path: &Path, owner: Option<&str>, group: Option<&str>) -> Result<(), String> {
    let uid = owner.map(uid_of).transpose()?;
    let gid = group.map(gid_of).transpose()?;
    std::os::unix::fs::lchown(path, uid, gid).map_err(|e| {
        if e.kind() == ErrorKind::PermissionDenied || e.raw_os_error() == Some(nix::errno::Errno::EPERM as i32) {
            let what = match (owner, group) {
                (Some(o), Some(g)) => format!("owner `{o}` and group `{g}`"),
                (Some(o), None) => format!("owner `{o}`"),
                (None, Some(g)) => format!("group `{g}`"),
                (None, None) => "owner".to_owned(),
            };
            format!(
                "cannot give {} {what}: changing the owner needs root, and a group only one you belong to \
                 (modelc runs as {}); run the deploy as root, or leave `owner`/`group` unset",
                path.display(),
                whoami()
            )
        } else {
            io_message(&format!("cannot change the owner of {}", path.display()), &e)
        }
    })
}

/// The sha1 of a file's content, in hex (what the fs module's `hash` holds).
pub(crate) fn sha1_file(path: &Path) -> Result<String, String> {
    let mut file = fs::File::open(path).map_err(|e| io_message(&format!("cannot read {}", path.display()), &e))?;
    let mut hasher = Sha1::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buffer).map_err(|e| io_message(&format!("cannot read {}", path.display()), &e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

pub(crate) fn sha1_bytes(bytes: &[u8]) -> String {
    hex(&Sha1::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A name beside `target` for a temporary file: hidden, unique in this process and machine.
pub(crate) fn temporary_beside(target: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let unique = format!(".{name}.modelc-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
    target.with_file_name(unique)
}

/// Removes what a deploy killed while writing left in `target`'s directory. Deploys on one
/// machine are serialised, so a temporary of another process is a leftover; this process's
/// own (other workers writing into the same directory right now) are left alone. Each
/// directory is looked through once per process: a thousand files in one directory cost one
/// listing, not a thousand.
fn remove_stale_temporaries(target: &Path) {
    static CLEANED: std::sync::Mutex<Option<std::collections::HashSet<PathBuf>>> = std::sync::Mutex::new(None);
    let Some(dir) = target.parent() else { return };
    {
        let mut cleaned = CLEANED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !cleaned.get_or_insert_with(Default::default).insert(dir.to_owned()) {
            return;
        }
    }
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if is_temporary(&entry.file_name().to_string_lossy()).is_some_and(|pid| pid != std::process::id()) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// A purged resource: when something is at `path`, `remove` takes it away (not in a dry run)
/// and the change says so; when nothing is there, nothing changes.
pub(crate) fn purge(
    path: &Path,
    exists: bool,
    dry_run: bool,
    remove: fn(&Path) -> std::io::Result<()>,
) -> Result<crate::handler::Done, String> {
    if !exists {
        return Ok(crate::handler::Done::unchanged());
    }
    if !dry_run {
        remove(path).map_err(|e| io_message(&format!("cannot remove {}", path.display()), &e))?;
    }
    Ok(crate::handler::Done::changed(vec![Change::new("purged", false, true)]))
}

/// The process that made `name`, when it is exactly a name [`temporary_beside`] makes:
/// `.<file>.modelc-<pid>-<n>`.
fn is_temporary(name: &str) -> Option<u32> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let rest = name.strip_prefix('.')?;
    let (file, suffix) = rest.rsplit_once(".modelc-")?;
    let (pid, n) = suffix.split_once('-')?;
    (!file.is_empty() && digits(n)).then(|| pid.parse().ok()).flatten()
}

/// The parent directory of `path`, which must exist: the runtime creates what the model
/// manages, not what it happens to need.
pub(crate) fn existing_parent(path: &Path) -> Result<&Path, String> {
    let parent = path.parent().ok_or_else(|| format!("{} has no parent directory", path.display()))?;
    match lstat(parent)? {
        Some(meta) if meta.is_dir() => trusted_directory(path, parent).map(|()| parent),
        Some(_) => match fs::metadata(parent) {
            Ok(meta) if meta.is_dir() => trusted_directory(path, parent).map(|()| parent),
            Ok(_) => Err(format!("{} is not a directory", parent.display())),
            Err(e) => Err(io_message(&format!("cannot look at {}", parent.display()), &e)),
        },
        None => Err(format!(
            "its directory {} does not exist, and the model does not manage it: add an fs::Directory for it, \
             or create it",
            parent.display()
        )),
    }
}

/// Whether `path`, which does not exist, can be created in this run: its parent exists and may
/// be written through ([`existing_parent`]), or a resource of the run creates it (a dry run
/// predicts; in a real run that resource has deployed first, so its directory exists).
pub(crate) fn parent_will_exist(path: &Path, context: &crate::handler::Context<'_>) -> Result<(), String> {
    if let Some(parent) = path.parent()
        && context.directories.contains(parent)
        && lstat(parent)?.is_none()
    {
        return Ok(());
    }
    existing_parent(path).map(|_| ())
}

/// Refuses to write `target` in `dir` when a user other than root and the one deploying could
/// change a directory on the way (as OpenSSH's StrictModes reasons): such a user could replace
/// a directory with a link and send a root deploy's write anywhere (`site/dlink → /etc`). Each
/// directory from `/`, along the path as written and along its real path, must belong to root or
/// the deploying user and be writable by no one else; a sticky directory writable by all (`/tmp`)
/// is fine when what is next on the path belongs to root or the deploying user.
pub(crate) fn trusted_directory(target: &Path, dir: &Path) -> Result<(), String> {
    let me = nix::unistd::geteuid().as_raw();
    let absolute = if dir.is_absolute() {
        dir.to_owned()
    } else {
        std::env::current_dir().map_err(|e| io_message("cannot read the working directory", &e))?.join(dir)
    };
    let real = absolute.canonicalize().map_err(|e| io_message(&format!("cannot look at {}", dir.display()), &e))?;
    for path in [&absolute, &real] {
        let mut current = PathBuf::from("/");
        let mut parts = path.components().filter(|c| matches!(c, std::path::Component::Normal(_))).peekable();
        loop {
            let next = parts.peek().map(|part| current.join(part));
            // The one after the last directory is the target itself (if it is there).
            let after = next.clone().or_else(|| Some(target.to_owned()));
            check_directory(&current, after.as_deref(), me, target)?;
            match (parts.next(), next) {
                (Some(_), Some(next)) => current = next,
                _ => break,
            }
        }
    }
    Ok(())
}

/// One directory of [`trusted_directory`]'s walk; `next` is what comes after it on the path.
fn check_directory(dir: &Path, next: Option<&Path>, me: u32, target: &Path) -> Result<(), String> {
    let meta = fs::metadata(dir).map_err(|e| io_message(&format!("cannot look at {}", dir.display()), &e))?;
    let trusted = |uid: u32| uid == 0 || uid == me;
    let refuse = |why: String| {
        Err(format!(
            "refused to write {}: {} {why}, so another user could redirect the write; a deploy writes only \
             through directories that root or the deploying user ({}) control",
            target.display(),
            dir.display(),
            whoami()
        ))
    };
    if !trusted(meta.uid()) {
        return refuse(format!("belongs to user `{}`", owner_name(&meta)));
    }
    let mode = meta.mode();
    if mode & 0o022 != 0 {
        let sticky = mode & 0o1000 != 0;
        // In a sticky directory only an entry's owner may replace it.
        let next_owner = next.and_then(|n| fs::symlink_metadata(n).ok()).map(|m| m.uid());
        if !(sticky && next_owner.is_none_or(trusted)) {
            return refuse(format!("can be written by others (mode {:o})", mode & 0o7777));
        }
    }
    Ok(())
}

/// How many times the handlers flushed a file or a directory to disk in this process: the
/// costly part of writing files, which applying them as a group does less of.
static DISK_SYNCS: AtomicU64 = AtomicU64::new(0);

pub(crate) fn disk_syncs() -> u64 {
    DISK_SYNCS.load(Ordering::Relaxed)
}

/// Flushes a directory's entries (the renames into it) to disk.
pub(crate) fn sync_directory(dir: &Path) -> Result<(), String> {
    DISK_SYNCS.fetch_add(1, Ordering::Relaxed);
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_message(&format!("cannot flush the directory {} to disk", dir.display()), &e))
}

/// Flushes everything written to the file system that holds `dir` in one call (Linux's
/// `syncfs`): for many files, far less work than flushing each. Elsewhere, `None`: the caller
/// flushes each file.
#[cfg(target_os = "linux")]
pub(crate) fn sync_file_system(dir: &Path) -> Option<Result<(), String>> {
    DISK_SYNCS.fetch_add(1, Ordering::Relaxed);
    let result = fs::File::open(dir)
        .map_err(|e| io_message(&format!("cannot open {}", dir.display()), &e))
        .and_then(|d| nix::unistd::syncfs(&d).map_err(|e| format!("cannot flush {} to disk: {e}", dir.display())));
    Some(result)
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn sync_file_system(_dir: &Path) -> Option<Result<(), String>> {
    None
}

/// New content written beside its target, with its mode and owner, not yet in place: a
/// temporary file that [`Staged::commit`] renames over the target, and that is removed if it
/// never is.
pub(crate) struct Staged {
    temporary: PathBuf,
    target: PathBuf,
}

/// Gives `path` the owner and group of the file it replaces (`existing`), so that new content
/// does not also hand the file to whoever deploys. Best effort: only root can give a file away,
/// and a deploy that could not is no worse off than before.
fn keep_ownership(path: &Path, existing: &Metadata) {
    let (uid, gid) = (existing.uid(), existing.gid());
    if uid != nix::unistd::geteuid().as_raw() || gid != nix::unistd::getegid().as_raw() {
        let _ = nix::unistd::chown(path, Some(Uid::from_raw(uid)), Some(Gid::from_raw(gid)));
    }
}

/// Creates the temporary file new content is written to (`O_CREAT|O_EXCL`). With a desired
/// mode it is created with only that mode's owner bits and widened to the mode once written and
/// given its owner: the content (a secret in a `mode=600` file) is readable by no one else at any
/// moment, also not the group it is about to be handed to. Without one it gets the default of a
/// new file, 0666 less the umask, which is what it keeps.
pub(crate) fn create_temporary(temporary: &Path, mode: Option<u32>) -> std::io::Result<fs::File> {
    let creation = mode.map_or(0o666, |m| m & 0o700);
    OpenOptions::new().write(true).create_new(true).mode(creation).open(temporary)
}

/// Writes `content` into a temporary file beside `target` (see [`Staged`]), owned as `keep`
/// (the file it replaces) unless `ownership` names an owner or group.
pub(crate) fn stage(
    target: &Path,
    content: &[u8],
    mode: Option<u32>,
    ownership: (Option<&str>, Option<&str>),
    keep: Option<&Metadata>,
) -> Result<Staged, String> {
    existing_parent(target)?;
    remove_stale_temporaries(target);
    let temporary = temporary_beside(target);
    let mut file = create_temporary(&temporary, mode)
        .map_err(|e| io_message(&format!("cannot write in {}", target.parent().unwrap_or(target).display()), &e))?;
    // From here on, dropping `staged` removes the temporary.
    let staged = Staged { temporary, target: target.to_owned() };
    file.write_all(content).map_err(|e| io_message(&format!("cannot write {}", target.display()), &e))?;
    if let Some(existing) = keep {
        keep_ownership(&staged.temporary, existing);
    }
    if let (Some(_), _) | (_, Some(_)) = ownership {
        chown(&staged.temporary, ownership.0, ownership.1)?;
    }
    if let Some(mode) = mode {
        set_mode(&staged.temporary, mode)?;
    }
    // Closed now: a group of thousands of files must not hold thousands of descriptors.
    drop(file);
    Ok(staged)
}

impl Staged {
    /// Flushes this file's content to disk.
    pub(crate) fn sync(&self) -> Result<(), String> {
        DISK_SYNCS.fetch_add(1, Ordering::Relaxed);
        fs::File::open(&self.temporary)
            .and_then(|file| file.sync_all())
            .map_err(|e| io_message(&format!("cannot write {}", self.target.display()), &e))
    }

    /// Puts the content in place (a rename: atomic).
    pub(crate) fn commit(mut self) -> Result<(), String> {
        let result = fs::rename(&self.temporary, &self.target)
            .map_err(|e| io_message(&format!("cannot replace {}", self.target.display()), &e));
        if result.is_ok() {
            self.temporary = PathBuf::new();
        }
        result
    }

    pub(crate) fn target(&self) -> &Path {
        &self.target
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.temporary.as_os_str().is_empty() {
            let _ = fs::remove_file(&self.temporary);
        }
    }
}

/// Writes `content` to `target` atomically: a temporary file in the same directory, written,
/// given its mode (and owner), flushed to disk, then renamed over `target`, and the directory
/// flushed so the rename survives a crash. A deploy stopped at any moment leaves either the old
/// file or the new one, never half of one.
pub(crate) fn write_atomically(
    target: &Path,
    content: &[u8],
    mode: Option<u32>,
    ownership: (Option<&str>, Option<&str>),
    keep: Option<&Metadata>,
) -> Result<(), String> {
    let staged = stage(target, content, mode, ownership, keep)?;
    staged.sync()?;
    staged.commit()?;
    match target.parent() {
        Some(dir) => sync_directory(dir),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 30: the temporary file of `fs::File(mode=600)` was created 0666 (less the umask),
    /// written, then narrowed: a secret was readable by everyone for a moment.
    #[test]
    fn a_temporary_is_never_wider_than_its_final_mode() {
        let dir = tempfile::tempdir().unwrap();
        for (desired, at_creation) in
            [(Some(0o600), 0o600), (Some(0o644), 0o600), (Some(0o400), 0o400), (Some(0o070), 0)]
        {
            let path = dir.path().join(format!("t{desired:?}"));
            let file = create_temporary(&path, desired).unwrap();
            let mode = file.metadata().unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, at_creation, "created for {desired:?}");
            assert_eq!(mode & 0o077, 0, "no one but the owner reads it before it is whole");
        }
        // The staged file has the desired mode once written.
        let target = dir.path().join("secret.txt");
        let staged = stage(&target, b"hunter2", Some(0o640), (None, None), None).unwrap();
        let staged_mode = fs::metadata(&staged.temporary).unwrap().permissions().mode() & 0o777;
        assert_eq!(staged_mode, 0o640);
        staged.commit().unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"hunter2");
    }

    /// Issue 30: `fs::File` wrote through a symlinked parent (`site/dlink → victimdir`), so a
    /// user who controls a directory on the path redirected a root deploy's write.
    #[test]
    #[allow(clippy::print_stderr, reason = "a test says what it skipped")]
    fn writes_go_only_through_directories_root_or_the_deployer_control() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mode = |p: &Path, m: u32| fs::set_permissions(p, Permissions::from_mode(m)).unwrap();
        mode(root, 0o755);
        // Ours: fine.
        fs::create_dir(root.join("mine")).unwrap();
        existing_parent(&root.join("mine/f.txt")).unwrap();
        // Writable by all, not sticky: refused, naming it.
        fs::create_dir(root.join("open")).unwrap();
        mode(&root.join("open"), 0o777);
        let refused = existing_parent(&root.join("open/f.txt")).unwrap_err();
        assert!(refused.contains("can be written by others (mode 777)"), "{refused}");
        // Sticky and writable by all, with our own directory next: fine (deploys into /tmp).
        fs::create_dir(root.join("sticky")).unwrap();
        mode(&root.join("sticky"), 0o1777);
        fs::create_dir(root.join("sticky/ours")).unwrap();
        existing_parent(&root.join("sticky/ours/f.txt")).unwrap();
        existing_parent(&root.join("sticky/new.txt")).unwrap();
        if !nix::unistd::geteuid().is_root() {
            modelc_test_skip::skip("the other-user cases: they need root to give a directory away");
            return;
        }
        let nobody = Some(Uid::from_raw(65534));
        // Another user's directory holding a link to ours: refused, through either path.
        fs::create_dir(root.join("site")).unwrap();
        fs::create_dir(root.join("victim")).unwrap();
        std::os::unix::fs::symlink(root.join("victim"), root.join("site/dlink")).unwrap();
        nix::unistd::chown(&root.join("site"), nobody, None).unwrap();
        let refused = existing_parent(&root.join("site/dlink/f.txt")).unwrap_err();
        assert!(refused.contains("site belongs to user `nobody`"), "{refused}");
        assert!(!root.join("victim/f.txt").exists());
        // In a sticky directory, another user's entry next on the path: refused.
        fs::create_dir(root.join("sticky/theirs")).unwrap();
        nix::unistd::chown(&root.join("sticky/theirs"), nobody, None).unwrap();
        let refused = existing_parent(&root.join("sticky/theirs/f.txt")).unwrap_err();
        assert!(refused.contains("theirs belongs to user `nobody`") || refused.contains("mode 1777"), "{refused}");
    }

    #[test]
    fn permissions_are_octal_digits_written_as_decimal() {
        assert_eq!(mode_of(644).unwrap(), 0o644);
        assert_eq!(mode_of(4755).unwrap(), 0o4755);
        assert_eq!(mode_of(0).unwrap(), 0);
        assert!(mode_of(699).unwrap_err().contains("not an octal mode"));
        assert!(mode_of(17777).is_err());
    }

    #[test]
    fn atomic_writes_replace_the_file_and_leave_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.conf");
        fs::write(&target, "old").unwrap();
        write_atomically(&target, b"new", Some(0o600), (None, None), None).unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(permissions_of(&fs::metadata(&target).unwrap()), 600);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn only_our_own_temporaries_are_taken_for_leftovers() {
        assert_eq!(is_temporary(".app.conf.modelc-123-0"), Some(123));
        assert_eq!(is_temporary(".app.conf.modelc-notes"), None);
        assert_eq!(is_temporary("app.conf.modelc-1-2"), None);
        assert_eq!(is_temporary("..modelc-1-2"), None);
        let target = Path::new("/srv/app.conf");
        let name = temporary_beside(target);
        assert_eq!(is_temporary(&name.file_name().unwrap().to_string_lossy()), Some(std::process::id()));
    }

    #[test]
    fn a_missing_directory_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let error = write_atomically(&dir.path().join("no/such/f"), b"x", None, (None, None), None).unwrap_err();
        assert!(error.contains("does not exist, and the model does not manage it"), "{error}");
    }
}
