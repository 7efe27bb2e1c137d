//! The tool opens a database with what its OPTIONS file records, and never
//! with less: an operator the file names holds where the MANIFEST has no
//! record of it.

use std::path::Path;

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
