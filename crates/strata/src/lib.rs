//! Strata: an embedded LSM-tree key-value storage engine.
//!
//! A database is a directory opened with [`Db::open`]. Keys and values are
//! byte strings (anything `AsRef<[u8]>`, so `&str`, `String`, `Vec<u8>` and
//! `&[u8]` all work). Writes go to a write-ahead log and a memtable, are
//! flushed to sorted table files and compacted in the background; reads see
//! the newest data, or a [`Snapshot`]'s. Option names follow RocksDB's, and
//! the database records them in an `OPTIONS-NNNNNN` file RocksDB's loader
//! reads.
//!
//! ```
//! use strata::{Db, DbOptions, CfOptions, ReadOptions, WriteBatch, WriteOptions};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let options = DbOptions { create_if_missing: true, ..DbOptions::default() };
//! let db = Db::open(dir.path(), options)?;
//!
//! // Point writes and reads.
//! db.put("user:1", "ada")?;
//! assert_eq!(db.get("user:1")?.as_deref(), Some(&b"ada"[..]));
//!
//! // A column family with a merge operator that adds 64-bit counters.
//! let counters = db.create_column_family(
//!     "counters",
//!     CfOptions {
//!         merge_operator: Some(strata::merge_operator_from_name("uint64add")?),
//!         ..CfOptions::default()
//!     },
//! )?;
//!
//! // An atomic batch across families: all of it or none of it survives a crash.
//! let mut batch = WriteBatch::new();
//! batch.put("user:2", "grace")?;
//! batch.merge_cf(&counters, "users", 2u64.to_le_bytes())?;
//! batch.delete_range("tmp:", "tmp;")?;
//! db.write(&WriteOptions::default(), batch)?;
//!
//! // A snapshot keeps seeing what was there when it was taken.
//! let snapshot = db.snapshot();
//! db.delete("user:1")?;
//! let then = ReadOptions { snapshot: Some(snapshot), ..ReadOptions::default() };
//! assert!(db.get_opt(&then, "user:1")?.is_some());
//! assert!(db.get("user:1")?.is_none());
//!
//! // Scans are Rust iterators over std ranges.
//! for entry in db.range("user:".."user;") {
//!     let (key, value) = entry?;
//!     println!("{} = {}", key.escape_ascii(), value.escape_ascii());
//! }
//! assert_eq!(db.get_cf(&counters, "users")?.as_deref(), Some(&2u64.to_le_bytes()[..]));
//! db.close()?;
//! # Ok(())
//! # }
//! ```
//!
//! The modules below are the ones a user configures the engine with. The
//! formats and internals (tables, the WAL, the MANIFEST, iterators over
//! internal keys) are public only with the `internals` feature, which the
//! `strata` tools use; they carry no stability promise.

// Without `internals`, what only the tools call (table dumps, WAL readers,
// verification) is unreachable from outside, so the compiler would call it
// dead; it is compiled and tested either way.
#![cfg_attr(not(feature = "internals"), allow(dead_code, unused_imports))]

/// Declares modules that are public with the `internals` feature and private
/// without it; their user-facing items are re-exported below either way.
macro_rules! internal_modules {
    ($($name:ident),* $(,)?) => {$(
        #[cfg(feature = "internals")]
        pub mod $name;
        #[cfg(not(feature = "internals"))]
        mod $name;
    )*};
}

internal_modules!(
    blob,
    cf,
    checksum,
    compaction,
    compression,
    crash_point,
    db,
    encoding,
    error,
    filename,
    flush,
    iter,
    key,
    key_order,
    memtable,
    range_del,
    read_tier,
    table,
    table_cache,
    version,
    wal,
    write,
);

pub mod cache;
pub mod compaction_filter;
pub mod comparator;
pub mod fs;
pub mod listener;
pub mod merge;
pub mod options;
pub mod perf_context;
pub mod statistics;

pub use bytes::Bytes;
pub use cf::{ColumnFamily, DEFAULT_COLUMN_FAMILY_NAME};
pub use checksum::ChecksumType;
pub use compaction::rate_limiter::RateLimiter;
pub use compaction_filter::{CompactionFilter, Decision, FilterContext};
pub use comparator::{
    comparator_from_name, BytewiseComparator, Comparator, ReverseBytewiseComparator,
};
pub use compression::CompressionType;
pub use db::{
    check_consistency, repair_db, ConsistencyReport, Db, DbService, KeyRange, KeyVersion,
    LiveBlobFileMetaData, LiveFileMetaData, RepairReport, Snapshot, WalDamage, WeakDb,
};
pub use error::{Error, Result};
pub use fs::{Fs, StdFs};
pub use iter::db_iter::DbIterator;
pub use iter::db_range::DbRange;
pub use key::{SequenceNumber, ValueType};
pub use listener::EventListener;
pub use merge::{merge_operator_from_name, MergeError, MergeOperator};
pub use options::{
    load_latest_options, BlobOptions, CfOptions, CompactionOptions, CompactionStyle, DbOptions,
    FifoOptions, IndexType, IngestExternalFileOptions, LoadOptions, PrefixExtractor,
    PrepopulateBlobCache, ReadOptions, ReadTier, TableOptions, UniversalOptions, WalRecoveryMode,
    WriteOptions,
};
pub use statistics::{Histogram, Statistics, Ticker};
pub use table::sst_file_writer::{ExternalSstFileInfo, SstFileWriter};
pub use write::batch::{WriteBatch, MAX_KEY_SIZE, MAX_VALUE_SIZE};
