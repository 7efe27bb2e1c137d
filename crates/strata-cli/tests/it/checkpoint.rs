//! `strata --db=D checkpoint --checkpoint_dir=C`, as ldb's checkpoint.

use crate::{stderr, stdout, strata};

#[test]
fn checkpoint_makes_a_copy_that_opens() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = format!("--db={}", dir.path().join("db").display());
    let copy = dir.path().join("copy");
    let out = strata(&[&db, "--create_if_missing", "put", "k", "v"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let target = format!("--checkpoint_dir={}", copy.display());
    let out = strata(&[&db, "checkpoint", &target], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "OK\n");
    let out = strata(&[&db, "put", "k", "later"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let out = strata(&[&format!("--db={}", copy.display()), "get", "k"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "v\n");
    // The same directory again: refused, naming it.
    let out = strata(&[&db, "checkpoint", &target], "");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("already exists"), "{}", stderr(&out));
}
