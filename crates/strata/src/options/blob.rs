//! Key-value separation options of a column family, by RocksDB's names
//! (its `AdvancedColumnFamilyOptions` blob fields).

use std::fmt;
use std::sync::Arc;

use crate::cache::Cache;
use crate::compression::CompressionType;
use crate::error::{Error, Result};

/// Whether flushes put the blobs they write in the blob cache (RocksDB's
/// `PrepopulateBlobCache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrepopulateBlobCache {
    /// Blobs enter the cache only when read (`kDisable`).
    #[default]
    Disable,
    /// Blobs a flush writes enter the cache too (`kFlushOnly`): recent
    /// writes are often read soon.
    FlushOnly,
}

impl PrepopulateBlobCache {
    /// The OPTIONS file's spelling.
    pub fn name(self) -> &'static str {
        match self {
            PrepopulateBlobCache::Disable => "kDisable",
            PrepopulateBlobCache::FlushOnly => "kFlushOnly",
        }
    }

    /// Parses the OPTIONS file's spelling, or db_bench's `0` / `1`.
    pub fn from_name(name: &str) -> Option<PrepopulateBlobCache> {
        match name {
            "kDisable" | "0" => Some(PrepopulateBlobCache::Disable),
            "kFlushOnly" | "1" => Some(PrepopulateBlobCache::FlushOnly),
            _ => None,
        }
    }
}

/// Where a family's large values go. With `enable_blob_files`, flushes and
/// compactions (into `blob_file_starting_level` and below) write every value
/// of at least `min_blob_size` bytes to a blob file and keep a reference to
/// it in the table, so compactions move references, not values.
///
/// ```
/// use strata::{BlobOptions, CfOptions, CompressionType};
///
/// let cf = CfOptions {
///     blob: BlobOptions {
///         enable_blob_files: true,
///         min_blob_size: 1024,
///         blob_compression_type: CompressionType::Lz4,
///         enable_blob_garbage_collection: true,
///         ..BlobOptions::default()
///     },
///     ..CfOptions::default()
/// };
/// assert!(cf.validate().is_ok());
/// let bad = BlobOptions { blob_garbage_collection_age_cutoff: 1.5, ..cf.blob.clone() };
/// assert!(bad.validate().unwrap_err().to_string().contains("blob_garbage_collection_age_cutoff"));
/// ```
#[derive(Debug, Clone)]
pub struct BlobOptions {
    /// Separate large values into blob files. Default false.
    pub enable_blob_files: bool,
    /// Values of at least this many bytes are separated. Default 0 (every
    /// value, when blob files are on); must be 0 when they are off.
    pub min_blob_size: u64,
    /// A blob file is closed, and the next one started, once it holds this
    /// many bytes. Default 256 MiB.
    pub blob_file_size: u64,
    /// How each blob is compressed (only where that makes it smaller).
    /// Default none.
    pub blob_compression_type: CompressionType,
    /// Compactions into levels above this one keep values in the tables;
    /// flushes separate only when it is 0. Default 0.
    pub blob_file_starting_level: usize,
    /// Compactions move the values still live in the oldest blob files into
    /// new ones, so the old files can go. Default false.
    pub enable_blob_garbage_collection: bool,
    /// The oldest fraction of blob files garbage collection relocates from,
    /// in [0, 1]. Default 0.25.
    pub blob_garbage_collection_age_cutoff: f64,
    /// When the garbage in the files within the age cutoff reaches this
    /// share of their bytes, the tables referencing the oldest file are
    /// compacted to collect it, in [0, 1]. Default 1.0 (only when all of it
    /// is garbage).
    pub blob_garbage_collection_force_threshold: f64,
    /// Readahead for compactions reading blob files. Default 0. Blob reads
    /// in compaction are point reads here: the option is accepted and kept
    /// for RocksDB's OPTIONS files.
    pub blob_compaction_readahead_size: u64,
    /// The cache blobs are kept in, at the bottom priority. It may be the
    /// block cache itself, which is how RocksDB shares one cache between
    /// blocks and blobs. Default none.
    pub blob_cache: Option<Arc<dyn Cache>>,
    /// Whether flushes fill the blob cache. Default `Disable`.
    pub prepopulate_blob_cache: PrepopulateBlobCache,
}

impl Default for BlobOptions {
    fn default() -> Self {
        BlobOptions {
            enable_blob_files: false,
            min_blob_size: 0,
            blob_file_size: 256 << 20,
            blob_compression_type: CompressionType::None,
            blob_file_starting_level: 0,
            enable_blob_garbage_collection: false,
            blob_garbage_collection_age_cutoff: 0.25,
            blob_garbage_collection_force_threshold: 1.0,
            blob_compaction_readahead_size: 0,
            blob_cache: None,
            prepopulate_blob_cache: PrepopulateBlobCache::Disable,
        }
    }
}

/// The options by RocksDB's names, `name=value` separated by spaces (the
/// cache has no text form and is left out).
impl fmt::Display for BlobOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "enable_blob_files={} min_blob_size={} blob_file_size={} blob_compression_type={} \
             blob_file_starting_level={} enable_blob_garbage_collection={} \
             blob_garbage_collection_age_cutoff={} blob_garbage_collection_force_threshold={} \
             blob_compaction_readahead_size={} prepopulate_blob_cache={}",
            self.enable_blob_files,
            self.min_blob_size,
            self.blob_file_size,
            self.blob_compression_type.name(),
            self.blob_file_starting_level,
            self.enable_blob_garbage_collection,
            self.blob_garbage_collection_age_cutoff,
            self.blob_garbage_collection_force_threshold,
            self.blob_compaction_readahead_size,
            self.prepopulate_blob_cache.name(),
        )
    }
}

impl BlobOptions {
    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<()> {
        if !self.enable_blob_files && self.min_blob_size != 0 {
            return Err(Error::invalid_argument(
                "min_blob_size",
                format!(
                    "{} is set but enable_blob_files is false: set enable_blob_files, or \
                     min_blob_size=0",
                    self.min_blob_size
                ),
            ));
        }
        if self.blob_file_size == 0 {
            return Err(Error::invalid_argument(
                "blob_file_size",
                "must be at least 1 byte",
            ));
        }
        let fractions = [
            (
                "blob_garbage_collection_age_cutoff",
                self.blob_garbage_collection_age_cutoff,
            ),
            (
                "blob_garbage_collection_force_threshold",
                self.blob_garbage_collection_force_threshold,
            ),
        ];
        for (name, value) in fractions {
            if !(0.0..=1.0).contains(&value) {
                return Err(Error::invalid_argument(
                    name,
                    format!("{value} is outside [0, 1]"),
                ));
            }
        }
        Ok(())
    }

    /// Whether flushes (which write L0) separate values.
    pub(crate) fn separates_at_flush(&self) -> bool {
        self.enable_blob_files && self.blob_file_starting_level == 0
    }

    /// Whether a value of `len` bytes written to `level` goes to a blob file.
    pub(crate) fn separates(&self, level: usize, len: usize) -> bool {
        self.enable_blob_files
            && level >= self.blob_file_starting_level
            && len as u64 >= self.min_blob_size
    }
}
