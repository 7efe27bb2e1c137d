//! Open table readers, by file number, shared by every read.
//!
//! Opening a table reads its footer, index and filter, so readers are kept open
//! for as long as the file is live (RocksDB's default `max_open_files = -1`). A
//! reader is dropped when its file leaves the version; an iterator that still
//! holds it keeps the file readable.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::cache::Cache;
use crate::error::{Error, Result};
use crate::filename::table_file_name;
use crate::fs::{Fs, ReadFileOptions};
use crate::statistics::Statistics;
use crate::table::TableReader;

/// Shared cache of open tables.
#[derive(Debug)]
pub struct TableCache {
    dir: PathBuf,
    fs: Arc<dyn Fs>,
    read_options: ReadFileOptions,
    tables: Mutex<HashMap<u64, Arc<TableReader>>>,
    block_cache: Option<Arc<dyn Cache>>,
    statistics: Option<Arc<Statistics>>,
}

impl TableCache {
    /// A cache for the tables of `dir`.
    pub fn new(fs: Arc<dyn Fs>, dir: PathBuf, read_options: ReadFileOptions) -> TableCache {
        TableCache {
            dir,
            fs,
            read_options,
            tables: Mutex::new(HashMap::new()),
            block_cache: None,
            statistics: None,
        }
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
    pub fn get(&self, number: u64, expected_size: u64) -> Result<Arc<TableReader>> {
        if let Some(t) = self.tables.lock().get(&number) {
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
            table = table.with_block_cache(cache.clone(), self.statistics.clone());
        }
        let table = Arc::new(table);
        Ok(self.tables.lock().entry(number).or_insert(table).clone())
    }

    /// Forgets table `number` (its file left the version).
    pub fn evict(&self, number: u64) {
        self.tables.lock().remove(&number);
    }
}
