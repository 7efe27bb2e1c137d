//! [`WriteBatch`]: an atomic group of puts, deletes and range deletions, in one
//! or several column families, kept as its encoded bytes.
//!
//! ```text
//! write batch (RocksDB's layout)
//! +-------------------+----------------+-----------+-----------+-----+
//! | sequence: fixed64 | count: fixed32 | record 0  | record 1  | ... |
//! +-------------------+----------------+-----------+-----------+-----+
//!   bytes 0..8          bytes 8..12      `count` records, no padding, no trailer
//!
//! record
//! +----------+--------------------+-------------------------+--------------------------+
//! | type: u8 | family: varint32   | key: varint32 len+bytes | value: varint32 len+bytes|
//! +----------+--------------------+-------------------------+--------------------------+
//!              types 4-6, 0x0E      every record              types 1, 2, 5, 6, 0x0E, 0x0F
//!
//! type  record                                  (RocksDB's codes)
//!   0   delete in the default family            kTypeDeletion
//!   1   put in the default family               kTypeValue
//!   2   merge in the default family             kTypeMerge
//!   4   delete in family `family`               kTypeColumnFamilyDeletion
//!   5   put in family `family`                  kTypeColumnFamilyValue
//!   6   merge in family `family`                kTypeColumnFamilyMerge
//! 0x0E  range deletion in family `family`       kTypeColumnFamilyRangeDeletion
//! 0x0F  range deletion in the default family    kTypeRangeDeletion
//! ```
//!
//! A range deletion's key is the range's begin (inclusive) and its value the
//! end (exclusive); `begin < end` always holds, in batches built here and in
//! batches parsed from a WAL.
//!
//! The default family (id 0) is always written with the short types 0 and 1,
//! so a batch that names no other family has the layout batches had before
//! column families existed.
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

use crate::cf::ColumnFamily;
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

/// Record types of the batch encoding (RocksDB's codes).
const RECORD_DELETE: u8 = 0;
const RECORD_PUT: u8 = 1;
const RECORD_CF_DELETE: u8 = 4;
const RECORD_CF_PUT: u8 = 5;
const RECORD_MERGE: u8 = 2;
const RECORD_CF_MERGE: u8 = 6;
const RECORD_CF_RANGE_DELETE: u8 = 0x0E;
const RECORD_RANGE_DELETE: u8 = 0x0F;

/// One decoded record of a batch, borrowing from the batch's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchEntry<'a> {
    /// The column family's id (0: the default family).
    pub cf: u32,
    /// Put, delete or range deletion.
    pub value_type: ValueType,
    /// The user key; a range deletion's begin (inclusive).
    pub key: &'a [u8],
    /// The value; empty for a delete; a range deletion's end (exclusive).
    pub value: &'a [u8],
}

/// An atomic group of puts, deletes and range deletions, stored in its
/// on-disk encoding.
///
/// `put` and `delete` return `Result` instead of recording a deferred error
/// (RocksDB's style): a too-large key or value is reported at the call that
/// added it, and the batch is left unchanged.
///
/// ```
/// use strata::{Db, DbOptions, WriteBatch, WriteOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let db = Db::open(dir.path(), DbOptions { create_if_missing: true, ..Default::default() })?;
/// db.put("old", "x")?;
/// let mut batch = WriteBatch::new();
/// batch.put("a", "1")?;
/// batch.put("b", "2")?;
/// batch.delete("old")?;
/// assert_eq!(batch.count(), 3);
/// assert!(batch.put(vec![0u8; strata::MAX_KEY_SIZE + 1], "").is_err());
/// assert_eq!(batch.count(), 3, "a rejected put leaves the batch unchanged");
/// db.write(&WriteOptions::default(), batch)?;
/// assert!(db.get("old")?.is_none() && db.get("b")?.is_some());
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct WriteBatch {
    /// The encoded batch: header, then records.
    rep: Vec<u8>,
    /// Mirrors the header's count so reading it needs no decoding.
    count: u32,
    /// Mirrors the header's sequence.
    sequence: SequenceNumber,
    /// Some record names a family other than the default one.
    names_families: bool,
    /// Some record is a merge operand.
    has_merges: bool,
    /// Some record is a range deletion.
    has_range_deletions: bool,
    /// The database (open) whose family handles the records were added
    /// with; records name families by id only, so a batch given another
    /// database's handle would write into whichever family has its id.
    db_instance: Option<u64>,
}

/// Two batches are equal when their records are: the other fields mirror
/// them, but for the handles' database, which the bytes do not carry.
impl PartialEq for WriteBatch {
    fn eq(&self, other: &WriteBatch) -> bool {
        self.rep == other.rep
    }
}

impl Eq for WriteBatch {}

impl WriteBatch {
    /// An empty batch with sequence 0.
    pub fn new() -> WriteBatch {
        let mut batch = WriteBatch {
            rep: Vec::with_capacity(HEADER_LEN),
            count: 0,
            sequence: 0,
            names_families: false,
            has_merges: false,
            has_range_deletions: false,
            db_instance: None,
        };
        put_fixed64(&mut batch.rep, 0);
        put_fixed32(&mut batch.rep, 0);
        batch
    }

    /// Adds `key = value` in the default family.
    ///
    /// Fails with `InvalidArgument` (field `"key"` or `"value"`) when the key is
    /// longer than [`MAX_KEY_SIZE`] or the value longer than [`MAX_VALUE_SIZE`],
    /// and with field `"batch"` when the batch already holds `u32::MAX` records.
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.add(0, ValueType::Put, key.as_ref(), value.as_ref())
    }

    /// Adds a deletion of `key` in the default family. Errors as for
    /// [`WriteBatch::put`].
    pub fn delete(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        self.add(0, ValueType::Delete, key.as_ref(), &[])
    }

    /// Adds `key = value` in family `cf`. Errors as for [`WriteBatch::put`];
    /// a family dropped before the batch is written fails the write.
    pub fn put_cf(
        &mut self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Result<()> {
        self.bind(cf)?;
        self.add(cf.id(), ValueType::Put, key.as_ref(), value.as_ref())
    }

    /// Adds a deletion of `key` in family `cf`. Errors as for
    /// [`WriteBatch::put_cf`].
    pub fn delete_cf(&mut self, cf: &ColumnFamily, key: impl AsRef<[u8]>) -> Result<()> {
        self.bind(cf)?;
        self.add(cf.id(), ValueType::Delete, key.as_ref(), &[])
    }

    /// Adds a merge operand for `key` in the default family: the family's
    /// merge operator combines it with the key's older versions when it is
    /// read or compacted. Errors as for [`WriteBatch::put`]; a family without
    /// a merge operator fails the write.
    pub fn merge(&mut self, key: impl AsRef<[u8]>, operand: impl AsRef<[u8]>) -> Result<()> {
        self.add(0, ValueType::Merge, key.as_ref(), operand.as_ref())
    }

    /// Adds a merge operand for `key` in family `cf` (see
    /// [`WriteBatch::merge`]).
    pub fn merge_cf(
        &mut self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        operand: impl AsRef<[u8]>,
    ) -> Result<()> {
        self.bind(cf)?;
        self.add(cf.id(), ValueType::Merge, key.as_ref(), operand.as_ref())
    }

    /// The ids of the families the batch's merge operands go to, without
    /// repeats (empty for a batch without merges).
    pub(crate) fn merge_families(&self) -> Vec<u32> {
        // Checked on every write: most batches hold no merge, and skip the
        // parse.
        if !self.has_merges {
            return Vec::new();
        }
        let mut ids: Vec<u32> = self
            .iter()
            .filter_map(|e| e.ok())
            .filter(|e| e.value_type == ValueType::Merge)
            .map(|e| e.cf)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Adds a deletion of every key in `[begin, end)` of the default family
    /// (RocksDB's `DeleteRange`): keys written before it in sequence order are
    /// deleted, later writes are not. An empty range (which RocksDB accepts
    /// as a no-op) is refused with `InvalidArgument` naming `delete_range`:
    /// `begin == end` here, and `begin` not sorting before `end` in the
    /// family's order when the batch is written (the batch does not know the
    /// order); other errors as for [`WriteBatch::put`], the end counting as
    /// the value.
    pub fn delete_range(&mut self, begin: impl AsRef<[u8]>, end: impl AsRef<[u8]>) -> Result<()> {
        self.add_range_deletion(0, begin.as_ref(), end.as_ref())
    }

    /// Adds a deletion of every key in `[begin, end)` of family `cf`. Errors
    /// as for [`WriteBatch::delete_range`]; a family dropped before the batch
    /// is written fails the write.
    pub fn delete_range_cf(
        &mut self,
        cf: &ColumnFamily,
        begin: impl AsRef<[u8]>,
        end: impl AsRef<[u8]>,
    ) -> Result<()> {
        self.bind(cf)?;
        self.add_range_deletion(cf.id(), begin.as_ref(), end.as_ref())
    }

    /// Appends a range-deletion record after checking the range is not empty.
    fn add_range_deletion(&mut self, cf: u32, begin: &[u8], end: &[u8]) -> Result<()> {
        check_range(begin, end)
            .map_err(|reason| Error::invalid_argument("delete_range", reason))?;
        check_sizes(end.len(), 0)?;
        self.add(cf, ValueType::RangeDeletion, begin, end)
    }

    /// Appends one record; the batch is unchanged on error.
    /// The database whose family handles the batch's records were added
    /// with, if any: a write into another database is refused.
    pub(crate) fn db_instance(&self) -> Option<u64> {
        self.db_instance
    }

    /// Ties the batch to the database of handle `cf`; a handle of another
    /// database than the batch's other handles is `InvalidArgument`.
    fn bind(&mut self, cf: &ColumnFamily) -> Result<()> {
        let instance = cf.shared.db_instance;
        match self.db_instance {
            Some(bound) if bound != instance => Err(Error::invalid_argument(
                "column_family",
                format!(
                    "the handle of column family {:?} belongs to another database than the \
                     batch's other handles",
                    cf.name()
                ),
            )),
            _ => {
                self.db_instance = Some(instance);
                Ok(())
            }
        }
    }

    fn add(&mut self, cf: u32, value_type: ValueType, key: &[u8], value: &[u8]) -> Result<()> {
        check_sizes(key.len(), value.len())?;
        let count = self.next_count()?;
        let code = match (value_type, cf) {
            (ValueType::Put, 0) => RECORD_PUT,
            (ValueType::Delete, 0) => RECORD_DELETE,
            (ValueType::Merge, 0) => RECORD_MERGE,
            (ValueType::Put, _) => RECORD_CF_PUT,
            (ValueType::Delete, _) => RECORD_CF_DELETE,
            (ValueType::Merge, _) => RECORD_CF_MERGE,
            (ValueType::RangeDeletion, 0) => RECORD_RANGE_DELETE,
            (ValueType::RangeDeletion, _) => RECORD_CF_RANGE_DELETE,
            (ValueType::BlobIndex, _) => {
                return Err(Error::invalid_argument(
                    "write_batch",
                    "blob references are written by flush and compaction, never by a batch",
                ))
            }
        };
        // One growth for the whole record (code, family, two lengths and
        // the bytes) rather than one per part: a single put otherwise
        // reallocates its batch four times.
        self.rep.reserve(1 + 3 * 5 + key.len() + value.len());
        self.rep.push(code);
        if cf != 0 {
            put_varint32(&mut self.rep, cf);
            self.names_families = true;
        }
        self.has_merges |= value_type == ValueType::Merge;
        self.has_range_deletions |= value_type == ValueType::RangeDeletion;
        put_len_and_bytes(&mut self.rep, key);
        if value_type != ValueType::Delete {
            put_len_and_bytes(&mut self.rep, value);
        }
        self.set_count(count);
        Ok(())
    }

    /// The range deletions as `(family, begin, end)`, which the write path
    /// checks against each family's key order (empty, without a parse, for
    /// a batch that has none).
    pub(crate) fn range_deletions(&self) -> impl Iterator<Item = (u32, &[u8], &[u8])> + '_ {
        self.has_range_deletions
            .then(|| self.iter())
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter(|e| e.value_type == ValueType::RangeDeletion)
            .map(|e| (e.cf, e.key, e.value))
    }

    /// The ids of every family the batch writes to (the default one
    /// included), without repeats, ascending.
    pub(crate) fn families(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = self.iter().filter_map(|e| e.ok()).map(|e| e.cf).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// The ids of the families the batch writes to, without repeats, when it
    /// names any family but the default one (which always exists); empty
    /// otherwise.
    pub(crate) fn named_families(&self) -> Vec<u32> {
        if !self.names_families {
            return Vec::new();
        }
        self.families()
    }

    /// Removes every record and resets the sequence to 0, keeping the allocation.
    pub fn clear(&mut self) {
        self.rep.truncate(HEADER_LEN);
        self.sequence = 0;
        self.count = 0;
        self.names_families = false;
        self.has_merges = false;
        self.has_range_deletions = false;
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
        let (mut names_families, mut has_merges) = (false, false);
        let mut has_range_deletions = false;
        for entry in parse_records(&data) {
            let entry = entry?;
            names_families |= entry.cf != 0;
            has_merges |= entry.value_type == ValueType::Merge;
            has_range_deletions |= entry.value_type == ValueType::RangeDeletion;
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
            names_families,
            has_merges,
            has_range_deletions,
            db_instance: None,
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
    /// (field `"batch"`) if the combined count would overflow `u32`, or
    /// (field `"column_family"`) if the two hold handles of different
    /// databases, leaving this batch unchanged.
    pub fn append(&mut self, other: &WriteBatch) -> Result<()> {
        let count = self.count.checked_add(other.count).ok_or_else(|| {
            Error::invalid_argument("batch", "appending would exceed u32::MAX records")
        })?;
        let db_instance = match (self.db_instance, other.db_instance) {
            (Some(a), Some(b)) if a != b => {
                return Err(Error::invalid_argument(
                    "column_family",
                    "the batches hold column family handles of different databases",
                ))
            }
            (a, b) => a.or(b),
        };
        self.db_instance = db_instance;
        self.rep
            .extend_from_slice(other.rep.get(HEADER_LEN..).unwrap_or_default());
        self.names_families |= other.names_families;
        self.has_merges |= other.has_merges;
        self.has_range_deletions |= other.has_range_deletions;
        self.set_count(count);
        Ok(())
    }

    /// Adds every record to the memtable of its family that `mem_for`
    /// returns, record `i` with sequence number `sequence() + i`; records
    /// for which it returns `Ok(None)` are skipped (recovery: a dropped
    /// family, or one whose table already holds the record).
    ///
    /// Fails with `InvalidArgument` (field `"sequence"`) before adding anything if
    /// the last sequence number would exceed [`MAX_SEQUENCE_NUMBER`]. A memtable
    /// error, or an error from `mem_for`, stops the insert part-way; the caller
    /// must then stop accepting writes, as for any failed write.
    pub(crate) fn insert_into<'m>(
        &self,
        mem_for: &dyn Fn(u32) -> Result<Option<&'m MemTable>>,
    ) -> Result<()> {
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
            if let Some(mem) = mem_for(entry.cf)? {
                mem.add(seq, entry.value_type, entry.key, entry.value)?;
            }
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
    let (value_type, names_family) = match code {
        RECORD_DELETE => (ValueType::Delete, false),
        RECORD_PUT => (ValueType::Put, false),
        RECORD_CF_DELETE => (ValueType::Delete, true),
        RECORD_CF_PUT => (ValueType::Put, true),
        RECORD_MERGE => (ValueType::Merge, false),
        RECORD_CF_MERGE => (ValueType::Merge, true),
        RECORD_RANGE_DELETE => (ValueType::RangeDeletion, false),
        RECORD_CF_RANGE_DELETE => (ValueType::RangeDeletion, true),
        _ => {
            return Err(batch_corruption(format!(
                "unknown record type {code} at batch byte {start}"
            )))
        }
    };
    let cf = if names_family {
        d.varint32().ok_or_else(|| {
            batch_corruption(format!(
                "bad column family id in the record at batch byte {start}"
            ))
        })?
    } else {
        0
    };
    let key = read_slice(d, "key", start)?;
    if key.len() > MAX_KEY_SIZE {
        return Err(batch_corruption(format!(
            "key of {} bytes in the record at batch byte {start} exceeds the maximum {MAX_KEY_SIZE}",
            key.len()
        )));
    }
    // Every record but a delete carries a value (a range deletion's end).
    let value = if value_type == ValueType::Delete {
        &[]
    } else {
        read_slice(d, "value", start)?
    };
    if value_type == ValueType::RangeDeletion {
        check_range(key, value).map_err(|reason| {
            batch_corruption(format!(
                "range deletion in the record at batch byte {start}: {reason}"
            ))
        })?;
    }
    Ok(BatchEntry {
        cf,
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

/// Checks that `[begin, end)` is not empty in any order; the error is the
/// reason. Whether `begin` sorts before `end` depends on the family's
/// comparator, which the write checks.
fn check_range(begin: &[u8], end: &[u8]) -> Result<(), String> {
    if begin != end {
        return Ok(());
    }
    Err(format!(
        "begin key \"{}\" must sort before end key \"{}\": the range is empty",
        begin.escape_ascii(),
        end.escape_ascii()
    ))
}

fn batch_corruption(reason: String) -> Error {
    Error::corruption("", 0, reason)
}

#[cfg(test)]
#[path = "batch_tests.rs"]
mod tests;
