//! `strata --db=D repair`, as ldb's repair.

use std::path::Path;

use crate::{stderr, stdout, strata};

/// Removes CURRENT and every MANIFEST of the database in `path`.
fn lose_manifest(path: &Path) {
    for entry in std::fs::read_dir(path).expect("list") {
        let name = entry.expect("entry").file_name();
        let name = name.to_str().expect("name");
        if name == "CURRENT" || name.starts_with("MANIFEST-") {
            std::fs::remove_file(path.join(name)).expect("remove");
        }
    }
}

#[test]
fn repair_brings_back_a_database_whose_manifest_is_gone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let db = format!("--db={}", path.display());
    let out = strata(&[&db, "--create_if_missing", "put", "flushed", "1"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let out = strata(&[&db, "compact"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let out = strata(&[&db, "put", "in-wal", "2"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    lose_manifest(&path);
    let out = strata(&[&db, "scan"], "");
    assert!(!out.status.success(), "without a MANIFEST the open fails");

    let out = strata(&[&db, "repair"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("column families: default (0)\n"), "{text}");
    assert!(text.contains("tables recovered: 1\n"), "{text}");
    assert!(
        text.contains("WAL entries recovered: 1 into 1 tables"),
        "{text}"
    );
    assert!(
        text.contains("/lost/") && text.contains(".log : replayed into tables"),
        "{text}"
    );
    assert!(text.ends_with("OK\n"), "{text}");
    let out = strata(&[&db, "scan"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "flushed : 1\nin-wal : 2\n");
}

#[test]
fn repair_of_a_missing_directory_fails_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = format!("--db={}", dir.path().join("nothing").display());
    let out = strata(&[&db, "repair"], "");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("nothing"), "{}", stderr(&out));
}

/// Loading sequential keys with small memtables makes compactions move
/// tables down whole: repair, reading the MANIFEST that records the moves,
/// puts every table back (it used to move the moved ones to `lost/`,
/// leaving 2000 of 6000 keys).
#[test]
fn repair_keeps_tables_a_compaction_moved_down() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = format!("--db={}", dir.path().join("db").display());
    let input: String = (1..=6000)
        .map(|i| format!("key{i:04} ==> value-{i}-{}\n", "x".repeat(33)))
        .collect();
    let out = strata(
        &[
            &db,
            "--create_if_missing",
            "--write_buffer_size=65536",
            "load",
        ],
        &input,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let count = |what: &str| {
        let out = strata(&[&db, "scan"], "");
        assert!(out.status.success(), "{what}: {}", stderr(&out));
        stdout(&out).lines().count()
    };
    assert_eq!(count("before"), 6000);
    for round in 1..=2 {
        let out = strata(&[&db, "repair"], "");
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(!stdout(&out).contains(".sst : "), "{}", stdout(&out));
        assert_eq!(count("after"), 6000, "round {round}: {}", stdout(&out));
    }
}

/// A table ingested into a family goes back to that family when repair
/// has no MANIFEST (it used to land in `default`, and `fam` was gone).
#[test]
fn repair_puts_a_table_ingested_into_a_family_back_into_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let db = format!("--db={}", path.display());
    let sst = dir.path().join("t.sst");
    let sst_arg = sst.to_str().expect("utf-8 path");
    let run = |args: &[&str], input: &str| {
        let out = strata(args, input);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    run(&[&db, "--create_if_missing", "put", "a", "1"], "");
    run(&[&db, "create_column_family", "fam"], "");
    run(
        &["sst", "build", "--output", sst_arg],
        "x ==> ingested-into-fam\n",
    );
    run(
        &[&db, "--column_family=fam", "ingest_extern_sst", sst_arg],
        "",
    );
    lose_manifest(&path);
    let text = run(&[&db, "repair"], "");
    assert!(
        text.contains("column families: default (0), fam (1)\n"),
        "{text}"
    );
    assert!(!text.contains("warning"), "{text}");
    assert_eq!(run(&[&db, "scan"], ""), "a : 1\n");
    let in_fam = run(&[&db, "--column_family=fam", "scan"], "");
    assert_eq!(in_fam, "x : ingested-into-fam\n");
}
