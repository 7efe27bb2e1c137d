//! Range tombstones: the deletions written by `delete_range(begin, end)`.
//!
//! A range tombstone `[start, end)@seq` deletes every entry of a user key `k`
//! with `start <= k < end` whose sequence number is below `seq`, for readers at
//! a sequence number `>= seq` (RocksDB's `DeleteRange`). Tombstones never travel
//! in the point-key stream; they live in their own structures:
//!
//! - [`RangeDelMemTable`]: the memtable's tombstones, appended by concurrent
//!   writers, read as a cached [`FragmentedRangeTombstones`] view.
//! - [`FragmentedRangeTombstones`]: any set of tombstones cut into sorted,
//!   non-overlapping fragments, each with the sequence numbers of the tombstones
//!   covering it, so a read finds the one fragment that can delete a key by
//!   binary search (RocksDB's `FragmentedRangeTombstoneList`).
//! - The table's range-deletion block (`rocksdb.range_del`), written by
//!   [`TableBuilder::add_range_tombstone`](crate::table::TableBuilder::add_range_tombstone)
//!   and read back fragmented by
//!   [`TableReader::range_tombstones`](crate::table::TableReader::range_tombstones).
//!
//! How the read, flush and compaction paths use them is described on
//! [`FragmentedRangeTombstones`].

mod fragment;
mod memtable;

pub use fragment::{Fragment, FragmentedRangeTombstones, VisibleFragment};
pub use memtable::RangeDelMemTable;

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::key::{
    append_internal_key, ParsedInternalKey, SequenceNumber, ValueType, MAX_SEQUENCE_NUMBER,
};
use crate::key_order::KeyComparator;

/// One range tombstone `[start, end)@seq` over user keys.
///
/// Invariant: `start < end` (in the family's key order) and `seq <= MAX_SEQUENCE_NUMBER`;
/// [`RangeTombstone::new`] refuses anything else, so an empty range never
/// enters a structure.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RangeTombstone {
    start: Bytes,
    end: Bytes,
    seq: SequenceNumber,
}

impl RangeTombstone {
    /// The tombstone `[start, end)@seq` over keys in `order`. An empty or
    /// inverted range (`start >= end`) or a sequence number past 56 bits is
    /// [`Error::InvalidArgument`] naming `delete_range`.
    pub fn new(
        start: impl Into<Bytes>,
        end: impl Into<Bytes>,
        seq: SequenceNumber,
        order: &KeyComparator,
    ) -> Result<RangeTombstone> {
        let (start, end) = (start.into(), end.into());
        if !order.lt(&start, &end) {
            return Err(Error::invalid_argument(
                "delete_range",
                format!(
                    "begin key \"{}\" must sort before end key \"{}\": the range is empty",
                    start.escape_ascii(),
                    end.escape_ascii()
                ),
            ));
        }
        if seq > MAX_SEQUENCE_NUMBER {
            return Err(Error::invalid_argument(
                "delete_range",
                format!("sequence number {seq} exceeds the 56-bit maximum"),
            ));
        }
        Ok(RangeTombstone { start, end, seq })
    }

    /// The first user key deleted.
    pub fn start(&self) -> &Bytes {
        &self.start
    }

    /// The first user key past the range (exclusive).
    pub fn end(&self) -> &Bytes {
        &self.end
    }

    /// The sequence number of the `delete_range`.
    pub fn seq(&self) -> SequenceNumber {
        self.seq
    }

    /// The same range at sequence number `seq` (an ingested table's
    /// tombstones read at its global seqno).
    pub(crate) fn with_seq(self, seq: SequenceNumber) -> RangeTombstone {
        RangeTombstone { seq, ..self }
    }

    /// True when `user_key` lies in `[start, end)` in `order`.
    pub fn contains(&self, user_key: &[u8], order: &KeyComparator) -> bool {
        order.le(&self.start, user_key) && order.lt(user_key, &self.end)
    }

    /// The internal key under which a table's range-deletion block stores this
    /// tombstone: `(start, seq, RangeDeletion)`; the entry's value is `end`.
    pub fn internal_start_key(&self) -> Vec<u8> {
        let mut k = Vec::with_capacity(self.start.len() + crate::key::TAG_LEN);
        append_internal_key(&mut k, &self.start, self.seq, ValueType::RangeDeletion);
        k
    }

    /// Decodes a range-deletion block entry; the error is a reason for
    /// `Error::Corruption` (the caller names the file and block). The table's
    /// keys are in `order`.
    pub fn decode_entry(
        key: &[u8],
        value: &[u8],
        order: &KeyComparator,
    ) -> Result<RangeTombstone, String> {
        let parsed = ParsedInternalKey::parse(key)
            .ok_or("range tombstone key shorter than its tag".to_string())?;
        if parsed.value_type() != Some(ValueType::RangeDeletion) {
            return Err(format!(
                "range tombstone with value type {:#04x}, expected {:#04x}",
                parsed.type_code,
                ValueType::RangeDeletion as u8
            ));
        }
        if !order.lt(parsed.user_key, value) {
            return Err(format!(
                "range tombstone at sequence number {} has end <= start",
                parsed.seq
            ));
        }
        Ok(RangeTombstone {
            start: Bytes::copy_from_slice(parsed.user_key),
            end: Bytes::copy_from_slice(value),
            seq: parsed.seq,
        })
    }
}

/// The internal key `(end, MAX_SEQUENCE_NUMBER, RangeDeletion)` that stands for
/// a tombstone's exclusive end in a table's key range (RocksDB's range
/// tombstone sentinel). It sorts before every real entry of `end`, so a table
/// whose largest key is this sentinel holds nothing at `end` itself: code that
/// compares table ranges by user key must treat such a largest key as
/// exclusive (see [`is_range_end_sentinel`]).
pub fn range_end_sentinel(end: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(end.len() + crate::key::TAG_LEN);
    append_internal_key(&mut k, end, MAX_SEQUENCE_NUMBER, ValueType::RangeDeletion);
    k
}

/// True when `ikey` is a [`range_end_sentinel`]: a table range's largest key
/// that excludes its own user key.
pub fn is_range_end_sentinel(ikey: &[u8]) -> bool {
    ParsedInternalKey::parse(ikey).is_some_and(|p| {
        p.seq == MAX_SEQUENCE_NUMBER && p.value_type() == Some(ValueType::RangeDeletion)
    })
}

#[cfg(test)]
mod tests;
