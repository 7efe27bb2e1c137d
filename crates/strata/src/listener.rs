//! Event listeners (RocksDB's `EventListener`): callbacks for flushes,
//! compactions, table files created and deleted, ingestion, background
//! errors and changes of the write stall condition.
//!
//! Callbacks run on one thread of their own per database, in the order the
//! events happened, never on a writer's or a background job's thread and
//! never under a lock of the engine's: a slow listener delays only later
//! callbacks, and a listener may call back into the database. Events are
//! delivered after they happened (a flush's `on_flush_completed` may run
//! while the next flush runs); closing the database delivers every event
//! still queued before `close` returns.
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use std::sync::Arc;
//! use strata::listener::{EventListener, FlushJobInfo};
//! use strata::{Db, DbOptions};
//!
//! #[derive(Debug, Default)]
//! struct CountFlushes(AtomicU64);
//!
//! impl EventListener for CountFlushes {
//!     fn on_flush_completed(&self, _: &FlushJobInfo) {
//!         self.0.fetch_add(1, Ordering::Relaxed);
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let flushes = Arc::new(CountFlushes::default());
//! let dir = tempfile::tempdir()?;
//! let options = DbOptions {
//!     create_if_missing: true,
//!     listeners: vec![flushes.clone()],
//!     ..DbOptions::default()
//! };
//! let db = Db::open(dir.path(), options)?;
//! db.put("k", "v")?;
//! db.flush()?;
//! db.close()?;
//! assert_eq!(flushes.0.load(Ordering::Relaxed), 1);
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::path::PathBuf;

use crate::error::Error;
use crate::key::SequenceNumber;

/// Receives a database's events; every method does nothing by default.
pub trait EventListener: Send + Sync + fmt::Debug {
    /// A flush is about to write a memtable to a table.
    fn on_flush_begin(&self, info: &FlushJobInfo) {
        let _ = info;
    }
    /// A flush's table is in the version (or the memtable held nothing).
    fn on_flush_completed(&self, info: &FlushJobInfo) {
        let _ = info;
    }
    /// A compaction is about to run.
    fn on_compaction_begin(&self, info: &CompactionJobInfo) {
        let _ = info;
    }
    /// A compaction finished: installed, or failed (`info.status`).
    fn on_compaction_completed(&self, info: &CompactionJobInfo) {
        let _ = info;
    }
    /// A flush or compaction wrote a table that is now in the version.
    fn on_table_file_created(&self, info: &TableFileCreationInfo) {
        let _ = info;
    }
    /// An obsolete table was deleted.
    fn on_table_file_deleted(&self, info: &TableFileDeletionInfo) {
        let _ = info;
    }
    /// Files were ingested (`Db::ingest_external_file`), one call per file.
    fn on_external_file_ingested(&self, info: &ExternalFileIngestionInfo) {
        let _ = info;
    }
    /// The database stopped taking writes after an error in the background
    /// (a failed WAL, MANIFEST or flush write, a full disk, corruption).
    fn on_background_error(&self, error: &Error) {
        let _ = error;
    }
    /// A family's write stall condition changed.
    fn on_stall_conditions_changed(&self, info: &WriteStallInfo) {
        let _ = info;
    }
}

/// A flush (RocksDB's `FlushJobInfo`). At `on_flush_begin` the file does
/// not exist yet: its size and counts are 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlushJobInfo {
    pub cf_name: String,
    /// The table written (`NNNNNN.sst`; none is when the memtable held
    /// nothing that survives, and `file_size` is 0).
    pub file_path: PathBuf,
    pub file_number: u64,
    pub file_size: u64,
    /// Bytes written to blob files by the flush.
    pub blob_bytes: u64,
    /// Entries of the memtable flushed.
    pub num_entries: u64,
    pub smallest_seqno: SequenceNumber,
    pub largest_seqno: SequenceNumber,
}

/// A compaction (RocksDB's `CompactionJobInfo`).
#[derive(Debug, Clone)]
pub struct CompactionJobInfo {
    pub cf_name: String,
    /// Why it was picked, as RocksDB's `CompactionReason` names it.
    pub reason: String,
    pub base_input_level: usize,
    pub output_level: usize,
    pub input_files: Vec<PathBuf>,
    /// Empty at `on_compaction_begin`.
    pub output_files: Vec<PathBuf>,
    /// `None` for a compaction that succeeded (and at begin).
    pub status: Option<Error>,
    /// Zero at `on_compaction_begin`.
    pub stats: CompactionJobStats,
}

/// What a compaction did (RocksDB's `CompactionJobStats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompactionJobStats {
    pub elapsed_micros: u64,
    pub cpu_micros: u64,
    pub num_input_files: u64,
    pub num_output_files: u64,
    /// Point entries read.
    pub num_input_records: u64,
    /// Of those, the ones dropped (overwritten, deleted, range-deleted).
    pub num_dropped_records: u64,
    pub total_input_bytes: u64,
    /// Table and blob bytes written.
    pub total_output_bytes: u64,
    /// The inputs were moved to the output level, not rewritten.
    pub is_trivial_move: bool,
}

/// Why a table was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFileCreationReason {
    Flush,
    Compaction,
}

/// A table written and installed (RocksDB's `TableFileCreationInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableFileCreationInfo {
    pub cf_name: String,
    pub file_path: PathBuf,
    pub file_size: u64,
    pub reason: TableFileCreationReason,
}

/// An obsolete table deleted (RocksDB's `TableFileDeletionInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableFileDeletionInfo {
    pub db_name: PathBuf,
    pub file_path: PathBuf,
}

/// One ingested file (RocksDB's `ExternalFileIngestionInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalFileIngestionInfo {
    pub cf_name: String,
    /// The file as the caller named it.
    pub external_file_path: PathBuf,
    /// The table it became in the database.
    pub internal_file_path: PathBuf,
    /// The sequence number its entries read at (0 for none).
    pub global_seqno: SequenceNumber,
    pub level: usize,
}

/// A family's write stall condition (RocksDB's `WriteStallCondition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteStallCondition {
    Normal,
    Delayed,
    Stopped,
}

/// A change of a family's write stall condition (RocksDB's `WriteStallInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteStallInfo {
    pub cf_name: String,
    pub current: WriteStallCondition,
    pub previous: WriteStallCondition,
}
