//! Databases written by earlier versions keep opening, reading and taking
//! writes (see `tests/fixtures/README.md` for what each one holds).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use strata::{Db, DbOptions};

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
