//! Cutting a new table's index, and with `partition_filters` its bloom
//! filter, into partitions (`index_type=kTwoLevelIndexSearch`, table format
//! version 3).
//!
//! A partition ends after a data block's index entry once the index
//! partition, or the filter partition, has grown to `metadata_block_size`
//! bytes, so both are cut at the same data block boundary: filter partition
//! `p` covers exactly the user keys of index partition `p`'s data blocks. A
//! user key whose versions straddle the boundary is added to both (the
//! builder adds the first key of every filter partition), so each filter
//! partition covers every key of its blocks, and the one a read asks (see
//! [`super::partitioned_filter`]) holds the key.
//!
//! Partitions are kept in memory until the table is finished, then written
//! after the data blocks: filter partitions and their top level, then (after
//! the range-deletion block) index partitions and the top-level index, so
//! data blocks stay contiguous from offset 0 as in every table.

use crate::error::Result;
use crate::options::{IndexType, TableOptions};
use crate::table::block_builder::BlockBuilder;
use crate::table::filter::BloomBuilder;
use crate::table::format::BlockHandle;

/// Finished partitions of one table being built.
#[derive(Debug)]
pub(crate) struct Partitioner {
    metadata_block_size: usize,
    /// Bloom bits per key when the filter is partitioned too.
    filter_bits_per_key: Option<f64>,
    /// Finished index partitions: last separator, block bytes.
    index: Vec<(Vec<u8>, Vec<u8>)>,
    /// Finished filter partitions, one per index partition, when the filter
    /// is partitioned.
    filters: Vec<Vec<u8>>,
}

/// What writing the index partitions produced.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WrittenIndex {
    /// The top-level index (the footer's index handle).
    pub top_level: BlockHandle,
    pub partitions: u64,
}

impl Partitioner {
    /// A partitioner for a two-level index, `None` for a one-block index.
    pub(crate) fn new(options: &TableOptions) -> Option<Self> {
        (options.index_type == IndexType::TwoLevelIndexSearch).then(|| Partitioner {
            metadata_block_size: options.metadata_block_size,
            filter_bits_per_key: (options.partitioned_filter() && options.bloom_bits_per_key > 0.0)
                .then_some(options.bloom_bits_per_key),
            index: Vec::new(),
            filters: Vec::new(),
        })
    }

    /// Whether the filter is cut with the index.
    pub(crate) fn partitions_filter(&self) -> bool {
        self.filter_bits_per_key.is_some()
    }

    /// Called after each index entry: ends the partition when the index
    /// partition or the filter partition has reached the target size.
    /// `separator` is the entry's key, `filter` the current filter partition.
    pub(crate) fn after_index_entry(
        &mut self,
        separator: &[u8],
        index: &mut BlockBuilder,
        filter: Option<&mut BloomBuilder>,
    ) {
        let filter_bytes = match (self.filter_bits_per_key, &filter) {
            (Some(bits), Some(f)) => (f.len() as f64 * bits / 8.0) as usize,
            _ => 0,
        };
        let full = index.estimated_size().max(filter_bytes) >= self.metadata_block_size;
        if full {
            self.cut(separator, index, filter);
        }
    }

    /// Ends the last partition, if it holds entries; `separator` is the last
    /// index entry's key.
    pub(crate) fn finish(
        &mut self,
        separator: &[u8],
        index: &mut BlockBuilder,
        filter: Option<&mut BloomBuilder>,
    ) {
        if !index.is_empty() {
            self.cut(separator, index, filter);
        }
    }

    fn cut(
        &mut self,
        separator: &[u8],
        index: &mut BlockBuilder,
        filter: Option<&mut BloomBuilder>,
    ) {
        self.index
            .push((separator.to_vec(), index.finish().to_vec()));
        index.reset();
        if let (Some(bits), Some(filter)) = (self.filter_bits_per_key, filter) {
            let finished = std::mem::replace(filter, BloomBuilder::new(bits));
            self.filters.push(finished.finish());
        }
    }

    /// Writes the filter partitions and then their top level through
    /// `write` (which appends a meta block and returns its handle); returns
    /// the top level's handle, or `None` when the filter is not partitioned
    /// or the table has no keys.
    pub(crate) fn write_filter(
        &mut self,
        write: &mut dyn FnMut(&[u8]) -> Result<BlockHandle>,
    ) -> Result<Option<BlockHandle>> {
        if self.filters.is_empty() {
            return Ok(None);
        }
        let mut handles = Vec::with_capacity(self.filters.len());
        for filter in std::mem::take(&mut self.filters) {
            handles.push(write(&filter)?);
        }
        self.write_top_level(&handles, write).map(Some)
    }

    /// Writes the index partitions and then the top-level index.
    pub(crate) fn write_index(
        &mut self,
        write: &mut dyn FnMut(&[u8]) -> Result<BlockHandle>,
    ) -> Result<WrittenIndex> {
        let mut handles = Vec::with_capacity(self.index.len());
        for (_, block) in &self.index {
            handles.push(write(block)?);
        }
        let top_level = self.write_top_level(&handles, write)?;
        Ok(WrittenIndex {
            top_level,
            partitions: handles.len() as u64,
        })
    }

    /// A top level: partition `p`'s last separator -> `handles[p]`.
    fn write_top_level(
        &self,
        handles: &[BlockHandle],
        write: &mut dyn FnMut(&[u8]) -> Result<BlockHandle>,
    ) -> Result<BlockHandle> {
        let mut top = BlockBuilder::new(1);
        for ((separator, _), handle) in self.index.iter().zip(handles) {
            let mut value = Vec::with_capacity(20);
            handle.encode_to(&mut value);
            top.add(separator, &value);
        }
        write(top.finish())
    }
}
