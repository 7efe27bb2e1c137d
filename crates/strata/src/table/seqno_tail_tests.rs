//! The global seqno tail: golden bytes, reading and verifying a table that
//! ends in one or more, and every other gap still refused.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use super::seqno_tail::{append_global_seqno, global_seqno_tail, Ingested};
use super::tests::{assert_every_flip_detected, open, scan_forward, MemFile, MemReadFile};
use super::*;
use crate::checksum::ChecksumType;
use crate::compression::CompressionType;
use crate::fs::{Fs, SimFs};
use crate::key::{internal_key, ValueType};
use crate::options::TableOptions;
use crate::table::format::FOOTER_LEN;

/// A small `SstFileWriter`-style table: entries at sequence number 0, a
/// fixed creation time, uncompressed, crc32c.
fn ingestion_table(keys: u32, checksum: ChecksumType) -> Vec<u8> {
    let file = MemFile::default();
    let options = TableOptions {
        compression: CompressionType::None,
        checksum,
        block_size: 64,
        ..TableOptions::default()
    };
    let mut b = TableBuilder::new(Box::new(file.clone()), options)
        .unwrap()
        .with_creation_time(1_700_000_000)
        .for_ingestion();
    for i in 0..keys {
        let key = format!("k{i:02}");
        b.add(&internal_key(key.as_bytes(), 0, ValueType::Put), b"v")
            .unwrap();
    }
    b.finish().unwrap();
    let bytes = file.0.lock().clone();
    bytes
}

/// Ingested into family 2, `fam`, at `seq`.
fn into_fam(seq: u64) -> Ingested<'static> {
    Ingested {
        global_seqno: seq,
        column_family_id: 2,
        column_family_name: "fam",
    }
}

/// `bytes` followed by the tail that records `seq` (and family `fam`).
fn with_tail(bytes: &[u8], seq: u64) -> Vec<u8> {
    let file = Arc::new(MemReadFile(Bytes::from(bytes.to_vec())));
    let tail = global_seqno_tail(file, Path::new("t.sst"), &into_fam(seq)).unwrap();
    [bytes, &tail].concat()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Pins the bytes of a tail: the properties block with the family (2,
/// `fam`) and global seqno (300 = varint `ac 02`) entries among the
/// table's own, the metaindex pointing at it, the footer pointing at the
/// metaindex.
#[test]
fn golden_global_seqno_tail_bytes() {
    let table = ingestion_table(1, ChecksumType::Crc32c);
    let tailed = with_tail(&table, 300);
    assert_eq!(
        &tailed[..table.len()],
        &table[..],
        "the table is only appended to"
    );
    let tail = &tailed[table.len()..];
    let entries: [&[u8]; 3] = [
        b"\x00\x18\x01rocksdb.column.family.id\x02",
        b"\x00\x1a\x03rocksdb.column.family.namefam",
        b"\x00\x26\x02rocksdb.external_sst_file.global_seqno\xac\x02",
    ];
    for entry in entries {
        assert!(
            tail.windows(entry.len()).any(|w| w == entry),
            "{}",
            entry.escape_ascii()
        );
    }
    assert_eq!(
        hex(tail),
        GOLDEN_TAIL_HEX,
        "tail bytes changed: update docs/format/table.md too"
    );
}

/// The tail of a one-key table (801 bytes): properties at 801 (657
/// bytes), metaindex at 1463 (60 bytes, the filter at 28 and the new
/// properties), footer (crc32c, index at 105, format version 1).
const GOLDEN_TAIL_HEX: &str = concat!(
    "001801726f636b7364622e636f6c756d6e2e66616d696c792e696402001a03726f636b7364622e63",
    "6f6c756d6e2e66616d696c792e6e616d6566616d002602726f636b7364622e65787465726e616c5f",
    "7373745f66696c652e676c6f62616c5f7365716e6fac02002101726f636b7364622e65787465726e",
    "616c5f7373745f66696c652e76657273696f6e02000f067374726174612e636865636b73756d6372",
    "633332630012047374726174612e636f6d7072657373696f6e6e6f6e650014057374726174612e63",
    "72656174696f6e2e74696d6580e2cfaa060010017374726174612e646174612e73697a651c001f02",
    "7374726174612e66696c7465722e6d696c6c69626974732e7065722e6b6579904e00120173747261",
    "74612e66696c7465722e73697a654d0015017374726174612e666f726d61742e76657273696f6e01",
    "0011017374726174612e696e6465782e73697a651b0014017374726174612e6c6172676573742e73",
    "65716e6f000017037374726174612e6c6172676573742e757365722e6b65796b3030001601737472",
    "6174612e6e756d2e646174612e626c6f636b73010014017374726174612e6e756d2e64656c657469",
    "6f6e73000012017374726174612e6e756d2e656e7472696573010013017374726174612e7261772e",
    "6b65792e73697a650b0015017374726174612e7261772e76616c75652e73697a6501001501737472",
    "6174612e736d616c6c6573742e7365716e6f000018037374726174612e736d616c6c6573742e7573",
    "65722e6b65796b3030000000001c0000003c000000670000008c000000a4000000bd000000d90000",
    "00ed000000110100002701000040010000550100006d0100008a010000a4010000bc010000d20100",
    "00e9010000020200001b0200001500000000256359a20013027374726174612e66696c7465722e62",
    "6c6f6f6d1c480011047374726174612e70726f70657274696573a106910500000000180000000200",
    "0000009599a05a01b70b3c6916000000000000000000000000000000000000000000000000000000",
    "000000000000000001000000331da8bc5354524154417362",
);

/// A table with a tail reads as before, says its global seqno, and
/// verifies whole, the superseded blocks counted; a second tail (a retried
/// ingestion) supersedes the first.
#[test]
fn a_table_with_tails_reads_and_verifies() {
    for checksum in [ChecksumType::Crc32c, ChecksumType::Xxh3] {
        let table = ingestion_table(20, checksum);
        let plain = open(table.clone()).unwrap();
        let plain_report = plain.verify().unwrap();
        assert_eq!(plain.properties().global_seqno, None);
        for seqs in [&[0][..], &[7], &[7, 0], &[5, 9, 1 << 40]] {
            let mut bytes = table.clone();
            for &seq in seqs {
                bytes = with_tail(&bytes, seq);
            }
            let tailed = open(bytes).unwrap();
            let mut expected = plain.properties().clone();
            expected.global_seqno = seqs.last().copied();
            expected.column_family_id = Some(2);
            expected.column_family_name = "fam".into();
            assert_eq!(tailed.properties(), &expected, "{seqs:?}");
            let report = tailed.verify().unwrap();
            assert_eq!(report.entries, plain_report.entries);
            assert_eq!(report.blocks, plain_report.blocks + 2 * seqs.len() as u64);
            assert_eq!(scan_forward(&tailed), scan_forward(&plain));
        }
    }
}

/// The tail sits after every kind of meta block: a two-level index with
/// partitioned filters, and a range-deletion block.
#[test]
fn a_partitioned_table_with_range_tombstones_and_a_tail_verifies() {
    let file = MemFile::default();
    let options = TableOptions {
        block_size: 64,
        metadata_block_size: 32,
        partition_filters: true,
        index_type: crate::options::IndexType::TwoLevelIndexSearch,
        ..TableOptions::default()
    };
    let mut b = TableBuilder::new(Box::new(file.clone()), options)
        .unwrap()
        .for_ingestion();
    for i in 0..60u32 {
        let key = format!("k{i:03}");
        b.add(&internal_key(key.as_bytes(), 0, ValueType::Put), b"v")
            .unwrap();
    }
    b.add_range_tombstone(b"k100", b"k200", 0).unwrap();
    b.finish().unwrap();
    let table = file.0.lock().clone();
    let plain = open(table.clone()).unwrap();
    assert!(plain.has_two_level_index());
    let plain_report = plain.verify().unwrap();
    let tailed = open(with_tail(&with_tail(&table, 8), 9)).unwrap();
    assert_eq!(tailed.properties().global_seqno, Some(9));
    let report = tailed.verify().unwrap();
    assert_eq!(report.entries, plain_report.entries);
    assert_eq!(report.blocks, plain_report.blocks + 4);
    assert_eq!(scan_forward(&tailed), scan_forward(&plain));
}

/// Every changed byte of a table with a tail, the superseded bytes
/// included, is found by opening or verifying it.
#[test]
fn corruption_sweep_every_byte_of_a_table_with_two_tails() {
    let table = ingestion_table(12, ChecksumType::Crc32c);
    assert_every_flip_detected(&with_tail(&with_tail(&table, 3), 4), &[0x01, 0x80]);
}

/// Bytes that are not exactly superseded tails are still a gap: junk
/// before a tail, and a tail on a table whose last footer leads past junk.
#[test]
fn other_gaps_are_still_refused() {
    let table = ingestion_table(5, ChecksumType::Crc32c);
    let footer = &table[table.len() - FOOTER_LEN..];
    // Junk, then the table's footer again, so a tail can be built on it.
    let padded = [&table[..], b"junk", footer].concat();
    let err = open(with_tail(&padded, 3)).unwrap().verify().unwrap_err();
    assert!(err.is_corruption(), "{err}");
    assert!(
        err.to_string().contains("before the properties block"),
        "{err}"
    );
    // Without a tail, the same junk is the plain gap it always was.
    let err = open(padded).unwrap().verify().unwrap_err();
    assert!(err.to_string().contains("footer starts at"), "{err}");
}

/// `append_global_seqno` appends through the file system, syncs, and
/// returns the new size; the tail survives a power loss.
#[test]
fn appending_a_tail_through_the_file_system_is_durable() {
    let fs = SimFs::new(41);
    fs.create_dir_all(Path::new("/db")).unwrap();
    let path = Path::new("/db/000007.sst");
    let table = ingestion_table(3, ChecksumType::Xxh3);
    let mut file = fs.create(path).unwrap();
    file.append(&table).unwrap();
    file.sync().unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    drop(file);
    let size = append_global_seqno(&fs, path, &into_fam(12)).unwrap();
    fs.crash(crate::fs::sim::CrashMode::POWER_LOSS);
    let bytes = fs.file_contents(path).unwrap();
    assert_eq!(bytes.len() as u64, size);
    assert_eq!(bytes, with_tail(&table, 12));
    let table = open(bytes).unwrap();
    assert_eq!(table.properties().global_seqno, Some(12));
    assert_eq!(table.properties().column_family_id, Some(2));
    assert_eq!(table.properties().column_family_name, "fam");
    table.verify().unwrap();
}
