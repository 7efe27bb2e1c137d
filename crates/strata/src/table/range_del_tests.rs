//! The range-deletion block: round trips, tables of tombstones only, format
//! versions, damage found at open or by `verify`, and golden bytes.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use super::format::{Footer, FOOTER_LEN, FORMAT_VERSION_PLAIN, FORMAT_VERSION_RANGE_DEL};
use super::tests::{build_table, open, MemFile, MemReadFile};
use super::*;
use crate::checksum::ChecksumType;
use crate::compression::CompressionType;
use crate::error::Error;
use crate::iter::InternalIterator;
use crate::key::{internal_key, ValueType};
use crate::key_order::KeyComparator;
use crate::options::{ReadOptions, TableOptions};
use crate::range_del::{range_end_sentinel, FragmentedRangeTombstones, RangeTombstone};

type Tombstones<'a> = &'a [(&'a [u8], &'a [u8], u64)];

fn options() -> TableOptions {
    TableOptions {
        compression: CompressionType::None,
        checksum: ChecksumType::Crc32c,
        block_size: 64,
        ..TableOptions::default()
    }
}

fn build(entries: &[(Vec<u8>, Vec<u8>)], tombstones: Tombstones<'_>) -> (Vec<u8>, BuiltTable) {
    let file = MemFile::default();
    let mut b = TableBuilder::new(Box::new(file.clone()), options())
        .unwrap()
        .with_creation_time(1_700_000_000);
    for (k, v) in entries {
        b.add(k, v).unwrap();
    }
    for &(start, end, seq) in tombstones {
        b.add_range_tombstone(start, end, seq).unwrap();
    }
    let built = b.finish().unwrap();
    let bytes = file.0.lock().clone();
    assert_eq!(built.file_size, bytes.len() as u64);
    (bytes, built)
}

pub(super) fn footer_version(bytes: &[u8]) -> u32 {
    Footer::decode(&bytes[bytes.len() - FOOTER_LEN..])
        .unwrap()
        .format_version
}

fn put(k: &[u8], seq: u64) -> (Vec<u8>, Vec<u8>) {
    (internal_key(k, seq, ValueType::Put), b"v".to_vec())
}

#[test]
fn tombstones_round_trip_fragmented_beside_point_entries() {
    let entries: Vec<_> = (0..20u8).map(|i| put(&[b'c', b'a' + i], 10)).collect();
    // Out of order and overlapping.
    let tombstones: Tombstones<'_> = &[(b"m", b"p", 30), (b"a", b"d", 20), (b"b", b"n", 25)];
    let (bytes, built) = build(&entries, tombstones);
    assert_eq!(footer_version(&bytes), FORMAT_VERSION_RANGE_DEL);
    let table = open(bytes).unwrap();
    let want = FragmentedRangeTombstones::new(
        tombstones.iter().map(|&(s, e, q)| {
            RangeTombstone::new(s.to_vec(), e.to_vec(), q, &KeyComparator::Bytewise).unwrap()
        }),
        &KeyComparator::Bytewise,
    );
    assert_eq!(**table.range_tombstones(), want);
    assert_eq!(table.range_tombstones().max_covering_seq(b"ca", 100), 25);
    let p = table.properties();
    assert_eq!(p.num_range_deletions, want.num_tombstones() as u64);
    assert_eq!(p.format_version, u64::from(FORMAT_VERSION_RANGE_DEL));
    assert_eq!((p.smallest_seqno, p.largest_seqno), (10, 30));
    assert_eq!(p.num_entries, 20);
    assert_eq!(built.properties, *p);
    // The range runs from the first tombstone's start to the last one's end.
    assert_eq!(
        built.smallest,
        internal_key(b"a", 20, ValueType::RangeDeletion)
    );
    assert_eq!(built.largest, range_end_sentinel(b"p"));
    let report = table.verify().unwrap();
    assert_eq!(report.entries, 20 + want.num_tombstones() as u64);
    // Point reads and scans see only point entries.
    assert!(table
        .get(&ReadOptions::default(), b"ca", 100)
        .unwrap()
        .is_some());
    let mut it = table.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    assert_eq!(n, 20);
}

#[test]
fn point_entries_outside_the_tombstones_bound_the_range() {
    let entries = vec![put(b"a", 3), put(b"z", 4)];
    let (_, built) = build(&entries, &[(b"k", b"m", 9)]);
    assert_eq!(built.smallest, entries[0].0);
    assert_eq!(built.largest, entries[1].0);
    assert_eq!(
        (
            built.properties.smallest_seqno,
            built.properties.largest_seqno
        ),
        (3, 9)
    );
}

#[test]
fn a_table_of_tombstones_only_builds_opens_and_verifies() {
    let (bytes, built) = build(&[], &[(b"k", b"q", 7), (b"a", b"c", 5)]);
    assert_eq!(
        built.smallest,
        internal_key(b"a", 5, ValueType::RangeDeletion)
    );
    assert_eq!(built.largest, range_end_sentinel(b"q"));
    assert_eq!(
        (
            built.properties.smallest_seqno,
            built.properties.largest_seqno
        ),
        (5, 7)
    );
    let table = open(bytes).unwrap();
    assert_eq!(table.properties().num_entries, 0);
    assert_eq!(table.range_tombstones().max_covering_seq(b"m", 7), 7);
    assert_eq!(table.range_tombstones().max_covering_seq(b"d", 7), 0);
    assert!(table
        .get(&ReadOptions::default(), b"m", 9)
        .unwrap()
        .is_none());
    let mut it = table.iter(&ReadOptions::default());
    it.seek_to_first();
    assert!(!it.valid());
    it.status().unwrap();
    assert_eq!(table.verify().unwrap().entries, 2);
}

#[test]
fn tables_without_tombstones_stay_version_one() {
    let (bytes, built) = build(&[put(b"a", 1)], &[]);
    assert_eq!(footer_version(&bytes), FORMAT_VERSION_PLAIN);
    assert_eq!(built.smallest, built.largest);
    let table = open(bytes).unwrap();
    assert!(table.range_tombstones().is_empty());
    assert_eq!(table.properties().num_range_deletions, 0);
    table.verify().unwrap();
    // Nothing at all: an empty range.
    let (_, empty) = build(&[], &[]);
    assert!(empty.smallest.is_empty() && empty.largest.is_empty());
}

#[test]
fn the_builder_refuses_empty_ranges_and_range_deletions_as_points() {
    let mut b = TableBuilder::new(Box::new(MemFile::default()), options()).unwrap();
    let err = b.add_range_tombstone(b"b", b"b", 1).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidArgument {
                field: "delete_range",
                ..
            }
        ),
        "{err}"
    );
    let as_point = internal_key(b"a", 1, ValueType::RangeDeletion);
    assert!(b.add(&as_point, b"z").is_err());
}

/// Rewrites the range-deletion block's bytes with `patch` and recomputes its
/// checksum, so that only the reader's entry checks can find the damage.
fn patch_range_del_block(bytes: &[u8], patch: impl Fn(&mut [u8])) -> Vec<u8> {
    let table = open(bytes.to_vec()).unwrap();
    let h = table.range_del_handle().unwrap();
    let (start, end) = (h.offset as usize, (h.offset + h.size) as usize);
    let mut out = bytes.to_vec();
    patch(&mut out[start..end]);
    let crc = ChecksumType::Crc32c.checksum_with_byte(&out[start..end], out[end]);
    out[end + 1..end + 5].copy_from_slice(&crc.to_le_bytes());
    out
}

fn expect_corruption_at_block(bytes: Vec<u8>, offset: u64, needle: &str) {
    let err = open(bytes).unwrap_err();
    let msg = err.to_string();
    match err {
        Error::Corruption {
            file, offset: at, ..
        } => {
            assert_eq!(file, Path::new("t.sst"));
            assert_eq!(at, offset, "{msg}");
        }
        other => panic!("expected corruption, got {other}"),
    }
    assert!(msg.contains(needle), "{msg}");
}

#[test]
fn damaged_entries_are_corruption_naming_file_and_block() {
    let (bytes, _) = build(&[put(b"a", 1)], &[(b"b", b"c", 5)]);
    let offset = open(bytes.clone())
        .unwrap()
        .range_del_handle()
        .unwrap()
        .offset;
    // The one entry: shared 0, key length 9, value length 1, "b", tag, "c".
    let entry_key = internal_key(b"b", 5, ValueType::RangeDeletion);
    let at = |block: &[u8]| {
        block
            .windows(entry_key.len())
            .position(|w| w == entry_key.as_slice())
            .unwrap()
    };
    let inverted = patch_range_del_block(&bytes, |b| {
        let i = at(b) + entry_key.len();
        b[i] = b'a';
    });
    expect_corruption_at_block(inverted, offset, "end <= start");
    let wrong_type = patch_range_del_block(&bytes, |b| {
        let i = at(b) + 1;
        b[i] = ValueType::Put as u8;
    });
    expect_corruption_at_block(wrong_type, offset, "value type");
    let unknown_type = patch_range_del_block(&bytes, |b| {
        let i = at(b) + 1;
        b[i] = 0x42;
    });
    expect_corruption_at_block(unknown_type, offset, "value type");
    let bad_checksum = {
        let mut b = bytes.clone();
        b[offset as usize] ^= 0x40;
        b
    };
    expect_corruption_at_block(bad_checksum, offset, "checksum mismatch");
}

#[test]
fn verify_finds_entries_out_of_order() {
    // One fragment, stored as (b, 6) -> c then (b, 5) -> c.
    let (bytes, _) = build(&[], &[(b"b", b"c", 5), (b"b", b"c", 6)]);
    // Swap the two sequence numbers: still valid tombstones, oldest first.
    let swapped = patch_range_del_block(&bytes, |b| {
        let find = |seq: u8| {
            b.windows(3)
                .position(|w| w == [b'b', ValueType::RangeDeletion as u8, seq])
                .unwrap()
        };
        let (i, j) = (find(6), find(5));
        b[i + 2] = 5;
        b[j + 2] = 6;
    });
    // The file opens (reads fragment whatever they find) and answers as
    // before, but does not verify.
    let table = open(swapped).unwrap();
    assert_eq!(table.range_tombstones().max_covering_seq(b"b", 9), 6);
    let err = table.verify().unwrap_err();
    assert!(err.to_string().contains("out of order"), "{err}");
}

/// Rewrites the footer's format version (with a valid footer checksum).
pub(super) fn with_footer_version(bytes: &[u8], version: u32) -> Vec<u8> {
    let at = bytes.len() - FOOTER_LEN;
    let mut footer = Footer::decode(&bytes[at..]).unwrap();
    footer.format_version = version;
    let mut out = bytes[..at].to_vec();
    out.extend_from_slice(&footer.encode());
    out
}

#[test]
fn the_version_and_the_block_must_agree() {
    let (plain, _) = build(&[put(b"a", 1)], &[]);
    let err = open(with_footer_version(&plain, FORMAT_VERSION_RANGE_DEL)).unwrap_err();
    assert!(
        err.to_string().contains("lacks a range-deletion block"),
        "{err}"
    );
    let (with_block, _) = build(&[put(b"a", 1)], &[(b"b", b"c", 5)]);
    let err = open(with_footer_version(&with_block, FORMAT_VERSION_PLAIN)).unwrap_err();
    assert!(err.to_string().contains("cannot have"), "{err}");
}

#[test]
fn every_flipped_byte_of_a_table_with_tombstones_is_found() {
    let entries: Vec<_> = (0..6u8).map(|i| put(&[b'a' + i], 2)).collect();
    let (bytes, _) = build(&entries, &[(b"b", b"e", 9), (b"c", b"x", 4)]);
    for i in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[i] ^= 0x01;
        let found = match open(bad) {
            Err(e) => e.is_corruption(),
            Ok(t) => t.verify().is_err(),
        };
        assert!(found, "flip at byte {i} of {} went undetected", bytes.len());
    }
}

/// The golden table of `tests::golden_table_bytes`, written by the code before
/// range tombstones existed: it must keep opening and reading.
#[test]
fn format_version_one_tables_keep_opening() {
    let golden = super::tests::GOLDEN_TABLE_HEX;
    let bytes: Vec<u8> = (0..golden.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&golden[i..i + 2], 16).unwrap())
        .collect();
    assert_eq!(footer_version(&bytes), FORMAT_VERSION_PLAIN);
    let table = TableReader::open(
        Arc::new(MemReadFile(Bytes::from(bytes))),
        Path::new("old.sst"),
    )
    .unwrap();
    assert!(table.range_tombstones().is_empty());
    let got = table
        .get(&ReadOptions::default(), b"a", 9)
        .unwrap()
        .unwrap();
    assert_eq!(&got.value[..], b"x");
    table.verify().unwrap();
}

/// Pins the complete bytes of a table with one point entry and two
/// overlapping range tombstones, stored fragmented: `[b, c)@3`, `[c, d)@4`,
/// `[c, d)@3`, `[d, e)@4`.
#[test]
fn golden_table_with_range_tombstones_bytes() {
    let (bytes, _) = build(&[put(b"a", 2)], &[(b"b", b"d", 3), (b"c", b"e", 4)]);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        hex, GOLDEN_RANGE_DEL_TABLE_HEX,
        "table bytes changed: update docs/format/table.md too"
    );
    let plain = build_table(&[put(b"a", 2)], options());
    assert!(bytes.len() > plain.len());
}

const GOLDEN_RANGE_DEL_TABLE_HEX: &str = concat!(
    "00090161010200000000000076000000000100000000d1128cef0000000001000020000000000000",
    "00000000000000000000000000000000000000000088000000000000000000000000000080000400",
    "000000000000000000400700000001000000006568730d000901620f030000000000006300090163",
    "0f0400000000000064000901630f0300000000000064000901640f0400000000000065000000000d",
    "0000001a0000002700000004000000003979153b00090262ffffffffffffffff0015000000000100",
    "00000017e32426001b01726f636b7364622e6e756d2e72616e67652d64656c6574696f6e7304000f",
    "067374726174612e636865636b73756d6372633332630012047374726174612e636f6d7072657373",
    "696f6e6e6f6e650014057374726174612e6372656174696f6e2e74696d6580e2cfaa060010017374",
    "726174612e646174612e73697a651a001f027374726174612e66696c7465722e6d696c6c69626974",
    "732e7065722e6b6579904e0012017374726174612e66696c7465722e73697a654d00150173747261",
    "74612e666f726d61742e76657273696f6e020011017374726174612e696e6465782e73697a651b00",
    "14017374726174612e6c6172676573742e7365716e6f040017017374726174612e6c617267657374",
    "2e757365722e6b6579610016017374726174612e6e756d2e646174612e626c6f636b730100140173",
    "74726174612e6e756d2e64656c6574696f6e73000012017374726174612e6e756d2e656e74726965",
    "73010013017374726174612e7261772e6b65792e73697a65090015017374726174612e7261772e76",
    "616c75652e73697a65010015017374726174612e736d616c6c6573742e7365716e6f020018017374",
    "726174612e736d616c6c6573742e757365722e6b657961000000001f00000037000000500000006c",
    "00000080000000a4000000ba000000d3000000e8000000000100001b010000350100004d01000063",
    "0100007a01000093010000ac010000120000000092b2620f001102726f636b7364622e72616e6765",
    "5f64656c67480013027374726174612e66696c7465722e626c6f6f6d1a480011047374726174612e",
    "70726f70657274696573cf01940400000000160000002e0000000300000000bd9a1c0a01e80556b4",
    "01160000000000000000000000000000000000000000000000000000000000000000000002000000",
    "cafa32905354524154417362",
);
