//! Where reads turn a blob reference into its value: the blob cache first,
//! then the blob file, through readers kept open while the file lives
//! (RocksDB's `BlobSource` over its `BlobFileCache`).
//!
//! A value enters the blob cache at the bottom priority, below data blocks:
//! one cached data block serves the lookups of many keys, one cached blob
//! serves one key, so with a shared cache and a low-priority pool the blobs
//! go first. A read with `fill_cache` off looks in the cache but adds
//! nothing to it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::{Mutex, RwLock};

use crate::blob::format::{BlobRef, BLOB_RECORD_HEADER_LEN};
use crate::blob::reader::BlobFileReader;
use crate::cache::{Cache, CacheKey, Priority};
use crate::error::{Error, Result};
use crate::filename::blob_file_name;
use crate::fs::{Fs, ReadFileOptions};
use crate::statistics::{Statistics, Ticker};

/// How one read wants its blob fetched.
#[derive(Clone, Copy, Debug)]
pub struct BlobRead<'a> {
    /// The family's blob cache, if it has one.
    pub cache: Option<&'a Arc<dyn Cache>>,
    /// Check the record's data checksum (the header's is always checked).
    pub verify_checksums: bool,
    /// Add a value read from the file to the cache.
    pub fill_cache: bool,
}

/// The blob files of one database, opened on first use.
#[derive(Debug)]
pub struct BlobSource {
    fs: Arc<dyn Fs>,
    dir: PathBuf,
    read_options: ReadFileOptions,
    files: RwLock<HashMap<u64, Arc<BlobFileReader>>>,
    /// The id each blob file's values go under in the blob cache, taken from
    /// the cache on the file's first cached value (which may come while the
    /// file is still written, with `prepopulate_blob_cache`). A family's
    /// blob cache is fixed while the database is open, and a blob file
    /// belongs to one family, so one id per file is enough.
    cache_ids: Mutex<HashMap<u64, u64>>,
    statistics: Option<Arc<Statistics>>,
}

impl BlobSource {
    /// A source for the blob files of `dir`, opened with `read_options`
    /// (mmap or direct reads as the database's options say).
    pub fn new(
        fs: Arc<dyn Fs>,
        dir: PathBuf,
        read_options: ReadFileOptions,
        statistics: Option<Arc<Statistics>>,
    ) -> BlobSource {
        BlobSource {
            fs,
            dir,
            read_options,
            files: RwLock::new(HashMap::new()),
            cache_ids: Mutex::new(HashMap::new()),
            statistics,
        }
    }

    fn tick(&self, ticker: Ticker, n: u64) {
        if let Some(stats) = &self.statistics {
            stats.add(ticker, n);
        }
    }

    /// The value the reference `encoded` (a `BlobIndex` entry's value,
    /// written under `user_key`) points at. A malformed reference, a missing
    /// or damaged blob file, or a record that disagrees with the reference
    /// is `Corruption` naming the blob file and offset.
    pub fn get(&self, user_key: &[u8], encoded: &[u8], read: BlobRead<'_>) -> Result<Bytes> {
        let reference = BlobRef::decode(encoded).map_err(|reason| {
            Error::corruption(
                "",
                0,
                format!("blob reference of key {user_key:x?}: {reason}"),
            )
        })?;
        let file = self.file(reference.file_number)?;
        let cache_key = read
            .cache
            .map(|cache| (cache, self.cache_key(cache, &reference)));
        if let Some((cache, key)) = &cache_key {
            if let Some(handle) = cache.lookup(key) {
                if let Some(value) = handle.value().downcast_ref::<Bytes>() {
                    self.tick(Ticker::BlobCacheHit, 1);
                    return Ok(value.clone());
                }
            }
            self.tick(Ticker::BlobCacheMiss, 1);
        }
        crate::read_tier::check_storage_read(&file.path)?;
        let value = Bytes::from(file.get(user_key, &reference, read.verify_checksums)?);
        let record_len =
            BLOB_RECORD_HEADER_LEN as u64 + user_key.len() as u64 + reference.stored_len;
        self.tick(Ticker::BlobFileBytesRead, record_len);
        if let (Some((cache, key)), true) = (cache_key, read.fill_cache) {
            // A full cache with a strict limit only means the value is not kept.
            if cache
                .insert(key, Arc::new(value.clone()), value.len(), Priority::Bottom)
                .is_ok()
            {
                self.tick(Ticker::BlobCacheAdd, 1);
            }
        }
        Ok(value)
    }

    /// Adds `value`, just written at `reference` in a blob file, to `cache`
    /// (RocksDB's `prepopulate_blob_cache = kFlushOnly`).
    pub fn prepopulate(&self, cache: &Arc<dyn Cache>, reference: &BlobRef, value: &[u8]) {
        let key = self.cache_key(cache, reference);
        let value = Bytes::copy_from_slice(value);
        let charge = value.len();
        if cache
            .insert(key, Arc::new(value), charge, Priority::Bottom)
            .is_ok()
        {
            self.tick(Ticker::BlobCacheAdd, 1);
        }
    }

    /// Where the value `reference` points at goes in `cache`.
    fn cache_key(&self, cache: &Arc<dyn Cache>, reference: &BlobRef) -> CacheKey {
        let mut ids = self.cache_ids.lock();
        let table_id = *ids
            .entry(reference.file_number)
            .or_insert_with(|| cache.new_table_id());
        CacheKey {
            table_id,
            offset: reference.offset,
        }
    }

    /// The open blob file `number`, opening it on first use.
    fn file(&self, number: u64) -> Result<Arc<BlobFileReader>> {
        if let Some(file) = self.files.read().get(&number) {
            return Ok(file.clone());
        }
        let path = blob_file_name(&self.dir, number);
        crate::read_tier::check_storage_read(&path)?;
        let file = match self.fs.open(&path, self.read_options) {
            Ok(file) => file,
            Err(e) if e.is_not_found() => {
                return Err(Error::corruption(
                    &path,
                    0,
                    "blob file is missing but a table references it",
                ))
            }
            Err(e) => return Err(e),
        };
        let reader = Arc::new(BlobFileReader::open(file, &path)?);
        Ok(self.files.write().entry(number).or_insert(reader).clone())
    }

    /// Closes blob file `number` (it left every version and is deleted);
    /// reads still using it keep it readable until they finish.
    pub fn evict(&self, number: u64) {
        self.files.write().remove(&number);
        self.cache_ids.lock().remove(&number);
    }
}

/// A blob source with one read's settings, owned, for an iterator that
/// resolves references as it moves.
#[derive(Debug, Clone)]
pub struct BlobValues {
    pub source: Arc<BlobSource>,
    pub cache: Option<Arc<dyn Cache>>,
    pub verify_checksums: bool,
    pub fill_cache: bool,
}

impl BlobValues {
    /// The value `encoded` points at; see [`BlobSource::get`].
    pub fn get(&self, user_key: &[u8], encoded: &[u8]) -> Result<Bytes> {
        let read = BlobRead {
            cache: self.cache.as_ref(),
            verify_checksums: self.verify_checksums,
            fill_cache: self.fill_cache,
        };
        self.source.get(user_key, encoded, read)
    }
}
