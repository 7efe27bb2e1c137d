//! Asking a table's bloom filter, whole or partitioned.
//!
//! A partitioned filter (format version 3, metaindex entry
//! `strata.filter.partitioned.bloom`) is one bloom filter per index
//! partition, over the user keys of that partition's data blocks, under a
//! top-level filter index filed by the same separators as the top-level
//! index. A user key `k` is asked of the first partition whose separator is
//! at least `(k, MAX_SEQUENCE_NUMBER, 0xff)`, the smallest internal key of
//! `k`: the partition the index would choose for the newest version of
//! `k`. That partition holds `k` if the table does: its separator `s` is
//! either a shortened key whose user key lies below the next partition's
//! first user key, or a real last key; in both cases every key between the
//! previous separator and `s` is in its blocks, and `k`'s newest version is
//! one of them. A key whose versions straddle partitions is in both
//! partitions' filters (the builder adds it to each partition it appears
//! in); only the first one is asked.

use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::{seek_key, MAX_SEQUENCE_NUMBER};
use crate::table::block::Block;
use crate::table::filter::{filter_hash, BloomFilter};
use crate::table::format::BlockHandle;
use crate::table::partitioned_index::HeldPartitions;
use crate::table::reader::TableReader;
use crate::table::two_level::HandleIter;

/// A table's filter as loaded for queries.
#[derive(Debug, Clone)]
pub enum TableFilter {
    /// One bloom filter over every user key of the table.
    Full(BloomFilter),
    /// The top-level filter index: each partition's last separator -> the
    /// handle of its bloom filter.
    Partitioned(Block),
}

/// Questions to one table's filter, remembering the filter partition asked
/// last: a batched `multi_get` asks in key order, so neighbouring keys
/// share it.
#[derive(Debug)]
pub struct FilterQuery<'t> {
    table: &'t TableReader,
    filter: TableFilter,
    last_partition: Option<(u64, BloomFilter)>,
}

impl<'t> FilterQuery<'t> {
    /// Questions to `filter`, which is `table`'s.
    pub fn new(table: &'t TableReader, filter: TableFilter) -> Self {
        FilterQuery {
            table,
            filter,
            last_partition: None,
        }
    }

    /// Whether `user_key` may be in the table: false proves it absent.
    pub fn may_contain_key(&mut self, user_key: &[u8]) -> Result<bool> {
        self.may_contain(user_key, user_key)
    }

    /// Whether the hash of `bytes` (a user key, or anything else the
    /// builder added beside it, such as a key prefix) may be in the filter,
    /// asked of the partition that `user_key` selects: the one holding the
    /// first entry at or after `user_key`, which may itself be a prefix.
    /// With a whole filter `user_key` plays no part. A `user_key` past every
    /// partition selects none, and the answer is false. A partition that
    /// cannot be loaded is an error.
    pub fn may_contain(&mut self, user_key: &[u8], bytes: &[u8]) -> Result<bool> {
        let hash = filter_hash(bytes);
        let top = match &self.filter {
            TableFilter::Full(filter) => return Ok(filter.may_contain_hash(hash)),
            TableFilter::Partitioned(top) => top,
        };
        let mut it = top.iter(self.table.order.clone());
        it.seek(&seek_key(user_key, MAX_SEQUENCE_NUMBER));
        if !it.valid() {
            it.status()?;
            return Ok(false);
        }
        let handle = it.handle()?;
        if self.last_partition.as_ref().map(|(offset, _)| *offset) != Some(handle.offset) {
            let filter = self.table.filter_partition(handle)?;
            self.last_partition = Some((handle.offset, filter));
        }
        Ok(self
            .last_partition
            .as_ref()
            .is_none_or(|(_, filter)| filter.may_contain_hash(hash)))
    }
}

impl TableReader {
    /// Reads and parses every filter partition the top level `top` lists,
    /// for a table that holds its filter in memory.
    pub(crate) fn read_filter_partitions(&self, top: &Block) -> Result<Vec<(u64, BloomFilter)>> {
        let mut held = Vec::new();
        for (_, handle) in self.partition_handles(top)? {
            held.push((handle.offset, self.read_filter_partition(handle)?));
        }
        HeldPartitions::by_offset(&mut held);
        Ok(held)
    }

    /// One filter partition from the file, checked and parsed.
    pub(crate) fn read_filter_partition(&self, handle: BlockHandle) -> Result<BloomFilter> {
        let bytes = self.read_block_contents(handle)?;
        BloomFilter::new(bytes).map_err(|r| Error::corruption(self.path(), handle.offset, r))
    }

    /// One filter partition: held by the table, else from the block cache
    /// (with `cache_index_and_filter_blocks`), else read from the file.
    pub(crate) fn filter_partition(&self, handle: BlockHandle) -> Result<BloomFilter> {
        if let Some(filter) = self.held_partitions().filter(handle.offset) {
            return Ok(filter);
        }
        match self.meta_cache() {
            Some(cache) => self.cached_filter(cache, handle).map(|(f, _)| f),
            None => self.read_filter_partition(handle),
        }
    }
}
