//! `--use_existing_db=0` destroys the database in `--db` first: never one that
//! another process has open.

use std::path::Path;

use strata::{Db, DbOptions};

use super::bench;

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn a_database_open_elsewhere_is_not_destroyed() {
    let dir = tempfile::tempdir().unwrap();
    let options = DbOptions {
        create_if_missing: true,
        ..DbOptions::default()
    };
    let db = Db::open(dir.path(), options.clone()).unwrap();
    for i in 0..100u32 {
        db.put(format!("key{i:03}").as_bytes(), b"precious")
            .unwrap();
    }
    // Some data in a table, some only in the WAL.
    db.flush().unwrap();
    db.put(b"in-the-wal", b"precious").unwrap();
    let before = names(dir.path());

    let out = bench(&[
        &format!("--db={}", dir.path().display()),
        "--use_existing_db=0",
        "--num=100",
        "--benchmarks=fillseq",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Lock held"), "{stderr}");
    assert!(stderr.contains(&*dir.path().to_string_lossy()), "{stderr}");
    assert!(stderr.contains("--use_existing_db=0"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("fillseq   "));

    // Every file is still there, and the open database reads and writes on.
    assert_eq!(names(dir.path()), before);
    assert_eq!(
        db.get(b"key042").unwrap().as_deref(),
        Some(&b"precious"[..])
    );
    db.put(b"after", b"still open").unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), options).unwrap();
    for key in ["key000", "key099", "in-the-wal"] {
        assert_eq!(
            db.get(key.as_bytes()).unwrap().as_deref(),
            Some(&b"precious"[..]),
            "{key}"
        );
    }
    assert_eq!(
        db.get(b"after").unwrap().as_deref(),
        Some(&b"still open"[..])
    );
    db.close().unwrap();

    // Once nothing holds it, the bench destroys and refills it as before.
    let out = bench(&[
        &format!("--db={}", dir.path().display()),
        "--use_existing_db=0",
        "--num=100",
        "--benchmarks=fillseq",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let db = Db::open(dir.path(), DbOptions::default()).unwrap();
    assert_eq!(db.get(b"in-the-wal").unwrap(), None);
    db.close().unwrap();
}
