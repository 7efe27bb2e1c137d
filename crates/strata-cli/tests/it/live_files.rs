//! `list_live_files_metadata`, `dump_live_files` and `sst dump` of a
//! directory with `--command=raw`, as ldb and sst_dump print them.

use crate::{stderr, stdout, strata};

#[test]
fn live_files_are_listed_and_dumped_with_every_version() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let db = format!("--db={}", path.display());
    for (k, v) in [("a", "1"), ("b", "2")] {
        let out = strata(&[&db, "--create_if_missing", "put", k, v], "");
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let out = strata(&[&db, "compact"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let out = strata(&[&db, "put", "a", "newer"], "");
    assert!(out.status.success(), "{}", stderr(&out));

    let out = strata(&[&db, "list_live_files_metadata"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let listed = stdout(&out);
    assert!(
        listed.starts_with(
            "===== Column Family: default =====\nLive SST Files:\n---------- level 0 ----------\n"
        ),
        "{listed}"
    );
    let tables: Vec<&str> = listed.lines().filter(|l| l.ends_with(".sst")).collect();
    assert_eq!(tables.len(), 1, "{listed}");
    assert!(
        listed.ends_with("Live Blob Files:\n------------------------------\n"),
        "{listed}"
    );
    let out = strata(&[&db, "list_live_files_metadata", "--sort_by_filename"], "");
    assert!(
        stdout(&out).contains(&format!("{} : level ", tables[0])),
        "{}",
        stdout(&out)
    );

    let out = strata(&[&db, "dump_live_files"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let dumped = stdout(&out);
    for section in [
        "Manifest File\n",
        "SST Files\n",
        "Blob Files\n",
        "Write Ahead Log Files\n",
    ] {
        assert!(dumped.contains(section), "{section} missing:\n{dumped}");
    }
    // The table's entries with their sequence numbers and types; the
    // newer "a" still in the WAL.
    assert!(dumped.contains("'a' seq:1, type:1 => 1\n"), "{dumped}");
    assert!(dumped.contains("PUT(0) : 0x61 : 0x6E65776572"), "{dumped}");

    let flags = format!("--file={}", path.display());
    let out = strata(&["sst", "dump", &flags, "--command=raw"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let raw = stdout(&out);
    assert_eq!(raw.matches("Process ").count(), 1, "{raw}");
    assert!(raw.contains("'b' seq:2, type:1 => 2\n"), "{raw}");
    let empty = tempfile::tempdir().expect("tempdir");
    let out = strata(
        &["sst", "dump", &format!("--file={}", empty.path().display())],
        "",
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no .sst files"), "{}", stderr(&out));
}
