//! `strata dump --path=NNNNNN.blob`: a blob file's records, as ldb's blob dump.

use std::path::Path;

use strata::blob::BlobFileWriter;
use strata::fs::{Fs, StdFs};
use strata::CompressionType;

use crate::{stderr, stdout, strata};

/// Writes blob file 7 in `dir` with a value that compresses and one that
/// does not, returning its path.
fn write_blob_file(dir: &Path) -> String {
    let path = dir.join("000007.blob");
    let file = StdFs.create(&path).expect("create");
    let mut writer = BlobFileWriter::new(file, 7, 2, CompressionType::Lz4).expect("writer");
    writer.add(b"alpha", &[b'x'; 3000]).expect("add");
    writer.add(b"beta", b"v").expect("add");
    writer.finish().expect("finish");
    path.display().to_string()
}

#[test]
fn dump_prints_each_record_and_the_footer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write_blob_file(dir.path());
    let out = strata(&["dump", &format!("--path={path}")], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Column family ID : 2"), "{text}");
    assert!(text.contains("Compression      : lz4"), "{text}");
    assert!(
        text.contains("Record at offset 24: key 'alpha' (5 bytes), value 3000 bytes, stored "),
        "{text}"
    );
    // The one-byte value did not shrink, so it is stored as it is, right
    // after the first record.
    assert!(
        text.contains("key 'beta' (4 bytes), value 1 bytes, stored 1 bytes (none)"),
        "{text}"
    );
    assert!(text.contains("Footer: 2 records"), "{text}");
    assert!(
        !text.contains("value: "),
        "values only with the flag: {text}"
    );

    let out = strata(
        &[
            "dump",
            &format!("--path={path}"),
            "--dump_uncompressed_blobs",
            "--hex",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("key '0x616C706861'"), "{text}");
    assert!(
        text.contains(&format!("  value: 0x{}\n", "78".repeat(3000))),
        "{text}"
    );
    assert!(text.contains("  value: 0x76\n"), "{text}");
}

#[test]
fn dump_refuses_a_damaged_blob_file_and_other_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write_blob_file(dir.path());
    // Flip a byte of the second record's value (the last byte before the
    // 32-byte footer).
    let mut bytes = std::fs::read(&path).expect("read");
    let at = bytes.len() - 33;
    bytes[at] ^= 1;
    std::fs::write(&path, &bytes).expect("write");
    let out = strata(&["dump", &format!("--path={path}")], "");
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("Corruption") && err.contains("000007.blob"),
        "{err}"
    );
    assert!(err.contains("data checksum mismatch"), "{err}");

    let table = dir.path().join("000008.sst").display().to_string();
    let out = strata(&["dump", &format!("--path={table}")], "");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("takes a blob file"),
        "{}",
        stderr(&out)
    );

    let out = strata(
        &["--db=/nonexistent", "dump", "--dump_uncompressed_blobs"],
        "",
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("needs --path"), "{}", stderr(&out));
}

/// A database whose values of 100 bytes and more live in blob files, with
/// one table flushed: returns its path and the blob file's.
fn db_with_blobs(dir: &Path) -> (String, std::path::PathBuf) {
    let options = strata::DbOptions {
        create_if_missing: true,
        blob: strata::BlobOptions {
            enable_blob_files: true,
            min_blob_size: 100,
            ..strata::BlobOptions::default()
        },
        ..strata::DbOptions::default()
    };
    let db = strata::Db::open(dir, options).expect("open");
    db.put("big", [b'b'; 500]).expect("put");
    db.put("small", "s").expect("put");
    db.flush().expect("flush");
    drop(db);
    let blob = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").path())
        .find(|p| p.extension().is_some_and(|x| x == "blob"))
        .expect("a blob file");
    (dir.display().to_string(), blob)
}

#[test]
fn idump_and_sst_dump_show_blob_references() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (db, _) = db_with_blobs(dir.path());
    let out = strata(&[&format!("--db={db}"), "idump", "--decode_blob_index"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("'big' seq:1, type:17 => [blob ref] file_number: "),
        "{text}"
    );
    assert!(text.contains("size: 500 compression: "), "{text}");
    assert!(text.contains("'small' seq:2, type:1 => s"), "{text}");
    let table = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").path())
        .find(|p| p.extension().is_some_and(|x| x == "sst"))
        .expect("a table");
    let file = format!("--file={}", table.display());
    let out = strata(&["sst", "dump", &file, "--decode_blob_index"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("big : [blob ref] file_number: "),
        "{}",
        stdout(&out)
    );
    let out = strata(&["sst", "dump", &file], "");
    assert!(
        stdout(&out).contains("(blob reference)"),
        "{}",
        stdout(&out)
    );
}

/// Flips a byte of the last record's stored value: the file's size still
/// agrees with the MANIFEST, the record's checksum does not.
fn flip_value_byte(blob: &Path) {
    let mut bytes = std::fs::read(blob).expect("read");
    let at = bytes.len() - 32 - 10;
    bytes[at] ^= 1;
    std::fs::write(blob, &bytes).expect("write");
}

#[test]
fn checkconsistency_verifies_blob_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (db, blob) = db_with_blobs(dir.path());
    let out = strata(&[&format!("--db={db}"), "checkconsistency"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("and 1 blob files (1 records) verified"),
        "{}",
        stderr(&out)
    );
    flip_value_byte(&blob);
    let out = strata(&[&format!("--db={db}"), "checkconsistency"], "");
    assert!(!out.status.success());
    let name = blob
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    assert!(stderr(&out).contains(&name), "{}", stderr(&out));
}

#[test]
fn sst_verify_checks_a_blob_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_, blob) = db_with_blobs(dir.path());
    let file = format!("--file={}", blob.display());
    let out = strata(&["sst", "verify", &file], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("1 blob records checked"),
        "{}",
        stderr(&out)
    );
    flip_value_byte(&blob);
    let out = strata(&["sst", "verify", &file], "");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("Corruption"), "{}", stderr(&out));
}
