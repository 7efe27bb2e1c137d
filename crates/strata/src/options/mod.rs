//! Options. Names and meanings follow RocksDB's wherever RocksDB has the option, so
//! a user's RocksDB knowledge carries over. Every field states its default and its
//! trade-off; [`TableOptions::validate`] runs before use and names the bad field.
//!
//! The OPTIONS file (`OPTIONS-000007`, RocksDB's INI layout and names) is
//! written by [`write_options_file`] and read by [`load_latest_options`];
//! [`apply_cf_option`] sets one option by its RocksDB name and spelling, for
//! `set_options` and the tools.

mod blob;
mod catalog;
mod column_family;
mod compaction;
mod file;
mod ingest;
pub mod ini;
mod merge_operator;
mod mutable;
mod prefix;
mod values;

use std::sync::Arc;

pub use blob::{BlobOptions, PrepopulateBlobCache};
pub use column_family::{CfOptions, MIN_WRITE_BUFFER_SIZE};
pub use compaction::{CompactionOptions, CompactionStyle, FifoOptions, UniversalOptions};
pub use file::{
    load_latest_options, load_latest_options_with_fs, load_options_file, options_file_text,
    write_options_file, LoadOptions, ROCKSDB_VERSION,
};
pub(crate) use file::{
    load_latest_options_for_reading, newest_merge_operators, StoredMergeOperators,
};
pub use ingest::IngestExternalFileOptions;
pub(crate) use merge_operator::{
    format_merge_operator, merge_operator_id, merge_operator_matches, parse_merge_operator,
};
pub use mutable::{
    apply_cf_option, apply_db_option, cf_option_value, db_option_value, is_mutable_cf_option,
    is_mutable_db_option, mutable_cf_option_names, option_names,
};
pub use prefix::PrefixExtractor;

use crate::cache::lru::{LruCache, LruOptions};
use crate::cache::Cache;
use crate::checksum::ChecksumType;
use crate::compaction::rate_limiter::RateLimiter;
use crate::comparator::Comparator;
use crate::compression::CompressionType;
use crate::error::{Error, Result};
use crate::fs::{Fs, StdFs};
use crate::merge::MergeOperator;
use crate::statistics::Statistics;

/// How table files are built (RocksDB's `BlockBasedTableOptions` plus the
/// compression setting that RocksDB keeps in column family options).
///
/// ```
/// use strata::{CompressionType, Db, DbOptions, TableOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let table = TableOptions {
///     block_size: 16 << 10,
///     compression: CompressionType::Lz4,
///     ..TableOptions::default()
/// };
/// table.validate()?;
/// assert!(TableOptions { block_size: 0, ..table.clone() }.validate().is_err());
/// let dir = tempfile::tempdir()?;
/// let options = DbOptions { create_if_missing: true, table, ..Default::default() };
/// let db = Db::open(dir.path(), options)?;
/// db.put("k", "v")?;
/// db.flush()?;
/// assert_eq!(db.get("k")?.as_deref(), Some(&b"v"[..]));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct TableOptions {
    /// Target uncompressed size of a data block, in bytes. Default 4096.
    /// Larger blocks compress better and shrink the index, but a point read must
    /// read and checksum the whole block.
    pub block_size: usize,
    /// Keys between restart points in data blocks. Default 16. Smaller makes seeks
    /// within a block faster and blocks larger (less prefix compression).
    pub block_restart_interval: usize,
    /// Bits per key of the full-file bloom filter; 0 disables it. Default 10
    /// (about 1% false positives). Each bit per key costs memory and saves reads
    /// for keys that are absent.
    pub bloom_bits_per_key: f64,
    /// Put whole user keys in the bloom filter, for point reads (RocksDB's
    /// `whole_key_filtering`). Default true. With a prefix extractor and
    /// false, the filter holds prefixes only: smaller, and gets of absent
    /// keys read the index and a data block instead.
    pub whole_key_filtering: bool,
    /// Maps user keys to the prefixes the bloom filter also holds, so seeks
    /// confined to one prefix skip tables without it (RocksDB's
    /// `ColumnFamilyOptions::prefix_extractor`, written in the family's
    /// section of the OPTIONS file; it lives here because the tables record
    /// it). Default none. May change between opens: a table built with
    /// another extractor has its prefix filter ignored, never trusted.
    pub prefix_extractor: Option<PrefixExtractor>,
    /// Codec for data blocks. Default snappy, as RocksDB. A block stays
    /// uncompressed when compression would save less than 12.5%.
    pub compression: CompressionType,
    /// Block checksum function. Default xxh3 (RocksDB's `kXXH3`, code 4).
    pub checksum: ChecksumType,
    /// Keep index and filter blocks in the block cache rather than in each
    /// open table. Default false: open tables hold them (fastest, but their
    /// memory is not bounded by the cache).
    pub cache_index_and_filter_blocks: bool,
    /// Cached index and filter blocks go to the high-priority pool, above data
    /// blocks. Default true.
    pub cache_index_and_filter_blocks_with_high_priority: bool,
    /// With `cache_index_and_filter_blocks`, tables opened at L0 (fresh
    /// flushes, mostly) load their index and filter at open and keep them
    /// pinned in the cache until the table closes: every read checks every L0
    /// file, so those blocks must never be evicted. Default false.
    pub pin_l0_filter_and_index_blocks_in_cache: bool,
    /// With `cache_index_and_filter_blocks`, tables with a partitioned index
    /// (or filter) keep its top level pinned in the cache while they are open:
    /// every read goes through the top level, while the partitions below it
    /// come and go with the cache, so a database larger than memory keeps
    /// only the top levels resident. Default true, as RocksDB. Tables with an
    /// unpartitioned index and filter are not affected.
    pub pin_top_level_index_and_filter: bool,
    /// How the index of a new table is laid out (RocksDB's `index_type`).
    /// Default [`IndexType::BinarySearch`]: one index block, held whole by
    /// the open table or the cache. [`IndexType::TwoLevelIndexSearch`] cuts
    /// it into partitions of about `metadata_block_size` bytes under a small
    /// top-level index, so that with `cache_index_and_filter_blocks` only the
    /// partitions in use take memory, at the cost of one more block lookup
    /// per read. Each table records its own layout: a database reopened with
    /// another index type reads its existing tables as they were written.
    pub index_type: IndexType,
    /// With [`IndexType::TwoLevelIndexSearch`], cut the bloom filter into
    /// partitions aligned with the index partitions, so that filters too
    /// live in the cache a partition at a time. Default false. Without the
    /// two-level index it is ignored (the filter stays whole), as RocksDB
    /// ignores it.
    pub partition_filters: bool,
    /// Target size in bytes of an index partition (and of a filter partition)
    /// with [`IndexType::TwoLevelIndexSearch`]. Default 4096, as RocksDB.
    /// Larger partitions mean a smaller top level but more bytes read and
    /// cached per lookup.
    pub metadata_block_size: usize,
}

/// The layout of a table's index (RocksDB's `BlockBasedTableOptions::IndexType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IndexType {
    /// One index block with an entry per data block (RocksDB's `kBinarySearch`).
    #[default]
    BinarySearch,
    /// Index partitions under a top-level index (RocksDB's
    /// `kTwoLevelIndexSearch`), written as table format version 3.
    TwoLevelIndexSearch,
}

impl IndexType {
    /// RocksDB's name, as the OPTIONS file spells it.
    pub fn name(self) -> &'static str {
        match self {
            IndexType::BinarySearch => "kBinarySearch",
            IndexType::TwoLevelIndexSearch => "kTwoLevelIndexSearch",
        }
    }
}

impl std::str::FromStr for IndexType {
    type Err = Error;

    /// RocksDB's names; one Strata does not implement (`kHashSearch`,
    /// `kBinarySearchWithFirstKey`) is `InvalidArgument` naming it.
    fn from_str(s: &str) -> Result<IndexType> {
        match s {
            "kBinarySearch" => Ok(IndexType::BinarySearch),
            "kTwoLevelIndexSearch" => Ok(IndexType::TwoLevelIndexSearch),
            _ => Err(Error::invalid_argument(
                "index_type",
                format!(
                    "{s:?} is not kBinarySearch or kTwoLevelIndexSearch \
                     (Strata does not implement kHashSearch or kBinarySearchWithFirstKey)"
                ),
            )),
        }
    }
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            block_size: 4096,
            block_restart_interval: 16,
            bloom_bits_per_key: 10.0,
            whole_key_filtering: true,
            prefix_extractor: None,
            compression: CompressionType::Snappy,
            checksum: ChecksumType::Xxh3,
            cache_index_and_filter_blocks: false,
            cache_index_and_filter_blocks_with_high_priority: true,
            pin_l0_filter_and_index_blocks_in_cache: false,
            pin_top_level_index_and_filter: true,
            index_type: IndexType::BinarySearch,
            partition_filters: false,
            metadata_block_size: 4096,
        }
    }
}

/// Largest accepted `block_size` (256 MiB).
pub const MAX_BLOCK_SIZE: usize = 256 << 20;

impl TableOptions {
    /// Whether new tables get a partitioned bloom filter: only under a
    /// two-level index (`partition_filters` alone is ignored, as in RocksDB).
    pub fn partitioned_filter(&self) -> bool {
        self.partition_filters && self.index_type == IndexType::TwoLevelIndexSearch
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<()> {
        if self.block_size == 0 || self.block_size > MAX_BLOCK_SIZE {
            return Err(Error::invalid_argument(
                "block_size",
                format!("{} is outside 1..={MAX_BLOCK_SIZE}", self.block_size),
            ));
        }
        if self.block_restart_interval == 0 || self.block_restart_interval > u32::MAX as usize {
            return Err(Error::invalid_argument(
                "block_restart_interval",
                format!("{} must be at least 1", self.block_restart_interval),
            ));
        }
        if !(0.0..=100.0).contains(&self.bloom_bits_per_key) {
            return Err(Error::invalid_argument(
                "bloom_bits_per_key",
                format!("{} is outside 0..=100", self.bloom_bits_per_key),
            ));
        }
        if self.metadata_block_size == 0 || self.metadata_block_size > MAX_BLOCK_SIZE {
            return Err(Error::invalid_argument(
                "metadata_block_size",
                format!(
                    "{} is outside 1..={MAX_BLOCK_SIZE}",
                    self.metadata_block_size
                ),
            ));
        }
        if let CompressionType::Zstd { level } = self.compression {
            if !(1..=22).contains(&level) {
                return Err(Error::invalid_argument(
                    "compression_level",
                    format!("zstd level {level} is outside 1..=22"),
                ));
            }
        }
        Ok(())
    }
}

/// Options for one read (RocksDB's `ReadOptions`).
///
/// ```
/// use strata::{Db, DbOptions, ReadOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let db = Db::open(dir.path(), DbOptions { create_if_missing: true, ..Default::default() })?;
/// for k in ["a", "b", "c", "d"] {
///     db.put(k, "")?;
/// }
/// let options = ReadOptions { iterate_upper_bound: Some(b"c".to_vec()), ..Default::default() };
/// let keys = db
///     .range_opt(&options, "b"..)
///     .map(|entry| entry.map(|(k, _)| k))
///     .collect::<strata::Result<Vec<_>>>()?;
/// assert_eq!(keys, [&b"b"[..]]);
/// assert!(ReadOptions::default().verify_checksums);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOptions {
    /// Verify the checksum of every data block read. Default true. Index and
    /// filter blocks are verified when loaded whatever this says.
    pub verify_checksums: bool,
    /// Read as of this snapshot instead of the latest state ([`crate::Db::snapshot`];
    /// the options hold it alive). A snapshot of another database is
    /// `InvalidArgument`. Default none.
    pub snapshot: Option<crate::db::Snapshot>,
    /// Iterators stop before user keys below this (inclusive bound). Default none.
    pub iterate_lower_bound: Option<Vec<u8>>,
    /// Iterators stop at user keys at or above this (exclusive bound). Default
    /// none. Setting it lets an iterator skip work past the range.
    pub iterate_upper_bound: Option<Vec<u8>>,
    /// Insert the data blocks this read misses into the block cache. Default
    /// true; set it false for a long scan that should not push the hot set out.
    pub fill_cache: bool,
    /// Bytes an iterator reads ahead of each table block its scan reads from
    /// the file (RocksDB's `readahead_size`). Default 0: automatic, starting
    /// after two blocks read in sequence at 8 KiB and doubling up to 256 KiB,
    /// so short range reads read no more than they need and long scans make
    /// few large reads.
    pub readahead_size: usize,
    /// With the family's prefix extractor, an iterator's `seek` and
    /// `seek_for_prev` stay inside the target's prefix: keys of other
    /// prefixes are never shown (the iterator ends at the prefix's edge, in
    /// either direction), and tables and memtables whose prefix filter proves
    /// the prefix absent are skipped. Default false. `seek_to_first` and
    /// `seek_to_last` ignore it. A target outside the extractor's domain
    /// seeks in total order.
    pub prefix_same_as_start: bool,
    /// Never consult prefix filters, even when `prefix_same_as_start` or the
    /// bounds confine a seek to one prefix. Default false. Strata never
    /// returns fewer keys than a full scan whatever this says (RocksDB may,
    /// without it): a prefix filter is used only when the iteration cannot
    /// leave the target's prefix.
    pub total_order_seek: bool,
    /// Where a read may look (RocksDB's `read_tier`). Default
    /// [`ReadTier::ReadAll`]; with [`ReadTier::BlockCache`] a read that
    /// would have to read a file fails with [`crate::Error::Incomplete`]
    /// instead, so it never blocks on storage. For `get`, `multi_get` and
    /// iterators (an iterator step that would read a file leaves the
    /// iterator invalid with that status).
    pub read_tier: ReadTier,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            verify_checksums: true,
            snapshot: None,
            iterate_lower_bound: None,
            iterate_upper_bound: None,
            fill_cache: true,
            readahead_size: 0,
            prefix_same_as_start: false,
            total_order_seek: false,
            read_tier: ReadTier::ReadAll,
        }
    }
}

/// What a read may look at (RocksDB's `ReadTier`, the tiers Strata has).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadTier {
    /// Memory and storage (RocksDB's `kReadAllTier`).
    #[default]
    ReadAll,
    /// Only what is in memory: the memtables, the block and blob caches,
    /// and tables already open with their pinned blocks (RocksDB's
    /// `kBlockCacheTier`).
    BlockCache,
}

/// Options for one write (RocksDB's `WriteOptions`).
///
/// ```
/// use strata::{Db, DbOptions, WriteOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let db = Db::open(dir.path(), DbOptions { create_if_missing: true, ..Default::default() })?;
/// assert!(!WriteOptions::default().sync, "writes are not synced by default");
/// // Durable against power loss once put_opt returns.
/// let durable = WriteOptions { sync: true, ..Default::default() };
/// db.put_opt(&durable, "k", "v")?;
/// assert_eq!(db.get("k")?.as_deref(), Some(&b"v"[..]));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// Wait for the WAL to be fsynced before returning. Default false: the write
    /// is acknowledged once its WAL bytes are handed to the OS, so a process crash
    /// loses nothing acknowledged but a power loss may lose the latest writes.
    pub sync: bool,
    /// Skip the WAL: the write lives only in the memtable until flushed, and a
    /// crash loses it. Default false. With several column families, each is
    /// flushed on its own, so after a crash families may hold their unlogged
    /// writes up to different points.
    pub disable_wal: bool,
    /// Fail with [`crate::Error::Incomplete`] instead of waiting when writes
    /// are slowed or stopped (compaction behind, or every memtable full), and
    /// when writes ahead of this one in the queue are. Nothing of the batch
    /// is written then. Default false.
    pub no_slowdown: bool,
}

/// How recovery treats a damaged or incomplete WAL (RocksDB's `WALRecoveryMode`,
/// with its four modes and their names: `kTolerateCorruptedTailRecords`,
/// `kAbsoluteConsistency`, `kPointInTimeRecovery`, `kSkipAnyCorruptedRecords`).
/// A torn tail of the last WAL is what a crash leaves; damage followed by
/// valid records means acknowledged writes were lost, and every mode that
/// goes on past it reports it (`strata.wal-damage`) and keeps the WAL as
/// `NNNNNN.log.corrupt`.
///
/// ```
/// use strata::{Db, DbOptions, WalRecoveryMode};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// assert_eq!(WalRecoveryMode::default(), WalRecoveryMode::PointInTimeRecovery);
/// assert_eq!(WalRecoveryMode::ALL[1], WalRecoveryMode::AbsoluteConsistency);
/// let dir = tempfile::tempdir()?;
/// let strict = DbOptions {
///     create_if_missing: true,
///     wal_recovery_mode: WalRecoveryMode::AbsoluteConsistency,
///     ..Default::default()
/// };
/// let db = Db::open(dir.path(), strict.clone())?;
/// db.put("k", "v")?;
/// db.close()?;
/// // An intact WAL replays under the strictest mode.
/// assert!(Db::open(dir.path(), strict)?.get("k")?.is_some());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WalRecoveryMode {
    /// Ignore a torn tail of the last WAL; any other damage fails the open.
    TolerateCorruptedTailRecords,
    /// Any torn tail or damage fails the open.
    AbsoluteConsistency,
    /// Stop replay at the first torn or damaged record and keep everything
    /// before it: the recovered state is a prefix of the history. Valid
    /// records after damage are counted and reported, not replayed. The
    /// default, as RocksDB's.
    #[default]
    PointInTimeRecovery,
    /// Replay every valid record, skipping damaged blocks: the most data, but
    /// the history may have holes. For salvage.
    SkipAnyCorruptedRecords,
}

impl WalRecoveryMode {
    /// Every mode, in RocksDB's numbering (0 to 3).
    pub const ALL: [WalRecoveryMode; 4] = [
        WalRecoveryMode::TolerateCorruptedTailRecords,
        WalRecoveryMode::AbsoluteConsistency,
        WalRecoveryMode::PointInTimeRecovery,
        WalRecoveryMode::SkipAnyCorruptedRecords,
    ];

    /// RocksDB's name: `kPointInTimeRecovery`, ...
    pub fn name(self) -> &'static str {
        match self {
            WalRecoveryMode::TolerateCorruptedTailRecords => "kTolerateCorruptedTailRecords",
            WalRecoveryMode::AbsoluteConsistency => "kAbsoluteConsistency",
            WalRecoveryMode::PointInTimeRecovery => "kPointInTimeRecovery",
            WalRecoveryMode::SkipAnyCorruptedRecords => "kSkipAnyCorruptedRecords",
        }
    }
}

impl std::str::FromStr for WalRecoveryMode {
    type Err = Error;

    /// Takes RocksDB's name (`kPointInTimeRecovery`) or number (`2`).
    fn from_str(s: &str) -> Result<Self> {
        WalRecoveryMode::ALL
            .into_iter()
            .enumerate()
            .find(|(i, mode)| mode.name() == s || i.to_string() == s)
            .map(|(_, mode)| mode)
            .ok_or_else(|| {
                Error::invalid_argument(
                    "wal_recovery_mode",
                    format!(
                        "{s:?} is not one of kTolerateCorruptedTailRecords (0), \
                         kAbsoluteConsistency (1), kPointInTimeRecovery (2), \
                         kSkipAnyCorruptedRecords (3)"
                    ),
                )
            })
    }
}

/// Options of a database (RocksDB's `DBOptions` and column family options).
///
/// ```
/// use strata::{Db, DbOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// // By default a missing database is an error, not created.
/// assert!(Db::open(dir.path(), DbOptions::default()).is_err());
/// let options =
///     DbOptions { create_if_missing: true, write_buffer_size: 8 << 20, ..Default::default() };
/// Db::open(dir.path(), options.clone())?.close()?;
/// // `error_if_exists` refuses to open one that is already there.
/// let fresh_only = DbOptions { error_if_exists: true, ..options };
/// assert!(Db::open(dir.path(), fresh_only).is_err());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct DbOptions {
    /// Create the database if it does not exist. Default false.
    pub create_if_missing: bool,
    /// Fail to open if the database exists. Default false.
    pub error_if_exists: bool,
    /// `Db::open_cf` creates the families it is given that the database
    /// lacks. Default false: a family missing is an error.
    pub create_missing_column_families: bool,
    /// Bytes of writes a memtable collects before it is switched out and flushed
    /// to an L0 table. Default 64 MiB. Larger buffers mean fewer, larger L0 files
    /// and more memory.
    pub write_buffer_size: usize,
    /// Memtables (active plus waiting to flush) allowed at once. Default 2. When
    /// all are full, writes wait for a flush.
    pub max_write_buffer_number: usize,
    /// The default family's key order (see [`CfOptions::comparator`]).
    pub comparator: Arc<dyn Comparator>,
    /// How table files are built and read.
    pub table: TableOptions,
    /// When and how tables are compacted, and when writes stall for it.
    pub compaction: CompactionOptions,
    /// The default family's merge operator (RocksDB's `merge_operator`).
    /// Default none: a merge is refused.
    pub merge_operator: Option<Arc<dyn MergeOperator>>,
    /// The default family's compaction filter (RocksDB's
    /// `compaction_filter`; see [`crate::compaction_filter`]).
    pub compaction_filter: Option<Arc<dyn crate::compaction_filter::CompactionFilter>>,
    /// Called on flushes, compactions, table files created and deleted,
    /// ingestion, background errors and stall changes (RocksDB's
    /// `listeners`; see [`crate::listener`]).
    pub listeners: Vec<Arc<dyn crate::listener::EventListener>>,
    /// Started beside the database when it opens and stopped first when it
    /// closes (see [`crate::DbService`]); the live web view of the
    /// `strata-web` crate is one (`strata_web::http_addr`). Default none.
    pub services: Vec<Arc<dyn crate::db::DbService>>,
    /// The default family's memtable bloom filter size, as a fraction of
    /// `write_buffer_size` (see [`CfOptions::memtable_prefix_bloom_size_ratio`]).
    pub memtable_prefix_bloom_size_ratio: f64,
    /// The default family's memtable bloom filter holds whole keys too
    /// (see [`CfOptions::memtable_whole_key_filtering`]).
    pub memtable_whole_key_filtering: bool,
    /// Key-value separation of the default family (see [`CfOptions::blob`]).
    pub blob: BlobOptions,
    /// Read table files through `mmap` (advised for random access). Default false.
    pub use_mmap_reads: bool,
    /// Read table files with `O_DIRECT`, bypassing the page cache. Default false.
    pub use_direct_reads: bool,
    /// Write the table files of flushes and compactions with `O_DIRECT`, so
    /// background writes do not evict the page cache's pages. Default false.
    pub use_direct_io_for_flush_and_compaction: bool,
    /// What recovery does with a damaged WAL. Default point-in-time.
    pub wal_recovery_mode: WalRecoveryMode,
    /// At a read-write open, check that every table file the MANIFEST names
    /// exists with the size it recorded, and fail with `Corruption` naming
    /// each missing or short one (RocksDB's `paranoid_checks`). Default true:
    /// a database missing tables would otherwise open and take writes, and
    /// fail only at the reads that need them. Costs one `stat` per table.
    pub paranoid_checks: bool,
    /// Keep WAL appends in the process's buffer (64 KiB) until
    /// [`Db::flush_wal`](crate::Db::flush_wal), a sync write, a memtable
    /// switch, close, or a full buffer writes them out (RocksDB's
    /// `manual_wal_flush`). Default false: every write reaches the OS before
    /// it is acknowledged, so it survives the process being killed. With it
    /// on, a killed process loses the writes since the last flush (recovery
    /// still yields a prefix of the acknowledged writes), and a write costs no
    /// system call. Power loss loses unsynced writes either way.
    pub manual_wal_flush: bool,
    /// The file system under the database. Default: the real one.
    pub fs: Arc<dyn Fs>,
    /// Limits the bytes per second flushes and compactions write (RocksDB's
    /// `rate_limiter`, made with `RateLimiter::new(rate_bytes_per_sec)`); share
    /// one `Arc` to bound several databases together. Default none. Smooths
    /// background I/O at the cost of slower compaction, hence earlier stalls.
    pub rate_limiter: Option<Arc<RateLimiter>>,
    /// The block cache for data blocks (RocksDB's `block_cache`); share one
    /// `Arc` between databases to bound them together. Default: a 32 MiB LRU
    /// cache, as RocksDB's. `None` reads every block from the file (and the OS
    /// page cache).
    pub block_cache: Option<Arc<dyn Cache>>,
    /// Info LOG files kept: each open starts a new `LOG` and renames the old
    /// one `LOG.old.<micros>`; the oldest beyond this count are deleted.
    /// Default 1000, as RocksDB.
    pub keep_log_file_num: usize,
    /// Table files kept open (RocksDB's `max_open_files`); -1, the default,
    /// keeps every live table open. An open table holds its index and filter
    /// in memory, so a limit bounds memory at the cost of reopening.
    pub max_open_files: i64,
    /// Tickers and latency histograms (RocksDB's `statistics`), read with
    /// `property("strata.statistics")`; share one `Arc` between databases to
    /// count them together. Default none. Costs a clock read per operation.
    pub statistics: Option<Arc<Statistics>>,
    /// Search the files of each sorted level through a cache of the first 8
    /// bytes of each file's largest key, compared as integers, before any full
    /// key compare (see `version/file_index.rs`). Default true; false searches
    /// with full compares only, as a baseline to measure the cache against.
    /// Strata's own option: not in RocksDB, not in the OPTIONS file.
    pub file_index_prefix_cache: bool,
}

impl Default for DbOptions {
    fn default() -> Self {
        DbOptions {
            create_if_missing: false,
            error_if_exists: false,
            create_missing_column_families: false,
            write_buffer_size: 64 << 20,
            max_write_buffer_number: 2,
            comparator: crate::comparator::bytewise_comparator(),
            table: TableOptions::default(),
            compaction: CompactionOptions::default(),
            merge_operator: None,
            compaction_filter: None,
            listeners: Vec::new(),
            services: Vec::new(),
            memtable_prefix_bloom_size_ratio: 0.0,
            memtable_whole_key_filtering: false,
            blob: BlobOptions::default(),
            use_mmap_reads: false,
            use_direct_reads: false,
            use_direct_io_for_flush_and_compaction: false,
            wal_recovery_mode: WalRecoveryMode::default(),
            paranoid_checks: true,
            manual_wal_flush: false,
            fs: Arc::new(StdFs),
            rate_limiter: None,
            block_cache: default_block_cache(),
            keep_log_file_num: 1000,
            max_open_files: -1,
            statistics: None,
            file_index_prefix_cache: true,
        }
    }
}

/// RocksDB's default block cache: 32 MiB, LRU, half of it the high pool.
fn default_block_cache() -> Option<Arc<dyn Cache>> {
    LruCache::new(LruOptions::new(32 << 20))
        .ok()
        .map(|c| Arc::new(c) as Arc<dyn Cache>)
}

impl DbOptions {
    /// The default family's options: this struct's column family fields.
    pub fn cf_options(&self) -> CfOptions {
        CfOptions {
            write_buffer_size: self.write_buffer_size,
            max_write_buffer_number: self.max_write_buffer_number,
            comparator: self.comparator.clone(),
            table: self.table.clone(),
            compaction: self.compaction.clone(),
            merge_operator: self.merge_operator.clone(),
            compaction_filter: self.compaction_filter.clone(),
            memtable_prefix_bloom_size_ratio: self.memtable_prefix_bloom_size_ratio,
            memtable_whole_key_filtering: self.memtable_whole_key_filtering,
            blob: self.blob.clone(),
        }
    }

    /// Sets this struct's column family fields (the default family's options)
    /// from `cf`.
    pub fn set_cf_options(&mut self, cf: CfOptions) {
        self.write_buffer_size = cf.write_buffer_size;
        self.max_write_buffer_number = cf.max_write_buffer_number;
        self.comparator = cf.comparator;
        self.table = cf.table;
        self.compaction = cf.compaction;
        self.merge_operator = cf.merge_operator;
        self.compaction_filter = cf.compaction_filter;
        self.memtable_prefix_bloom_size_ratio = cf.memtable_prefix_bloom_size_ratio;
        self.memtable_whole_key_filtering = cf.memtable_whole_key_filtering;
        self.blob = cf.blob;
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<()> {
        self.cf_options().validate()?;
        if self.use_mmap_reads && self.use_direct_reads {
            return Err(Error::invalid_argument(
                "use_direct_reads",
                "cannot be combined with use_mmap_reads",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_of(o: &TableOptions) -> Option<&'static str> {
        match o.validate() {
            Err(Error::InvalidArgument { field, .. }) => Some(field),
            _ => None,
        }
    }

    #[test]
    fn wal_recovery_modes_parse_by_rocksdb_name_and_number() {
        for (i, mode) in WalRecoveryMode::ALL.into_iter().enumerate() {
            assert_eq!(mode.name().parse::<WalRecoveryMode>().ok(), Some(mode));
            assert_eq!(i.to_string().parse::<WalRecoveryMode>().ok(), Some(mode));
        }
        assert_eq!(
            WalRecoveryMode::default(),
            WalRecoveryMode::PointInTimeRecovery
        );
        let err = "PointInTime".parse::<WalRecoveryMode>().unwrap_err();
        assert!(
            err.to_string().contains("kSkipAnyCorruptedRecords"),
            "{err}"
        );
    }

    #[test]
    fn defaults_are_valid() {
        assert!(TableOptions::default().validate().is_ok());
    }

    #[test]
    fn invalid_fields_are_named() {
        let mut o = TableOptions {
            block_size: 0,
            ..Default::default()
        };
        assert_eq!(field_of(&o), Some("block_size"));
        o.block_size = 4096;
        o.block_restart_interval = 0;
        assert_eq!(field_of(&o), Some("block_restart_interval"));
        o.block_restart_interval = 16;
        o.bloom_bits_per_key = -1.0;
        assert_eq!(field_of(&o), Some("bloom_bits_per_key"));
        o.bloom_bits_per_key = f64::NAN;
        assert_eq!(field_of(&o), Some("bloom_bits_per_key"));
        o.bloom_bits_per_key = 10.0;
        o.compression = CompressionType::Zstd { level: 99 };
        assert_eq!(field_of(&o), Some("compression_level"));
    }
}
