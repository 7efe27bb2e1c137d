//! `strata idump`: every stored version, in ldb's format.

use crate::db::{ok, open_lib};

#[test]
fn idump_prints_every_version_as_ldb_does_plus_range_tombstones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    // Written in one process, so no flush or compaction drops a version
    // before `idump` reads the WAL back.
    let lib = open_lib(db);
    lib.put("a", "1").expect("put");
    lib.put("b", "2").expect("put");
    lib.put("a", "3").expect("put");
    lib.delete("b").expect("delete");
    lib.delete_range("c", "e").expect("delete_range");
    lib.put("d", "5").expect("put");
    lib.close().expect("close");
    // The lines ldb 7.8's idump prints for the same commands, with the range
    // tombstone (type 15) that ldb leaves out.
    let all = "'a' seq:3, type:1 => 3\n\
               'a' seq:1, type:1 => 1\n\
               'b' seq:4, type:0 => \n\
               'b' seq:2, type:1 => 2\n\
               'c' seq:5, type:15 => e\n\
               'd' seq:6, type:1 => 5\n\
               Internal keys in range: 6\n";
    assert_eq!(ok(db, &["idump"], ""), all);
    // After a flush the versions come from a table and read the same.
    ok(db, &["compact"], "");
    let compacted = ok(db, &["idump"], "");
    assert!(
        compacted.contains("'a' seq:3, type:1 => 3\n"),
        "{compacted}"
    );
    assert!(!compacted.contains("seq:1,"), "{compacted}");
    assert_eq!(
        ok(db, &["--hex", "idump", "--from=0x61", "--to=0x62"], ""),
        "'61' seq:3, type:1 => 33\nInternal keys in range: 1\n"
    );
    assert_eq!(
        ok(db, &["idump", "--count_only", "--max_keys=1"], ""),
        "Internal keys in range: 1\n"
    );
}
