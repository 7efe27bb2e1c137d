//! The ldb-style database commands as a user runs them: every command is a new
//! process on the same `--db` directory.

use std::path::{Path, PathBuf};
use std::process::Output;

use strata::{Db, DbOptions};

use super::{stderr, stdout, strata};

/// Runs `strata --db=DIR args...`.
fn on_db(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let db = format!("--db={}", dir.to_str().expect("utf-8 path"));
    let mut all = vec![db.as_str()];
    all.extend_from_slice(args);
    strata(&all, stdin)
}

/// Runs a command that must succeed and returns its stdout.
pub fn ok(dir: &Path, args: &[&str], stdin: &str) -> String {
    let out = on_db(dir, args, stdin);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

/// Runs a command that must fail with exit status 1 and nothing on stdout;
/// returns its stderr.
fn fails(dir: &Path, args: &[&str], stdin: &str) -> String {
    let out = on_db(dir, args, stdin);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
    assert_eq!(stdout(&out), "", "{args:?}");
    stderr(&out)
}

pub fn open_lib(dir: &Path) -> Db {
    let options = DbOptions {
        create_if_missing: true,
        ..DbOptions::default()
    };
    Db::open(dir, options).expect("open")
}

/// Files of `dir` whose names end with `suffix`, sorted.
fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    files.sort();
    files
}

#[test]
fn put_get_delete_across_processes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    assert_eq!(
        ok(db, &["--create_if_missing", "put", "k1", "v1"], ""),
        "OK\n"
    );
    assert_eq!(ok(db, &["put", "k2", "v2"], ""), "OK\n");
    assert_eq!(ok(db, &["get", "k1"], ""), "v1\n");
    // ldb takes its options after the command name too.
    assert_eq!(ok(db, &["get", "k2", "--value_hex"], ""), "0x7632\n");
    assert_eq!(ok(db, &["put", "k1", "v1b"], ""), "OK\n");
    assert_eq!(ok(db, &["get", "k1"], ""), "v1b\n");
    assert_eq!(ok(db, &["delete", "k1"], ""), "OK\n");
    let err = fails(db, &["get", "k1"], "");
    assert!(
        err.contains("NotFound") && err.contains("Key not found"),
        "{err}"
    );
    assert_eq!(ok(db, &["get", "k2"], ""), "v2\n");
    // Keys that look like flags are keys, as in ldb.
    assert_eq!(ok(db, &["put", "-k", "-v"], ""), "OK\n");
    assert_eq!(ok(db, &["get", "-k"], ""), "-v\n");
}

#[test]
fn get_of_a_missing_key_fails_with_not_found() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    ok(db, &["--create_if_missing", "put", "a", "1"], "");
    let err = fails(db, &["get", "b"], "");
    assert!(err.starts_with("Failed: "), "{err}");
    assert!(err.contains("NotFound"), "{err}");
    assert!(err.contains("Key not found"), "{err}");
}

#[test]
fn missing_db_and_usage_errors_exit_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let absent = dir.path().join("absent");
    let err = fails(&absent, &["put", "a", "1"], "");
    assert!(err.contains("create_if_missing"), "{err}");
    let err = fails(&absent, &["get", "a"], "");
    assert!(err.contains("not a Strata database"), "{err}");
    let out = strata(&["get", "a"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--db"), "{}", stderr(&out));
    let out = strata(&["--db=/nonexistent", "frobnicate"], "");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn batchput_is_one_write_and_needs_pairs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    let out = ok(
        db,
        &[
            "--create_if_missing",
            "batchput",
            "a",
            "1",
            "b",
            "2",
            "c",
            "3",
        ],
        "",
    );
    assert_eq!(out, "OK\n");
    assert_eq!(ok(db, &["scan"], ""), "a : 1\nb : 2\nc : 3\n");
    let err = fails(db, &["batchput", "x", "1", "y"], "");
    assert!(err.contains("Equal number"), "{err}");
    assert!(fails(db, &["batchput"], "").contains("At least one"));
    assert!(fails(db, &["get", "x"], "").contains("NotFound"));
}

#[test]
fn scan_with_range_limit_and_no_value() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    ok(
        db,
        &[
            "--create_if_missing",
            "batchput",
            "a",
            "1",
            "b",
            "2",
            "c",
            "3",
            "d",
            "4",
            "e",
            "5",
        ],
        "",
    );
    ok(db, &["delete", "c"], "");
    assert_eq!(ok(db, &["scan"], ""), "a : 1\nb : 2\nd : 4\ne : 5\n");
    assert_eq!(
        ok(db, &["scan", "--from=b", "--to=e"], ""),
        "b : 2\nd : 4\n"
    );
    assert_eq!(ok(db, &["scan", "--from=bb"], ""), "d : 4\ne : 5\n");
    assert_eq!(ok(db, &["scan", "--max_keys=2"], ""), "a : 1\nb : 2\n");
    assert_eq!(ok(db, &["scan", "--max_keys=-1", "--to=b"], ""), "a : 1\n");
    assert_eq!(
        ok(db, &["scan", "--no_value", "--from=b", "--max_keys=2"], ""),
        "b\nd\n"
    );
    assert_eq!(ok(db, &["scan", "--from=z"], ""), "");
}

#[test]
fn load_then_dump_round_trips() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("one");
    let db = db.as_path();
    // More lines than one load batch holds; later lines win, also across batches.
    let mut input: String = (0..2500)
        .map(|i| format!("key{i:05} ==> value{i}\n"))
        .collect();
    input.push_str("not a key-value line\n");
    input.push_str("key00007 ==> seven ==> with arrow\n");
    let out = on_db(db, &["--create_if_missing", "load"], &input);
    assert!(out.status.success(), "{}", stderr(&out));
    // ldb's warning, on stdout as ldb prints it; the line number on stderr.
    assert_eq!(stdout(&out), "Warning: 1 bad lines ignored.\n");
    assert!(stderr(&out).contains("line 2501"), "{}", stderr(&out));

    let dump = ok(db, &["dump"], "");
    let lines: Vec<&str> = dump.lines().collect();
    assert_eq!(lines.len(), 2501);
    assert_eq!(lines[0], "key00000 ==> value0");
    assert_eq!(lines[7], "key00007 ==> seven ==> with arrow");
    assert_eq!(lines[2500], "Keys in range: 2500");
    assert_eq!(ok(db, &["get", "key02499"], ""), "value2499\n");

    // A dump loads back into another database unchanged, in hex as well.
    let hex_dump = ok(db, &["dump", "--hex"], "");
    assert!(hex_dump.starts_with("0x6B65793030303030 ==> 0x76616C756530\n"));
    let two = dir.path().join("two");
    ok(&two, &["--create_if_missing", "--hex", "load"], &hex_dump);
    assert_eq!(ok(&two, &["dump"], ""), dump);
    assert_eq!(
        ok(&two, &["dump", "--from=key00010", "--to=key00012"], ""),
        "key00010 ==> value10\nkey00011 ==> value11\nKeys in range: 2\n"
    );
    assert_eq!(
        ok(&two, &["dump", "--count_only"], ""),
        "Keys in range: 2500\n"
    );
}

#[test]
fn load_reads_lines_as_ldb_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("one");
    let db = db.as_path();
    // A "\r" before the newline is data; a footer-like line with the arrow
    // is a pair; the footer, ldb's thread line and blank lines are skipped,
    // and only the blank line counts as bad.
    let input = "a ==> v\r\nKeys in range: x ==> y\nKeys in range: 2\n\
        Created bg thread 0x7f ignored\n\nb\r ==> w\n";
    assert_eq!(
        ok(db, &["--create_if_missing", "load"], input),
        "Warning: 1 bad lines ignored.\n"
    );
    assert_eq!(
        ok(db, &["--hex", "scan"], ""),
        "0x4B65797320696E2072616E67653A2078 : 0x79\n0x61 : 0x760D\n0x620D : 0x77\n"
    );
    // What dump prints loads back byte for byte, "\r" included.
    let two = dir.path().join("two");
    ok(
        &two,
        &["--create_if_missing", "load"],
        &ok(db, &["dump"], ""),
    );
    assert_eq!(
        ok(&two, &["--hex", "scan"], ""),
        ok(db, &["--hex", "scan"], "")
    );
}

#[test]
fn load_rejects_bad_hex_naming_the_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    let err = fails(
        db,
        &["--create_if_missing", "--key_hex", "load"],
        "0x61 ==> 1\n0xZZ ==> 2\n",
    );
    assert!(err.contains("line 2"), "{err}");
}

#[test]
fn hex_keys_and_values_in_and_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    ok(
        db,
        &["--create_if_missing", "--hex", "put", "0x00FF", "0x0A0B"],
        "",
    );
    assert_eq!(ok(db, &["--hex", "get", "0x00ff"], ""), "0x0A0B\n");
    assert_eq!(ok(db, &["--hex", "scan"], ""), "0x00FF : 0x0A0B\n");
    assert_eq!(
        ok(db, &["--key_hex", "scan", "--from=0x00"], ""),
        "0x00FF : \n\x0b\n"
    );
    assert_eq!(
        ok(db, &["--value_hex", "dump"], "").lines().next(),
        Some("\0\u{FFFD} ==> 0x0A0B")
    );
    // Without hex, bytes go out raw (not lossy), as ldb writes them.
    let out = on_db(db, &["scan"], "");
    assert_eq!(out.stdout, b"\x00\xff : \x0a\x0b\n");
    let err = fails(db, &["--hex", "get", "0xABC"], "");
    assert!(err.contains("odd number"), "{err}");
}

#[test]
fn get_property_after_a_flush() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    let lib = open_lib(db);
    lib.put(b"a", b"1").expect("put");
    lib.flush().expect("flush");
    lib.close().expect("close");
    assert_eq!(
        ok(db, &["get_property", "strata.num-files-at-level0"], ""),
        "strata.num-files-at-level0: 1\n"
    );
    assert_eq!(
        ok(db, &["get_property", "rocksdb.num-files-at-level1"], ""),
        "rocksdb.num-files-at-level1: 0\n"
    );
    let err = fails(db, &["get_property", "strata.no-such-property"], "");
    assert!(err.contains("strata.no-such-property"), "{err}");
}

#[test]
fn manifest_dump_reads_a_db_in_use() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    let lib = open_lib(db);
    lib.put(b"apple", b"red").expect("put");
    lib.flush().expect("flush");
    // The database stays open (and locked) while manifest_dump reads it.
    let out = ok(db, &["manifest_dump"], "");
    assert!(out.contains("edit #0 at offset 0\n"), "{out}");
    assert!(out.contains("  log_number: "), "{out}");
    assert!(out.contains("  next_file_number: "), "{out}");
    assert!(out.contains("add file L0 #"), "{out}");
    assert!(out.contains("keys=['apple'@1 .. 'apple'@1]"), "{out}");
    let edits = out.matches("edit #").count();
    assert!(edits >= 2, "the flush appends an edit: {out}");
    assert!(out.contains(&format!("--- the state after {edits} edits ---")));
    assert!(out.contains("--- column family 0 \"default\" ---"), "{out}");
    // Reads open the database read-only, beside the writer; writes need the lock.
    assert_eq!(ok(db, &["get", "apple"], ""), "red\n");
    let err = fails(db, &["put", "apple", "green"], "");
    assert!(err.contains("Lock held"), "{err}");
    lib.close().expect("close");

    let manifest = files_ending(db, "")
        .into_iter()
        .find(|p| p.to_string_lossy().contains("MANIFEST-"))
        .expect("a MANIFEST");
    let path_arg = format!("--path={}", manifest.display());
    let out = strata(&["manifest_dump", &path_arg], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("add file L0 #"));
}

/// Writes a WAL of two records (a put and a delete) with the library and
/// returns its path; closing syncs the WAL and flushes nothing.
fn wal_with_two_records(db: &Path) -> PathBuf {
    let lib = open_lib(db);
    lib.put(b"k", b"v").expect("put");
    lib.delete(b"gone").expect("delete");
    lib.close().expect("close");
    let logs = files_ending(db, ".log");
    let wal = logs.last().expect("a WAL").clone();
    assert!(std::fs::metadata(&wal).expect("stat").len() > 0);
    wal
}

#[test]
fn dump_wal_prints_the_write_batches() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    let wal = wal_with_two_records(db);
    let walfile = format!("--walfile={}", wal.display());
    let out = strata(&["dump_wal", &walfile, "--header", "--print_value"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(
        lines[0],
        "Sequence,Count,ByteSize,Physical Offset,Key(s) : value "
    );
    assert!(lines[1].starts_with("1,1,"), "{text}");
    assert!(lines[1].ends_with(",0,PUT(0) : 0x6B : 0x76 "), "{text}");
    assert!(lines[2].starts_with("2,1,"), "{text}");
    assert!(lines[2].ends_with("DELETE(0) : 0x676F6E65 "), "{text}");

    // Without --print_value, keys only; a directory dumps each WAL in turn.
    let walfile = format!("--walfile={}", db.display());
    let text = stdout(&strata(&["dump_wal", &walfile], ""));
    assert!(text.starts_with("Checking wal file: "), "{text}");
    assert!(text.contains(",0,PUT(0) : 0x6B \n"), "{text}");

    // A CLI put's WAL, before anything reopens the database.
    let two = dir.path().join("two");
    ok(&two, &["--create_if_missing", "put", "key", "value"], "");
    let wal = files_ending(&two, ".log").pop().expect("a WAL");
    let walfile = format!("--walfile={}", wal.display());
    let text = stdout(&strata(&["dump_wal", &walfile, "--print_value"], ""));
    assert!(
        text.ends_with("PUT(0) : 0x6B6579 : 0x76616C7565 \n"),
        "{text}"
    );
}

#[test]
fn dump_wal_reports_a_torn_tail_and_corruption() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wal = wal_with_two_records(dir.path());
    let bytes = std::fs::read(&wal).expect("read");

    // Cut inside the second record: a torn tail, what a crash leaves.
    let torn = dir.path().join("torn.log");
    std::fs::write(&torn, &bytes[..bytes.len() - 3]).expect("write");
    let out = strata(&["dump_wal", &format!("--walfile={}", torn.display())], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 1);
    assert!(stderr(&out).contains("torn tail"), "{}", stderr(&out));

    // A changed byte in the first record, with a record after it: corruption.
    let bad = dir.path().join("bad.log");
    let mut changed = bytes.clone();
    changed[10] ^= 0x01;
    std::fs::write(&bad, &changed).expect("write");
    let out = strata(&["dump_wal", &format!("--walfile={}", bad.display())], "");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("Corruption"), "{err}");
    assert!(err.contains("bad.log"), "{err}");
}

#[test]
fn checkconsistency_passes_then_catches_a_flipped_byte() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    let lib = open_lib(db);
    for i in 0..2000u32 {
        let key = format!("key{i:05}");
        lib.put(key.as_bytes(), format!("value{i}").as_bytes())
            .expect("put");
    }
    lib.flush().expect("flush");
    lib.put(b"in-the-wal", b"1").expect("put");
    lib.close().expect("close");
    assert_eq!(ok(db, &["checkconsistency"], ""), "OK\n");

    let tables = files_ending(db, ".sst");
    let largest = tables
        .iter()
        .max_by_key(|p| std::fs::metadata(p).expect("stat").len())
        .expect("a table");
    let mut bytes = std::fs::read(largest).expect("read");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x10;
    std::fs::write(largest, &bytes).expect("write");
    let err = fails(db, &["checkconsistency"], "");
    assert!(err.contains("Corruption"), "{err}");
    assert!(err.contains(&*largest.to_string_lossy()), "{err}");
}

#[test]
fn checkconsistency_refuses_a_corrupt_wal_without_opening() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    let wal = wal_with_two_records(db);
    let mut bytes = std::fs::read(&wal).expect("read");
    bytes[10] ^= 0x01;
    std::fs::write(&wal, &bytes).expect("write");
    let err = fails(db, &["checkconsistency"], "");
    // Reported as WAL damage (with what it dropped), not as a bare Corruption.
    assert!(err.contains("WAL #1 damaged at offset 0"), "{err}");
    // The WAL is still there: recovery did not run and drop its records.
    assert_eq!(std::fs::read(&wal).expect("read"), bytes);
}

#[test]
fn compact_moves_the_range_to_the_last_level() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    let lines: String = (0..300).map(|i| format!("k{i:03} ==> v{i}\n")).collect();
    ok(db, &["--create_if_missing", "load"], &lines);
    ok(db, &["put", "k999", "late"], "");
    let level = |n: u32| -> String {
        let out = ok(
            db,
            &["get_property", &format!("strata.num-files-at-level{n}")],
            "",
        );
        out.trim().rsplit(' ').next().expect("a value").to_string()
    };
    // As ldb's compact: silent on success.
    assert_eq!(ok(db, &["compact", "--from=k000", "--to=k999"], ""), "");
    assert_eq!(level(0), "0");
    assert_ne!(level(6), "0");
    assert_eq!(ok(db, &["compact"], ""), "");
    assert_eq!(ok(db, &["get", "k150"], ""), "v150\n");
    assert_eq!(ok(db, &["get", "k999"], ""), "late\n");
    let err = fails(db, &["compact", "--key_hex", "--from=0xZZ"], "");
    assert!(err.contains("hex"), "{err}");
}

#[test]
fn help_says_what_each_write_prints() {
    let out = strata(&["--help"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let help = stdout(&out);
    let summary = |command: &str| -> String {
        help.lines()
            .find(|l| l.split_whitespace().next() == Some(command))
            .unwrap_or_else(|| panic!("no `{command}` in the help:\n{help}"))
            .to_string()
    };
    for command in [
        "put",
        "delete",
        "deleterange",
        "batchput",
        "checkconsistency",
    ] {
        assert!(
            summary(command).ends_with("prints OK"),
            "{}",
            summary(command)
        );
    }
    // compact is silent on success (see compact_moves_the_range_to_the_last_level).
    let compact = summary("compact");
    assert!(!compact.contains("OK"), "{compact}");
    assert!(compact.contains("prints nothing"), "{compact}");
    let own = stdout(&strata(&["compact", "--help"], ""));
    assert!(!own.contains("OK"), "{own}");
}

#[test]
fn hex_input_needs_a_lower_case_0x_prefix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    ok(
        db,
        &["--create_if_missing", "--hex", "put", "0x61", "0x62"],
        "",
    );
    // Digits may be either case, as ldb's DecodeHex takes them.
    assert_eq!(ok(db, &["--hex", "get", "0x61"], ""), "0x62\n");
    ok(db, &["--hex", "put", "0x6A", "0x6b"], "");
    assert_eq!(ok(db, &["get", "j"], ""), "k\n");

    // Each refusal names the argument that was not hex and what it lacks.
    let cases: &[(&[&str], &str)] = &[
        (&["--hex", "get", "61"], "key \"61\""),
        (&["--hex", "get", "0X61"], "key \"0X61\""),
        (&["--key_hex", "put", "6162", "v"], "key \"6162\""),
        (&["--value_hex", "put", "k", "0X62"], "value \"0X62\""),
        (&["--hex", "batchput", "0x61", "62"], "value \"62\""),
        (&["--hex", "delete", "X61"], "key \"X61\""),
        (&["--key_hex", "scan", "--from=61"], "--from \"61\""),
        (&["--key_hex", "dump", "--to=0X7A"], "--to \"0X7A\""),
        (&["--key_hex", "compact", "--to=7a"], "--to \"7a\""),
    ];
    for (args, names) in cases {
        let err = fails(db, args, "");
        assert!(err.contains(names), "{args:?}: {err}");
        assert!(err.contains("must start with 0x"), "{args:?}: {err}");
    }
    let err = fails(db, &["--hex", "load"], "0x63 ==> 0x64\n63 ==> 0x64\n");
    assert!(err.contains("line 2: key \"63\""), "{err}");
    assert!(err.contains("must start with 0x"), "{err}");
    let err = fails(db, &["--value_hex", "load"], "c ==> 0X64\n");
    assert!(err.contains("line 1: value \"0X64\""), "{err}");

    // Nothing was written by the refused commands.
    assert_eq!(ok(db, &["scan"], ""), "a : b\nj : k\n");
}

#[test]
fn column_family_commands() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    assert_eq!(
        ok(db, &["--create_if_missing", "put", "k", "d"], ""),
        "OK\n"
    );
    assert_eq!(ok(db, &["create_column_family", "users"], ""), "OK\n");
    let err = fails(db, &["create_column_family", "users"], "");
    assert!(err.contains("already exists"), "{err}");
    assert_eq!(
        ok(db, &["--column_family=users", "put", "k", "u"], ""),
        "OK\n"
    );
    assert_eq!(
        ok(db, &["--column_family=users", "load"], "a ==> 1\nb ==> 2\n"),
        ""
    );
    assert_eq!(ok(db, &["get", "k"], ""), "d\n");
    assert_eq!(ok(db, &["get", "k", "--column_family=users"], ""), "u\n");
    assert_eq!(
        ok(db, &["--column_family=users", "scan"], ""),
        "a : 1\nb : 2\nk : u\n"
    );
    assert_eq!(ok(db, &["scan"], ""), "k : d\n");
    let listed = ok(db, &["list_column_families"], "");
    assert!(listed.ends_with("{default, users}\n"), "{listed}");
    let out = ok(db, &["manifest_dump"], "");
    assert!(out.contains("add column family \"users\""), "{out}");
    assert!(out.contains("--- column family 1 \"users\" ---"), "{out}");
    let err = fails(db, &["--column_family=nope", "get", "k"], "");
    assert!(err.contains("\"nope\" does not exist"), "{err}");
    assert_eq!(ok(db, &["drop_column_family", "users"], ""), "OK\n");
    let listed = ok(db, &["list_column_families"], "");
    assert!(listed.ends_with("{default}\n"), "{listed}");
    let err = fails(db, &["drop_column_family", "default"], "");
    assert!(err.contains("cannot be dropped"), "{err}");
}

#[test]
fn compact_keeps_a_fifo_database_fifo() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    let fifo = || strata::DbOptions {
        create_if_missing: true,
        compaction: strata::CompactionOptions {
            compaction_style: strata::CompactionStyle::Fifo,
            ..strata::CompactionOptions::default()
        },
        ..strata::DbOptions::default()
    };
    let lib = Db::open(db, fifo()).expect("open");
    for i in 0..3 {
        lib.put(format!("k{i}"), "v").expect("put");
        lib.flush().expect("flush");
    }
    lib.close().expect("close");
    // The tool opens with the stored options: FIFO compacts nothing.
    assert_eq!(ok(db, &["compact"], ""), "");
    let lib = Db::open(db, fifo()).expect("reopen");
    assert_eq!(
        lib.property("rocksdb.num-files-at-level0").as_deref(),
        Some("3")
    );
    for level in 1..7 {
        assert_eq!(
            lib.property(&format!("rocksdb.num-files-at-level{level}"))
                .as_deref(),
            Some("0"),
            "level {level}"
        );
    }
    lib.close().expect("close");
    // The OPTIONS file says FIFO, as RocksDB spells it.
    let options = files_ending(db, "")
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("OPTIONS-"))
        .max()
        .expect("an OPTIONS file");
    let text = std::fs::read_to_string(options).expect("read OPTIONS");
    assert!(
        text.contains("compaction_style=kCompactionStyleFIFO"),
        "{text}"
    );
    let (loaded, _) = strata::load_latest_options(db, &strata::LoadOptions::default())
        .expect("load_latest_options");
    assert_eq!(
        loaded.compaction.compaction_style,
        strata::CompactionStyle::Fifo
    );
}

#[test]
fn deleterange_deletes_the_range_in_the_chosen_family() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    ok(
        db,
        &[
            "--create_if_missing",
            "batchput",
            "a",
            "1",
            "b",
            "2",
            "c",
            "3",
            "d",
            "4",
        ],
        "",
    );
    assert_eq!(ok(db, &["deleterange", "b", "d"], ""), "OK\n");
    assert_eq!(ok(db, &["scan"], ""), "a : 1\nd : 4\n");
    // Hex keys, and another family.
    ok(db, &["create_column_family", "users"], "");
    ok(
        db,
        &["--column_family=users", "batchput", "x", "1", "y", "2"],
        "",
    );
    assert_eq!(
        ok(
            db,
            &[
                "--column_family=users",
                "--hex",
                "deleterange",
                "0x78",
                "0x79"
            ],
            ""
        ),
        "OK\n"
    );
    assert_eq!(ok(db, &["--column_family=users", "scan"], ""), "y : 2\n");
    assert_eq!(ok(db, &["scan"], ""), "a : 1\nd : 4\n");
    let err = fails(db, &["deleterange", "d", "a"], "");
    assert!(err.contains("delete_range"), "{err}");
    // The tombstone outlives a compaction that leaves it data to cover.
    ok(db, &["compact"], "");
    assert_eq!(ok(db, &["scan"], ""), "a : 1\nd : 4\n");
}

#[test]
fn merge_uses_the_named_operator_and_remembers_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    let ok_merge = |args: &[&str]| assert_eq!(ok(db, args, ""), "OK\n");
    ok_merge(&[
        "--create_if_missing",
        "--merge_operator=uint64add",
        "--hex",
        "merge",
        "0x6b",
        "0x0100000000000000",
    ]);
    // The OPTIONS file names the operator: no flag needed any more.
    ok_merge(&["--hex", "merge", "0x6b", "0x0200000000000000"]);
    assert_eq!(
        ok(db, &["--hex", "get", "0x6b"], ""),
        "0x0300000000000000\n"
    );
    let err = fails(db, &["--merge_operator=nosuch", "get", "k"], "");
    assert!(err.contains("nosuch"), "{err}");
    // A family without an operator refuses merges.
    assert_eq!(ok(db, &["create_column_family", "plain"], ""), "OK\n");
    let err = fails(db, &["--column_family=plain", "merge", "k", "v"], "");
    assert!(err.contains("merge operator"), "{err}");
}

#[test]
fn approxsize_estimates_table_bytes_of_a_range() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    let lines: String = (0..3000)
        .map(|i| format!("key{i:05} ==> {}\n", "v".repeat(100)))
        .collect();
    assert_eq!(ok(db, &["--create_if_missing", "load"], &lines), "");
    assert_eq!(ok(db, &["compact"], ""), "");
    let number = |out: String| out.trim().parse::<u64>().expect("a number");
    let all = number(ok(db, &["approxsize"], ""));
    let third = number(ok(
        db,
        &["approxsize", "--from=key01000", "--to=key02000"],
        "",
    ));
    let none = number(ok(db, &["approxsize", "--from=x", "--to=y"], ""));
    assert!(all > 0);
    assert!(third > all / 5 && third < all / 2, "{third} of {all}");
    assert_eq!(none, 0);
}

#[test]
fn write_buffer_size_sets_the_memtable_of_the_named_family_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path();
    ok(
        db,
        &["--create_if_missing", "create_column_family", "big"],
        "",
    );
    // 3 MiB of writes into 1 MiB memtables: tables appear during the load
    // (the tool flushes nothing when it closes), as with ldb's flag.
    let lines: String = (0..3000)
        .map(|i| format!("key{i:05} ==> {}\n", "v".repeat(1000)))
        .collect();
    let flags = ["--column_family=big", "--write_buffer_size=1048576"];
    ok(db, &[flags[0], flags[1], "load"], &lines);
    let level0 = ok(
        db,
        &[flags[0], "get_property", "rocksdb.num-files-at-level0"],
        "",
    );
    assert_ne!(level0, "rocksdb.num-files-at-level0: 0\n");
    // The size is stored for that family; the default family keeps its own.
    let (default, families) = strata::load_latest_options(db, &strata::LoadOptions::default())
        .expect("load_latest_options");
    assert_eq!(default.write_buffer_size, 64 << 20);
    let big = families.iter().find(|(name, _)| name == "big");
    assert_eq!(big.map(|(_, cf)| cf.write_buffer_size), Some(1 << 20));
    assert_eq!(
        ok(db, &[flags[0], "get", "key02999"], ""),
        "v".repeat(1000) + "\n"
    );
}
