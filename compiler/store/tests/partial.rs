//! The store's rules, through its interface: full and partial exports build the versions the
//! spec describes (export §3.3, with the reference's bugs turned into rejections), and every
//! rejection leaves the store exactly as it was. Each test runs on both backends (the embedded
//! store and PostgreSQL), but those about SQLite's own file.
#![allow(clippy::disallowed_methods, clippy::unwrap_used, reason = "test code")]

mod support;

use modelc_ir::Resource;
use modelc_store::{PartialRequest, Rule, SqliteStore, Store, StoreError};
use support::{contents, id, ir, meta, partial, resource, row, store, tempdir};

/// The spec's observed sequence (export §3.3, `exp-partial`): sets a, b, c and shared sh1–sh3.
fn base() -> Vec<Resource> {
    vec![
        resource("a1", Some("set-a"), 1, &[]),
        resource("a2", Some("set-a"), 1, &["a1"]),
        resource("b1", Some("set-b"), 1, &[]),
        resource("c1", Some("set-c"), 1, &[]),
        resource("sh1", None, 1, &[]),
        resource("sh2", None, 1, &[]),
        resource("sh3", None, 1, &["a2"]),
    ]
}

crate::on_both_backends! {
fn a_partial_export_replaces_its_sets_and_keeps_everything_else() {
    let mut store = store();
    let v1 = store.export_full(&ir(base(), &[]), &meta("full")).unwrap();
    assert_eq!((v1.version, v1.resources, v1.sets), (1, 7, 3));
    // set-a: a1 changed, a2 gone, a3 new; sh1 again, identical; sh4 new, requiring a3.
    let v2 = store
        .export_partial(
            &ir(
                vec![
                    resource("a1", Some("set-a"), 2, &[]),
                    resource("a3", Some("set-a"), 1, &["a1"]),
                    resource("sh1", None, 1, &[]),
                    resource("sh4", None, 1, &["a3"]),
                ],
                &[],
            ),
            &PartialRequest::default(),
            &meta("partial"),
        )
        .unwrap();
    assert_eq!((v2.version, v2.base, v2.resources, v2.sets), (2, Some(1), 8, 3));
    assert_eq!(
        contents(&*store, 2),
        vec![
            row("a1", Some("set-a"), 2, &[]),
            row("a3", Some("set-a"), 1, &["a1"]),
            row("b1", Some("set-b"), 1, &[]),
            row("c1", Some("set-c"), 1, &[]),
            row("sh1", None, 1, &[]),
            row("sh2", None, 1, &[]),
            // Its requirement disappeared with a2: the edge goes, the resource stays.
            row("sh3", None, 1, &[]),
            row("sh4", None, 1, &["a3"]),
        ]
    );
    // Versions are immutable: version 1 reads as it was written.
    assert_eq!(contents(&*store, 1).len(), 7);
    assert_eq!(contents(&*store, 1)[1], row("a2", Some("set-a"), 1, &["a1"]));
    assert_eq!(store.versions().unwrap().iter().map(|v| v.version).collect::<Vec<_>>(), [1, 2]);
}
}

crate::on_both_backends! {
fn shared_resources_may_gain_requirements_and_keep_edges_to_what_remains() {
    let mut store = store();
    store.export_full(&ir(base(), &[]), &meta("full")).unwrap();
    // sh2 again with a new requirement; sh3's edge to a2 survives because a2 is exported again.
    let version = partial(
        &mut *store,
        vec![
            resource("a1", Some("set-a"), 1, &[]),
            resource("a2", Some("set-a"), 1, &["a1"]),
            resource("sh2", None, 1, &["a1"]),
        ],
    )
    .unwrap();
    let rows = contents(&*store, version);
    assert!(rows.contains(&row("sh2", None, 1, &["a1"])), "{rows:?}");
    assert!(rows.contains(&row("sh3", None, 1, &["a2"])), "{rows:?}");
}
}

crate::on_both_backends! {
fn sets_are_deleted_by_name_or_by_exporting_them_empty() {
    let mut store = store();
    store.export_full(&ir(base(), &[]), &meta("full")).unwrap();
    // A name the store does not have is refused (the reference ignores it), writing nothing.
    let request = PartialRequest { delete_sets: vec!["set-c".into(), "no-such-set".into()], soft_delete: false };
    let unknown = store.export_partial(&ir(vec![], &["set-b"]), &request, &meta("delete"));
    assert_eq!(rule(unknown), Rule::UnknownSet);
    assert_eq!(store.versions().unwrap().len(), 1);
    let request = PartialRequest { delete_sets: vec!["set-c".into()], soft_delete: false };
    let v2 = store.export_partial(&ir(vec![], &["set-b"]), &request, &meta("delete")).unwrap();
    assert_eq!((v2.resources, v2.sets), (5, 1));
    let names: Vec<String> = contents(&*store, 2).into_iter().map(|r| r.0).collect();
    assert_eq!(names, ["a1", "a2", "sh1", "sh2", "sh3"]);

    // ExportOutcome and deleted at once: refused, unless --soft-delete keeps the exported set.
    let request = PartialRequest { delete_sets: vec!["set-a".into()], soft_delete: false };
    let both = store.export_partial(&ir(vec![resource("a1", Some("set-a"), 1, &[])], &[]), &request, &meta("x"));
    assert_eq!(rule(both), Rule::UpdatedAndDeleted);
    let request = PartialRequest { delete_sets: vec!["set-a".into()], soft_delete: true };
    let v3 = store.export_partial(&ir(vec![resource("a1", Some("set-a"), 1, &[])], &[]), &request, &meta("x")).unwrap();
    assert_eq!(contents(&*store, v3.version).into_iter().map(|r| r.0).collect::<Vec<_>>(), ["a1", "sh1", "sh2", "sh3"]);
}
}

crate::on_both_backends! {
fn an_empty_partial_export_makes_an_identical_version() {
    let mut store = store();
    store.export_full(&ir(base(), &[]), &meta("full")).unwrap();
    let version = partial(&mut *store, vec![]).unwrap();
    assert_eq!(contents(&*store, version), contents(&*store, 1));
}
}

fn rule(result: Result<impl std::fmt::Debug, StoreError>) -> Rule {
    match result {
        Err(StoreError::Rejected(rejection)) => rejection.rule,
        other => panic!("expected a rejection, got {other:?}"),
    }
}

/// Everything a reader can see of the store: its versions and every version's resources.
fn everything(store: &dyn Store) -> String {
    let versions = store.versions().unwrap();
    let mut out = serde_json::to_string(&versions).unwrap();
    for v in &versions {
        out.push_str(&serde_json::to_string(&store.snapshot(Some(v.version)).unwrap().resources).unwrap());
    }
    out
}

crate::on_both_backends! {
/// Each partial export of `cases` is refused for its rule, names what it should, and leaves
/// the store as it was; the next good export still gets the next number.
fn every_rejection_names_the_culprits_and_changes_nothing() {
    let mut store = store();
    store.export_full(&ir(base(), &[]), &meta("full")).unwrap();
    let before = everything(&*store);
    // (rule, the partial export, the resources and the sets the rejection names)
    type Case<'a> = (Rule, Vec<Resource>, Vec<&'a str>, Vec<&'a str>);
    let cases: Vec<Case> = vec![
        // b1 from set-b into set-a.
        (Rule::Moved, vec![resource("b1", Some("set-a"), 1, &[])], vec!["b1"], vec!["set-b", "set-a"]),
        // A shared resource into a set (the reference silently ignores this)…
        (Rule::Moved, vec![resource("sh1", Some("set-a"), 1, &[])], vec!["sh1"], vec!["set-a"]),
        // …and a member of a set exported as shared (the reference fails with an HTTP 500).
        (Rule::Moved, vec![resource("b1", None, 1, &[])], vec!["b1"], vec!["set-b"]),
        (Rule::SharedChanged, vec![resource("sh1", None, 2, &[])], vec!["sh1"], vec![]),
        // A new set requiring a resource of a set only in the store (the reference skips this
        // check when nothing in the partial existed before).
        (Rule::CrossSet, vec![resource("n1", Some("set-new"), 1, &["b1"])], vec!["n1", "b1"], vec!["set-new", "set-b"]),
        // Between two sets of the partial itself.
        (
            Rule::CrossSet,
            vec![resource("n1", Some("set-n"), 1, &["m1"]), resource("m1", Some("set-m"), 1, &[])],
            vec!["n1", "m1"],
            vec!["set-n", "set-m"],
        ),
        // a2 disappears with set-a's replacement, and a1 still requires it.
        (Rule::Dangling, vec![resource("a1", Some("set-a"), 1, &["a2"])], vec!["a1", "a2"], vec!["set-a"]),
        (Rule::Dangling, vec![resource("sh5", None, 1, &["nowhere"])], vec!["sh5", "nowhere"], vec![]),
        (Rule::SetMismatch, vec![], vec!["a1"], vec!["set-a"]),
        (
            Rule::DuplicateId,
            vec![resource("a1", Some("set-a"), 1, &[]), resource("a1", Some("set-a"), 1, &[])],
            vec!["a1"],
            vec!["set-a"],
        ),
    ];
    for (expected, resources, culprits, sets) in cases {
        let described = format!("{expected:?} {:?}", resources.iter().map(|r| &r.id).collect::<Vec<_>>());
        let result = if expected == Rule::SetMismatch {
            // A set listing a resource the export does not hold.
            let mut listing = ir(resources, &["set-a"]);
            listing.sets[0].resources.push(id("a1"));
            store.export_partial(&listing, &PartialRequest::default(), &meta("partial")).map(|v| v.version)
        } else {
            partial(&mut *store, resources)
        };
        match result {
            Err(StoreError::Rejected(rejection)) => {
                assert_eq!(rejection.rule, expected, "{described}: {}", rejection.message);
                assert_eq!(rejection.resources, culprits.iter().map(|c| id(c)).collect::<Vec<_>>(), "{described}");
                assert_eq!(rejection.sets, sets, "{described}");
                for culprit in &culprits {
                    assert!(rejection.message.contains(&id(culprit)), "{described}: {}", rejection.message);
                }
            }
            other => panic!("{described}: expected a rejection, got {other:?}"),
        }
        assert_eq!(everything(&*store), before, "{described} changed the store");
    }
    assert_eq!(partial(&mut *store, vec![]).unwrap(), 2, "rejected exports use no version number");
}
}

crate::on_both_backends! {
fn a_partial_export_needs_a_base_and_a_full_export_checks_its_resources() {
    let mut store = store();
    assert_eq!(rule(partial(&mut *store, vec![resource("a1", Some("set-a"), 1, &[])])), Rule::NoBase);
    let crossing = vec![resource("a1", Some("set-a"), 1, &["b1"]), resource("b1", Some("set-b"), 1, &[])];
    assert_eq!(rule(store.export_full(&ir(crossing, &[]), &meta("x"))), Rule::CrossSet);
    let dangling = vec![resource("a1", Some("set-a"), 1, &["b1"])];
    assert_eq!(rule(store.export_full(&ir(dangling, &[]), &meta("x"))), Rule::Dangling);
    assert!(store.versions().unwrap().is_empty());
    assert!(matches!(store.snapshot(None), Err(StoreError::Empty)));
    assert!(matches!(store.snapshot(Some(3)), Err(StoreError::NoSuchVersion(3))));
}
}

#[test]
fn concurrent_exports_are_serialised() {
    let dir = tempdir::Dir::new();
    let path = dir.path.join("store.sqlite");
    SqliteStore::open(&path).unwrap().export_full(&ir(base(), &[]), &meta("full")).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut store = SqliteStore::open(&path).unwrap();
                (0..5)
                    .map(|i| {
                        let name = format!("t{t}-{i}");
                        let set = format!("set-t{t}");
                        partial(&mut store, vec![resource(&name, Some(&set), 1, &[])]).unwrap()
                    })
                    .collect::<Vec<u64>>()
            })
        })
        .collect();
    let mut numbers: Vec<u64> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (2..=21).collect::<Vec<_>>(), "every export got its own number");
    let store = SqliteStore::open(&path).unwrap();
    let last = contents(&store, 21);
    // Each thread's set holds its last export only; the base is untouched.
    for t in 0..4 {
        let members: Vec<&str> =
            last.iter().filter(|r| r.1.as_deref() == Some(&format!("set-t{t}"))).map(|r| r.0.as_str()).collect();
        assert_eq!(members, [format!("t{t}-4")]);
    }
    assert_eq!(last.len(), 7 + 4);
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

crate::on_both_backends! {
fn a_shared_resource_in_the_partial_says_what_it_needs_of_the_replaced_sets() {
    let mut store = store();
    let base = vec![
        resource("a1", Some("set-a"), 1, &[]),
        resource("a2", Some("set-a"), 1, &[]),
        resource("b1", Some("set-b"), 1, &[]),
        resource("sh", None, 1, &["a1", "a2", "b1"]),
    ];
    store.export_full(&ir(base, &[]), &meta("full")).unwrap();
    // sh now requires a2 only of set-a; its edge to b1 (a set this export leaves alone) stays.
    let mut sh = resource("sh", None, 1, &["a2"]);
    std::sync::Arc::make_mut(&mut sh.source).line = 40;
    let version =
        partial(&mut *store, vec![resource("a1", Some("set-a"), 1, &[]), resource("a2", Some("set-a"), 1, &[]), sh])
            .unwrap();
    assert!(contents(&*store, version).contains(&row("sh", None, 1, &["b1", "a2"])), "{:?}", contents(&*store, version));
    // The stored row is the new one: where the latest model creates it.
    let latest = store.snapshot(None).unwrap();
    assert_eq!(latest.resources.iter().find(|r| r.id == id("sh")).unwrap().source.line, 40);
}
}

crate::on_both_backends! {
fn deleting_a_set_cleans_the_edges_of_kept_shared_resources_and_counts_stay_right() {
    let mut store = store();
    store.export_full(&ir(base(), &[]), &meta("full")).unwrap();
    let request = PartialRequest { delete_sets: vec!["set-a".into(), "set-b".into()], soft_delete: true };
    // set-b is exported again (soft delete keeps it), set-a is deleted: sh3 loses its edge to a2.
    let v2 = store.export_partial(&ir(vec![resource("b2", Some("set-b"), 1, &[])], &[]), &request, &meta("x")).unwrap();
    assert_eq!((v2.resources, v2.sets), (5, 2));
    assert_eq!(
        contents(&*store, 2),
        vec![
            row("b2", Some("set-b"), 1, &[]),
            row("c1", Some("set-c"), 1, &[]),
            row("sh1", None, 1, &[]),
            row("sh2", None, 1, &[]),
            row("sh3", None, 1, &[]),
        ]
    );
}
}

#[test]
fn another_programs_database_is_refused_untouched() {
    let dir = tempdir::Dir::new();
    let path = dir.path.join("other.sqlite");
    {
        let db = rusqlite::Connection::open(&path).unwrap();
        db.execute_batch("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine');").unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    match SqliteStore::open(&path) {
        Err(StoreError::Storage(message)) => assert!(message.contains("not a modelc store"), "{message}"),
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }
    assert_eq!(std::fs::read(&path).unwrap(), before, "the database was written to");
}

crate::on_both_backends! {
fn a_partial_export_that_changes_nothing_stores_nothing_unless_forced() {
    use modelc_store::ExportOutcome;
    let mut store = store();
    store.export_full(&ir(base(), &[]), &meta("full")).unwrap();
    let again = |store: &mut dyn Store, resources: Vec<Resource>, request: &PartialRequest| {
        store.export_partial_if_changed(&ir(resources, &[]), request, &meta("again")).unwrap()
    };
    let set_a = || vec![resource("a1", Some("set-a"), 1, &[]), resource("a2", Some("set-a"), 1, &["a1"])];
    let none = PartialRequest::default();
    // The set as stored, and a shared resource as stored: nothing to write.
    let mut same = set_a();
    same.push(resource("sh1", None, 1, &[]));
    match again(&mut *store, same, &none) {
        ExportOutcome::Unchanged(latest) => assert_eq!(latest.version, 1),
        other => panic!("{other:?}"),
    }
    assert_eq!(store.versions().unwrap().len(), 1);
    // Each of these changes something, so each stores a version.
    let changed_attribute = vec![resource("a1", Some("set-a"), 2, &[]), resource("a2", Some("set-a"), 1, &["a1"])];
    let member_gone = vec![resource("a1", Some("set-a"), 2, &[])];
    let mut new_shared = member_gone.clone();
    new_shared.push(resource("sh9", None, 1, &[]));
    for (n, resources) in [changed_attribute, member_gone, new_shared].into_iter().enumerate() {
        match again(&mut *store, resources, &none) {
            ExportOutcome::Stored(info) => assert_eq!(info.version, n as u64 + 2),
            other => panic!("change {n}: {other:?}"),
        }
    }
    let deleting = PartialRequest { delete_sets: vec!["set-c".to_owned()], soft_delete: false };
    assert!(matches!(again(&mut *store, Vec::new(), &deleting), ExportOutcome::Stored(_)));
    // Forced, the same export stores a version.
    let latest = store.versions().unwrap().len() as u64;
    let forced = store.export_partial(&ir(Vec::new(), &[]), &none, &meta("forced")).unwrap();
    assert_eq!(forced.version, latest + 1);
}
}
