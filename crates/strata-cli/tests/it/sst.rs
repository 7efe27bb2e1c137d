//! `strata sst build | dump | verify` as a user runs them.

use std::path::Path;
use std::process::Output;

use super::{stderr, stdout, strata};

fn build(path: &Path, extra: &[&str], input: &str) -> Output {
    let mut args = vec![
        "sst",
        "build",
        "--output",
        path.to_str().expect("utf-8 path"),
    ];
    args.extend_from_slice(extra);
    strata(&args, input)
}

#[test]
fn build_dump_verify_roundtrip() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sst = dir.path().join("t.sst");
    let input = "apple ==> red\nbanana ==> yellow\ncherry ==> dark red\n";
    for codec in ["none", "snappy", "lz4", "zstd"] {
        let out = build(
            &sst,
            &["--compression", codec, "--checksum", "crc32c"],
            input,
        );
        assert!(out.status.success(), "{codec}: {}", stderr(&out));

        let f = sst.to_str().expect("utf-8");
        let out = strata(&["sst", "dump", "--file", f, "--scan"], "");
        assert!(out.status.success());
        assert_eq!(
            stdout(&out),
            "apple : red\nbanana : yellow\ncherry : dark red\n"
        );

        let out = strata(&["sst", "dump", "--file", f, "--show_properties"], "");
        let text = stdout(&out);
        let entries = text
            .lines()
            .find(|l| l.contains("entries"))
            .expect("entries line");
        assert!(entries.ends_with(": 3"), "{entries}");
        assert!(text.contains(&format!("compression: {codec}")), "{text}");

        let out = strata(&["sst", "verify", "--file", f], "");
        assert!(out.status.success());
        assert_eq!(stdout(&out), "OK\n");
    }
}

#[test]
fn partitioned_tables_build_dump_and_verify() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sst = dir.path().join("t.sst");
    let input: String = (0..200)
        .map(|i| format!("key{i:04} ==> value{i}\n"))
        .collect();
    let partitioned = [
        "--index_type",
        "kTwoLevelIndexSearch",
        "--partition_filters",
        "--metadata_block_size",
        "64",
        "--block_size",
        "128",
    ];
    let out = build(&sst, &partitioned, &input);
    assert!(out.status.success(), "{}", stderr(&out));
    let f = sst.to_str().expect("utf-8");
    let out = strata(&["sst", "dump", "--file", f, "--scan"], "");
    assert_eq!(stdout(&out).lines().count(), 200);
    let text = stdout(&strata(
        &["sst", "dump", "--file", f, "--show_properties"],
        "",
    ));
    let partitions = text
        .lines()
        .find_map(|l| l.strip_prefix("index partitions: "))
        .expect("index partitions line");
    assert!(partitions.parse::<u32>().expect("a number") > 1, "{text}");
    assert!(text.contains("format version: 3"), "{text}");
    assert_eq!(stdout(&strata(&["sst", "verify", "--file", f], "")), "OK\n");
    let out = build(&sst, &["--index_type", "kHashSearch"], &input);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("kHashSearch"), "{}", stderr(&out));
}

#[test]
fn range_and_hex_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sst = dir.path().join("t.sst");
    let out = build(&sst, &[], "a ==> 1\nb ==> 2\nc ==> 3\nd ==> 4\n");
    assert!(out.status.success());
    let f = sst.to_str().expect("utf-8");
    let out = strata(
        &["sst", "dump", "--file", f, "--from", "b", "--to", "d"],
        "",
    );
    assert_eq!(stdout(&out), "b : 2\nc : 3\n");
    let out = strata(&["sst", "dump", "--file", f, "--hex", "--from", "0x63"], "");
    assert_eq!(stdout(&out), "0x63 : 0x33\n0x64 : 0x34\n");
}

#[test]
fn unsorted_input_names_the_line_unless_sorted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sst = dir.path().join("t.sst");
    let input = "a ==> 1\nc ==> 3\nb ==> 2\nc ==> 4\n";
    let out = build(&sst, &[], input);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("line 3"), "{}", stderr(&out));

    let out = build(&sst, &["--sort"], input);
    assert!(out.status.success(), "{}", stderr(&out));
    let f = sst.to_str().expect("utf-8");
    let out = strata(&["sst", "dump", "--file", f, "--scan"], "");
    assert_eq!(stdout(&out), "a : 1\nb : 2\nc : 4\n", "later lines win");
}

#[test]
fn bad_input_and_options_are_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sst = dir.path().join("t.sst");
    let out = build(&sst, &[], "no arrow here\n");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("line 1"));

    let out = build(&sst, &["--block_size", "0"], "a ==> 1\n");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("block_size"), "{}", stderr(&out));

    let out = build(&sst, &["--compression", "brotli"], "a ==> 1\n");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("compression"), "{}", stderr(&out));

    let out = build(&sst, &["--block_restart_interval", "0"], "a ==> 1\n");
    assert!(
        stderr(&out).contains("block_restart_interval"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn verify_reports_corruption_with_offset() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sst = dir.path().join("t.sst");
    let input: String = (0..2000)
        .map(|i| format!("key{i:05} ==> value{i}\n"))
        .collect();
    assert!(build(&sst, &["--compression", "none"], &input)
        .status
        .success());
    let mut bytes = std::fs::read(&sst).expect("read");
    bytes[5000] ^= 0x10; // inside a data block
    std::fs::write(&sst, &bytes).expect("write");
    let out = strata(
        &["sst", "verify", "--file", sst.to_str().expect("utf-8")],
        "",
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("Corruption"), "{err}");
    assert!(err.contains("offset"), "{err}");
    assert!(stdout(&out).is_empty());
}

#[test]
fn not_a_table_is_corruption() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("junk.sst");
    std::fs::write(&f, vec![7u8; 1000]).expect("write");
    let out = strata(&["sst", "dump", "--file", f.to_str().expect("utf-8")], "");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("Corruption"), "{}", stderr(&out));
}

#[test]
fn hex_input_needs_a_lower_case_0x_prefix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sst = dir.path().join("t.sst");
    let out = build(&sst, &["--hex"], "61 ==> 0x31\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("line 1: key \"61\""),
        "{}",
        stderr(&out)
    );
    assert!(!sst.exists());

    let out = build(&sst, &["--hex"], "0x61 ==> 0x31\n0x62 ==> 0x32\n");
    assert!(out.status.success(), "{}", stderr(&out));
    let f = sst.to_str().expect("utf-8");
    let out = strata(&["sst", "dump", "--file", f, "--hex", "--from", "0X62"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--from \"0X62\""), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("must start with 0x"),
        "{}",
        stderr(&out)
    );
}
