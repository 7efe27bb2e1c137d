//! The tool opens a database with what its OPTIONS file records, and never
//! with less: an operator the file names holds where the MANIFEST has no
//! record of it, and a compaction filter the tool cannot supply stops it
//! rather than being dropped from the next OPTIONS file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use strata::compaction_filter::{CompactionFilter, Decision, FilterContext};
use strata::{Db, DbOptions};

use super::db::ok;
use super::{stderr, stdout, strata};

/// Runs `strata --db=DIR args...`, which must fail; returns its stderr.
fn fails(dir: &Path, args: &[&str]) -> String {
    let db = format!("--db={}", dir.to_str().expect("utf-8 path"));
    let mut all = vec![db.as_str()];
    all.extend_from_slice(args);
    let out = strata(&all, "");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{args:?} did not fail: {}{}",
        stdout(&out),
        stderr(&out)
    );
    stderr(&out)
}

/// The engine's fixture `name` copied into a fresh directory.
fn copy_fixture(name: &str) -> tempfile::TempDir {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../strata/tests/fixtures")
        .join(name);
    let dir = tempfile::tempdir().expect("tempdir");
    for entry in std::fs::read_dir(from).expect("fixture folder") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).expect("copy");
    }
    dir
}

/// The OPTIONS files of `dir`, with their text.
fn options_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut files: Vec<(PathBuf, String)> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.to_string_lossy().contains("OPTIONS-"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("read OPTIONS");
            (p, text)
        })
        .collect();
    files.sort();
    files
}

/// A database written before the MANIFEST recorded merge operators, its
/// counter merged with uint64add: `--merge_operator=stringappend` used to
/// read the operands joined by commas and record StringAppendOperator, and
/// uint64add was refused from then on.
#[test]
fn an_earlier_database_keeps_the_merge_operator_its_options_file_names() {
    let dir = copy_fixture("v3-merge");
    let db = dir.path();
    for args in [
        &["--merge_operator=stringappend", "get", "counter"][..],
        &["--merge_operator=stringappend", "put", "x", "y"][..],
    ] {
        let err = fails(db, args);
        assert!(
            err.contains("UInt64AddOperator") && err.contains("StringAppendOperator"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(
        ok(db, &["--hex", "get", "0x636f756e746572"], ""),
        "0x0700000000000000\n"
    );
    assert_eq!(
        ok(db, &["--column_family=log", "get", "line"], ""),
        "a|b|c\n"
    );
}

/// Drops values that start with `tmp:`.
#[derive(Debug)]
struct DropTmp;

impl CompactionFilter for DropTmp {
    fn name(&self) -> &str {
        "my.DropTmpFilter"
    }

    fn filter(&self, _: &FilterContext, _: &[u8], value: &[u8]) -> Decision {
        if value.starts_with(b"tmp:") {
            Decision::Remove
        } else {
            Decision::Keep
        }
    }
}

/// The application's compaction filter is code the tool lacks: opening
/// without it would compact without it and write an OPTIONS file with
/// `compaction_filter=nullptr`, so the tool stops, naming it (it used to
/// open, and drop it).
#[test]
fn a_compaction_filter_the_tool_lacks_stops_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    let options = DbOptions {
        create_if_missing: true,
        compaction_filter: Some(Arc::new(DropTmp)),
        ..DbOptions::default()
    };
    let lib = Db::open(db, options).expect("open");
    lib.put("k", "tmp:1").expect("put");
    lib.flush().expect("flush");
    lib.close().expect("close");
    let before = options_files(db);
    let stored = &before.last().expect("an OPTIONS file").1;
    assert!(
        stored.contains("compaction_filter=my.DropTmpFilter"),
        "{stored}"
    );
    for args in [&["get", "k"][..], &["compact"][..], &["put", "a", "b"][..]] {
        let err = fails(db, args);
        assert!(err.contains("my.DropTmpFilter"), "{args:?}: {err}");
    }
    assert_eq!(options_files(db), before, "an OPTIONS file was rewritten");
}
