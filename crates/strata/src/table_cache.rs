//! Open table readers, by file number, shared by every read.
//!
//! Opening a table reads its footer, index and filter, so readers are kept open
//! while the file is live, up to `max_open_files` of them (RocksDB's default -1:
//! no limit); past it, the reader opened longest ago is closed and reopened on
//! its next use. A reader is dropped when its file leaves the version; an
//! iterator that still holds it keeps the file readable.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::cache::{Cache, Priority};
use crate::error::{Error, Result};
use crate::filename::table_file_name;
use crate::fs::{Fs, ReadFileOptions};
use crate::statistics::Statistics;
use crate::table::TableReader;

/// The open readers, and the order they were opened in (oldest first).
#[derive(Debug, Default)]
struct OpenTables {
    readers: HashMap<u64, Arc<TableReader>>,
    order: std::collections::VecDeque<u64>,
}

/// Shared cache of open tables.
#[derive(Debug)]
pub struct TableCache {
    dir: PathBuf,
    fs: Arc<dyn Fs>,
    read_options: ReadFileOptions,
    tables: Mutex<OpenTables>,
    /// `None`: no limit.
    max_open_files: Option<usize>,
    block_cache: Option<Arc<dyn Cache>>,
    statistics: Option<Arc<Statistics>>,
    /// Set when index and filter blocks go to the block cache too.
    meta_priority: Option<Priority>,
    /// Tables opened at L0 pin their cached index and filter.
    pin_l0_meta: bool,
}

impl TableCache {
    /// A cache for the tables of `dir`.
    pub fn new(fs: Arc<dyn Fs>, dir: PathBuf, read_options: ReadFileOptions) -> TableCache {
        TableCache {
            dir,
            fs,
            read_options,
            tables: Mutex::new(OpenTables::default()),
            max_open_files: None,
            block_cache: None,
            statistics: None,
            meta_priority: None,
            pin_l0_meta: false,
        }
    }

    /// Keeps at most `max_open_files` readers open (RocksDB's option; a
    /// negative value means no limit).
    pub fn with_max_open_files(mut self, max_open_files: i64) -> Self {
        self.max_open_files = usize::try_from(max_open_files).ok().map(|n| n.max(1));
        self
    }

    /// Tables opened from now on keep their index and filter blocks in the
    /// block cache at `priority` (RocksDB's `cache_index_and_filter_blocks`)
    /// instead of holding them; with `pin_l0`, tables opened at L0 keep
    /// theirs pinned there (RocksDB's `pin_l0_filter_and_index_blocks_in_cache`).
    pub fn with_cached_index_and_filter(
        mut self,
        priority: Option<Priority>,
        pin_l0: bool,
    ) -> Self {
        self.meta_priority = priority;
        self.pin_l0_meta = pin_l0;
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

    /// The reader of table `number`, opening it on first use. `expected_size` is
    /// the size the MANIFEST recorded; a file of another size is corruption.
    /// `level` is where the version holds the file: a table first opened at L0
    /// pins its cached index and filter if so configured, and keeps them pinned
    /// until the reader closes, even if compaction moves the file down (as
    /// RocksDB decides at open).
    pub fn get(&self, number: u64, expected_size: u64, level: usize) -> Result<Arc<TableReader>> {
        if let Some(t) = self.tables.lock().readers.get(&number) {
            return Ok(t.clone());
        }
        // Open without the lock so one slow open does not block other reads; two
        // threads may race to open the same file, and the first insert wins.
        let path = table_file_name(&self.dir, number);
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
        let mut table = TableReader::open(file, &path)?;
        if let Some(cache) = &self.block_cache {
            let pin = self.pin_l0_meta && level == 0;
            table = table.with_block_cache(
                cache.clone(),
                self.statistics.clone(),
                self.meta_priority,
                pin,
            )?;
        }
        let table = Arc::new(table);
        let mut open = self.tables.lock();
        if let Some(winner) = open.readers.get(&number) {
            return Ok(winner.clone());
        }
        open.readers.insert(number, table.clone());
        open.order.push_back(number);
        while open.readers.len() > self.max_open_files.unwrap_or(usize::MAX) {
            let Some(oldest) = open.order.pop_front() else {
                break;
            };
            open.readers.remove(&oldest);
        }
        Ok(table)
    }

    /// Forgets table `number` (its file left the version).
    pub fn evict(&self, number: u64) {
        let mut open = self.tables.lock();
        open.readers.remove(&number);
        open.order.retain(|&n| n != number);
    }

    /// How many readers are open.
    pub fn open_count(&self) -> usize {
        self.tables.lock().readers.len()
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

    #[test]
    fn at_most_max_open_files_readers_stay_open() {
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
        let cache = TableCache::new(fs, dir.to_path_buf(), ReadFileOptions::default())
            .with_max_open_files(2);
        for (i, &size) in sizes.iter().enumerate() {
            let table = cache.get(i as u64 + 1, size, 1).unwrap();
            assert_eq!(table.properties().num_entries, 1);
            assert!(cache.open_count() <= 2);
        }
        // A closed reader reopens on demand.
        assert!(cache.get(1, sizes[0], 1).is_ok());
        assert_eq!(cache.open_count(), 2);
        let unlimited = TableCache::new(
            Arc::new(SimFs::new(4)),
            dir.to_path_buf(),
            ReadFileOptions::default(),
        )
        .with_max_open_files(-1);
        assert_eq!(unlimited.max_open_files, None);
    }
}
