//! Blob files: round trips against a model, every damaged byte caught, files
//! cut short refused, and golden bytes.

use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::*;
use crate::compression::CompressionType;
use crate::fs::{Fs, ReadFileOptions, SimFs};

const DIR: &str = "/blobs";

fn path() -> PathBuf {
    Path::new(DIR).join("000009.blob")
}

/// Writes `entries` into blob file 9 on `fs`, returning their references.
fn write_file(
    fs: &SimFs,
    entries: &[(Vec<u8>, Vec<u8>)],
    compression: CompressionType,
) -> (Vec<BlobRef>, BuiltBlobFile) {
    fs.create_dir_all(Path::new(DIR)).unwrap();
    let file = fs.create(&path()).unwrap();
    let mut writer = BlobFileWriter::new(file, 9, 3, compression).unwrap();
    let refs = entries
        .iter()
        .map(|(k, v)| writer.add(k, v).unwrap())
        .collect();
    (refs, writer.finish().unwrap())
}

fn open(fs: &SimFs) -> crate::Result<BlobFileReader> {
    let file = fs.open(&path(), ReadFileOptions::default())?;
    BlobFileReader::open(file, &path())
}

fn sample() -> Vec<(Vec<u8>, Vec<u8>)> {
    vec![
        (b"alpha".to_vec(), b"x".repeat(3000)),
        (b"beta".to_vec(), Vec::new()),
        (b"gamma".to_vec(), (0..=255u8).collect()),
    ]
}

#[test]
fn values_come_back_by_reference_and_in_file_order() {
    for compression in [
        CompressionType::None,
        CompressionType::Snappy,
        CompressionType::Lz4,
        CompressionType::Zstd { level: 3 },
    ] {
        let fs = SimFs::new(1);
        let entries = sample();
        let (refs, built) = write_file(&fs, &entries, compression);
        let reader = open(&fs).unwrap();
        assert_eq!(reader.header().column_family_id, 3);
        assert_eq!(built.record_count, 3);
        assert_eq!(built.file_size, fs.file_size(&path()).unwrap());
        assert_eq!(reader.footer().record_count, 3);
        assert_eq!(reader.footer().value_bytes, built.value_bytes);
        for ((key, value), reference) in entries.iter().zip(&refs) {
            for verify in [true, false] {
                assert_eq!(&reader.get(key, reference, verify).unwrap(), value);
            }
        }
        // The repetitive value shrinks; the one that does not compress (and
        // the empty one) is stored as it is.
        if compression != CompressionType::None {
            assert_eq!(refs[0].compression, compression);
            assert!(refs[0].stored_len < 3000);
        }
        assert_eq!(refs[1].compression, CompressionType::None);
        assert_eq!(refs[2].compression, CompressionType::None);
        let records: Vec<_> = reader.records().collect::<crate::Result<_>>().unwrap();
        assert_eq!(records.len(), 3);
        for (record, (key, value)) in records.iter().zip(&entries) {
            assert_eq!((&record.key, &record.value), (key, value));
        }
        reader.verify().unwrap();
    }
}

#[test]
fn a_reference_that_does_not_match_its_record_is_corruption() {
    let fs = SimFs::new(2);
    let (refs, _) = write_file(&fs, &sample(), CompressionType::None);
    let reader = open(&fs).unwrap();
    let good = refs[0];
    let cases = [
        (
            b"alpha".as_slice(),
            BlobRef {
                offset: good.offset + 1,
                ..good
            },
        ),
        (
            b"alpha",
            BlobRef {
                stored_len: good.stored_len - 1,
                ..good
            },
        ),
        (
            b"alpha",
            BlobRef {
                compression: CompressionType::Lz4,
                ..good
            },
        ),
        (b"alpha", BlobRef { offset: 0, ..good }),
        (
            b"alpha",
            BlobRef {
                offset: u64::MAX - 3,
                ..good
            },
        ),
        (
            b"alpha",
            BlobRef {
                stored_len: u64::MAX,
                ..good
            },
        ),
        // Another key of the same length reaches the record and is refused.
        (b"omega", good),
        // A reference to the second record under the first's key.
        (b"alpha", refs[1]),
    ];
    for (key, reference) in cases {
        let err = reader.get(key, &reference, true).unwrap_err();
        assert!(err.is_corruption(), "{reference:?}: {err}");
        assert!(err.to_string().contains("000009.blob"), "{err}");
    }
}

#[test]
fn every_damaged_byte_is_caught_by_open_get_or_verify() {
    let entries = sample();
    let fs = SimFs::new(3);
    let (refs, built) = write_file(&fs, &entries, CompressionType::Lz4);
    for offset in 0..built.file_size {
        let fs = SimFs::new(3);
        write_file(&fs, &entries, CompressionType::Lz4);
        fs.corrupt_byte(&path(), offset, 0x20).unwrap();
        let Ok(reader) = open(&fs) else { continue };
        let verified = reader.verify();
        assert!(verified.is_err(), "flip at {offset} passed verify");
        assert!(verified.unwrap_err().is_corruption());
        // A checked read never returns a wrong value: the right one, or an error.
        for ((key, value), reference) in entries.iter().zip(&refs) {
            if let Ok(read) = reader.get(key, reference, true) {
                assert_eq!(&read, value, "flip at {offset} changed a value");
            }
        }
    }
}

#[test]
fn a_file_cut_short_is_refused() {
    let fs = SimFs::new(4);
    let (_, built) = write_file(&fs, &sample(), CompressionType::None);
    for len in [0, 10, 24, 56, built.file_size - 1, built.file_size - 32] {
        fs.set_len(&path(), len).unwrap();
        let err = open(&fs).unwrap_err();
        assert!(err.is_corruption(), "length {len}: {err}");
    }
    // A writer dropped before `finish` leaves no footer.
    let fs = SimFs::new(5);
    fs.create_dir_all(Path::new(DIR)).unwrap();
    let mut writer =
        BlobFileWriter::new(fs.create(&path()).unwrap(), 9, 0, CompressionType::None).unwrap();
    writer.add(b"k", &[7; 100]).unwrap();
    drop(writer);
    let err = open(&fs).unwrap_err();
    assert!(err.to_string().contains("no footer"), "{err}");
}

#[test]
fn a_footer_that_miscounts_the_records_is_caught() {
    let fs = SimFs::new(6);
    fs.create_dir_all(Path::new(DIR)).unwrap();
    // One record of key "k" and value "v", under footers that miscount it.
    let write = |footer: BlobFooter| {
        let mut bytes = BlobHeader {
            column_family_id: 0,
            compression: CompressionType::None,
        }
        .encode()
        .to_vec();
        format::RecordHeader::encode_for(b"k", b"v", CompressionType::None, &mut bytes);
        bytes.extend_from_slice(b"kv");
        bytes.extend_from_slice(&footer.encode());
        let mut file = fs.create(&path()).unwrap();
        file.append(&bytes).unwrap();
        file.sync().unwrap();
    };
    // Counts the bytes could hold: open accepts them, verify does not.
    write(BlobFooter {
        record_count: 1,
        value_bytes: 2,
    });
    let err = open(&fs).unwrap().verify().unwrap_err();
    assert!(
        err.to_string()
            .contains("footer counts 1 records of 2 value bytes"),
        "{err}"
    );
    // More records than the bytes could hold: refused at open.
    write(BlobFooter {
        record_count: 2,
        value_bytes: 1,
    });
    let err = open(&fs).unwrap_err();
    assert!(err.to_string().contains("footer claims 2 records"), "{err}");
}

/// The bytes of a small uncompressed file, pinned: a change here is a format
/// change and must update `docs/format/blob.md` and the format version.
const GOLDEN_BLOB_HEX: &str = concat!(
    "5354524154416268010000000300000000000000e5ba73ad",
    "010000000300000000000000002515d4c5a4445c666178797a",
    "02000000000000000000000000d7a6e04c3433dba76263",
    "020000000000000003000000000000000000000079eeab2c5354524154416266",
);

#[test]
fn golden_blob_file_bytes() {
    let fs = SimFs::new(7);
    let entries = vec![
        (b"a".to_vec(), b"xyz".to_vec()),
        (b"bc".to_vec(), Vec::new()),
    ];
    let (refs, _) = write_file(&fs, &entries, CompressionType::None);
    let bytes = fs.file_contents(&path()).unwrap();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        hex, GOLDEN_BLOB_HEX,
        "blob file bytes changed: update docs/format/blob.md too"
    );
    // The drawing's offsets: header 24 bytes, record headers 21, footer 32.
    assert_eq!(refs[0].offset, 24);
    assert_eq!(refs[1].offset, 24 + 21 + 1 + 3);
    assert_eq!(bytes.len(), 24 + (21 + 1 + 3) + (21 + 2) + 32);
    assert_eq!(&bytes[..8], b"STRATAbh");
    assert_eq!(&bytes[bytes.len() - 8..], b"STRATAbf");
    let reference_hex: String = refs[0]
        .encode()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(reference_hex, "0109180300");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any values, any codec: each reads back by its reference, and the
    /// records walk back in order.
    #[test]
    fn blob_files_match_their_model(
        entries in proptest::collection::vec(
            (proptest::collection::vec(any::<u8>(), 0..40),
             prop_oneof![
                 proptest::collection::vec(any::<u8>(), 0..3000),
                 (any::<u8>(), 0..5000usize).prop_map(|(b, n)| vec![b; n]),
             ]),
            0..30,
        ),
        codec in 0..4usize,
    ) {
        let compression = [
            CompressionType::None,
            CompressionType::Snappy,
            CompressionType::Lz4,
            CompressionType::Zstd { level: 1 },
        ][codec];
        let fs = SimFs::new(8);
        let (refs, built) = write_file(&fs, &entries, compression);
        prop_assert_eq!(built.record_count, entries.len() as u64);
        let reader = open(&fs).unwrap();
        for ((key, value), reference) in entries.iter().zip(&refs) {
            prop_assert_eq!(&reader.get(key, reference, true).unwrap(), value);
        }
        let walked: Vec<_> = reader
            .records()
            .map(|r| r.map(|r| (r.key, r.value)))
            .collect::<crate::Result<_>>()
            .unwrap();
        prop_assert_eq!(walked, entries);
    }
}
