//! Log format tests: golden bytes, round trips, truncation and corruption sweeps.
//!
//! The files here are Vec-backed so the format is tested apart from any file system.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use proptest::prelude::*;

use super::format::{fragment_checksum, BLOCK_SIZE, HEADER_SIZE};
use super::*;
use crate::error::{Error, Result};
use crate::fs::{RandomAccessFile, WritableFile};

/// A writable file whose bytes the test can still see after giving it away.
#[derive(Debug, Clone, Default)]
struct VecFile {
    bytes: Arc<Mutex<Vec<u8>>>,
    /// Number of upcoming appends to fail without writing anything.
    fail_appends: Arc<Mutex<usize>>,
}

impl WritableFile for VecFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        let mut fail = self.fail_appends.lock();
        if *fail > 0 {
            *fail -= 1;
            return Err(Error::NoSpace { path: "vec".into() });
        }
        self.bytes.lock().extend_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn len(&self) -> u64 {
        self.bytes.lock().len() as u64
    }
}

/// A readable file that returns at most `max_read` bytes per call, breaking the
/// `read_at` contract the way a buggy implementation might.
#[derive(Debug)]
struct ShortReadFile {
    bytes: Vec<u8>,
    max_read: usize,
}

impl RandomAccessFile for ShortReadFile {
    fn read_at(&self, offset: u64, len: usize) -> Result<Bytes> {
        let start = (offset as usize).min(self.bytes.len());
        let end = (start + len.min(self.max_read)).min(self.bytes.len());
        Ok(Bytes::copy_from_slice(&self.bytes[start..end]))
    }
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }
}

/// Writes `records` and returns the file bytes and each record's end offset.
fn write_log(records: &[Vec<u8>]) -> (Vec<u8>, Vec<usize>) {
    let file = VecFile::default();
    let mut w = LogWriter::new(Box::new(file.clone()));
    let mut ends = Vec::new();
    for r in records {
        w.add_record(r).unwrap();
        ends.push(w.len() as usize);
    }
    let bytes = file.bytes.lock().clone();
    (bytes, ends)
}

/// Where the record after one ending at `end` starts: right there, or at the next
/// block when no header fits in this one.
fn next_start(end: usize) -> usize {
    let left = BLOCK_SIZE - end % BLOCK_SIZE;
    if left < HEADER_SIZE {
        end + left
    } else {
        end
    }
}

/// Start offset of every record, plus where one more record would start.
fn record_starts(ends: &[usize]) -> Vec<usize> {
    std::iter::once(0)
        .chain(ends.iter().map(|&e| next_start(e)))
        .collect()
}

/// `(start, end, record index)` of every fragment of a well-formed log.
fn fragment_map(bytes: &[u8]) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let (mut pos, mut record) = (0, 0);
    while pos < bytes.len() {
        pos = next_start(pos);
        let len = usize::from(u16::from_le_bytes([bytes[pos + 4], bytes[pos + 5]]));
        let end = pos + HEADER_SIZE + len;
        out.push((pos, end, record));
        if matches!(bytes[pos + 6], 1 | 4) {
            record += 1;
        }
        pos = end;
    }
    out
}

fn read(bytes: &[u8]) -> (Vec<Vec<u8>>, Result<Option<TornTail>>) {
    read_all_records(Bytes::copy_from_slice(bytes))
}

fn corruption_offset(result: &Result<Option<TornTail>>) -> Option<u64> {
    match result {
        Err(Error::Corruption { offset, .. }) => Some(*offset),
        _ => None,
    }
}

#[test]
fn golden_bytes() {
    // An empty record, "a", and a record of one block's length: FIRST fills the
    // rest of block 0, LAST holds the remaining 22 bytes at the start of block 1.
    let big: Vec<u8> = (0..BLOCK_SIZE).map(|i| (i % 251) as u8).collect();
    let (bytes, ends) = write_log(&[b"".to_vec(), b"a".to_vec(), big.clone()]);
    // The checksums were computed by an independent CRC-32C implementation.
    assert_eq!(
        bytes[0..7],
        [0x05, 0x2b, 0x28, 0x43, 0x00, 0x00, 0x01],
        "FULL, empty"
    );
    assert_eq!(
        bytes[7..15],
        [0xb5, 0xcd, 0x0b, 0xa2, 0x01, 0x00, 0x01, b'a'],
        "FULL a"
    );
    // 32746 = 32768 - 15 - 7 = 0x7fea.
    assert_eq!(
        bytes[15..22],
        [0x1a, 0x9d, 0x90, 0xea, 0xea, 0x7f, 0x02],
        "FIRST"
    );
    assert_eq!(bytes[22..BLOCK_SIZE], big[..32746]);
    let last = BLOCK_SIZE;
    assert_eq!(
        bytes[last..last + 7],
        [0xed, 0x3a, 0x4a, 0xca, 0x16, 0x00, 0x04],
        "LAST"
    );
    assert_eq!(bytes[last + 7..], big[32746..]);
    assert_eq!(ends, [7, 15, BLOCK_SIZE + 7 + 22]);
}

#[test]
fn fragment_checksum_is_masked_crc32c_of_type_then_payload() {
    for t in 0..=255u8 {
        for payload in [&b""[..], b"x", &[0u8; 100]] {
            let mut covered = vec![t];
            covered.extend_from_slice(payload);
            let expected = crate::checksum::mask_crc(crc32c::crc32c(&covered));
            assert_eq!(fragment_checksum(t, payload), expected, "type {t}");
        }
    }
}

#[test]
fn record_spanning_blocks_is_fragmented() {
    let big = vec![0x5a; BLOCK_SIZE * 2];
    let (bytes, _) = write_log(&[b"x".to_vec(), big.clone()]);
    // FULL(1) then FIRST in block 0, MIDDLE filling block 1, LAST in block 2.
    assert_eq!(bytes[HEADER_SIZE + 1 + 6], 2, "FIRST");
    assert_eq!(bytes[BLOCK_SIZE + 6], 3, "MIDDLE");
    assert_eq!(bytes[2 * BLOCK_SIZE + 6], 4, "LAST");
    let (records, end) = read(&bytes);
    assert_eq!(records, vec![b"x".to_vec(), big]);
    assert_eq!(end.unwrap(), None);
}

#[test]
fn block_padding_when_no_header_fits() {
    // Leave 3 bytes in the first block: the next record starts in block 1.
    let first = vec![1u8; BLOCK_SIZE - HEADER_SIZE - 3];
    let (bytes, ends) = write_log(&[first.clone(), b"next".to_vec()]);
    assert_eq!(ends[0], BLOCK_SIZE - 3);
    assert_eq!(&bytes[BLOCK_SIZE - 3..BLOCK_SIZE], &[0, 0, 0]);
    assert_eq!(bytes[BLOCK_SIZE + 6], 1, "FULL at the start of block 1");
    let (records, end) = read(&bytes);
    assert_eq!(records, vec![first, b"next".to_vec()]);
    assert_eq!(end.unwrap(), None);
}

#[test]
fn exact_block_fill_needs_no_padding() {
    // Exactly 6 bytes left: an empty record's header does not fit either.
    let records = vec![
        vec![3u8; BLOCK_SIZE - HEADER_SIZE],
        vec![4u8; BLOCK_SIZE - 13],
        vec![],
    ];
    let (bytes, ends) = write_log(&records);
    assert_eq!(
        ends,
        [BLOCK_SIZE, 2 * BLOCK_SIZE - 6, 2 * BLOCK_SIZE + HEADER_SIZE]
    );
    assert_eq!(bytes[BLOCK_SIZE + 6], 1, "FULL right at the block boundary");
    assert_eq!(&bytes[2 * BLOCK_SIZE - 6..2 * BLOCK_SIZE], &[0; 6]);
    let (got, end) = read(&bytes);
    assert_eq!(got, records);
    assert_eq!(end.unwrap(), None);
}

#[test]
fn writer_resumes_an_existing_log() {
    let file = VecFile::default();
    let mut w = LogWriter::new(Box::new(file.clone()));
    let records: Vec<Vec<u8>> = (0..6).map(|i| vec![i as u8; 9000]).collect();
    for r in &records[..3] {
        w.add_record(r).unwrap();
    }
    drop(w.into_file());
    // A new writer on the same file continues the block layout, e.g. the MANIFEST
    // or a recycled log reopened for appending.
    let mut w = LogWriter::new(Box::new(file.clone()));
    for r in &records[3..] {
        w.add_record(r).unwrap();
    }
    let (got, end) = read(&file.bytes.lock());
    assert_eq!(got, records);
    assert_eq!(end.unwrap(), None);
}

#[test]
fn failed_append_leaves_the_writer_consistent() {
    let file = VecFile::default();
    let mut w = LogWriter::new(Box::new(file.clone()));
    w.add_record(&[1u8; 20_000]).unwrap();
    *file.fail_appends.lock() = 1;
    assert!(matches!(
        w.add_record(&[2u8; 20_000]),
        Err(Error::NoSpace { .. })
    ));
    w.add_record(&[3u8; 20_000]).unwrap();
    let (got, end) = read(&file.bytes.lock());
    assert_eq!(got, vec![vec![1u8; 20_000], vec![3u8; 20_000]]);
    assert_eq!(end.unwrap(), None);
}

#[test]
fn writer_rejects_records_over_1_gib() {
    // Zeroed allocations are lazy: this does not touch a gigabyte of memory.
    let huge = vec![0u8; format::MAX_RECORD_SIZE + 1];
    let file = VecFile::default();
    let mut w = LogWriter::new(Box::new(file.clone()));
    let err = w.add_record(&huge).unwrap_err();
    assert!(matches!(
        err,
        Error::InvalidArgument {
            field: "record",
            ..
        }
    ));
    assert!(w.is_empty());
}

fn sweep_records() -> Vec<Vec<u8>> {
    vec![
        b"first".to_vec(),
        Vec::new(),
        vec![7u8; BLOCK_SIZE + 100],
        (0..3000u32).map(|i| (i % 251) as u8 + 1).collect(),
        // Ends 3 bytes before a block boundary (after 7 headers and the payloads
        // above), so the next record follows block padding.
        vec![9u8; 2 * BLOCK_SIZE - 3 - (5 + 100 + 3000 + 7 * HEADER_SIZE)],
        b"last".to_vec(),
    ]
}

#[test]
fn sweep_file_has_padding() {
    let (_, ends) = write_log(&sweep_records());
    assert_eq!(ends[4], 3 * BLOCK_SIZE - 3);
}

/// Cuts the log at every offset, optionally zero-filling after the cut (a file
/// whose size reached the disk before its data): never an error, exactly the
/// whole records before the cut, and a torn tail at the start of the cut record.
fn check_every_cut(zero_fill: usize) {
    let records = sweep_records();
    let (bytes, ends) = write_log(&records);
    let starts = record_starts(&ends);
    // First nonzero byte after each record boundary: a cut before it leaves only
    // zeros (block padding, or a header's leading zero bytes) after whole records.
    let first_nonzero: Vec<usize> = std::iter::once(0)
        .chain(ends.iter().copied())
        .map(|e| {
            e + bytes[e..]
                .iter()
                .position(|&b| b != 0)
                .unwrap_or(bytes.len() - e)
        })
        .collect();
    let zeros = vec![0u8; zero_fill];
    let mut file = Vec::with_capacity(bytes.len() + zero_fill);
    for cut in 0..=bytes.len() {
        file.clear();
        file.extend_from_slice(&bytes[..cut]);
        file.extend_from_slice(&zeros);
        let (got, end) = read(&file);
        let complete = ends.iter().filter(|&&e| e <= cut).count();
        assert_eq!(got, records[..complete], "cut at {cut}");
        let torn = end.unwrap_or_else(|e| panic!("cut at {cut} reported {e}"));
        let at_boundary = cut <= first_nonzero[complete];
        match &torn {
            Some(t) => assert_eq!(t.offset, starts[complete] as u64, "cut at {cut}: {t:?}"),
            None if zero_fill == 0 => assert!(at_boundary, "cut at {cut} is not reported torn"),
            None => panic!("cut at {cut}: zeros after the cut are reported as a clean end"),
        }
        if zero_fill == 0 && at_boundary {
            assert_eq!(torn, None, "cut at {cut} is at a record boundary");
        }
    }
}

#[test]
fn truncation_at_every_offset_is_a_torn_tail() {
    check_every_cut(0);
}

#[test]
fn truncation_then_zero_fill_is_a_torn_tail() {
    // 40 KiB of zeros: the tail always reaches into a later block.
    check_every_cut(40 * 1024);
}

#[test]
fn flipped_byte_is_corruption_at_its_fragment_or_harmless_never_wrong() {
    let records = sweep_records();
    let (bytes, ends) = write_log(&records);
    let starts = record_starts(&ends);
    let fragments = fragment_map(&bytes);
    let last = records.len() - 1;
    let mut bad = bytes.clone();
    for mask in [0x01u8, 0x20, 0x80] {
        for i in 0..bytes.len() {
            bad[i] ^= mask;
            let (got, end) = read(&bad);
            bad[i] ^= mask;
            let Some(&(fragment, _, record)) =
                fragments.iter().find(|&&(s, e, _)| (s..e).contains(&i))
            else {
                // Block padding: a checked zero, so damage there is reported where
                // the padding starts, and nothing is lost before it.
                let padding = fragments.iter().map(|f| f.1).filter(|&e| e <= i).max();
                assert_eq!(
                    corruption_offset(&end),
                    padding.map(|p| p as u64),
                    "flip at {i}"
                );
                assert_eq!(got, records[..got.len()]);
                continue;
            };
            // Every record before the damaged one, and nothing else.
            assert_eq!(got, records[..record], "flip {mask:#x} at {i}");
            match end {
                // The final record may pass for a torn write.
                Ok(Some(torn)) if record == last => {
                    assert_eq!(torn.offset, starts[last] as u64, "flip {mask:#x} at {i}");
                }
                end => assert_eq!(
                    corruption_offset(&end),
                    Some(fragment as u64),
                    "flip {mask:#x} at {i}: {end:?}"
                ),
            }
        }
    }
}

#[test]
fn zero_filled_tail_is_a_torn_tail() {
    let records = sweep_records();
    let (mut bytes, ends) = write_log(&records);
    bytes.extend_from_slice(&[0u8; 10 * 1024]);
    let (got, end) = read(&bytes);
    assert_eq!(got, records);
    let torn = end.unwrap().unwrap();
    assert!(torn.reason.contains("zero"), "{torn:?}");
    assert_eq!(torn.offset, next_start(ends[ends.len() - 1]) as u64);
}

#[test]
fn zeros_followed_by_data_are_corruption() {
    let (mut bytes, _) = write_log(&[b"a".to_vec()]);
    bytes.extend_from_slice(&[0u8; 100]);
    bytes.extend_from_slice(&write_log(&[b"b".to_vec()]).0);
    let (got, end) = read(&bytes);
    assert_eq!(got, vec![b"a".to_vec()]);
    assert_eq!(corruption_offset(&end), Some(8));
}

#[test]
fn damaged_length_before_a_zero_tail_is_corruption() {
    // A length bumped by 256 reaches into the zeros, like a write cut short, but
    // the checksum still fits the true length: the records after it are real.
    let records = vec![vec![1u8; 10], vec![2u8; 20], vec![3u8; 30]];
    let (mut bytes, _) = write_log(&records);
    bytes.resize(bytes.len() + 1000, 0);
    bytes[5] ^= 0x01;
    let (got, end) = read(&bytes);
    assert!(got.is_empty());
    assert_eq!(corruption_offset(&end), Some(0), "{end:?}");
}

#[test]
fn length_past_its_block_is_corruption_even_at_end_of_file() {
    // The writer never lets a fragment cross a block, so no crash can leave one.
    let (mut bytes, _) = write_log(&[vec![5u8; 100], vec![6u8; 100]]);
    let second = HEADER_SIZE + 100;
    bytes[second + 4..second + 6].copy_from_slice(&0xffffu16.to_le_bytes());
    let (got, end) = read(&bytes);
    assert_eq!(got, vec![vec![5u8; 100]]);
    assert_eq!(corruption_offset(&end), Some(second as u64), "{end:?}");
}

#[test]
fn fragment_out_of_sequence_is_corruption() {
    let big = vec![8u8; BLOCK_SIZE];
    let (bytes, _) = write_log(&[big.clone(), b"z".to_vec()]);
    // Drop the LAST fragment (block 1 starts with it) by rewriting it as a FULL
    // one: FIRST followed by FULL.
    let mut bad = bytes.clone();
    let len = usize::from(u16::from_le_bytes([
        bad[BLOCK_SIZE + 4],
        bad[BLOCK_SIZE + 5],
    ]));
    bad[BLOCK_SIZE + 6] = 1;
    let crc = fragment_checksum(1, &bad[BLOCK_SIZE + 7..BLOCK_SIZE + 7 + len]);
    bad[BLOCK_SIZE..BLOCK_SIZE + 4].copy_from_slice(&crc.to_le_bytes());
    let (got, end) = read(&bad);
    assert!(got.is_empty());
    assert_eq!(corruption_offset(&end), Some(BLOCK_SIZE as u64));
    // A LAST with no FIRST before it: the same bytes read from block 1 on.
    let (got, end) = read(&bytes[BLOCK_SIZE..]);
    assert!(got.is_empty());
    assert_eq!(corruption_offset(&end), Some(0));
}

#[test]
fn unknown_type_with_valid_checksum_is_corruption() {
    let (mut bytes, _) = write_log(&[b"a".to_vec(), b"b".to_vec()]);
    bytes[6] = 9;
    let crc = fragment_checksum(9, b"a");
    bytes[..4].copy_from_slice(&crc.to_le_bytes());
    let (got, end) = read(&bytes);
    assert!(got.is_empty());
    assert!(
        matches!(&end, Err(Error::Corruption { offset: 0, reason, .. }) if reason.contains("type 9"))
    );
}

#[test]
fn record_offsets_are_reported() {
    let records = sweep_records();
    let (bytes, ends) = write_log(&records);
    let starts = record_starts(&ends);
    let mut reader = LogReader::from_bytes(Bytes::from(bytes), Path::new("x.log"));
    for (r, &start) in records.iter().zip(&starts) {
        let (offset, payload) = reader.read_record().unwrap().unwrap();
        assert_eq!(payload, &r[..]);
        assert_eq!(offset, start as u64);
    }
    assert!(reader.read_record().unwrap().is_none());
    assert!(reader.torn_tail().is_none());
}

#[test]
fn errors_are_sticky() {
    let (mut bytes, _) = write_log(&[b"a".to_vec(), b"b".to_vec()]);
    bytes[7] ^= 1;
    let mut reader = LogReader::from_bytes(Bytes::from(bytes), Path::new("x.log"));
    assert!(reader.read_record().is_err());
    assert!(reader.read_record().unwrap_err().is_corruption());
}

#[test]
fn short_reads_are_an_error_not_a_hang() {
    let (bytes, _) = write_log(&[vec![1u8; 50_000]]);
    let file = Arc::new(ShortReadFile { bytes, max_read: 0 });
    let mut reader = LogReader::new(file, Path::new("x.log"));
    assert!(matches!(
        reader.read_record(),
        Err(Error::Io { op: "read", .. })
    ));
}

fn sizes() -> impl Strategy<Value = usize> {
    prop_oneof![
        0usize..100,
        Just(BLOCK_SIZE - HEADER_SIZE),
        Just(BLOCK_SIZE - HEADER_SIZE - 6),
        Just(BLOCK_SIZE - 2 * HEADER_SIZE),
        Just(BLOCK_SIZE - 2 * HEADER_SIZE - 6),
        Just(2 * BLOCK_SIZE - 2 * HEADER_SIZE),
        0usize..100_000,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn roundtrip(sizes in proptest::collection::vec(sizes(), 0..12), seed in any::<u8>()) {
        let records: Vec<Vec<u8>> = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                (0..n).map(|j| (j as u8).wrapping_mul(31).wrapping_add(i as u8 ^ seed)).collect()
            })
            .collect();
        let (bytes, ends) = write_log(&records);
        let starts = record_starts(&ends);
        let mut reader = LogReader::from_bytes(Bytes::from(bytes), Path::new("p.log"));
        for (r, &start) in records.iter().zip(&starts) {
            let (offset, payload) = reader.read_record().unwrap().unwrap();
            prop_assert_eq!(offset, start as u64);
            prop_assert_eq!(payload, &r[..]);
        }
        prop_assert!(reader.read_record().unwrap().is_none());
        prop_assert!(reader.torn_tail().is_none());
    }

    #[test]
    fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
        let _ = read(&bytes);
    }

    #[test]
    fn skipping_damage_returns_only_real_records_in_order(
        sizes in proptest::collection::vec(0usize..40_000, 1..8),
        damage in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
    ) {
        let records: Vec<Vec<u8>> =
            sizes.iter().enumerate().map(|(i, &n)| vec![i as u8 + 1; n]).collect();
        let (mut bytes, _) = write_log(&records);
        let damaged = !damage.is_empty();
        for (at, value) in damage {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        let (got, skipped) = read_records_skipping_damage(Bytes::from(bytes)).unwrap();
        // A subsequence of what was written, in order: damage loses records,
        // never invents, reorders or alters one.
        let mut written = records.iter();
        for record in &got {
            prop_assert!(written.any(|r| r == record), "record not written, or out of order");
        }
        if !damaged {
            prop_assert_eq!(skipped, 0);
            prop_assert_eq!(&got, &records);
        }
    }

    #[test]
    fn damaged_log_returns_only_real_records(
        sizes in proptest::collection::vec(0usize..40_000, 1..6),
        damage in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let records: Vec<Vec<u8>> =
            sizes.iter().enumerate().map(|(i, &n)| vec![i as u8 + 1; n]).collect();
        let (mut bytes, _) = write_log(&records);
        for (at, value) in damage {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        let (got, _) = read(&bytes);
        prop_assert_eq!(&got[..], &records[..got.len()]);
    }
}

#[test]
fn skipping_damage_loses_only_the_damaged_record() {
    // Small records, many per block: a flipped payload byte costs exactly the
    // record it hits; the rest of its block is read.
    let records: Vec<Vec<u8>> = (0..200u32)
        .map(|i| vec![(i % 250) as u8 + 1; 300])
        .collect();
    let (mut bytes, ends) = write_log(&records);
    let starts = record_starts(&ends);
    let hit = 50;
    bytes[starts[hit] + HEADER_SIZE + 10] ^= 0x04;
    let (got, skipped) = read_records_skipping_damage(Bytes::from(bytes)).unwrap();
    assert_eq!(skipped, 1);
    let mut expected = records.clone();
    expected.remove(hit);
    assert_eq!(got, expected);
}

/// `records_end` is where the writer stood after each record: what recovery
/// compares with a predecessor record's size. Records of every shape: empty,
/// small, spanning blocks, and one that starts after block padding.
#[test]
fn records_end_is_the_writers_length_after_each_record() {
    let file = VecFile::default();
    let mut writer = LogWriter::new(Box::new(file.clone()));
    let sizes = [
        0usize,
        10,
        3 * BLOCK_SIZE,
        BLOCK_SIZE - 2 * HEADER_SIZE - 3,
        1,
        40,
    ];
    let mut ends = Vec::new();
    for (i, &len) in sizes.iter().enumerate() {
        writer.add_record(&vec![i as u8 + 1; len]).unwrap();
        ends.push(writer.len());
    }
    let bytes = Bytes::from(file.bytes.lock().clone());
    let mut reader = LogReader::from_bytes(bytes, Path::new("x"));
    assert_eq!(reader.records_end(), 0);
    for (&len, &end) in sizes.iter().zip(&ends) {
        let (_, payload) = reader.read_record().unwrap().unwrap();
        assert_eq!(payload.len(), len);
        assert_eq!(reader.records_end(), end);
    }
    assert!(reader.read_record().unwrap().is_none());
    assert_eq!(reader.records_end(), *ends.last().unwrap());
}
