//! Reading a two-level index (table format version 3): the footer's index
//! handle names a top-level index whose entries map each index partition's
//! last separator to the partition's handle; a partition is an ordinary
//! index block over some of the data blocks.
//!
//! Where partitions live: without `cache_index_and_filter_blocks` the table
//! reads every partition at open and holds them, as it holds a one-block
//! index. With it, partitions are read through the block cache (index kind,
//! metadata priority) and come and go with it, while the top level stays
//! with the table when pinned (`pin_top_level_index_and_filter`), so that a
//! database larger than memory keeps only its top levels resident. A table
//! pinning everything (`pin_l0_filter_and_index_blocks_in_cache` at L0)
//! loads its partitions through the cache at open and pins them all.

use std::ops::Deref;

use crate::cache::CacheHandle;
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::key_order::KeyComparator;
use crate::table::block::{Block, BlockIter};
use crate::table::cached::BlockCacheRef;
use crate::table::filter::BloomFilter;
use crate::table::format::BlockHandle;
use crate::table::reader::TableReader;
use crate::table::two_level::{BlockSource, HandleIter, TwoLevelIter};

/// Index and filter partitions a table holds in memory (or pinned in the
/// cache), by offset: ascending and distinct, as the top levels list them.
#[derive(Debug, Default)]
pub(crate) struct HeldPartitions {
    pub(crate) index: Vec<(u64, Block)>,
    pub(crate) filter: Vec<(u64, BloomFilter)>,
}

impl HeldPartitions {
    /// Puts `held` in the order [`find`](Self::find) searches: by offset,
    /// each once (two top-level entries may name one partition).
    pub(crate) fn by_offset<T>(held: &mut Vec<(u64, T)>) {
        held.sort_by_key(|(offset, _)| *offset);
        held.dedup_by_key(|(offset, _)| *offset);
    }

    fn find<T: Clone>(held: &[(u64, T)], offset: u64) -> Option<T> {
        held.binary_search_by_key(&offset, |(o, _)| *o)
            .ok()
            .and_then(|i| held.get(i))
            .map(|(_, v)| v.clone())
    }

    pub(crate) fn index(&self, offset: u64) -> Option<Block> {
        Self::find(&self.index, offset)
    }

    pub(crate) fn filter(&self, offset: u64) -> Option<BloomFilter> {
        Self::find(&self.filter, offset)
    }
}

/// A cursor over a table's index: the one index block, or the two levels
/// of a partitioned index. `T` is how the cursor holds its table (`&` for a
/// lookup, `Arc` for an iterator that outlives its creator).
///
/// The one-block variant stays unboxed although it is the larger: it is
/// the common case, built on every point lookup, and boxing it would cost
/// an allocation each time.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum IndexIter<T: Deref<Target = TableReader>> {
    /// One index block: separator -> data block handle.
    Block(BlockIter<KeyComparator>),
    /// Top level -> index partition -> data block handle (boxed: it holds
    /// two block cursors).
    TwoLevel(Box<TwoLevelIter<BlockIter<KeyComparator>, IndexPartitions<T>>>),
}

/// Index partitions read for a cursor: held by the table, else from the
/// cache or the file.
#[derive(Debug)]
pub(crate) struct IndexPartitions<T> {
    table: T,
    /// Insert partitions read on a cache miss (`ReadOptions::fill_cache`):
    /// a compaction scans every partition of its inputs once, and caching
    /// them would push the readers' hot set out.
    fill_cache: bool,
}

impl<T: Deref<Target = TableReader> + std::fmt::Debug> BlockSource for IndexPartitions<T> {
    fn load(&mut self, handle: BlockHandle) -> Result<Block> {
        self.table.index_partition(handle, self.fill_cache)
    }
}

impl<T: Deref<Target = TableReader> + std::fmt::Debug> IndexIter<T> {
    /// A cursor over `table`'s index (unpositioned), inserting the index
    /// partitions it reads into the block cache when `fill_cache`.
    pub(crate) fn new(table: T, fill_cache: bool) -> Result<Self> {
        let order = table.order.clone();
        let top = table.index()?.iter(order.clone());
        Ok(if table.has_two_level_index() {
            let partitions = IndexPartitions { table, fill_cache };
            IndexIter::TwoLevel(Box::new(TwoLevelIter::new(top, partitions, order, None)))
        } else {
            IndexIter::Block(top)
        })
    }
}

/// Forwards a call to whichever index the cursor has.
macro_rules! either {
    ($self:ident, $it:ident => $call:expr) => {
        match $self {
            IndexIter::Block($it) => $call,
            IndexIter::TwoLevel($it) => $call,
        }
    };
}

impl<T: Deref<Target = TableReader> + std::fmt::Debug> InternalIterator for IndexIter<T> {
    fn valid(&self) -> bool {
        either!(self, it => it.valid())
    }
    fn seek_to_first(&mut self) {
        either!(self, it => it.seek_to_first())
    }
    fn seek_to_last(&mut self) {
        either!(self, it => it.seek_to_last())
    }
    fn seek(&mut self, target: &[u8]) {
        either!(self, it => it.seek(target))
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        either!(self, it => it.seek_for_prev(target))
    }
    fn next(&mut self) {
        either!(self, it => it.next())
    }
    fn prev(&mut self) {
        either!(self, it => it.prev())
    }
    fn key(&self) -> &[u8] {
        either!(self, it => it.key())
    }
    fn value(&self) -> &[u8] {
        either!(self, it => it.value())
    }
    fn status(&self) -> Result<()> {
        either!(self, it => it.status())
    }
}

impl<T: Deref<Target = TableReader> + std::fmt::Debug> HandleIter for IndexIter<T> {
    fn handle(&self) -> Result<BlockHandle> {
        either!(self, it => it.handle())
    }
}

impl TableReader {
    /// The handles the top-level block `top` lists, in its order, each
    /// with the key it is filed under.
    pub(crate) fn partition_handles(&self, top: &Block) -> Result<Vec<(Vec<u8>, BlockHandle)>> {
        let mut out = Vec::new();
        let mut it = top.iter(self.order.clone());
        it.seek_to_first();
        while it.valid() {
            out.push((it.key().to_vec(), it.handle()?));
            it.next();
        }
        it.status()?;
        Ok(out)
    }

    /// Reads every index partition the top level `top` lists, for a table
    /// that holds its index in memory.
    pub(crate) fn read_index_partitions(&self, top: &Block) -> Result<Vec<(u64, Block)>> {
        let mut held: Vec<(u64, Block)> = Vec::new();
        for (_, handle) in self.partition_handles(top)? {
            let block = self.read_block(handle, true)?;
            held.push((handle.offset, block));
        }
        HeldPartitions::by_offset(&mut held);
        Ok(held)
    }

    /// One index partition: held by the table, else from the block cache
    /// (with `cache_index_and_filter_blocks`; inserted after a miss when
    /// `fill_cache`), else read from the file.
    pub(crate) fn index_partition(&self, handle: BlockHandle, fill_cache: bool) -> Result<Block> {
        if let Some(block) = self.held_partitions().index(handle.offset) {
            return Ok(block);
        }
        match self.meta_cache() {
            Some(cache) => self
                .cached_index_block(cache, handle, fill_cache)
                .map(|(b, _)| b),
            None => self.read_block(handle, true),
        }
    }

    /// Loads every index and filter partition through `cache` and keeps
    /// them pinned there while the table is open (RocksDB pins partitions
    /// of a table pinned at L0). A partition that does not fit a strict
    /// cache stays unpinned, read through the cache on use.
    pub(crate) fn pin_partitions(&self, cache: &BlockCacheRef) -> Result<PinnedPartitions> {
        let mut pinned = PinnedPartitions::default();
        let top = self.index()?;
        for (_, handle) in self.partition_handles(&top)? {
            if let (block, Some(pin)) = self.cached_index_block(cache, handle, true)? {
                pinned.held.index.push((handle.offset, block));
                pinned.handles.push(pin);
            }
        }
        if let Some(top) = self.partitioned_filter_top()? {
            for (_, handle) in self.partition_handles(&top)? {
                if let (filter, Some(pin)) = self.cached_filter(cache, handle)? {
                    pinned.held.filter.push((handle.offset, filter));
                    pinned.handles.push(pin);
                }
            }
        }
        HeldPartitions::by_offset(&mut pinned.held.index);
        HeldPartitions::by_offset(&mut pinned.held.filter);
        Ok(pinned)
    }
}

/// Partitions loaded and pinned in the cache, with the handles that pin them.
#[derive(Debug, Default)]
pub(crate) struct PinnedPartitions {
    pub(crate) held: HeldPartitions,
    pub(crate) handles: Vec<CacheHandle>,
}
