//! [`WriteBatch`]: an atomic group of puts and deletes, kept as its encoded bytes.
//!
//! ```text
//! write batch (RocksDB's layout)
//! +-------------------+----------------+-----------+-----------+-----+
//! | sequence: fixed64 | count: fixed32 | record 0  | record 1  | ... |
//! +-------------------+----------------+-----------+-----------+-----+
//!   bytes 0..8          bytes 8..12      `count` records, no padding, no trailer
//!
//! record
//! +----------+-----------------------------+--------------------------------+
//! | type: u8 | key: varint32 len | bytes   | value: varint32 len | bytes    |
//! +----------+-----------------------------+--------------------------------+
//!   1 = put     every record                 put only (absent for a delete)
//!   0 = delete
//! ```
//!
//! The batch is built directly in this form, so [`WriteBatch::data`] is what goes
//! into a WAL record with no copy, and recovery parses the WAL record back with
//! [`WriteBatch::from_data`]. The WAL record framing carries the checksum; a batch
//! has none of its own. Record `i` gets sequence number `sequence + i`, assigned
//! by the commit leader through [`WriteBatch::set_sequence`].
//!
//! Invariants of a `WriteBatch` value: `rep` is at least [`HEADER_LEN`] bytes,
//! its header always equals `(sequence, count)`, and the records after it parse
//! and number exactly `count`. Every constructor and mutator keeps them, which is
//! why [`WriteBatch::from_data`] validates the whole batch up front.

use std::fmt;

use crate::encoding::{put_fixed32, put_fixed64, put_varint32, Decoder};
use crate::error::{Error, Result};
use crate::key::{SequenceNumber, ValueType, MAX_SEQUENCE_NUMBER};
use crate::memtable::MemTable;

/// Bytes of the header: sequence (8) + count (4).
pub const HEADER_LEN: usize = 12;

/// Largest key a batch accepts (8 MiB, RocksDB's practical limit). Keys are
/// copied into every index block and compared on every seek; larger keys are a
/// misuse the engine rejects early rather than slowly.
pub const MAX_KEY_SIZE: usize = 8 << 20;

/// Largest value a batch accepts: the largest length a varint32 prefix can carry.
pub const MAX_VALUE_SIZE: usize = u32::MAX as usize;

/// One decoded record of a batch, borrowing from the batch's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchEntry<'a> {
    /// Put or delete.
    pub value_type: ValueType,
    /// The user key.
    pub key: &'a [u8],
    /// The value; empty for a delete.
    pub value: &'a [u8],
}

/// An atomic group of puts and deletes, stored in its on-disk encoding.
///
/// `put` and `delete` return `Result` instead of recording a deferred error
/// (RocksDB's style): a too-large key or value is reported at the call that
/// added it, and the batch is left unchanged.
#[derive(Clone, PartialEq, Eq)]
pub struct WriteBatch {
    /// The encoded batch: header, then records.
    rep: Vec<u8>,
    /// Mirrors the header's count so reading it needs no decoding.
    count: u32,
    /// Mirrors the header's sequence.
    sequence: SequenceNumber,
}

impl WriteBatch {
    /// An empty batch with sequence 0.
    pub fn new() -> WriteBatch {
        let mut batch = WriteBatch {
            rep: Vec::with_capacity(HEADER_LEN),
            count: 0,
            sequence: 0,
        };
        put_fixed64(&mut batch.rep, 0);
        put_fixed32(&mut batch.rep, 0);
        batch
    }

    /// Adds `key = value`.
    ///
    /// Fails with `InvalidArgument` (field `"key"` or `"value"`) when the key is
    /// longer than [`MAX_KEY_SIZE`] or the value longer than [`MAX_VALUE_SIZE`],
    /// and with field `"batch"` when the batch already holds `u32::MAX` records.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        check_sizes(key.len(), value.len())?;
        let count = self.next_count()?;
        self.rep.push(ValueType::Put as u8);
        put_len_and_bytes(&mut self.rep, key);
        put_len_and_bytes(&mut self.rep, value);
        self.set_count(count);
        Ok(())
    }

    /// Adds a deletion of `key`. Errors as for [`WriteBatch::put`].
    pub fn delete(&mut self, key: &[u8]) -> Result<()> {
        check_sizes(key.len(), 0)?;
        let count = self.next_count()?;
        self.rep.push(ValueType::Delete as u8);
        put_len_and_bytes(&mut self.rep, key);
        self.set_count(count);
        Ok(())
    }

    /// Removes every record and resets the sequence to 0, keeping the allocation.
    pub fn clear(&mut self) {
        self.rep.truncate(HEADER_LEN);
        self.sequence = 0;
        self.count = 0;
        self.store_header();
    }

    /// Number of records.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// True when the batch holds no record.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The encoded batch: what goes into a WAL record.
    pub fn data(&self) -> &[u8] {
        &self.rep
    }

    /// Size of the encoded batch in bytes (what it costs in the WAL; the
    /// memtable cost is close to it plus per-entry overhead).
    pub fn approximate_size(&self) -> usize {
        self.rep.len()
    }

    /// Sequence number of the first record.
    pub fn sequence(&self) -> SequenceNumber {
        self.sequence
    }

    /// Sets the sequence number of the first record (done by the commit leader).
    pub fn set_sequence(&mut self, seq: SequenceNumber) {
        self.sequence = seq;
        self.store_header();
    }

    /// Parses an encoded batch (a WAL record's payload), checking the header,
    /// every record, and that the number of records equals the header's count.
    ///
    /// A malformed batch is `Error::Corruption` with an empty file and offset 0:
    /// the reason names the byte within the batch, and the WAL reader, which
    /// knows the file, rewraps it.
    pub fn from_data(data: Vec<u8>) -> Result<WriteBatch> {
        let mut header = Decoder::new(&data);
        let (Some(sequence), Some(count)) = (header.fixed64(), header.fixed32()) else {
            return Err(batch_corruption(format!(
                "batch of {} bytes is shorter than its {HEADER_LEN}-byte header",
                data.len()
            )));
        };
        let mut records: u64 = 0;
        for entry in parse_records(&data) {
            entry?;
            records += 1;
        }
        if records != u64::from(count) {
            return Err(batch_corruption(format!(
                "batch header says {count} records but the batch holds {records}"
            )));
        }
        Ok(WriteBatch {
            rep: data,
            count,
            sequence,
        })
    }

    /// The records in order. A batch that passed [`WriteBatch::from_data`] or was
    /// built by `put`/`delete` always parses; the iterator still reports a parse
    /// failure as `Err` (once, then ends) rather than trusting that.
    pub fn iter(&self) -> BatchIter<'_> {
        parse_records(&self.rep)
    }

    /// Appends `other`'s records after this batch's (group commit). This batch's
    /// sequence is kept; `other`'s is ignored. Fails with `InvalidArgument`
    /// (field `"batch"`) if the combined count would overflow `u32`, leaving this
    /// batch unchanged.
    pub fn append(&mut self, other: &WriteBatch) -> Result<()> {
        let count = self.count.checked_add(other.count).ok_or_else(|| {
            Error::invalid_argument("batch", "appending would exceed u32::MAX records")
        })?;
        self.rep
            .extend_from_slice(other.rep.get(HEADER_LEN..).unwrap_or_default());
        self.set_count(count);
        Ok(())
    }

    /// Adds every record to `mem`, record `i` with sequence number
    /// `sequence() + i`.
    ///
    /// Fails with `InvalidArgument` (field `"sequence"`) before adding anything if
    /// the last sequence number would exceed [`MAX_SEQUENCE_NUMBER`]. A memtable
    /// error stops the insert part-way; the caller must then stop accepting
    /// writes, as for any failed write.
    pub fn insert_into(&self, mem: &MemTable) -> Result<()> {
        // Record i gets sequence + i, so the last one gets sequence + count - 1.
        let last = self
            .sequence
            .checked_add(u64::from(self.count.saturating_sub(1)));
        if self.count > 0 && !matches!(last, Some(last) if last <= MAX_SEQUENCE_NUMBER) {
            return Err(Error::invalid_argument(
                "sequence",
                format!(
                    "batch of {} records at sequence {} exceeds the largest sequence number {MAX_SEQUENCE_NUMBER}",
                    self.count, self.sequence
                ),
            ));
        }
        // The batch iterator goes first in the zip so the sequence range is only
        // advanced for a record that exists: it never steps past the last
        // sequence number checked above.
        for (entry, seq) in self.iter().zip(self.sequence..) {
            let entry = entry?;
            mem.add(seq, entry.value_type, entry.key, entry.value)?;
        }
        Ok(())
    }

    /// The count after adding one record, or an error if it would overflow.
    fn next_count(&self) -> Result<u32> {
        self.count.checked_add(1).ok_or_else(|| {
            Error::invalid_argument("batch", "a batch holds at most u32::MAX records")
        })
    }

    fn set_count(&mut self, count: u32) {
        self.count = count;
        self.store_header();
    }

    /// Writes `(sequence, count)` into the header bytes, keeping the invariant
    /// that `rep`'s header mirrors the fields.
    fn store_header(&mut self) {
        let mut header = [0u8; HEADER_LEN];
        let (seq_bytes, count_bytes) = header.split_at_mut(8);
        seq_bytes.copy_from_slice(&self.sequence.to_le_bytes());
        count_bytes.copy_from_slice(&self.count.to_le_bytes());
        // `rep` always starts with a header (invariant), so this always matches.
        if let Some(slot) = self.rep.get_mut(..HEADER_LEN) {
            slot.copy_from_slice(&header);
        }
    }
}

impl Default for WriteBatch {
    fn default() -> Self {
        WriteBatch::new()
    }
}

/// Summarizes instead of dumping the bytes, which may be megabytes.
impl fmt::Debug for WriteBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteBatch")
            .field("sequence", &self.sequence)
            .field("count", &self.count)
            .field("bytes", &self.rep.len())
            .finish()
    }
}

/// Iterator over a batch's records; see [`WriteBatch::iter`].
#[derive(Debug, Clone)]
pub struct BatchIter<'a> {
    records: Decoder<'a>,
    /// Set after the first error so a corrupt batch yields exactly one `Err`.
    failed: bool,
}

impl<'a> Iterator for BatchIter<'a> {
    type Item = Result<BatchEntry<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.records.is_empty() {
            return None;
        }
        let result = next_record(&mut self.records);
        self.failed = result.is_err();
        Some(result)
    }
}

/// Iterates the records after the header (none if `data` is shorter than it).
fn parse_records(data: &[u8]) -> BatchIter<'_> {
    BatchIter {
        records: Decoder::new(data.get(HEADER_LEN..).unwrap_or_default()),
        failed: false,
    }
}

/// Decodes one record at the decoder's position.
fn next_record<'a>(d: &mut Decoder<'a>) -> Result<BatchEntry<'a>> {
    let start = HEADER_LEN + d.position();
    let code = d
        .u8()
        .ok_or_else(|| batch_corruption(format!("missing record type at batch byte {start}")))?;
    let value_type = ValueType::from_code(code).ok_or_else(|| {
        batch_corruption(format!("unknown record type {code} at batch byte {start}"))
    })?;
    let key = read_slice(d, "key", start)?;
    if key.len() > MAX_KEY_SIZE {
        return Err(batch_corruption(format!(
            "key of {} bytes in the record at batch byte {start} exceeds the maximum {MAX_KEY_SIZE}",
            key.len()
        )));
    }
    let value = match value_type {
        ValueType::Put => read_slice(d, "value", start)?,
        ValueType::Delete => &[],
        // Batches do not carry range deletions yet; until they do, the code is
        // as unknown as it was before it named a type.
        ValueType::RangeDeletion => {
            return Err(batch_corruption(format!(
                "unknown record type {code} at batch byte {start}"
            )))
        }
    };
    Ok(BatchEntry {
        value_type,
        key,
        value,
    })
}

/// Reads a varint32 length and that many bytes; the length is checked against
/// the bytes that remain before anything is sliced.
fn read_slice<'a>(d: &mut Decoder<'a>, what: &str, record_start: usize) -> Result<&'a [u8]> {
    let len = d.varint32().ok_or_else(|| {
        batch_corruption(format!(
            "bad {what} length in the record at batch byte {record_start}"
        ))
    })?;
    let remaining = d.remaining().len();
    usize::try_from(len)
        .ok()
        .and_then(|n| d.bytes(n))
        .ok_or_else(|| {
            batch_corruption(format!(
                "{what} of {len} bytes in the record at batch byte {record_start} runs past the end ({remaining} bytes left)"
            ))
        })
}

fn put_len_and_bytes(dst: &mut Vec<u8>, bytes: &[u8]) {
    // check_sizes bounds every length by MAX_VALUE_SIZE = u32::MAX.
    put_varint32(dst, u32::try_from(bytes.len()).unwrap_or(u32::MAX));
    dst.extend_from_slice(bytes);
}

fn check_sizes(key_len: usize, value_len: usize) -> Result<()> {
    if key_len > MAX_KEY_SIZE {
        return Err(Error::invalid_argument(
            "key",
            format!("key of {key_len} bytes exceeds the maximum of {MAX_KEY_SIZE}"),
        ));
    }
    if value_len > MAX_VALUE_SIZE {
        return Err(Error::invalid_argument(
            "value",
            format!("value of {value_len} bytes exceeds the maximum of {MAX_VALUE_SIZE}"),
        ));
    }
    Ok(())
}

fn batch_corruption(reason: String) -> Error {
    Error::corruption("", 0, reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memtable::MemGet;
    use bytes::Bytes;
    use proptest::prelude::*;

    /// One operation of a generated batch: `Some(value)` is a put, `None` a delete.
    type Op = (Vec<u8>, Option<Vec<u8>>);

    fn build(ops: &[Op]) -> WriteBatch {
        let mut b = WriteBatch::new();
        for (key, value) in ops {
            match value {
                Some(v) => b.put(key, v).unwrap(),
                None => b.delete(key).unwrap(),
            }
        }
        b
    }

    fn entries(b: &WriteBatch) -> Vec<Op> {
        b.iter()
            .map(|e| {
                let e = e.unwrap();
                let value = match e.value_type {
                    ValueType::Put => Some(e.value.to_vec()),
                    ValueType::Delete => {
                        assert!(e.value.is_empty());
                        None
                    }
                    ValueType::RangeDeletion => panic!("decoded a range deletion"),
                };
                (e.key.to_vec(), value)
            })
            .collect()
    }

    fn ops_strategy() -> impl Strategy<Value = Vec<Op>> {
        let bytes = |max| proptest::collection::vec(any::<u8>(), 0..max);
        proptest::collection::vec((bytes(12), proptest::option::of(bytes(200))), 0..20)
    }

    fn assert_corrupt(data: Vec<u8>) {
        match WriteBatch::from_data(data.clone()) {
            Err(e) => assert!(e.is_corruption(), "{data:?}: {e}"),
            Ok(b) => panic!("{data:?} decoded as {b:?}"),
        }
    }

    #[test]
    fn golden_bytes() {
        let mut b = WriteBatch::new();
        b.put(b"k", b"v").unwrap();
        b.delete(b"ab").unwrap();
        b.put(b"", b"").unwrap();
        b.set_sequence(0x0102);
        #[rustfmt::skip]
        let expected: &[u8] = &[
            0x02, 0x01, 0, 0, 0, 0, 0, 0, // sequence 0x0102, fixed64 LE
            3, 0, 0, 0,                   // count 3, fixed32 LE
            1, 1, b'k', 1, b'v',          // put "k" = "v"
            0, 2, b'a', b'b',             // delete "ab"
            1, 0, 0,                      // put "" = ""
        ];
        assert_eq!(b.data(), expected);
        assert_eq!(b.approximate_size(), expected.len());
        assert_eq!(WriteBatch::from_data(expected.to_vec()).unwrap(), b);
        assert_eq!(WriteBatch::new().data(), &[0u8; HEADER_LEN]);
    }

    #[test]
    fn accessors_and_clear() {
        let mut b = WriteBatch::default();
        assert!(b.is_empty());
        b.put(b"a", b"1").unwrap();
        b.delete(b"b").unwrap();
        b.set_sequence(77);
        assert_eq!((b.count(), b.sequence(), b.is_empty()), (2, 77, false));
        let decoded = WriteBatch::from_data(b.data().to_vec()).unwrap();
        assert_eq!((decoded.count(), decoded.sequence()), (2, 77));
        b.clear();
        assert_eq!(b, WriteBatch::new());
        assert_eq!(b.iter().count(), 0);
    }

    #[test]
    fn oversized_key_is_rejected_and_batch_unchanged() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1").unwrap();
        let before = b.clone();
        let big = vec![0u8; MAX_KEY_SIZE + 1];
        let err = b.put(&big, b"v").unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument { field: "key", .. }),
            "{err}"
        );
        let err = b.delete(&big).unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument { field: "key", .. }),
            "{err}"
        );
        assert_eq!(b, before);
        // The largest allowed key is accepted and survives a round trip.
        b.put(&big[..MAX_KEY_SIZE], b"").unwrap();
        assert_eq!(WriteBatch::from_data(b.data().to_vec()).unwrap(), b);
        // A value over the limit would need 4 GiB to build; the check itself is
        // what put calls first.
        let err = check_sizes(0, MAX_VALUE_SIZE + 1).unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument { field: "value", .. }),
            "{err}"
        );
    }

    #[test]
    fn count_overflow_is_rejected() {
        let mut b = WriteBatch::new();
        b.count = u32::MAX;
        let err = b.put(b"k", b"v").unwrap_err();
        assert!(matches!(err, Error::InvalidArgument { field: "batch", .. }));
        let mut one = WriteBatch::new();
        one.put(b"k", b"v").unwrap();
        let err = b.append(&one).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument { field: "batch", .. }));
        assert_eq!(b.data().len(), HEADER_LEN);
    }

    #[test]
    fn short_header_and_count_mismatch_are_corruption() {
        for n in 0..HEADER_LEN {
            assert_corrupt(vec![0; n]);
        }
        let mut b = WriteBatch::new();
        b.put(b"k", b"v").unwrap();
        let mut more = b.data().to_vec();
        more[8] = 2; // header claims 2 records, the batch holds 1
        assert_corrupt(more);
        let mut fewer = b.data().to_vec();
        fewer[8] = 0;
        assert_corrupt(fewer);
        let mut bad_type = b.data().to_vec();
        bad_type[HEADER_LEN] = 7;
        assert_corrupt(bad_type);
        // A length prefix that does not fit in 32 bits.
        let mut wide = WriteBatch::new().data().to_vec();
        wide[8] = 1;
        wide.extend_from_slice(&[1, 0xff, 0xff, 0xff, 0xff, 0x7f]);
        assert_corrupt(wide);
    }

    #[test]
    fn oversized_key_in_data_is_corruption() {
        let mut data = WriteBatch::new().data().to_vec();
        data[8] = 1;
        data.push(ValueType::Delete as u8);
        put_varint32(&mut data, MAX_KEY_SIZE as u32 + 1);
        data.resize(data.len() + MAX_KEY_SIZE + 1, b'x');
        assert_corrupt(data);
    }

    #[test]
    fn iter_reports_one_error_then_ends() {
        let b = WriteBatch {
            rep: vec![0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1, b'a', 9],
            count: 2,
            sequence: 0,
        };
        let results: Vec<_> = b.iter().collect();
        assert_eq!(results.len(), 2);
        assert!(results[0].is_ok());
        assert!(results[1].as_ref().unwrap_err().is_corruption());
    }

    #[test]
    fn every_truncation_is_corruption() {
        let mut b = WriteBatch::new();
        b.put(b"key", b"value").unwrap();
        b.delete(b"gone").unwrap();
        b.put(b"", b"").unwrap();
        b.delete(b"").unwrap();
        b.set_sequence(9);
        let data = b.data();
        for n in 0..data.len() {
            assert_corrupt(data[..n].to_vec());
        }
    }

    #[test]
    fn append_concatenates_records() {
        let mut a = build(&[(b"a".to_vec(), Some(b"1".to_vec()))]);
        a.set_sequence(5);
        let mut b = build(&[(b"b".to_vec(), None), (b"c".to_vec(), Some(b"3".to_vec()))]);
        b.set_sequence(99);
        a.append(&b).unwrap();
        assert_eq!((a.count(), a.sequence()), (3, 5));
        assert_eq!(
            entries(&a),
            vec![
                (b"a".to_vec(), Some(b"1".to_vec())),
                (b"b".to_vec(), None),
                (b"c".to_vec(), Some(b"3".to_vec())),
            ]
        );
        assert_eq!(WriteBatch::from_data(a.data().to_vec()).unwrap(), a);
        a.append(&WriteBatch::new()).unwrap();
        assert_eq!(a.count(), 3);
    }

    #[test]
    fn insert_into_assigns_consecutive_sequence_numbers() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1").unwrap();
        b.put(b"b", b"2").unwrap();
        b.delete(b"a").unwrap();
        b.put(b"c", b"").unwrap();
        b.set_sequence(10);
        let mem = MemTable::new(1 << 16);
        b.insert_into(&mem).unwrap();
        assert_eq!(mem.len(), 4);
        let found = |v: &'static [u8]| MemGet::Found(Bytes::from_static(v));
        assert_eq!(mem.get(b"a", 9), MemGet::NotFound);
        assert_eq!(mem.get(b"a", 10), found(b"1"));
        assert_eq!(mem.get(b"a", 11), found(b"1"));
        assert_eq!(mem.get(b"a", 12), MemGet::Deleted);
        assert_eq!(mem.get(b"b", 10), MemGet::NotFound);
        assert_eq!(mem.get(b"b", 11), found(b"2"));
        assert_eq!(mem.get(b"c", 12), MemGet::NotFound);
        assert_eq!(mem.get(b"c", 13), found(b""));
    }

    #[test]
    fn insert_into_rejects_sequence_overflow() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1").unwrap();
        b.put(b"b", b"2").unwrap();
        let mem = MemTable::new(1 << 16);
        b.set_sequence(MAX_SEQUENCE_NUMBER);
        let err = b.insert_into(&mem).unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidArgument {
                    field: "sequence",
                    ..
                }
            ),
            "{err}"
        );
        b.set_sequence(u64::MAX);
        assert!(b.insert_into(&mem).is_err());
        assert!(mem.is_empty());
        b.set_sequence(MAX_SEQUENCE_NUMBER - 1);
        b.insert_into(&mem).unwrap();
        assert_eq!(
            mem.get(b"b", MAX_SEQUENCE_NUMBER),
            MemGet::Found(Bytes::from_static(b"2"))
        );
        // An empty batch inserts nothing, whatever its sequence.
        let mut empty = WriteBatch::new();
        empty.set_sequence(u64::MAX);
        empty.insert_into(&mem).unwrap();
    }

    proptest! {
        #[test]
        fn round_trip(ops in ops_strategy(), seq in 0..=MAX_SEQUENCE_NUMBER) {
            let mut b = build(&ops);
            b.set_sequence(seq);
            prop_assert_eq!(b.count() as usize, ops.len());
            let decoded = WriteBatch::from_data(b.data().to_vec()).unwrap();
            prop_assert_eq!(decoded.sequence(), seq);
            prop_assert_eq!(entries(&decoded), ops);
            prop_assert_eq!(decoded, b);
        }

        #[test]
        fn append_matches_building_in_one(a in ops_strategy(), b in ops_strategy()) {
            let mut joined = build(&a);
            joined.append(&build(&b)).unwrap();
            let all: Vec<Op> = a.iter().chain(&b).cloned().collect();
            prop_assert_eq!(joined, build(&all));
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Err(e) = WriteBatch::from_data(bytes) {
                prop_assert!(e.is_corruption());
            }
        }

        /// Random records after a plausible header reach deeper into the parser
        /// than fully random bytes, which mostly fail the count check.
        #[test]
        fn random_records_never_panic(count in 0u32..4,
                                      body in proptest::collection::vec(any::<u8>(), 0..48)) {
            let mut data = WriteBatch::new().data().to_vec();
            data[8..12].copy_from_slice(&count.to_le_bytes());
            data.extend_from_slice(&body);
            match WriteBatch::from_data(data) {
                Ok(b) => prop_assert_eq!(b.iter().filter(|e| e.is_ok()).count(), count as usize),
                Err(e) => prop_assert!(e.is_corruption()),
            }
        }

        #[test]
        fn truncated_batches_are_corruption(ops in ops_strategy(), cut in any::<prop::sample::Index>()) {
            let b = build(&ops);
            let n = cut.index(b.data().len());
            let result = WriteBatch::from_data(b.data()[..n].to_vec());
            prop_assert!(result.unwrap_err().is_corruption());
        }
    }
}
