//! Open table readers, by file number, shared by every read.
//!
//! Opening a table reads its footer, index and filter, so readers are kept open
//! while the file is live, up to about `max_open_files` of them (RocksDB's
//! default -1: no limit); past it, the reader used least recently in its shard
//! is closed, and reopened on its next use. A reader is dropped when its file
//! leaves the version; an iterator that still holds it keeps the file readable.
//!
//! The readers are split over shards by file number, each behind its own
//! read-write lock, so concurrent point reads share no lock: a hit takes its
//! shard's read lock and, when `max_open_files` bounds the readers, stamps
//! the entry's last use with a relaxed atomic store. Only an open (a miss,
//! which reads the file anyway) takes a shard's write lock, and only an
//! eviction scans the shard for the least recent use.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use crate::cache::{Cache, Priority};
use crate::error::{Error, Result};
use crate::filename::table_file_name;
use crate::fs::{Fs, ReadFileOptions};
use crate::key_order::KeyComparator;
use crate::statistics::{micros_since, Histogram, Statistics, Ticker};
use crate::table::{MetaPinning, TableReader};
use crate::version::FileMetaData;

/// Shards when the number of open readers is not bounded, or bounded high.
const MAX_SHARDS: usize = 16;

/// An open reader and when it was last used (a tick of the cache's clock).
#[derive(Debug)]
struct Entry {
    reader: Arc<TableReader>,
    last_use: AtomicU64,
}

/// The open readers of the file numbers that map to one shard.
type Shard = RwLock<HashMap<u64, Entry>>;

/// Shared cache of open tables.
#[derive(Debug)]
pub struct TableCache {
    dir: PathBuf,
    fs: Arc<dyn Fs>,
    read_options: ReadFileOptions,
    shards: Vec<Shard>,
    /// Readers each shard keeps open; `None`: no limit.
    per_shard_limit: Option<usize>,
    /// Counts uses; an entry's `last_use` is the tick of its latest one.
    clock: AtomicU64,
    block_cache: Option<Arc<dyn Cache>>,
    statistics: Option<Arc<Statistics>>,
    /// Set when index and filter blocks go to the block cache too.
    meta_priority: Option<Priority>,
    /// Tables opened at L0 pin their cached index and filter.
    pin_l0_meta: bool,
    /// Tables with partitioned index or filter pin their top levels.
    pin_top_level_meta: bool,
}

impl TableCache {
    /// A cache for the tables of `dir`.
    pub fn new(fs: Arc<dyn Fs>, dir: PathBuf, read_options: ReadFileOptions) -> TableCache {
        TableCache {
            dir,
            fs,
            read_options,
            shards: (0..MAX_SHARDS).map(|_| Shard::default()).collect(),
            per_shard_limit: None,
            clock: AtomicU64::new(0),
            block_cache: None,
            statistics: None,
            meta_priority: None,
            pin_l0_meta: false,
            pin_top_level_meta: false,
        }
    }

    /// Keeps at most `max_open_files` readers open (RocksDB's option; a
    /// negative value means no limit). The limit is split evenly over the
    /// shards, each keeping at least 8 (fewer shards for a small limit), so
    /// one shard may close a reader while another has room, as RocksDB's
    /// sharded table cache does.
    pub fn with_max_open_files(mut self, max_open_files: i64) -> Self {
        match usize::try_from(max_open_files) {
            Ok(limit) => {
                let limit = limit.max(1);
                let shards = (limit / 8).clamp(1, MAX_SHARDS);
                self.shards = (0..shards).map(|_| Shard::default()).collect();
                self.per_shard_limit = Some(limit / shards);
            }
            Err(_) => self.per_shard_limit = None,
        }
        self
    }

    fn shard(&self, number: u64) -> &Shard {
        // File numbers are consecutive, so the low bits spread them evenly.
        &self.shards[(number % self.shards.len() as u64) as usize]
    }

    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::Relaxed)
    }

    /// Tables opened from now on keep their index and filter blocks in the
    /// block cache at `priority` (RocksDB's `cache_index_and_filter_blocks`)
    /// instead of holding them; with `pin_l0`, tables opened at L0 keep
    /// theirs pinned there (RocksDB's `pin_l0_filter_and_index_blocks_in_cache`),
    /// and with `pin_top_level` every table with a two-level index or a
    /// partitioned filter keeps their top levels pinned (RocksDB's
    /// `pin_top_level_index_and_filter`).
    pub fn with_cached_index_and_filter(
        mut self,
        priority: Option<Priority>,
        pin_l0: bool,
        pin_top_level: bool,
    ) -> Self {
        self.meta_priority = priority;
        self.pin_l0_meta = pin_l0;
        self.pin_top_level_meta = pin_top_level;
        self
    }

    /// Tables opened from now on cache their data blocks in `cache`.
    pub fn with_block_cache(
        mut self,
        cache: Option<Arc<dyn Cache>>,
        statistics: Option<Arc<Statistics>>,
    ) -> Self {
        self.block_cache = cache;
        self.statistics = statistics;
        self
    }

    /// The reader of table `number` if it is open, without touching the
    /// file system (for callers under the DB mutex).
    pub fn get_if_open(&self, number: u64) -> Option<Arc<TableReader>> {
        self.shard(number)
            .read()
            .get(&number)
            .map(|e| e.reader.clone())
    }

    /// The reader of table `file`, opening it on first use. The file must be
    /// the size the MANIFEST recorded; a file of another size is corruption.
    /// An ingested table is read at its global seqno.
    /// `level` is where the version holds the file: a table first opened at L0
    /// pins its cached index and filter if so configured, and keeps them pinned
    /// until the reader closes, even if compaction moves the file down (as
    /// RocksDB decides at open). `order` is the key order of the file's
    /// family, which the table must be in.
    pub fn get(
        &self,
        file: &FileMetaData,
        level: usize,
        order: &KeyComparator,
    ) -> Result<Arc<TableReader>> {
        let (number, expected_size) = (file.number, file.file_size);
        let shard = self.shard(number);
        if let Some(entry) = shard.read().get(&number) {
            // Recency matters only when a limit evicts, and without one the
            // hit writes nothing shared. It needs no order with anything
            // else: a stale tick only makes eviction pick another reader.
            if self.per_shard_limit.is_some() {
                entry.last_use.store(self.tick(), Ordering::Relaxed);
            }
            return Ok(entry.reader.clone());
        }
        // Open without the lock so one slow open does not block other reads; two
        // threads may race to open the same file, and the first insert wins.
        let path = table_file_name(&self.dir, number);
        let global_seqno = file.global_seqno;
        crate::read_tier::check_storage_read(&path)?;
        let opened_at = std::time::Instant::now();
        let file = self.fs.open(&path, self.read_options)?;
        if file.len() != expected_size {
            return Err(Error::corruption(
                &path,
                0,
                format!(
                    "table is {} bytes, the MANIFEST recorded {expected_size}",
                    file.len()
                ),
            ));
        }
        let table = match &self.block_cache {
            Some(cache) => {
                let pinning = if self.pin_l0_meta && level == 0 {
                    MetaPinning::All
                } else if self.pin_top_level_meta {
                    MetaPinning::TopLevel
                } else {
                    MetaPinning::Nothing
                };
                TableReader::open_with_block_cache(
                    file,
                    &path,
                    order,
                    cache.clone(),
                    self.statistics.clone(),
                    self.meta_priority,
                    pinning,
                )?
            }
            None => TableReader::open_in_order(file, &path, order)?,
        };
        let table = match global_seqno {
            Some(seq) => table.with_global_seqno(seq)?,
            None => table,
        };
        if let Some(stats) = &self.statistics {
            stats.add(Ticker::NoFileOpens, 1);
            stats.record(Histogram::TableOpenIoMicros, micros_since(opened_at));
        }
        let table = Arc::new(table);
        let mut open = shard.write();
        if let Some(winner) = open.get(&number) {
            return Ok(winner.reader.clone());
        }
        if let Some(limit) = self.per_shard_limit {
            while open.len() >= limit {
                let Some(least_recent) = open
                    .iter()
                    .min_by_key(|(_, e)| e.last_use.load(Ordering::Relaxed))
                    .map(|(&n, _)| n)
                else {
                    break;
                };
                open.remove(&least_recent);
            }
        }
        let entry = Entry {
            reader: table.clone(),
            last_use: AtomicU64::new(self.tick()),
        };
        open.insert(number, entry);
        Ok(table)
    }

    /// Forgets table `number` (its file left the version).
    pub fn evict(&self, number: u64) {
        self.shard(number).write().remove(&number);
    }

    /// How many readers are open.
    pub fn open_count(&self) -> usize {
        self.shards.iter().map(|s| s.read().len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::fs::SimFs;
    use crate::key::{internal_key, ValueType};
    use crate::options::TableOptions;
    use crate::table::TableBuilder;

    fn meta(number: u64, file_size: u64) -> FileMetaData {
        FileMetaData {
            number,
            file_size,
            ..FileMetaData::default()
        }
    }

    /// Five one-entry tables in a fresh directory, and their sizes.
    fn five_tables() -> (Arc<SimFs>, Vec<u64>) {
        let fs = Arc::new(SimFs::new(3));
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        let mut sizes = Vec::new();
        for number in 1..=5u64 {
            let file = fs.create(&table_file_name(dir, number)).unwrap();
            let mut b = TableBuilder::new(file, TableOptions::default()).unwrap();
            b.add(&internal_key(b"k", number, ValueType::Put), b"v")
                .unwrap();
            sizes.push(b.finish().unwrap().file_size);
        }
        (fs, sizes)
    }

    #[test]
    fn at_most_max_open_files_readers_stay_open() {
        let (fs, sizes) = five_tables();
        let cache = TableCache::new(fs.clone(), "/db".into(), ReadFileOptions::default())
            .with_max_open_files(2);
        for (i, &size) in sizes.iter().enumerate() {
            let table = cache
                .get(&meta(i as u64 + 1, size), 1, &KeyComparator::Bytewise)
                .unwrap();
            assert_eq!(table.properties().num_entries, 1);
            assert!(cache.open_count() <= 2);
        }
        // A closed reader reopens on demand.
        assert!(cache
            .get(&meta(1, sizes[0]), 1, &KeyComparator::Bytewise)
            .is_ok());
        assert_eq!(cache.open_count(), 2);

        let unlimited =
            TableCache::new(fs, "/db".into(), ReadFileOptions::default()).with_max_open_files(-1);
        for (i, &size) in sizes.iter().enumerate() {
            unlimited
                .get(&meta(i as u64 + 1, size), 1, &KeyComparator::Bytewise)
                .unwrap();
        }
        assert_eq!(unlimited.open_count(), 5);
    }

    #[test]
    fn the_least_recently_used_reader_closes_first() {
        let (fs, sizes) = five_tables();
        let cache =
            TableCache::new(fs, "/db".into(), ReadFileOptions::default()).with_max_open_files(2);
        let first = cache
            .get(&meta(1, sizes[0]), 1, &KeyComparator::Bytewise)
            .unwrap();
        cache
            .get(&meta(2, sizes[1]), 1, &KeyComparator::Bytewise)
            .unwrap();
        // Table 1 was opened first but used last: table 2 makes room.
        assert!(Arc::ptr_eq(
            &first,
            &cache
                .get(&meta(1, sizes[0]), 1, &KeyComparator::Bytewise)
                .unwrap()
        ));
        cache
            .get(&meta(3, sizes[2]), 1, &KeyComparator::Bytewise)
            .unwrap();
        assert!(
            Arc::ptr_eq(
                &first,
                &cache
                    .get(&meta(1, sizes[0]), 1, &KeyComparator::Bytewise)
                    .unwrap()
            ),
            "the reader used most recently stayed open"
        );
        let second = cache
            .get(&meta(2, sizes[1]), 1, &KeyComparator::Bytewise)
            .unwrap();
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(cache.open_count(), 2);
        // A wrong size is corruption, and opens nothing.
        let err = cache
            .get(&meta(4, sizes[3] + 1), 1, &KeyComparator::Bytewise)
            .unwrap_err();
        assert!(err.to_string().contains("MANIFEST recorded"), "{err}");
        assert_eq!(cache.open_count(), 2);
    }
}
