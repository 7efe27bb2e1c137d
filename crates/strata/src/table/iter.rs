//! Iterator over a table: the index picks data blocks, a block cursor walks
//! inside the current one. With a two-level index the index is itself a
//! two-level walk (top level, then index partition), so a scan crosses
//! partition boundaries as it crosses block boundaries.

use std::sync::Arc;

use crate::error::Result;
use crate::iter::InternalIterator;
use crate::options::{PrefixExtractor, ReadOptions};
use crate::table::block::{Block, BlockOrigin};
use crate::table::format::BlockHandle;
use crate::table::prefetch::Prefetcher;
use crate::table::reader::TableReader;
use crate::table::partitioned_index::IndexIter;
use crate::table::two_level::{BlockSource, TwoLevelIter};

/// Iterates a table's entries in internal-key order, in both directions.
#[derive(Debug)]
pub struct TableIterator {
    inner: TwoLevelIter<IndexIter<Arc<TableReader>>, DataBlocks>,
    table: Arc<TableReader>,
    /// The last seek was confined to a prefix the table's filter proved
    /// absent: invalid until the next positioning call.
    skipped: bool,
}

/// Data blocks read for an iterator: from the cache, else through its
/// readahead.
#[derive(Debug)]
struct DataBlocks {
    table: Arc<TableReader>,
    verify_checksums: bool,
    /// Insert blocks read on a cache miss (`ReadOptions::fill_cache`).
    fill_cache: bool,
    /// Readahead for the blocks the cache misses.
    prefetch: Prefetcher,
}

impl BlockSource for DataBlocks {
    fn load(&mut self, handle: BlockHandle) -> Result<Block> {
        self.table.read_data_block_with(
            handle,
            self.verify_checksums,
            self.fill_cache,
            Some(&mut self.prefetch),
        )
    }
}

impl TableIterator {
    pub(crate) fn new(table: Arc<TableReader>, options: &ReadOptions) -> Self {
        // An index that cannot be loaded leaves the iterator empty, with the
        // error in `status()`.
        let (index, error) = match IndexIter::new(table.clone(), options.fill_cache) {
            Ok(index) => (index, None),
            Err(e) => {
                let origin = BlockOrigin {
                    file: Arc::from(table.path()),
                    offset: 0,
                };
                (IndexIter::Block(Block::empty(origin).iter(table.order.clone())), Some(e))
            }
        };
        let data = DataBlocks {
            table: table.clone(),
            verify_checksums: options.verify_checksums,
            fill_cache: options.fill_cache,
            prefetch: Prefetcher::new(options.readahead_size),
        };
        TableIterator {
            inner: TwoLevelIter::new(index, data, table.order.clone(), error),
            table,
            skipped: false,
        }
    }
}

impl InternalIterator for TableIterator {
    fn valid(&self) -> bool {
        !self.skipped && self.inner.valid()
    }

    fn seek_to_first(&mut self) {
        self.skipped = false;
        self.inner.seek_to_first();
    }

    fn seek_to_last(&mut self) {
        self.skipped = false;
        self.inner.seek_to_last();
    }

    fn seek(&mut self, target: &[u8]) {
        self.skipped = false;
        self.inner.seek(target);
    }

    fn seek_in_prefix(&mut self, target: &[u8], extractor: &PrefixExtractor, prefix: &[u8]) {
        // No key of the prefix at or after the target here: the caller
        // reads nothing past the prefix, so the table has nothing for it.
        self.skipped = !self
            .table
            .prefix_may_match(extractor, crate::key::user_key(target), prefix);
        if !self.skipped {
            self.inner.seek(target);
        }
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.skipped = false;
        self.inner.seek_for_prev(target);
    }

    fn next(&mut self) {
        self.inner.next();
    }

    fn prev(&mut self) {
        self.inner.prev();
    }

    fn key(&self) -> &[u8] {
        self.inner.key()
    }

    fn value(&self) -> &[u8] {
        self.inner.value()
    }

    fn status(&self) -> Result<()> {
        self.inner.status()
    }
}
