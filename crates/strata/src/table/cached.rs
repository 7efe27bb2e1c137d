//! How a table uses the block cache: data blocks looked up and inserted
//! around each read, and with `cache_index_and_filter_blocks` the index and
//! filter blocks too (partitions included), some of them pinned while the
//! table is open as [`MetaPinning`] says. Each block is cached under the
//! table's own id and its offset in the file; a block that fails to load is
//! never cached.

use std::sync::Arc;

use crate::cache::{Cache, CacheHandle, CacheKey, Priority};
use crate::error::{Error, Result};
use crate::perf_context;
use crate::statistics::{Statistics, Ticker};
use crate::table::block::Block;
use crate::table::filter::BloomFilter;
use crate::table::format::BlockHandle;
use crate::table::partitioned_filter::TableFilter;
use crate::table::partitioned_index::HeldPartitions;
use crate::table::reader::TableReader;

/// Where a table's data blocks are cached, under keys of its own table id.
#[derive(Debug, Clone)]
pub struct BlockCacheRef {
    pub cache: Arc<dyn Cache>,
    pub table_id: u64,
    pub statistics: Option<Arc<Statistics>>,
    /// Index and filter blocks live in the cache too (RocksDB's
    /// `cache_index_and_filter_blocks`), at this priority.
    pub meta_priority: Option<Priority>,
}

impl BlockCacheRef {
    fn tick(&self, ticker: Ticker) {
        if let Some(s) = &self.statistics {
            s.add(ticker, 1);
        }
    }
}

/// Which of its cached index and filter blocks a table pins in the block
/// cache while it is open (with `cache_index_and_filter_blocks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaPinning {
    /// None: every read looks them up.
    Nothing,
    /// The top level of a two-level index and of a partitioned filter
    /// (RocksDB's `pin_top_level_index_and_filter`); a table with a
    /// one-block index pins nothing.
    TopLevel,
    /// Every index and filter block, partitions included (RocksDB's
    /// `pin_l0_filter_and_index_blocks_in_cache`, for a table opened at L0).
    All,
}

impl TableReader {
    /// The block cache, when index and filter blocks live in it.
    pub(crate) fn meta_cache(&self) -> Option<&BlockCacheRef> {
        self.block_cache
            .as_ref()
            .filter(|c| c.meta_priority.is_some())
    }

    /// Caches this table's data blocks in `cache`, counting hits and misses
    /// in `statistics`. With `meta_priority`, the index and filter blocks are
    /// cached too, at that priority, instead of being held by the open table:
    /// memory for them is then bounded by the cache, at the cost of a lookup
    /// per read (and a re-read after eviction). `pinning` says which of them
    /// are loaded now and stay pinned in the cache while the table is open:
    /// charged to the cache, never evicted, and read without a lookup. A pin
    /// that does not fit a strict cache leaves the block unpinned.
    pub fn with_block_cache(
        mut self,
        cache: Arc<dyn Cache>,
        statistics: Option<Arc<Statistics>>,
        meta_priority: Option<Priority>,
        pinning: MetaPinning,
    ) -> Result<Self> {
        let table_id = cache.new_table_id();
        let cache = BlockCacheRef {
            cache,
            table_id,
            statistics,
            meta_priority,
        };
        self.block_cache = Some(cache.clone());
        if meta_priority.is_none() {
            return Ok(self);
        }
        self.index = None;
        self.filter = None;
        self.partitions = HeldPartitions::default();
        let partitioned = self.has_two_level_index() || self.partitioned_filter;
        let pin_top = match pinning {
            MetaPinning::Nothing => false,
            MetaPinning::TopLevel => partitioned,
            MetaPinning::All => true,
        };
        if pin_top {
            let (index, handle) = self.cached_index_block(&cache, self.footer.index, true)?;
            if let Some(handle) = handle {
                self.index = Some(index);
                self.pinned_meta.push(handle);
            }
            if let Some((filter, Some(handle))) = self.cached_table_filter(&cache)? {
                self.filter = Some(filter);
                self.pinned_meta.push(handle);
            }
        }
        if pinning == MetaPinning::All && partitioned {
            let pinned = self.pin_partitions(&cache)?;
            self.partitions = pinned.held;
            self.pinned_meta.extend(pinned.handles);
        }
        Ok(self)
    }

    /// A block from the cache, or loaded on a miss and, when `fill` gives a
    /// priority, inserted at it; with the handle that pins it, unless it is
    /// not cached. `hit`/`miss` are the block kind's tickers. A block that
    /// fails to load (a bad checksum) is never cached.
    pub(super) fn cached_block<T: Clone + Send + Sync + 'static>(
        &self,
        cache: &BlockCacheRef,
        handle: BlockHandle,
        (hit, miss): (Ticker, Ticker),
        fill: Option<Priority>,
        load: impl FnOnce() -> Result<(T, usize)>,
    ) -> Result<(T, Option<CacheHandle>)> {
        let key = CacheKey {
            table_id: cache.table_id,
            offset: handle.offset,
        };
        if let Some(h) = cache.cache.lookup(&key) {
            if let Some(value) = h.value().downcast_ref::<T>() {
                cache.tick(Ticker::BlockCacheHit);
                cache.tick(hit);
                perf_context::count(|c| {
                    c.block_cache_hit_count += 1;
                    match hit {
                        Ticker::BlockCacheIndexHit => c.block_cache_index_hit_count += 1,
                        Ticker::BlockCacheFilterHit => c.block_cache_filter_hit_count += 1,
                        _ => {}
                    }
                });
                return Ok((value.clone(), Some(h)));
            }
        }
        cache.tick(Ticker::BlockCacheMiss);
        cache.tick(miss);
        perf_context::count(|c| match miss {
            Ticker::BlockCacheIndexMiss => c.index_block_read_count += 1,
            Ticker::BlockCacheFilterMiss => c.filter_block_read_count += 1,
            _ => {}
        });
        let (value, charge) = load()?;
        // A full strict cache only means the block is not cached.
        let pinned = fill.and_then(|priority| {
            cache
                .cache
                .insert(key, Arc::new(value.clone()), charge, priority)
                .ok()
        });
        if pinned.is_some() {
            cache.tick(Ticker::BlockCacheAdd);
        }
        Ok((value, pinned))
    }

    /// Where index and filter blocks go in the cache.
    fn meta_fill(cache: &BlockCacheRef) -> Option<Priority> {
        Some(cache.meta_priority.unwrap_or(Priority::High))
    }

    /// An index block (the index, a top level or a partition) through the
    /// cache, inserted after a miss when `fill`.
    pub(crate) fn cached_index_block(
        &self,
        cache: &BlockCacheRef,
        handle: BlockHandle,
        fill: bool,
    ) -> Result<(Block, Option<CacheHandle>)> {
        self.cached_meta_block(
            cache,
            handle,
            (Ticker::BlockCacheIndexHit, Ticker::BlockCacheIndexMiss),
            fill,
        )
    }

    fn cached_meta_block(
        &self,
        cache: &BlockCacheRef,
        handle: BlockHandle,
        tickers: (Ticker, Ticker),
        fill: bool,
    ) -> Result<(Block, Option<CacheHandle>)> {
        let priority = Self::meta_fill(cache).filter(|_| fill);
        self.cached_block(cache, handle, tickers, priority, || {
            let block = self.fetcher.read_block(handle, true, None)?;
            let size = block.size();
            Ok((block, size))
        })
    }

    /// A bloom filter block (whole, or a partition) through the cache.
    pub(crate) fn cached_filter(
        &self,
        cache: &BlockCacheRef,
        handle: BlockHandle,
    ) -> Result<(BloomFilter, Option<CacheHandle>)> {
        self.cached_block(
            cache,
            handle,
            (Ticker::BlockCacheFilterHit, Ticker::BlockCacheFilterMiss),
            Self::meta_fill(cache),
            || {
                let bytes = self.fetcher.read_block_contents(handle, true, None)?;
                let size = bytes.len();
                let filter = BloomFilter::new(bytes)
                    .map_err(|r| Error::corruption(self.path(), handle.offset, r))?;
                Ok((filter, size))
            },
        )
    }

    /// The table's filter (a bloom filter, or a partitioned filter's top
    /// level) through the cache; `None` without a filter.
    pub(super) fn cached_table_filter(
        &self,
        cache: &BlockCacheRef,
    ) -> Result<Option<(TableFilter, Option<CacheHandle>)>> {
        let Some(handle) = self.filter_handle else {
            return Ok(None);
        };
        Ok(Some(if self.partitioned_filter {
            let filter_tickers = (Ticker::BlockCacheFilterHit, Ticker::BlockCacheFilterMiss);
            let (top, pin) = self.cached_meta_block(cache, handle, filter_tickers, true)?;
            (TableFilter::Partitioned(top), pin)
        } else {
            let (filter, pin) = self.cached_filter(cache, handle)?;
            (TableFilter::Full(filter), pin)
        }))
    }
}
