//! `strata --db=D ingest_extern_sst FILE...`, as ldb's, with files from
//! `strata sst build`.

use crate::{stderr, stdout, strata};

#[test]
fn built_tables_ingest_and_bad_ones_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = format!("--db={}", dir.path().join("db").display());
    let sst = dir.path().join("bulk.sst");
    let sst_arg = sst.to_str().expect("utf-8 path");
    let input = "apple ==> red\nbanana ==> yellow\n";
    let out = strata(&["sst", "build", "--output", sst_arg], input);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = strata(&[&db, "--create_if_missing", "put", "banana", "green"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    // The file overlaps the memtable: flushed first, then the file wins.
    let out = strata(&[&db, "ingest_extern_sst", sst_arg], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "OK\n");
    let out = strata(&[&db, "get", "banana"], "");
    assert_eq!(stdout(&out), "yellow\n", "{}", stderr(&out));
    assert!(sst.exists(), "copied, not moved");
    // Refusing a global seqno refuses the overlap, naming the option.
    let out = strata(
        &[
            &db,
            "ingest_extern_sst",
            sst_arg,
            "--allow_global_seqno=false",
        ],
        "",
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("allow_global_seqno"),
        "{}",
        stderr(&out)
    );
    // A file that is not a table.
    let junk = dir.path().join("junk.sst");
    std::fs::write(&junk, b"not a table").expect("write");
    let out = strata(
        &[&db, "ingest_extern_sst", junk.to_str().expect("utf-8")],
        "",
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("junk.sst"), "{}", stderr(&out));
    // --move_files takes the file away.
    let out = strata(&[&db, "ingest_extern_sst", sst_arg, "--move_files"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!sst.exists(), "--move_files left the source");
}

/// An ingested table ends in the tail recording its global seqno: `sst
/// dump` shows it among the properties, and `sst verify` and
/// `checkconsistency` accept the table, its superseded bytes included.
#[test]
fn an_ingested_table_with_its_global_seqno_tail_verifies() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db_dir = dir.path().join("db");
    let db = format!("--db={}", db_dir.display());
    let sst = dir.path().join("bulk.sst");
    let sst_arg = sst.to_str().expect("utf-8 path");
    let out = strata(&["sst", "build", "--output", sst_arg], "a ==> 1\nb ==> 2\n");
    assert!(out.status.success(), "{}", stderr(&out));
    let out = strata(&[&db, "--create_if_missing", "put", "a", "0"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let out = strata(&[&db, "ingest_extern_sst", sst_arg], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let mut tails = 0;
    for entry in std::fs::read_dir(&db_dir).expect("list") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "sst") {
            continue;
        }
        let file = path.to_str().expect("utf-8 path");
        let out = strata(&["sst", "dump", "--file", file, "--show_properties"], "");
        assert!(out.status.success(), "{}", stderr(&out));
        // The memtable's put is flushed first (sequence 1); the file
        // overlaps it and takes 2.
        if stdout(&out).contains("global seqno: 2\n") {
            tails += 1;
            assert!(
                std::fs::metadata(&path).expect("stat").len()
                    > std::fs::metadata(&sst).expect("stat").len()
            );
        }
        let out = strata(&["sst", "verify", "--file", file], "");
        assert_eq!(stdout(&out), "OK\n", "{}", stderr(&out));
    }
    assert_eq!(tails, 1);
    let out = strata(&[&db, "checkconsistency"], "");
    assert_eq!(stdout(&out), "OK\n", "{}", stderr(&out));
}
