//! The memtable: recent writes, sorted, in memory.
//!
//! [`skiplist`] is the concurrent sorted structure (with [`arena`], the only
//! `unsafe` code of the engine outside the file system). [`MemTable`] stores
//! internal keys in it and answers point reads and iteration; its range
//! deletions live beside it in a [`RangeDelMemTable`].

pub mod arena;
pub mod bloom;
pub mod skiplist;
mod sync;

use std::sync::Arc;

use bytes::Bytes;

use crate::error::Result;
use crate::iter::InternalIterator;
use crate::key::{pack_tag, seek_key, ParsedInternalKey, SequenceNumber, ValueType, TAG_LEN};
use crate::key_order::KeyComparator;
use crate::options::{CfOptions, PrefixExtractor};
use crate::range_del::{FragmentedRangeTombstones, RangeDelMemTable};
use bloom::MemBloom;
use skiplist::{Cursor, SkipList};

/// What a memtable knows about a user key at a sequence number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemGet {
    /// The newest visible version is a value.
    Found(Bytes),
    /// The newest visible version is a deletion: stop looking in older sources.
    Deleted,
    /// No visible version here: look in older sources.
    NotFound,
}

/// A sorted in-memory table of internal keys, with the range deletions
/// written beside them. Many threads may add and read at once; entries are
/// never removed.
#[derive(Debug)]
pub struct MemTable {
    list: Arc<SkipList>,
    /// The range deletions: never in `list`, so the point-key stream holds
    /// only puts and deletes.
    range_dels: RangeDelMemTable,
    /// Prefixes and whole keys of the point entries, when the family asks
    /// for a memtable bloom filter.
    bloom: Option<Arc<MemBloom>>,
}

impl MemTable {
    /// An empty memtable whose arena reserves `arena_capacity` bytes (pages are
    /// touched only as entries arrive).
    pub fn new(arena_capacity: usize) -> MemTable {
        MemTable {
            list: Arc::new(SkipList::new(arena_capacity)),
            range_dels: RangeDelMemTable::new(&KeyComparator::Bytewise),
            bloom: None,
        }
    }

    /// An empty memtable as a family's options make it: the arena sized for
    /// its write buffer, and a bloom filter of
    /// `memtable_prefix_bloom_size_ratio` of it holding prefixes (under the
    /// family's extractor) and, with `memtable_whole_key_filtering`, keys.
    pub fn for_family(options: &CfOptions) -> MemTable {
        let bloom_bytes =
            (options.write_buffer_size as f64 * options.memtable_prefix_bloom_size_ratio) as usize;
        let order = KeyComparator::new(&options.comparator);
        MemTable {
            bloom: MemBloom::new(
                bloom_bytes,
                options.table.prefix_extractor,
                options.memtable_whole_key_filtering,
            )
            .map(Arc::new),
            range_dels: RangeDelMemTable::new(&order),
            list: Arc::new(SkipList::with_order(options.memtable_arena_bytes(), order)),
        }
    }

    /// The order of the memtable's keys.
    pub fn order(&self) -> &KeyComparator {
        self.list.order()
    }

    /// Adds an entry. `seq` must be unique across all entries of the memtable.
    /// A range deletion (`user_key` its begin, `value` its end) goes to the
    /// memtable's [`RangeDelMemTable`], so the point-key stream never holds
    /// one; an empty range is `InvalidArgument` naming `delete_range`.
    pub fn add(
        &self,
        seq: SequenceNumber,
        value_type: ValueType,
        user_key: &[u8],
        value: &[u8],
    ) -> Result<()> {
        if value_type == ValueType::RangeDeletion {
            return self.range_dels.add(seq, user_key, value);
        }
        if let Some(bloom) = &self.bloom {
            // Before the insert: see `bloom` on why readers then see the bits.
            bloom.add(user_key);
        }
        let tag = pack_tag(seq, value_type as u8).to_le_bytes();
        self.list
            .insert_with(user_key.len() + TAG_LEN, value.len(), |k, v| {
                let (user, tag_slot) = k.split_at_mut(user_key.len());
                user.copy_from_slice(user_key);
                tag_slot.copy_from_slice(&tag);
                v.copy_from_slice(value);
            })
    }

    /// The newest version of `user_key` with sequence number <= `seq`. Merge
    /// operands newer than it are appended to `operands`, newest first; with
    /// only operands here the answer is `NotFound` (look in older sources).
    pub fn get(&self, user_key: &[u8], seq: SequenceNumber, operands: &mut Vec<Bytes>) -> MemGet {
        if self
            .bloom
            .as_ref()
            .is_some_and(|b| !b.may_contain_key(user_key))
        {
            return MemGet::NotFound;
        }
        let lookup = seek_key(user_key, seq);
        let Some((key, value)) = self.list.seek_entry(&lookup) else {
            return MemGet::NotFound;
        };
        let first = entry_answer(key, value, user_key, operands);
        if first != EntryAnswer::Operand {
            return first.into_get();
        }
        // A merge operand: the key's older versions here are read too, until
        // a value or a deletion ends the chain.
        let mut cursor = Cursor::new(self.list.clone());
        cursor.seek(&lookup);
        while cursor.valid() {
            cursor.next();
            if !cursor.valid() {
                break;
            }
            match entry_answer(cursor.key(), cursor.value(), user_key, operands) {
                EntryAnswer::Operand => continue,
                answer => return answer.into_get(),
            }
        }
        MemGet::NotFound
    }

    /// Number of point entries (range deletions are counted by
    /// [`num_range_deletions`](Self::num_range_deletions)).
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Number of range deletions added.
    pub fn num_range_deletions(&self) -> usize {
        self.range_dels.len()
    }

    /// True when neither a point entry nor a range deletion has been added: a
    /// memtable holding only range deletions must still be flushed, and its
    /// WAL kept until then.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty() && self.range_dels.is_empty()
    }

    /// Bytes of memory in use: the arena's (exact) plus the range deletions'.
    pub fn memory_usage(&self) -> usize {
        self.list.memory_usage()
            + self.range_dels.memory_usage()
            + self.bloom.as_ref().map_or(0, |b| b.memory_usage())
    }

    /// The range deletions added so far, fragmented (cached between calls).
    pub fn range_tombstones(&self) -> Arc<FragmentedRangeTombstones> {
        self.range_dels.fragmented()
    }

    /// An iterator over all entries in internal-key order.
    pub fn iter(&self) -> MemTableIterator {
        MemTableIterator {
            cursor: Cursor::new(self.list.clone()),
            bloom: self.bloom.clone(),
            skipped: false,
        }
    }
}

/// What one memtable entry says to a point read of `user_key`.
#[derive(Debug, PartialEq, Eq)]
enum EntryAnswer {
    Found(Bytes),
    Deleted,
    /// A merge operand, appended to the read's operands.
    Operand,
    /// Another key (or an entry that cannot occur here): nothing.
    NotFound,
}

impl EntryAnswer {
    fn into_get(self) -> MemGet {
        match self {
            EntryAnswer::Found(v) => MemGet::Found(v),
            EntryAnswer::Deleted => MemGet::Deleted,
            EntryAnswer::Operand | EntryAnswer::NotFound => MemGet::NotFound,
        }
    }
}

fn entry_answer(
    key: &[u8],
    value: &[u8],
    user_key: &[u8],
    operands: &mut Vec<Bytes>,
) -> EntryAnswer {
    match ParsedInternalKey::parse(key) {
        Some(p) if p.user_key == user_key => match p.value_type() {
            Some(ValueType::Put) => EntryAnswer::Found(Bytes::copy_from_slice(value)),
            Some(ValueType::Delete) => EntryAnswer::Deleted,
            Some(ValueType::Merge) => {
                operands.push(Bytes::copy_from_slice(value));
                EntryAnswer::Operand
            }
            // Only this process writes memtable keys and `add` refuses range
            // deletions; none of these can occur, and treating them as absent is
            // the safe reading.
            // Blob references are written by flush and compaction only.
            Some(ValueType::RangeDeletion | ValueType::BlobIndex) | None => EntryAnswer::NotFound,
        },
        _ => EntryAnswer::NotFound,
    }
}

/// Iterates a memtable; it keeps the memtable's memory alive while it exists.
#[derive(Debug, Clone)]
pub struct MemTableIterator {
    cursor: Cursor,
    bloom: Option<Arc<MemBloom>>,
    /// The last seek was confined to a prefix the bloom filter proved
    /// absent: invalid until the next positioning call.
    skipped: bool,
}

impl InternalIterator for MemTableIterator {
    fn valid(&self) -> bool {
        !self.skipped && self.cursor.valid()
    }
    fn seek_to_first(&mut self) {
        self.skipped = false;
        self.cursor.seek_to_first();
    }
    fn seek_to_last(&mut self) {
        self.skipped = false;
        self.cursor.seek_to_last();
    }
    fn seek(&mut self, target: &[u8]) {
        self.skipped = false;
        self.cursor.seek(target);
    }
    fn seek_in_prefix(&mut self, target: &[u8], extractor: &PrefixExtractor, prefix: &[u8]) {
        self.skipped = self
            .bloom
            .as_ref()
            .is_some_and(|b| !b.may_contain_prefix(extractor, prefix));
        if !self.skipped {
            self.cursor.seek(target);
        }
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.skipped = false;
        self.cursor.seek_for_prev(target);
    }
    fn next(&mut self) {
        self.cursor.next();
    }
    fn prev(&mut self) {
        self.cursor.prev();
    }
    fn key(&self) -> &[u8] {
        self.cursor.key()
    }
    fn value(&self) -> &[u8] {
        self.cursor.value()
    }
    fn status(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(all(test, not(feature = "shuttle")))]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::key::internal_key;

    #[test]
    fn get_sees_newest_visible_version() {
        let m = MemTable::new(1 << 16);
        m.add(1, ValueType::Put, b"k", b"v1").unwrap();
        m.add(2, ValueType::Delete, b"k", b"").unwrap();
        m.add(3, ValueType::Put, b"k", b"v3").unwrap();
        m.add(4, ValueType::Put, b"", b"empty key").unwrap();
        assert_eq!(m.get(b"k", 0, &mut Vec::new()), MemGet::NotFound);
        assert_eq!(
            m.get(b"k", 1, &mut Vec::new()),
            MemGet::Found(Bytes::from_static(b"v1"))
        );
        assert_eq!(m.get(b"k", 2, &mut Vec::new()), MemGet::Deleted);
        assert_eq!(
            m.get(b"k", 99, &mut Vec::new()),
            MemGet::Found(Bytes::from_static(b"v3"))
        );
        assert_eq!(
            m.get(b"", 4, &mut Vec::new()),
            MemGet::Found(Bytes::from_static(b"empty key"))
        );
        assert_eq!(m.get(b"j", 99, &mut Vec::new()), MemGet::NotFound);
        assert_eq!(m.get(b"kk", 99, &mut Vec::new()), MemGet::NotFound);
        assert_eq!(m.len(), 4);
    }

    #[test]
    fn range_deletions_stay_out_of_the_point_keys() {
        let m = MemTable::new(1 << 16);
        let before = m.memory_usage();
        m.add(1, ValueType::RangeDeletion, b"a", b"z").unwrap();
        assert_eq!(m.len(), 0);
        assert_eq!(m.num_range_deletions(), 1);
        assert!(
            !m.is_empty(),
            "a memtable of tombstones only must be flushed"
        );
        assert!(m.memory_usage() > before);
        assert_eq!(m.range_tombstones().max_covering_seq(b"k", 5), 1);
        let mut it = m.iter();
        it.seek_to_first();
        assert!(!it.valid());
        let err = m.add(2, ValueType::RangeDeletion, b"z", b"a").unwrap_err();
        assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    }

    #[test]
    fn iterator_yields_internal_order() {
        let m = MemTable::new(1 << 16);
        m.add(5, ValueType::Put, b"b", b"2").unwrap();
        m.add(6, ValueType::Put, b"a", b"1").unwrap();
        m.add(7, ValueType::Put, b"b", b"3").unwrap();
        let mut it = m.iter();
        it.seek_to_first();
        let mut keys = Vec::new();
        while it.valid() {
            keys.push(it.key().to_vec());
            it.next();
        }
        assert_eq!(
            keys,
            vec![
                internal_key(b"a", 6, ValueType::Put),
                internal_key(b"b", 7, ValueType::Put),
                internal_key(b"b", 5, ValueType::Put),
            ]
        );
        drop(m);
        // The iterator keeps the memory alive after the memtable handle is gone.
        it.seek_to_last();
        assert_eq!(it.value(), b"2");
    }
}
