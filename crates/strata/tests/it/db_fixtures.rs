//! Databases written by earlier versions keep opening, reading and taking
//! writes (see `tests/fixtures/README.md` for what each one holds).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use strata::merge::{MergeOperator, StringAppendOperator, UInt64AddOperator};
use strata::{CfOptions, Db, DbOptions, Error};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Copies a fixture into a fresh directory, so the checked-in files are never
/// written.
fn copy_fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for entry in std::fs::read_dir(fixture(name)).expect("fixture folder") {
        let entry = entry.expect("dir entry");
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).expect("copy");
    }
    dir
}

/// What `v1-leveled` holds, built the way its README says it was written.
fn v1_leveled_model() -> BTreeMap<Vec<u8>, Vec<u8>> {
    let key = |i: u32| format!("key{i:06}").into_bytes();
    let mut model = BTreeMap::new();
    for i in 0..2000u32 {
        model.insert(key(i), format!("v1-{i}").into_bytes());
    }
    for i in (0..1000u32).step_by(2) {
        model.insert(key(i), format!("v2-{i}").into_bytes());
    }
    for i in (0..2000u32).step_by(7) {
        model.remove(&key(i));
    }
    for i in 2000..2010u32 {
        model.insert(key(i), format!("wal-{i}").into_bytes());
    }
    model.remove(&key(1));
    model
}

fn scan(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    db.range(..)
        .map(|entry| {
            let (k, v) = entry.expect("scan");
            (k.to_vec(), v.to_vec())
        })
        .collect()
}

#[test]
fn v1_leveled_opens_reads_and_takes_writes() {
    let dir = copy_fixture("v1-leveled");
    let mut model = v1_leveled_model();
    let db = Db::open(dir.path(), DbOptions::default()).expect("open v1-leveled");
    assert_eq!(scan(&db), model, "scan after open");
    assert_eq!(
        db.get(b"key000002").expect("get").as_deref(),
        Some(&b"v2-2"[..])
    );
    assert_eq!(db.get(b"key000007").expect("get"), None);
    assert_eq!(
        db.get(b"key002005").expect("get").as_deref(),
        Some(&b"wal-2005"[..])
    );

    db.put(b"key000007", b"new").expect("put");
    db.delete(b"key000003").expect("delete");
    model.insert(b"key000007".to_vec(), b"new".to_vec());
    model.remove(&b"key000003"[..]);
    db.flush().expect("flush");
    db.compact_range(None, None).expect("compact");
    assert_eq!(scan(&db), model, "scan after writes and a compaction");
    db.close().expect("close");

    let db = Db::open(dir.path(), DbOptions::default()).expect("reopen");
    assert_eq!(scan(&db), model, "scan after reopen");
    db.close().expect("close");
}

/// What `v2-blob` holds, built the way its README says it was written.
fn v2_blob_model() -> BTreeMap<Vec<u8>, Vec<u8>> {
    let key = |i: u32| format!("key{i:06}").into_bytes();
    let mut model = BTreeMap::new();
    for i in 0..500u32 {
        model.insert(
            key(i),
            format!("blob1-{i}-{}", "x".repeat(100)).into_bytes(),
        );
    }
    for i in 500..600u32 {
        model.insert(key(i), format!("small-{i}").into_bytes());
    }
    for i in (0..500u32).step_by(3) {
        model.insert(
            key(i),
            format!("blob2-{i}-{}", "y".repeat(100)).into_bytes(),
        );
    }
    for i in 600..610u32 {
        model.insert(key(i), format!("wal-{i}").into_bytes());
    }
    model
}

/// Blob files written by an earlier main read back with blobs off, survive
/// writes and a compaction that passes their references through, and are
/// collected by a later open with garbage collection on.
#[test]
fn v2_blob_opens_reads_and_collects() {
    let dir = copy_fixture("v2-blob");
    let mut model = v2_blob_model();
    let db = Db::open(dir.path(), DbOptions::default()).expect("open v2-blob");
    assert_eq!(scan(&db), model, "scan after open");
    assert_eq!(db.property("strata.num-blob-files").as_deref(), Some("7"));
    db.put(b"key000001", b"new").expect("put");
    model.insert(b"key000001".to_vec(), b"new".to_vec());
    db.compact_range(None, None).expect("compact");
    assert_eq!(scan(&db), model, "scan after a write and a compaction");
    db.close().expect("close");

    let collecting = DbOptions {
        blob: strata::BlobOptions {
            enable_blob_files: true,
            min_blob_size: 64,
            enable_blob_garbage_collection: true,
            blob_garbage_collection_age_cutoff: 1.0,
            ..strata::BlobOptions::default()
        },
        ..DbOptions::default()
    };
    let db = Db::open(dir.path(), collecting).expect("reopen with GC");
    db.compact_range(None, None).expect("compact with GC");
    assert_eq!(scan(&db), model, "scan after garbage collection");
    let files: u64 = db
        .property("strata.num-blob-files")
        .expect("property")
        .parse()
        .expect("count");
    let garbage = db
        .property("strata.live-blob-file-garbage-size")
        .expect("property");
    assert_eq!(
        (files, garbage.as_str()),
        (1, "0"),
        "the live values moved to one new file"
    );
    db.close().expect("close");
}

/// Tables from before the column family property, and their WAL, come
/// back whole without the MANIFEST: every table to the default family, and
/// the WAL's writes the tables hold not replayed twice.
#[test]
fn v1_leveled_repairs_without_its_manifest() {
    let dir = copy_fixture("v1-leveled");
    crate::util::lose_manifest(dir.path());
    let report = strata::repair_db(
        dir.path(),
        &DbOptions::default(),
        Vec::<(String, strata::CfOptions)>::new(),
    )
    .expect("repair v1-leveled");
    assert_eq!(report.tables_recovered, 2, "{report:?}");
    assert_eq!(report.wal_entries_recovered, 11, "{report:?}");
    let db = Db::open(dir.path(), DbOptions::default()).expect("open repaired v1-leveled");
    assert_eq!(scan(&db), v1_leveled_model());
}

/// Blob files come back with the tables that point into them.
#[test]
fn v2_blob_repairs_without_its_manifest() {
    let dir = copy_fixture("v2-blob");
    crate::util::lose_manifest(dir.path());
    let report = strata::repair_db(
        dir.path(),
        &DbOptions::default(),
        Vec::<(String, strata::CfOptions)>::new(),
    )
    .expect("repair v2-blob");
    assert!(report.blob_files_recovered >= 1, "{report:?}");
    let db = Db::open(dir.path(), DbOptions::default()).expect("open repaired v2-blob");
    assert_eq!(scan(&db), v2_blob_model());
}

/// `counter`'s and `log`'s merge operators.
type Operator = Option<Arc<dyn MergeOperator>>;

fn uint64add() -> Operator {
    Some(Arc::new(UInt64AddOperator))
}

fn joined_by(delimiter: &str) -> Operator {
    Some(Arc::new(StringAppendOperator::new(
        delimiter.as_bytes().to_vec(),
    )))
}

/// Opens `v3-merge` or `v4-merge-names` (written alike, see the README)
/// with `counter` as the default family's merge operator and `log` as
/// family `log`'s.
fn open_merge_fixture(dir: &Path, counter: Operator, log: Operator) -> strata::Result<Db> {
    let options = DbOptions {
        merge_operator: counter,
        ..DbOptions::default()
    };
    let log = CfOptions {
        merge_operator: log,
        ..CfOptions::default()
    };
    Db::open_cf(
        dir,
        options,
        [("log", log), ("plain", CfOptions::default())],
    )
}

/// The merge fixtures' data as stored: the counter, the log line and
/// plain's value.
fn read_merge_fixture_bytes(db: &Db) -> [Vec<u8>; 3] {
    let log = db.cf_handle("log").expect("log");
    let plain = db.cf_handle("plain").expect("plain");
    [
        db.get(b"counter").expect("get"),
        db.get_cf(&log, b"line").expect("get"),
        db.get_cf(&plain, b"k").expect("get"),
    ]
    .map(|v| v.map(|v| v.to_vec()).unwrap_or_default())
}

/// The merge fixtures' data, the counter as a number.
fn read_merge_fixture(db: &Db) -> (u64, Vec<u8>, Vec<u8>) {
    let [counter, line, value] = read_merge_fixture_bytes(db);
    let counter = u64::from_le_bytes(counter[..].try_into().expect("8 bytes"));
    (counter, line, value)
}

/// What the merge fixtures hold, read with the operators they were written with.
fn merge_fixture_data() -> (u64, Vec<u8>, Vec<u8>) {
    (7, b"a|b|c".to_vec(), b"v".to_vec())
}

/// The reason an open of a merge fixture was refused with.
fn refused(opened: strata::Result<Db>, what: &str) -> String {
    match opened {
        Ok(db) => {
            let read =
                read_merge_fixture_bytes(&db).map(|v| String::from_utf8_lossy(&v).into_owned());
            db.close().expect("close");
            panic!("{what}: the open was not refused, and read {read:?}")
        }
        Err(Error::InvalidArgument {
            field: "merge_operator",
            reason,
        }) => reason,
        Err(e) => panic!("{what}: refused for another reason: {e}"),
    }
}

fn remove_options_files(dir: &Path) {
    for entry in std::fs::read_dir(dir).expect("list") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with("OPTIONS-") {
            std::fs::remove_file(&path).expect("remove");
        }
    }
}

/// `v3-merge` was written before the MANIFEST recorded merge operators; its
/// OPTIONS file names them and stands in for the record: an open with
/// another operator, or none, is refused. The first open used to take any
/// operator (the counter read as its operands joined by commas) and record
/// that one, refusing the right one from then on.
#[test]
fn v3_merge_opens_only_with_the_operators_its_options_file_names() {
    let dir = copy_fixture("v3-merge");
    for (counter, given) in [
        (joined_by(","), "StringAppendOperator"),
        (None, "no merge operator"),
    ] {
        let reason = refused(
            open_merge_fixture(dir.path(), counter, joined_by("|")),
            given,
        );
        for part in ["\"default\"", "UInt64AddOperator", given, "OPTIONS-000003"] {
            assert!(reason.contains(part), "{part}: {reason}");
        }
    }
    let db = open_merge_fixture(dir.path(), uint64add(), joined_by("|")).expect("open v3-merge");
    assert_eq!(read_merge_fixture(&db), merge_fixture_data());
    db.close().expect("close");
    // That open recorded the operators in the MANIFEST: they hold without
    // any OPTIONS file.
    remove_options_files(dir.path());
    let reason = refused(
        open_merge_fixture(dir.path(), joined_by(","), joined_by("|")),
        "after the record",
    );
    assert!(reason.contains("UInt64AddOperator"), "{reason}");
    let db = open_merge_fixture(dir.path(), uint64add(), joined_by("|")).expect("reopen");
    assert_eq!(read_merge_fixture(&db), merge_fixture_data());
    db.close().expect("close");
}

/// `v3-merge`'s string append family was written with delimiter `|`, which
/// its OPTIONS file records: `,` is another operator. Only names used to be
/// compared, so the open took `,` and the line read `a|b,c`.
#[test]
fn v3_merge_refuses_its_string_append_family_another_delimiter() {
    let dir = copy_fixture("v3-merge");
    let reason = refused(
        open_merge_fixture(dir.path(), uint64add(), joined_by(",")),
        "delimiter ,",
    );
    for part in ["\"log\"", "delimiter=|", "delimiter=,"] {
        assert!(reason.contains(part), "{part}: {reason}");
    }
}

/// `v4-merge-names` records each family's merge operator by name only, as
/// the first builds with the record wrote it: the name still refuses
/// another operator, the OPTIONS file tells the delimiter the name leaves
/// open, and an open with the right operators completes the record.
#[test]
fn v4_merge_names_keeps_its_name_records() {
    let dir = copy_fixture("v4-merge-names");
    let reason = refused(
        open_merge_fixture(dir.path(), joined_by(","), joined_by("|")),
        "another operator",
    );
    for part in ["UInt64AddOperator", "StringAppendOperator"] {
        assert!(reason.contains(part), "{part}: {reason}");
    }
    let reason = refused(
        open_merge_fixture(dir.path(), uint64add(), joined_by(",")),
        "another delimiter",
    );
    for part in ["delimiter=|", "delimiter=,"] {
        assert!(reason.contains(part), "{part}: {reason}");
    }
    let db =
        open_merge_fixture(dir.path(), uint64add(), joined_by("|")).expect("open v4-merge-names");
    assert_eq!(read_merge_fixture(&db), merge_fixture_data());
    db.close().expect("close");
    remove_options_files(dir.path());
    let reason = refused(
        open_merge_fixture(dir.path(), uint64add(), joined_by(",")),
        "another delimiter, after the record",
    );
    assert!(reason.contains("delimiter=|"), "{reason}");
    // A read-only open that names no family takes the recorded operator,
    // delimiter and all, for the families it guesses.
    let counter = DbOptions {
        merge_operator: uint64add(),
        ..DbOptions::default()
    };
    let db = Db::open_read_only(dir.path(), counter).expect("open read-only");
    assert_eq!(read_merge_fixture(&db), merge_fixture_data());
}
