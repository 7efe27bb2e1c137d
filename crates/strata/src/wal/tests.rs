//! Log format tests: golden bytes, round trips, truncation and corruption sweeps.

use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use proptest::prelude::*;

use super::format::{BLOCK_SIZE, HEADER_SIZE};
use super::*;
use crate::error::Result;
use crate::fs::WritableFile;

#[derive(Debug, Clone, Default)]
struct VecFile(Arc<Mutex<Vec<u8>>>);

impl WritableFile for VecFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.0.lock().extend_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn len(&self) -> u64 {
        self.0.lock().len() as u64
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
    let bytes = file.0.lock().clone();
    (bytes, ends)
}

fn read(bytes: &[u8]) -> (Vec<Vec<u8>>, Result<Option<TornTail>>) {
    read_all_records(Bytes::copy_from_slice(bytes))
}

#[test]
fn golden_bytes() {
    let (bytes, _) = write_log(&[b"".to_vec(), b"a".to_vec()]);
    // Empty FULL record: masked crc32c of [1], length 0, type 1.
    let crc_empty = crate::checksum::mask_crc(crc32c::crc32c(&[1]));
    let crc_a = crate::checksum::mask_crc(crc32c::crc32c(&[1, b'a']));
    let mut expected = Vec::new();
    expected.extend_from_slice(&crc_empty.to_le_bytes());
    expected.extend_from_slice(&[0, 0, 1]);
    expected.extend_from_slice(&crc_a.to_le_bytes());
    expected.extend_from_slice(&[1, 0, 1, b'a']);
    assert_eq!(bytes, expected);
    // Pin the checksum values themselves so the mask cannot drift either.
    assert_eq!(bytes[..4], [0x05, 0x2b, 0x28, 0x43]);
    assert_eq!(bytes[7..11], CRC_A_GOLDEN);
}

const CRC_A_GOLDEN: [u8; 4] = [0xb5, 0xcd, 0x0b, 0xa2];

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

fn sweep_records() -> Vec<Vec<u8>> {
    vec![
        b"first".to_vec(),
        Vec::new(),
        vec![7u8; BLOCK_SIZE + 100],
        (0..3000u32).map(|i| (i % 251) as u8 + 1).collect(),
        vec![9u8; BLOCK_SIZE - 2 * HEADER_SIZE - 200],
        b"last".to_vec(),
    ]
}

#[test]
fn truncation_at_every_offset_is_a_torn_tail() {
    let records = sweep_records();
    let (bytes, ends) = write_log(&records);
    for cut in 0..=bytes.len() {
        let (got, end) = read(&bytes[..cut]);
        let complete = ends.iter().filter(|&&e| e <= cut).count();
        assert_eq!(got, records[..complete], "cut at {cut}");
        let torn = end.unwrap_or_else(|e| panic!("cut at {cut} reported {e}"));
        let at_boundary = cut == 0 || ends.contains(&cut) || {
            // Inside zero padding after a record: nothing of the next one exists.
            let last_end = ends
                .iter()
                .copied()
                .filter(|&e| e <= cut)
                .max()
                .unwrap_or(0);
            bytes[last_end..cut].iter().all(|&b| b == 0) && cut - last_end < HEADER_SIZE
        };
        if at_boundary {
            assert_eq!(torn, None, "cut at {cut} is at a record boundary");
        } else {
            let torn = torn.unwrap_or_else(|| panic!("cut at {cut} is not reported torn"));
            let record_start = ends
                .iter()
                .copied()
                .filter(|&e| e <= cut)
                .max()
                .unwrap_or(0);
            // The torn record starts at the previous end, or after block padding.
            assert!(torn.offset >= record_start as u64 && torn.offset <= cut as u64);
        }
    }
}

#[test]
fn flipped_byte_is_corruption_or_harmless_never_wrong() {
    let records = sweep_records();
    let (bytes, ends) = write_log(&records);
    let last_record_start = ends[ends.len() - 2];
    for i in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[i] ^= 0x20;
        let (got, end) = read(&bad);
        // Whatever was returned is a prefix of the real history.
        assert!(got.len() <= records.len());
        assert_eq!(got, records[..got.len()], "flip at {i} returned wrong data");
        if i < last_record_start {
            // Before the final record: more data follows, so this is corruption.
            assert!(
                end.is_err(),
                "flip at {i} of {} went unnoticed",
                bytes.len()
            );
        } else {
            // In the final record: a torn tail or corruption, never success.
            assert!(
                end.is_err() || end.as_ref().is_ok_and(|t| t.is_some()),
                "flip at {i}"
            );
        }
    }
}

#[test]
fn zero_filled_tail_is_a_torn_tail() {
    let records = sweep_records();
    let (mut bytes, _) = write_log(&records);
    bytes.extend_from_slice(&[0u8; 10 * 1024]);
    let (got, end) = read(&bytes);
    assert_eq!(got, records);
    assert!(end.unwrap().is_some_and(|t| t.reason.contains("zero")));
}

#[test]
fn zeros_followed_by_data_are_corruption() {
    let (mut bytes, _) = write_log(&[b"a".to_vec()]);
    bytes.extend_from_slice(&[0u8; 100]);
    bytes.extend_from_slice(&write_log(&[b"b".to_vec()]).0);
    let (got, end) = read(&bytes);
    assert_eq!(got, vec![b"a".to_vec()]);
    assert!(end.unwrap_err().is_corruption());
}

#[test]
fn record_offsets_are_reported() {
    let records = sweep_records();
    let (bytes, ends) = write_log(&records);
    let file: Arc<dyn crate::fs::RandomAccessFile> = Arc::new(MemBytes(Bytes::from(bytes)));
    let mut reader = LogReader::new(file, std::path::Path::new("x.log"));
    let mut expected_start = 0;
    for (i, r) in records.iter().enumerate() {
        let (offset, payload) = reader.read_record().unwrap().unwrap();
        assert_eq!(payload, &r[..]);
        // A record starts at the previous end, unless padding pushed it on.
        assert!(
            offset as usize >= expected_start && (offset as usize) < expected_start + HEADER_SIZE
        );
        expected_start = ends[i];
    }
    assert!(reader.read_record().unwrap().is_none());
    assert!(reader.torn_tail().is_none());
}

#[derive(Debug)]
struct MemBytes(Bytes);
impl crate::fs::RandomAccessFile for MemBytes {
    fn read_at(&self, offset: u64, len: usize) -> Result<Bytes> {
        Ok(self.0.slice(offset as usize..offset as usize + len))
    }
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn roundtrip(sizes in proptest::collection::vec(
        prop_oneof![
            0usize..100,
            Just(BLOCK_SIZE - HEADER_SIZE),
            Just(BLOCK_SIZE - 2 * HEADER_SIZE),
            Just(BLOCK_SIZE - HEADER_SIZE - 6),
            0usize..100_000,
        ], 0..12), seed in any::<u8>()) {
        let records: Vec<Vec<u8>> = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| (0..n).map(|j| (j as u8).wrapping_mul(31).wrapping_add(i as u8 ^ seed)).collect())
            .collect();
        let (bytes, _) = write_log(&records);
        let (got, end) = read(&bytes);
        prop_assert_eq!(got, records);
        prop_assert_eq!(end.unwrap(), None);
    }

    #[test]
    fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
        let _ = read(&bytes);
    }
}
