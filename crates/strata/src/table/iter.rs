//! Two-level iterator over a table: the index block picks data blocks, a block
//! iterator walks inside the current one.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::table::block::{Block, BlockIter, BlockOrigin, InternalOrder};
use crate::options::{PrefixExtractor, ReadOptions};
use crate::table::format::BlockHandle;
use crate::table::prefetch::Prefetcher;
use crate::table::reader::TableReader;

/// Iterates a table's entries in internal-key order, in both directions.
#[derive(Debug)]
pub struct TableIterator {
    table: Arc<TableReader>,
    index: BlockIter<InternalOrder>,
    data: Option<BlockIter<InternalOrder>>,
    /// Handle of the block `data` iterates, so re-seeking within it skips a read.
    data_handle: Option<BlockHandle>,
    verify_checksums: bool,
    /// Insert blocks read on a cache miss (`ReadOptions::fill_cache`).
    fill_cache: bool,
    /// Readahead for the blocks the cache misses.
    prefetch: Prefetcher,
    error: Option<Error>,
}

impl TableIterator {
    pub(crate) fn new(table: Arc<TableReader>, options: &ReadOptions) -> Self {
        // An index that cannot be loaded leaves the iterator empty, with the
        // error in `status()`.
        let (index, error) = match table.index() {
            Ok(index) => (index.iter::<InternalOrder>(), None),
            Err(e) => {
                let origin = BlockOrigin {
                    file: Arc::from(table.path()),
                    offset: 0,
                };
                (Block::empty(origin).iter::<InternalOrder>(), Some(e))
            }
        };
        TableIterator {
            table,
            index,
            data: None,
            data_handle: None,
            verify_checksums: options.verify_checksums,
            fill_cache: options.fill_cache,
            prefetch: Prefetcher::new(options.readahead_size),
            error,
        }
    }

    /// Points `data` at the block the index is on (or clears it).
    fn load_data_block(&mut self) {
        if !self.index.valid() {
            self.data = None;
            self.data_handle = None;
            return;
        }
        let loaded = self
            .table
            .decode_index_value(self.index.value())
            .and_then(|handle| {
                if self.data_handle == Some(handle) && self.data.is_some() {
                    return Ok(None);
                }
                // Once per visit to a block, not per entry, so a scan cannot
                // promote itself into the high pool.
                let block = self.table.read_data_block_with(
                    handle,
                    self.verify_checksums,
                    self.fill_cache,
                    Some(&mut self.prefetch),
                )?;
                Ok(Some((handle, block.iter::<InternalOrder>())))
            });
        match loaded {
            Ok(Some((handle, iter))) => {
                self.data = Some(iter);
                self.data_handle = Some(handle);
            }
            Ok(None) => {}
            Err(e) => {
                self.error.get_or_insert(e);
                self.data = None;
                self.data_handle = None;
            }
        }
    }

    fn data_failed(&self) -> bool {
        self.error.is_some() || self.data.as_ref().is_some_and(|d| d.status().is_err())
    }

    /// Moves forward past exhausted (or empty) blocks.
    fn skip_empty_blocks_forward(&mut self) {
        while !self.data.as_ref().is_some_and(|d| d.valid()) {
            if self.data_failed() || !self.index.valid() {
                self.data = None;
                return;
            }
            self.index.next();
            self.load_data_block();
            if let Some(d) = self.data.as_mut() {
                d.seek_to_first();
            }
        }
    }

    /// Moves backward past exhausted (or empty) blocks.
    fn skip_empty_blocks_backward(&mut self) {
        while !self.data.as_ref().is_some_and(|d| d.valid()) {
            if self.data_failed() || !self.index.valid() {
                self.data = None;
                return;
            }
            self.index.prev();
            self.load_data_block();
            if let Some(d) = self.data.as_mut() {
                d.seek_to_last();
            }
        }
    }

    fn current(&self) -> Option<&BlockIter<InternalOrder>> {
        self.data.as_ref().filter(|d| d.valid())
    }
}

impl InternalIterator for TableIterator {
    fn valid(&self) -> bool {
        self.current().is_some()
    }

    fn seek_to_first(&mut self) {
        self.index.seek_to_first();
        self.load_data_block();
        if let Some(d) = self.data.as_mut() {
            d.seek_to_first();
        }
        self.skip_empty_blocks_forward();
    }

    fn seek_to_last(&mut self) {
        self.index.seek_to_last();
        self.load_data_block();
        if let Some(d) = self.data.as_mut() {
            d.seek_to_last();
        }
        self.skip_empty_blocks_backward();
    }

    fn seek(&mut self, target: &[u8]) {
        // The first block whose separator is >= target holds the first key >= target,
        // unless every key in it is smaller (target past its last key).
        self.index.seek(target);
        self.load_data_block();
        if let Some(d) = self.data.as_mut() {
            d.seek(target);
        }
        self.skip_empty_blocks_forward();
    }

    fn seek_in_prefix(&mut self, target: &[u8], extractor: &PrefixExtractor, prefix: &[u8]) {
        if self.table.prefix_may_match(extractor, prefix) {
            self.seek(target);
        } else {
            // No key of the prefix here: the caller reads nothing past it.
            self.data = None;
            self.data_handle = None;
        }
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.seek(target);
        if self.valid() {
            if crate::key::compare_internal(self.key(), target) == std::cmp::Ordering::Greater {
                self.prev();
            }
        } else if !self.data_failed() && self.index.status().is_ok() {
            self.seek_to_last();
        }
    }

    fn next(&mut self) {
        if let Some(d) = self.data.as_mut() {
            d.next();
        }
        self.skip_empty_blocks_forward();
    }

    fn prev(&mut self) {
        if let Some(d) = self.data.as_mut() {
            d.prev();
        }
        self.skip_empty_blocks_backward();
    }

    fn key(&self) -> &[u8] {
        self.current().map_or(&[], |d| d.key())
    }

    fn value(&self) -> &[u8] {
        self.current().map_or(&[], |d| d.value())
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        self.index.status()?;
        match &self.data {
            Some(d) => d.status(),
            None => Ok(()),
        }
    }
}
