//! Strata: an embedded LSM-tree key-value storage engine.
//!
//! This crate holds the engine. The public surface is re-exported here; modules
//! are documented where they are defined.

pub mod cache;
pub mod cf;
pub mod checksum;
pub mod compaction;
pub mod compaction_filter;
pub mod compression;
pub mod crash_point;
pub mod db;
pub mod encoding;
pub mod error;
pub mod filename;
pub mod flush;
pub mod fs;
pub mod iter;
pub mod key;
pub mod memtable;
pub mod merge;
pub mod options;
pub mod range_del;
pub mod statistics;
pub mod table;
pub mod table_cache;
pub mod version;
pub mod wal;
pub mod write;

pub use bytes::Bytes;
pub use cf::{ColumnFamily, DEFAULT_COLUMN_FAMILY_NAME};
pub use checksum::ChecksumType;
pub use compaction::rate_limiter::RateLimiter;
pub use compression::CompressionType;
pub use db::{check_consistency, ConsistencyReport, Db, KeyRange, Snapshot, WalDamage};
pub use error::{Error, Result};
pub use fs::{Fs, StdFs};
pub use iter::db_iter::{DbIterator, DbRange};
pub use merge::{merge_operator_from_name, MergeError, MergeOperator};
pub use options::{
    load_latest_options, CfOptions, CompactionOptions, CompactionStyle, DbOptions, FifoOptions,
    LoadOptions, ReadOptions, TableOptions, UniversalOptions, WalRecoveryMode, WriteOptions,
};
pub use statistics::{Histogram, Statistics, Ticker};
pub use write::batch::WriteBatch;
