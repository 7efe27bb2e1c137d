//! db_bench's key-value separation flags (its `BlobDB` section), with
//! db_bench's defaults: parsed here, turned into [`BlobOptions`] for Strata,
//! and handed to RocksDB under the same names.

use std::sync::Arc;

use strata::cache::lru::{LruCache, LruOptions};
use strata::cache::Cache;
use strata::{BlobOptions, CompressionType, PrepopulateBlobCache};

use super::{err, FlagError};

/// The blob flags as given.
#[derive(Debug, Clone, PartialEq)]
pub struct BlobFlags {
    pub enable_blob_files: bool,
    pub min_blob_size: u64,
    pub blob_file_size: u64,
    pub blob_compression_type: CompressionType,
    pub enable_blob_garbage_collection: bool,
    pub blob_garbage_collection_age_cutoff: f64,
    pub blob_garbage_collection_force_threshold: f64,
    pub blob_compaction_readahead_size: u64,
    pub blob_file_starting_level: usize,
    /// Give the database a blob cache.
    pub use_blob_cache: bool,
    /// With `use_blob_cache`: the block cache is the blob cache too
    /// (db_bench's default), so blobs and blocks compete by priority.
    pub use_shared_block_and_blob_cache: bool,
    /// Capacity of a blob cache of its own.
    pub blob_cache_size: usize,
    /// 0: `kDisable`, 1: `kFlushOnly`.
    pub prepopulate_blob_cache: u32,
}

impl Default for BlobFlags {
    fn default() -> Self {
        BlobFlags {
            enable_blob_files: false,
            min_blob_size: 0,
            blob_file_size: 256 << 20,
            blob_compression_type: CompressionType::None,
            enable_blob_garbage_collection: false,
            blob_garbage_collection_age_cutoff: 0.25,
            blob_garbage_collection_force_threshold: 1.0,
            blob_compaction_readahead_size: 0,
            blob_file_starting_level: 0,
            use_blob_cache: false,
            use_shared_block_and_blob_cache: true,
            blob_cache_size: 8 << 20,
            prepopulate_blob_cache: 0,
        }
    }
}

/// The boolean blob flags (bare or `--no` forms allowed).
pub const BLOB_BOOL_FLAGS: &[&str] = &[
    "enable_blob_files",
    "enable_blob_garbage_collection",
    "use_blob_cache",
    "use_shared_block_and_blob_cache",
];

/// Sets blob flag `name` from `value`; `None` when `name` is not one.
pub fn parse_blob_flag(
    flags: &mut BlobFlags,
    name: &str,
    value: &str,
    boolean: fn(&str, &str) -> Result<bool, FlagError>,
) -> Option<Result<(), FlagError>> {
    let number = |v: &str| -> Result<u64, FlagError> {
        v.trim()
            .parse()
            .or_else(|_| err(format!("--{name}: {v:?} is not a valid number")))
    };
    let fraction = |v: &str| -> Result<f64, FlagError> {
        v.trim()
            .parse()
            .or_else(|_| err(format!("--{name}: {v:?} is not a valid number")))
    };
    let set = || -> Result<(), FlagError> {
        match name {
            "enable_blob_files" => flags.enable_blob_files = boolean(name, value)?,
            "min_blob_size" => flags.min_blob_size = number(value)?,
            "blob_file_size" => flags.blob_file_size = number(value)?,
            "blob_compression_type" => {
                flags.blob_compression_type = CompressionType::parse(value).or_else(|_| {
                    err(format!(
                        "--blob_compression_type: unknown or unsupported compression {value:?}; \
                         expected none, snappy, lz4 or zstd"
                    ))
                })?
            }
            "enable_blob_garbage_collection" => {
                flags.enable_blob_garbage_collection = boolean(name, value)?
            }
            "blob_garbage_collection_age_cutoff" => {
                flags.blob_garbage_collection_age_cutoff = fraction(value)?
            }
            "blob_garbage_collection_force_threshold" => {
                flags.blob_garbage_collection_force_threshold = fraction(value)?
            }
            "blob_compaction_readahead_size" => {
                flags.blob_compaction_readahead_size = number(value)?
            }
            "blob_file_starting_level" => {
                flags.blob_file_starting_level =
                    usize::try_from(number(value)?).unwrap_or(usize::MAX)
            }
            "use_blob_cache" => flags.use_blob_cache = boolean(name, value)?,
            "use_shared_block_and_blob_cache" => {
                flags.use_shared_block_and_blob_cache = boolean(name, value)?
            }
            "blob_cache_size" => {
                flags.blob_cache_size = usize::try_from(number(value)?).unwrap_or(usize::MAX)
            }
            "prepopulate_blob_cache" => {
                flags.prepopulate_blob_cache = match value.trim() {
                    "0" => 0,
                    "1" => 1,
                    _ => {
                        return err(format!(
                        "--prepopulate_blob_cache={value}: expected 0 (disable) or 1 (flush only)"
                    ))
                    }
                }
            }
            _ => return err(format!("unknown flag --{name} (see --help)")),
        }
        Ok(())
    };
    is_blob_flag(name).then(set)
}

/// Whether `name` is one of the blob flags.
pub fn is_blob_flag(name: &str) -> bool {
    matches!(
        name,
        "enable_blob_files"
            | "min_blob_size"
            | "blob_file_size"
            | "blob_compression_type"
            | "enable_blob_garbage_collection"
            | "blob_garbage_collection_age_cutoff"
            | "blob_garbage_collection_force_threshold"
            | "blob_compaction_readahead_size"
            | "blob_file_starting_level"
            | "use_blob_cache"
            | "use_shared_block_and_blob_cache"
            | "blob_cache_size"
            | "prepopulate_blob_cache"
    )
}

impl BlobFlags {
    /// Strata's blob options for these flags; `block_cache` is the run's
    /// block cache, which `--use_shared_block_and_blob_cache` shares.
    pub fn options(&self, block_cache: Option<&Arc<dyn Cache>>) -> Result<BlobOptions, FlagError> {
        let blob_cache = match (self.use_blob_cache, self.use_shared_block_and_blob_cache) {
            (false, _) => None,
            (true, true) => block_cache.cloned(),
            (true, false) => {
                let cache = LruCache::new(LruOptions::new(self.blob_cache_size))
                    .or_else(|e| err(format!("--blob_cache_size: {e}")))?;
                Some(Arc::new(cache) as Arc<dyn Cache>)
            }
        };
        Ok(BlobOptions {
            enable_blob_files: self.enable_blob_files,
            // RocksDB ignores min_blob_size with blobs off; so do the flags.
            min_blob_size: if self.enable_blob_files {
                self.min_blob_size
            } else {
                0
            },
            blob_file_size: self.blob_file_size,
            blob_compression_type: self.blob_compression_type,
            blob_file_starting_level: self.blob_file_starting_level,
            enable_blob_garbage_collection: self.enable_blob_garbage_collection,
            blob_garbage_collection_age_cutoff: self.blob_garbage_collection_age_cutoff,
            blob_garbage_collection_force_threshold: self.blob_garbage_collection_force_threshold,
            blob_compaction_readahead_size: self.blob_compaction_readahead_size,
            blob_cache,
            prepopulate_blob_cache: if self.prepopulate_blob_cache == 1 {
                PrepopulateBlobCache::FlushOnly
            } else {
                PrepopulateBlobCache::Disable
            },
        })
    }

    /// The flags in db_bench's spelling, for a run of Debian's db_bench.
    pub fn db_bench_args(&self) -> Vec<String> {
        vec![
            format!("--enable_blob_files={}", self.enable_blob_files),
            format!("--min_blob_size={}", self.min_blob_size),
            format!("--blob_file_size={}", self.blob_file_size),
            format!(
                "--blob_compression_type={}",
                self.blob_compression_type.name().to_ascii_lowercase()
            ),
            format!(
                "--enable_blob_garbage_collection={}",
                self.enable_blob_garbage_collection
            ),
            format!(
                "--blob_garbage_collection_age_cutoff={}",
                self.blob_garbage_collection_age_cutoff
            ),
            format!(
                "--blob_garbage_collection_force_threshold={}",
                self.blob_garbage_collection_force_threshold
            ),
            format!(
                "--blob_compaction_readahead_size={}",
                self.blob_compaction_readahead_size
            ),
            format!(
                "--blob_file_starting_level={}",
                self.blob_file_starting_level
            ),
            format!("--use_blob_cache={}", self.use_blob_cache),
            format!(
                "--use_shared_block_and_blob_cache={}",
                self.use_shared_block_and_blob_cache
            ),
            format!("--blob_cache_size={}", self.blob_cache_size),
            format!("--prepopulate_blob_cache={}", self.prepopulate_blob_cache),
        ]
    }
}

/// The `--help` lines of the blob flags.
pub const BLOB_HELP: &str = "\
Key-value separation (db_bench's BlobDB flags):
  --enable_blob_files=0|1 [0]                values of min_blob_size and more go to blob files
  --min_blob_size=N [0]                      smallest value separated
  --blob_file_size=N [268435456]             a blob file is closed at this size
  --blob_compression_type=none|snappy|lz4|zstd [none]
  --blob_file_starting_level=N [0]           compactions into this level and below separate
  --enable_blob_garbage_collection=0|1 [0]   relocate the oldest blob files' live values
  --blob_garbage_collection_age_cutoff=F [0.25]      the oldest fraction of blob files collected
  --blob_garbage_collection_force_threshold=F [1.0]  garbage share that forces a compaction
  --blob_compaction_readahead_size=N [0]
  --use_blob_cache=0|1 [0]                   cache blobs (at the bottom priority)
  --use_shared_block_and_blob_cache=0|1 [1]  the block cache is the blob cache too
  --blob_cache_size=N [8388608]              capacity of a blob cache of its own
  --prepopulate_blob_cache=0|1 [0]           1: flushes put the blobs they write in the cache
";
