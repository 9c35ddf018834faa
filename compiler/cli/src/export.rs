//! `modelc export [--partial]`, `modelc versions`, `modelc show`, `modelc diff`: the versioned
//! store (`modelc-store`) seen from the command line.

use std::path::{Path, PathBuf};

use md5::{Digest, Md5};
use modelc_diagnostics::{Diagnostic, SourceFiles, codes};
use modelc_driver::Target;
use modelc_ir::Ir;
use modelc_store::{Access, ExportOutcome, Locator, Metadata, PartialRequest, Store, StoreError};

use crate::output::Reporter;
use crate::place::Place;
use crate::{EXIT_OK, Format, Io, usage_error};

/// The store's file inside a project directory.
const STORE_FILE: &str = ".modelc/store.sqlite";

pub(crate) struct Request {
    pub partial: bool,
    /// A full export stores a version even when nothing changed.
    pub force: bool,
    pub delete_sets: Vec<String>,
    pub soft_delete: bool,
    pub message: String,
    pub store: Option<Locator>,
    /// Export through this server instead.
    pub server: Option<crate::place::Server>,
    /// Release the version once stored.
    pub release: bool,
    /// Export this IR file (written by `modelc compile -o`) instead of compiling a model.
    pub ir: Option<PathBuf>,
}

/// What is exported: the resources, and what the version records about where they came from.
pub(crate) struct Exported {
    pub(crate) ir: Ir,
    pub(crate) source_hash: String,
    pub(crate) files: SourceFiles,
    pub(crate) file_count: usize,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// The Python environment and the modules' Python the compile read: where a deploy finds
    /// modules' handlers.
    pub(crate) code: crate::deploy::ModuleCode,
}

pub(crate) fn export(path: Option<&Path>, request: &Request, format: Format, color: bool, io: &mut Io<'_>) -> u8 {
    let source = Source {
        path,
        ir: request.ir.as_deref(),
        store: request.store.as_ref(),
        server: request.server.as_ref(),
        partial: request.partial,
    };
    // A full export compares every resource with the store's current rows: they are read on
    // another thread while the model compiles.
    let (exported, store, prefetched) = match source.exported(!request.partial, format, color, io) {
        Ok(found) => found,
        Err(status) => return status,
    };
    let Exported { ir, source_hash, files, file_count, mut diagnostics, .. } = exported;
    let metadata = Metadata { created: modelc_store::utc_now(), source_hash, message: request.message.clone() };
    let stored_from = std::time::Instant::now();
    let progress = crate::progress::Progress::start("storing", io.stderr_is_terminal);
    let result = if request.partial {
        let partial = PartialRequest { delete_sets: request.delete_sets.clone(), soft_delete: request.soft_delete };
        store
            .open(Access::Partial)
            .and_then(|mut opened| opened.export_partial_with(&ir, &partial, &metadata, request.force))
    } else {
        // A refused export does not even create the store.
        store
            .open(Access::Full)
            .and_then(|mut opened| opened.export_full_with(&ir, &metadata, request.force, prefetched))
    };
    // Through a server, `--release` is part of the export; a PostgreSQL store releases after it.
    let released = match (&result, request.release) {
        (Ok(outcome), true) => Some(release_after_export(&store, outcome)),
        _ => None,
    };
    drop(progress);
    if crate::verbose() {
        let _ = writeln!(io.stderr, "  store         took {:>14.1} ms", stored_from.elapsed().as_secs_f64() * 1000.0);
    }
    let verb = if request.ir.is_some() { "read" } else { "compiled" };
    let reporter = Reporter { files: &files, format, color, file_count };
    if let Err(error) = &result {
        diagnostics.push(store_diagnostic(error, Some((&ir, &files)), &store));
    }
    let status = if format.json_diagnostics() {
        // One document: the diagnostics, the version stored (or the one the model is unchanged
        // since), and the store.
        let (version, unchanged) = match &result {
            Ok(ExportOutcome::Stored(info)) => (serde_json::to_value(info).unwrap_or_default(), false),
            Ok(ExportOutcome::Unchanged(info)) => (serde_json::to_value(info).unwrap_or_default(), true),
            Err(_) => (serde_json::Value::Null, false),
        };
        let document = serde_json::Map::from_iter([
            ("version".to_owned(), version),
            ("unchanged".to_owned(), serde_json::Value::Bool(unchanged)),
            ("store".to_owned(), serde_json::Value::String(store.to_string())),
            (
                "released".to_owned(),
                match &released {
                    Some(Ok(release)) => serde_json::to_value(release).unwrap_or_default(),
                    _ => serde_json::Value::Null,
                },
            ),
        ]);
        reporter.finish_object(io, &mut diagnostics, verb, document)
    } else {
        let status = reporter.finish(io, &mut diagnostics, verb);
        match &result {
            Ok(ExportOutcome::Unchanged(latest)) if format == Format::Human && crate::chatty() => {
                let _ = writeln!(
                    io.stderr,
                    "unchanged since version {}: no version stored in {store} (`--force` stores one anyway)",
                    latest.version,
                );
            }
            Ok(ExportOutcome::Stored(info)) if format == Format::Human && crate::chatty() => {
                let base = info.base.map(|b| format!(" on version {b}")).unwrap_or_default();
                let _ = writeln!(
                    io.stderr,
                    "exported version {} ({}{base}): {} in {}, to {}",
                    info.version,
                    info.kind.as_str(),
                    modelc_diagnostics::count(info.resources, "resource"),
                    modelc_diagnostics::count(info.sets, "resource set"),
                    store
                );
            }
            _ => {}
        }
        status
    };
    // The process ends soon after: freeing a large model's resources would only delay it.
    std::thread::spawn(move || drop(ir));
    match (&result, released) {
        (Err(error), _) => store_status(error, status),
        (Ok(_), Some(Err(error))) => {
            let _ = writeln!(io.stderr, "error: the version was stored, but not released: {error}");
            crate::EXIT_USAGE
        }
        (Ok(_), Some(Ok(release))) => {
            if format == Format::Human && crate::chatty() && !release.already {
                let _ = writeln!(io.stderr, "released version {}", release.version);
            }
            status
        }
        (Ok(_), None) => status,
    }
}

/// `export --release`: the release the server made with the export, or, into a PostgreSQL
/// store, one made now.
fn release_after_export(
    place: &Place,
    outcome: &ExportOutcome,
) -> Result<modelc_store::postgres::fleet::Release, StoreError> {
    let (ExportOutcome::Stored(info) | ExportOutcome::Unchanged(info)) = outcome;
    let made_with_export = match place {
        Place::Server(server) => server.released.as_ref().and_then(|cell| cell.lock().ok()?.take()),
        Place::Store(_) => None,
    };
    match (made_with_export, place) {
        (Some(release), _) => Ok(release),
        (None, Place::Store(modelc_store::Locator::Postgres(url))) => {
            modelc_store::PgStore::open(url)?.release_at_least(info.version)
        }
        (None, _) => crate::fleet::release(place, Some(info.version)),
    }
}

/// The exit status of a command that met `error` from the store, having reported it with
/// `status`: a store that cannot be used (missing, unreadable, no such version) is an I/O error,
/// not a refused model or change.
fn store_status(error: &StoreError, status: u8) -> u8 {
    if matches!(error, StoreError::Rejected(_)) { status } else { crate::EXIT_USAGE }
}

/// What `modelc plan` plans.
pub(crate) struct PlanRequest {
    /// Plan the export of this IR file instead of compiling a model.
    pub ir: Option<PathBuf>,
    /// A partial export, with its request.
    pub partial: Option<PartialRequest>,
    pub detailed_exitcode: bool,
    pub store: Option<Locator>,
    pub server: Option<crate::place::Server>,
}

/// `--detailed-exitcode`: the export would be accepted and change something (Terraform's "changes
/// present"; not 2, which is a usage or I/O error here).
pub(crate) const EXIT_CHANGES: u8 = 3;

/// `modelc plan`: compile, then run the export's checks and merge against the latest version,
/// with the store opened read-only (and never created).
pub(crate) fn plan(path: Option<&Path>, request: &PlanRequest, format: Format, color: bool, io: &mut Io<'_>) -> u8 {
    let partial = request.partial.is_some();
    let source = Source {
        path,
        ir: request.ir.as_deref(),
        store: request.store.as_ref(),
        server: request.server.as_ref(),
        partial,
    };
    let (exported, store, _) = match source.exported(false, format, color, io) {
        Ok(found) => found,
        Err(status) => return status,
    };
    let Exported { ir, files, file_count, mut diagnostics, .. } = exported;
    let planned = store.plan(&ir, request.partial.as_ref());
    let reporter = Reporter { files: &files, format, color, file_count };
    let (plan, failure) = match planned {
        Ok(plan) => (Some(plan), None),
        Err(error) => {
            let mut diagnostic = store_diagnostic(&error, Some((&ir, &files)), &store);
            // A plan never writes: what an export would leave unchanged says nothing here.
            let unchanged = not_written(&store);
            diagnostic.notes.retain(|note| note != STORE_UNCHANGED && *note != unchanged);
            diagnostics.push(diagnostic);
            (None, Some(error))
        }
    };
    // The version the export would have been built on, also when it would be refused.
    let base = match &plan {
        Some(plan) => plan.base.as_ref().map(|b| b.version),
        None => {
            let opened = store.open(Access::Read).ok();
            opened.and_then(|s| s.versions().ok()?.last().map(|v| v.version))
        }
    };
    let changes = plan.as_ref().is_some_and(|p| !p.changes.is_empty());
    let mut status = if format.json_diagnostics() {
        let document = serde_json::Map::from_iter([
            ("base".to_owned(), base.map_or(serde_json::Value::Null, |b| serde_json::json!(b))),
            ("accepted".to_owned(), serde_json::Value::Bool(plan.is_some())),
            (
                "changes".to_owned(),
                plan.as_ref().map_or(serde_json::Value::Null, |p| serde_json::to_value(&p.changes).unwrap_or_default()),
            ),
            ("store".to_owned(), serde_json::Value::String(store.to_string())),
        ]);
        reporter.finish_object(io, &mut diagnostics, "compiled", document)
    } else {
        let status = reporter.finish(io, &mut diagnostics, "compiled");
        let kind = if request.partial.is_some() { "A partial export" } else { "An export" };
        if plan.is_none() && failure.as_ref().is_some_and(|e| matches!(e, StoreError::Rejected(_))) {
            let against = base.map_or_else(|| "an empty store".to_owned(), |b| format!("version {b}"));
            let _ = writeln!(io.stdout, "{kind} against {against} would be refused (see the errors above)");
        }
        if let Some(plan) = &plan {
            let against =
                plan.base.as_ref().map_or_else(|| "an empty store".to_owned(), |b| format!("version {}", b.version));
            if plan.changes.is_empty() {
                let _ = writeln!(io.stdout, "{kind} would change nothing against {against}");
            } else {
                let _ = writeln!(io.stdout, "{kind} against {against} would be accepted and change:");
                // Old contents from the store, new ones from the compile.
                let mut changes = plan.changes.clone();
                if let Ok(opened) = store.open(Access::Read) {
                    add_stored_contents(&mut changes, opened.as_ref());
                }
                for hash in changes.content_hashes() {
                    if let Some(text) = ir.files.get(&hash) {
                        changes.contents.insert(hash, text.clone());
                    }
                }
                let text = changes.to_string();
                // The diff's first line names versions; the plan said what it compares.
                for line in text.lines().skip(1) {
                    let _ = writeln!(io.stdout, "{line}");
                }
            }
        }
        status
    };
    if let Some(error) = &failure {
        status = store_status(error, status);
    } else if status == EXIT_OK && changes && request.detailed_exitcode {
        status = EXIT_CHANGES;
    }
    status
}

/// Where an export (or a plan) takes its resources from, and its store.
struct Source<'a> {
    path: Option<&'a Path>,
    /// An IR file instead of a model.
    ir: Option<&'a Path>,
    store: Option<&'a Locator>,
    server: Option<&'a crate::place::Server>,
    partial: bool,
}

impl Source<'_> {
    /// The resources (read, or compiled with their diagnostics reported on failure) and the
    /// store's path; with `prefetch`, the store's current digests read while the model compiles.
    fn exported(
        &self,
        prefetch: bool,
        format: Format,
        color: bool,
        io: &mut Io<'_>,
    ) -> Result<(Exported, Place, Option<modelc_store::Prefetched>), u8> {
        let server = self.server.map(|server| Place::Server(server.clone()));
        if let Some(file) = self.ir {
            let exported = read_ir(file, &io.cwd).map_err(|message| usage_error(io, &message))?;
            return Ok((
                exported,
                server.unwrap_or_else(|| Place::Store(store_locator(self.store, None, &io.cwd))),
                None,
            ));
        }
        let target = modelc_driver::locate(self.path, &io.cwd).map_err(|error| usage_error(io, &error.to_string()))?;
        if let Some(server) = server {
            return Ok((compile(&target, self.partial, &server, format, color, io)?, server, None));
        }
        let store = store_locator(self.store, Some(&target), &io.cwd);
        let prefetched = prefetch.then(|| {
            let store = store.clone();
            std::thread::spawn(move || modelc_store::prefetch(&store))
        });
        let place = Place::Store(store);
        let exported = compile(&target, self.partial, &place, format, color, io)?;
        Ok((exported, place, prefetched.and_then(|p| p.join().ok().flatten())))
    }
}

/// Compiles the model at `target` into resources, with the facts `place` keeps; on errors,
/// reports them and returns the exit status (nothing is exported).
pub(crate) fn compile(
    target: &Target,
    partial: bool,
    place: &Place,
    format: Format,
    color: bool,
    io: &mut Io<'_>,
) -> Result<Exported, u8> {
    let mut loaded = match crate::python::load(target, io) {
        Ok(loaded) => loaded,
        Err(error) => return Err(usage_error(io, &error.to_string())),
    };
    let dir = crate::passwords::project_dir(target, &io.cwd);
    let refine = modelc_refine::Options { partial };
    let keep = crate::compile::Passwords::Keep;
    let (compiled, mut diagnostics) = crate::compile::compile_loaded(&mut loaded, &dir, place, refine, keep, io)?;
    if let Some(model) = &compiled.model {
        // The model's own output, as `compile` prints it.
        let out: &mut dyn std::io::Write = if format.json_diagnostics() { &mut *io.stderr } else { &mut *io.stdout };
        for line in &model.printed {
            let _ = writeln!(out, "{line}");
        }
    }
    let files = std::mem::take(&mut loaded.files);
    match compiled.resources.filter(|_| !diagnostics.iter().any(Diagnostic::is_error)) {
        Some(ir) => {
            let code = crate::deploy::ModuleCode { env: loaded.python.clone(), modules: loaded.module_python.clone() };
            Ok(Exported { ir, source_hash: source_hash(&files), files, file_count: compiled.files, diagnostics, code })
        }
        None => {
            let reporter = Reporter { files: &files, format, color, file_count: compiled.files };
            Err(reporter.finish(io, &mut diagnostics, "compiled"))
        }
    }
}

/// Reads an IR file written by `modelc compile -o`.
pub(crate) fn read_ir(file: &Path, cwd: &Path) -> Result<Exported, String> {
    let file = if file.is_absolute() { file.to_owned() } else { cwd.join(file) };
    let text = std::fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let ir = Ir::from_json(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let source_hash = hex(Md5::new().chain_update(text.as_bytes()).finalize().as_slice());
    let code = crate::deploy::ModuleCode::default();
    Ok(Exported { ir, source_hash, files: SourceFiles::new(), file_count: 1, diagnostics: Vec::new(), code })
}

pub(crate) fn versions(store: &Place, format: Format, color: bool, io: &mut Io<'_>) -> u8 {
    let versions = match store.open(Access::Existing).and_then(|s| s.versions()) {
        Ok(versions) => versions,
        Err(error) => return store_failure(io, format, color, &error, &store),
    };
    if format.json_diagnostics() {
        let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(&versions).unwrap_or_default());
        return EXIT_OK;
    }
    let _ = writeln!(
        io.stdout,
        "{:>7}  {:<20}  {:<12}  {:>9}  {:>5}  message",
        "version", "created", "kind", "resources", "sets"
    );
    for v in &versions {
        let kind = match v.base {
            Some(base) => format!("partial/{base}"),
            None => v.kind.as_str().to_owned(),
        };
        let _ = writeln!(
            io.stdout,
            "{:>7}  {:<20}  {kind:<12}  {:>9}  {:>5}  {}",
            v.version, v.created, v.resources, v.sets, v.message
        );
    }
    EXIT_OK
}

/// `modelc prune --keep N [--dry-run]`.
pub(crate) fn prune(
    keep: u64,
    dry_run: bool,
    store: Option<&Locator>,
    format: Format,
    color: bool,
    io: &mut Io<'_>,
) -> u8 {
    let store = store_locator(store, None, &io.cwd);
    let report = match modelc_store::open(&store, Access::Existing).and_then(|mut s| s.prune(keep, dry_run)) {
        Ok(report) => report,
        Err(error) => return store_failure(io, format, color, &error, &store),
    };
    if format.json_diagnostics() {
        let mut value = serde_json::to_value(&report).unwrap_or_default();
        value["dry_run"] = serde_json::Value::Bool(dry_run);
        let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(&value).unwrap_or_default());
        return EXIT_OK;
    }
    let mib = |bytes: u64| bytes as f64 / 1_048_576.0;
    let versions = match (report.removed.first(), report.removed.last()) {
        (Some(first), Some(last)) if first == last => format!("version {first}"),
        (Some(first), Some(last)) => format!("{} versions ({first}–{last})", report.removed.len()),
        _ => "no version".to_owned(),
    };
    let kept = report.kept.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    let texts = |n: u64| modelc_diagnostics::count(n, "file content");
    if dry_run {
        let _ = writeln!(
            io.stdout,
            "would remove {versions}, {} and {}; would keep {kept} (nothing was changed)",
            modelc_diagnostics::count(report.rows, "stored row"),
            texts(report.contents)
        );
    } else {
        let _ = writeln!(
            io.stdout,
            "removed {versions}, {} and {}; kept {kept}; the store went from {:.1} MiB to {:.1} MiB",
            modelc_diagnostics::count(report.rows, "stored row"),
            texts(report.contents),
            mib(report.bytes_before),
            mib(report.bytes_after)
        );
    }
    EXIT_OK
}

pub(crate) fn show(
    version: Option<u64>,
    filter: Option<&str>,
    store: &Place,
    format: Format,
    color: bool,
    io: &mut Io<'_>,
) -> u8 {
    let opened = store.open(Access::Existing);
    let mut snapshot = match opened.as_ref().map_err(Clone::clone).and_then(|s| s.snapshot(version)) {
        Ok(snapshot) => snapshot,
        Err(error) => return store_failure(io, format, color, &error, &store),
    };
    if let Some(text) = filter {
        snapshot.resources.retain(|r| r.id.contains(text));
    }
    if format.json_diagnostics() {
        let list: Vec<serde_json::Value> = snapshot
            .resources
            .iter()
            .map(|r| {
                let mut entry = serde_json::Map::new();
                entry.insert("id".into(), r.id.clone().into());
                for (name, value) in &r.attributes {
                    entry.insert(name.to_owned(), value.clone());
                }
                entry.insert("requires".into(), r.requires.clone().into());
                entry.insert("resource_set".into(), r.resource_set.clone().into());
                serde_json::Value::Object(entry)
            })
            .collect();
        let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(&list).unwrap_or_default());
        return EXIT_OK;
    }
    let info = &snapshot.info;
    if let Some(text) = filter {
        let _ = writeln!(
            io.stdout,
            "version {} ({}): {} matching `{text}`",
            info.version,
            info.kind.as_str(),
            modelc_diagnostics::count(snapshot.resources.len() as u64, "resource")
        );
        for resource in &snapshot.resources {
            let place = resource.resource_set.as_deref().map_or_else(|| "shared".to_owned(), |s| format!("set {s}"));
            let _ = writeln!(io.stdout, "{} ({place})", resource.id);
            for (name, value) in &resource.attributes {
                let _ = writeln!(io.stdout, "  {name}: {value}");
                let content = (name == modelc_store::diff::CONTENT_ATTRIBUTE)
                    .then(|| value.as_str().zip(opened.as_ref().ok()))
                    .flatten()
                    .and_then(|(hash, store)| stored_text(store.as_ref(), hash));
                if let Some(lines) = content {
                    let _ = writeln!(io.stdout, "  content:");
                    for line in lines.lines() {
                        let _ = writeln!(io.stdout, "    {line}");
                    }
                }
            }
            if !resource.requires.is_empty() {
                let _ = writeln!(io.stdout, "  requires: {}", resource.requires.join(", "));
            }
        }
        return EXIT_OK;
    }
    let _ = writeln!(
        io.stdout,
        "version {} ({}), {}: {} in {}",
        info.version,
        info.kind.as_str(),
        info.created,
        modelc_diagnostics::count(info.resources, "resource"),
        modelc_diagnostics::count(info.sets, "resource set")
    );
    // By set, sets by name (numbers in names compared as numbers), shared resources last.
    let mut by_set: indexmap::IndexMap<Option<&str>, Vec<&str>> = indexmap::IndexMap::new();
    for resource in &snapshot.resources {
        by_set.entry(resource.resource_set.as_deref()).or_default().push(&resource.id);
    }
    by_set.sort_by(|a, _, b, _| match (a, b) {
        (Some(a), Some(b)) => natural_order(a, b),
        _ => a.is_none().cmp(&b.is_none()),
    });
    for (set, ids) in by_set {
        let _ = writeln!(io.stdout, "{}", set.map_or_else(|| "shared:".to_owned(), |s| format!("set {s}:")));
        for id in ids {
            let _ = writeln!(io.stdout, "  {id}");
        }
    }
    EXIT_OK
}

pub(crate) fn diff(from: u64, to: u64, store: &Place, format: Format, color: bool, io: &mut Io<'_>) -> u8 {
    // Only what changed between the two is read, not the two whole versions.
    let opened = store.open(Access::Existing);
    let changes = match opened.as_ref().map_err(Clone::clone).and_then(|s| s.changes(from, to)) {
        Ok(changes) => changes,
        Err(error) => return store_failure(io, format, color, &error, &store),
    };
    let mut diff = modelc_store::diff::diff(from, &changes.before, to, &changes.after);
    if let (Ok(store), false) = (&opened, format.json_diagnostics()) {
        add_stored_contents(&mut diff, store.as_ref());
    }
    if format.json_diagnostics() {
        let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(&diff).unwrap_or_default());
    } else {
        let _ = writeln!(io.stdout, "{diff}");
    }
    EXIT_OK
}

/// Puts in `diff` the texts of the file contents it names that `store` holds (the diff shows
/// hashes for the others).
fn add_stored_contents(diff: &mut modelc_store::diff::Diff, store: &dyn Store) {
    let hashes = diff.content_hashes();
    if hashes.is_empty() {
        return;
    }
    if let Ok(contents) = store.contents(&hashes) {
        diff.add_contents(contents);
    }
}

/// A file content shown by `show --filter`: its lines as a diff from nothing (bounded as every
/// content diff is), or `None` when the store does not hold it as text.
fn stored_text(store: &dyn Store, hash: &str) -> Option<String> {
    let bytes = store.contents(&[hash.to_owned()]).ok()?.remove(hash)?;
    let text = String::from_utf8(bytes).ok()?;
    Some(modelc_ir::text_diff::unified("", &text, None, 0))
}

/// Compares names the way people read them: `network-2` before `network-10`.
fn natural_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> impl Iterator<Item = (bool, &str)> {
        let mut rest = s;
        std::iter::from_fn(move || {
            let first = rest.chars().next()?;
            let digits = first.is_ascii_digit();
            let end = rest.find(|c: char| c.is_ascii_digit() != digits).unwrap_or(rest.len());
            let (chunk, tail) = rest.split_at(end);
            rest = tail;
            Some((digits, chunk))
        })
    }
    let key = |(digits, chunk): (bool, &str)| {
        let number = if digits { chunk.trim_start_matches('0') } else { "" };
        (!digits, number.len(), number.to_owned(), chunk.to_owned())
    };
    chunks(a).map(key).cmp(chunks(b).map(key)).then_with(|| a.cmp(b))
}

/// `--store`, else `.modelc/store.sqlite` in the model's project directory (or the directory of
/// the model file), else in the nearest directory above `cwd` with a project.yml, else in `cwd`.
pub(crate) fn store_locator(explicit: Option<&Locator>, target: Option<&Target>, cwd: &Path) -> Locator {
    match explicit {
        Some(Locator::Embedded(path)) if path.is_relative() => return Locator::Embedded(cwd.join(path)),
        Some(explicit) => return explicit.clone(),
        None => {}
    }
    let dir = match target {
        Some(target) => crate::passwords::project_dir(target, cwd),
        None => cwd.ancestors().find(|d| d.join("project.yml").is_file()).unwrap_or(cwd).to_owned(),
    };
    Locator::Embedded(dir.join(STORE_FILE))
}

/// A store that cannot be read (missing, not a store, no such version) for a command that only
/// reads it: exit status 2 (I/O), and nothing about the store changing, as nothing could.
pub(crate) fn store_failure(
    io: &mut Io<'_>,
    format: Format,
    color: bool,
    error: &StoreError,
    store: &dyn std::fmt::Display,
) -> u8 {
    let files = SourceFiles::new();
    let mut diagnostic = store_diagnostic(error, None, store);
    diagnostic.notes.retain(|note| note != STORE_UNCHANGED);
    let status = Reporter { files: &files, format, color, file_count: 0 }.report(io, &mut [diagnostic]);
    store_status(error, status)
}

/// The note of a store error in a command that would have changed the store.
const STORE_UNCHANGED: &str = "the store was not changed";

/// A store error as a diagnostic: the rule broken, the resources and sets involved, and where
/// the model creates them (a label where the compiled files are known, a note otherwise).
fn store_diagnostic(
    error: &StoreError,
    exported: Option<(&Ir, &SourceFiles)>,
    store: &dyn std::fmt::Display,
) -> Diagnostic {
    let StoreError::Rejected(rejection) = error else {
        let message = match error {
            StoreError::NoSuchVersion(_) | StoreError::Empty => format!("{error} (store {store})"),
            StoreError::Storage(_) => format!("{error} (store {store})"),
            _ => error.to_string(),
        };
        return Diagnostic::new(&codes::STORE_UNAVAILABLE, message).note(STORE_UNCHANGED);
    };
    let code = modelc_api::rule_code(rejection.rule);
    let mut d = Diagnostic::new(code, format!("export rejected: {}", rejection.message));
    let mut labelled = false;
    for id in &rejection.resources {
        let Some((ir, files)) = exported else { break };
        let Some(resource) = ir.resources.iter().find(|r| r.id == *id) else { continue };
        let set = resource.resource_set.as_deref().map_or_else(|| "shared".to_owned(), |s| format!("in set `{s}`"));
        let place = files
            .iter()
            .find(|(_, file)| file.name == resource.source.file)
            .and_then(|(file_id, file)| Some((file_id, file.line_span(resource.source.line)?)));
        d = match place {
            Some((file, span)) if !labelled => d.primary(file, span, format!("`{id}` ({set}) is created here")),
            Some((file, span)) => d.secondary(file, span, format!("`{id}` ({set}) is created here")),
            None => d.note(format!("`{id}` ({set}) is created at {}:{}", resource.source.file, resource.source.line)),
        };
        labelled |= place.is_some();
    }
    d.note(not_written(store))
}

/// The note of a refused export: nothing was written.
fn not_written(store: &dyn std::fmt::Display) -> String {
    format!("no version was written; the store ({store}) is unchanged")
}

/// A hash of every source file of the compile, in load order.
fn source_hash(files: &SourceFiles) -> String {
    let mut hasher = Md5::new();
    for (_, file) in files.iter() {
        hasher.update(file.name.as_bytes());
        hasher.update([0]);
        hasher.update(file.text.as_bytes());
        hasher.update([0]);
    }
    hex(hasher.finalize().as_slice())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
