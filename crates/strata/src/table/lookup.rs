//! Point reads of one table, one key or many.
//!
//! A [`TableLookup`] answers gets against one table and remembers what the
//! last one loaded: the filter, the index cursor and the data block. A
//! batched `multi_get` gives it the keys that fall in the table in ascending
//! order, so keys that share a data block read (and look up in the block
//! cache) that block once, and the filter and index are fetched once per
//! table rather than once per key (with a two-level index or a partitioned
//! filter, the partition a key needs is kept for the next key too). A
//! single get is a lookup of one key.

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::{seek_key, SequenceNumber, ValueType};
use crate::key_order::KeyComparator;
use crate::options::ReadOptions;
use crate::table::block::{Block, BlockIter};
use crate::table::partitioned_filter::FilterQuery;
use crate::table::partitioned_index::IndexIter;
use crate::table::reader::{TableEntry, TableReader};
use crate::table::two_level::HandleIter;

/// Gets against one table, sharing loaded blocks between them.
#[derive(Debug)]
pub struct TableLookup<'t> {
    table: &'t TableReader,
    verify_checksums: bool,
    fill_cache: bool,
    /// Loaded on the first filter question: `Some(None)` when the table has
    /// no filter or it cannot be loaded (which proves nothing).
    filter: Option<Option<FilterQuery<'t>>>,
    /// Loaded on the first get that passes the filter.
    index: Option<IndexIter<&'t TableReader>>,
    /// The data block read last, by its offset in the file.
    block: Option<(u64, Block)>,
}

impl<'t> TableLookup<'t> {
    /// Lookups in `table` with the checksum and cache choices of `options`.
    pub fn new(table: &'t TableReader, options: &ReadOptions) -> Self {
        TableLookup {
            table,
            verify_checksums: options.verify_checksums,
            fill_cache: options.fill_cache,
            filter: None,
            index: None,
            block: None,
        }
    }

    /// What the bloom filter says of `user_key` (see
    /// [`TableReader::filter_answer`]).
    pub fn filter_answer(&mut self, user_key: &[u8]) -> Option<bool> {
        let table = self.table;
        self.filter
            .get_or_insert_with(|| table.whole_key_filter())
            .as_mut()
            .and_then(|f| f.may_contain_key(user_key).ok())
    }

    /// A cursor over the data block `handle` names: the block read last when
    /// it is the same, else from the cache or the file (then remembered).
    fn data_block_iter(
        &mut self,
        handle: crate::table::format::BlockHandle,
    ) -> Result<BlockIter<KeyComparator>> {
        if let Some((offset, block)) = &self.block {
            if *offset == handle.offset {
                return Ok(block.iter(self.table.order.clone()));
            }
        }
        let block = self
            .table
            .read_data_block(handle, self.verify_checksums, self.fill_cache)?;
        let it = block.iter(self.table.order.clone());
        self.block = Some((handle.offset, block));
        Ok(it)
    }

    /// The newest entry of `user_key` at or below `seq` that is a value or a
    /// deletion, past the filter (the caller asked it). Merge operands newer
    /// than that entry are appended to `operands`, newest first; with only
    /// operands here the answer is `None` (look in older sources). Reads the
    /// index, then one data block (two when the key's versions straddle a
    /// block boundary).
    pub fn get(
        &mut self,
        user_key: &[u8],
        seq: SequenceNumber,
        operands: &mut Vec<Bytes>,
    ) -> Result<Option<TableEntry>> {
        // An ingested table's entries all carry its global seqno: newer
        // than the read, the whole table is invisible to it.
        if self.table.global_seqno.is_some_and(|g| g > seq) {
            return Ok(None);
        }
        let lookup = seek_key(user_key, seq);
        let mut index = match self.index.take() {
            Some(index) => index,
            None => IndexIter::new(self.table, self.fill_cache)?,
        };
        index.seek(&lookup);
        let found = self.scan_from(&mut index, user_key, &lookup, operands);
        self.index = Some(index);
        found
    }

    fn scan_from(
        &mut self,
        index: &mut IndexIter<&'t TableReader>,
        user_key: &[u8],
        lookup: &[u8],
        operands: &mut Vec<Bytes>,
    ) -> Result<Option<TableEntry>> {
        let table = self.table;
        while index.valid() {
            let handle = index.handle()?;
            let mut it = self.data_block_iter(handle)?;
            // Entries of the key continue from the first block's position,
            // and from the start of each block after it.
            it.seek(lookup);
            it.status()?;
            while it.valid() {
                let parsed = table.parse_key(it.key(), handle.offset)?;
                if parsed.user_key != user_key {
                    return Ok(None);
                }
                let value_type = match parsed.value_type() {
                    Some(ValueType::RangeDeletion) => {
                        return Err(Error::corruption(
                            table.path(),
                            handle.offset,
                            "range deletion in a data block",
                        ))
                    }
                    Some(ValueType::Merge) => {
                        operands.push(it.value_bytes());
                        it.next();
                        it.status()?;
                        continue;
                    }
                    Some(t) => t,
                    None => {
                        return Err(Error::corruption(
                            table.path(),
                            handle.offset,
                            "unknown value type",
                        ))
                    }
                };
                return Ok(Some(TableEntry {
                    seq: table.global_seqno.unwrap_or(parsed.seq),
                    value_type,
                    value: it.value_bytes(),
                }));
            }
            index.next();
        }
        index.status()?;
        Ok(None)
    }
}
