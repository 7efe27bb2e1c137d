//! Cumulative counters of the write path, flushes, compactions and write
//! stalls, read by properties (`strata.stats`, `strata.bytes-written`, ...)
//! and by strata-bench to report write amplification.
//!
//! Relaxed atomics: each counter is exact on its own, but a reader may see one
//! counter updated before another.

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use super::stats_report::ReportMarks;
use crate::compaction::job::JobResult;

#[derive(Debug, Default)]
pub(crate) struct DbStats {
    /// Write batches committed (one per `write` call), and their records.
    pub writes: AtomicU64,
    pub keys_written: AtomicU64,
    /// Batch bytes committed: the user's ingest (RocksDB's `rocksdb.bytes.written`).
    pub bytes_written: AtomicU64,
    /// Commit groups: each is one WAL write.
    pub write_groups: AtomicU64,
    /// Batches their own writer inserted into the memtable, beside the group.
    pub parallel_inserts: AtomicU64,
    /// Write batches that went through the WAL (RocksDB's `write_with_wal`:
    /// batches, not the groups that carried them), the bytes appended to WALs
    /// (records and their headers), and WAL fsyncs.
    pub wal_writes: AtomicU64,
    pub wal_bytes: AtomicU64,
    pub wal_syncs: AtomicU64,
    /// Table bytes written by flushes, and the flushes that wrote them.
    pub flush_bytes: AtomicU64,
    pub flushes: AtomicU64,
    /// Table bytes written by compactions.
    pub compaction_bytes: AtomicU64,
    /// Time writers spent delayed or stopped by write stalls.
    pub stall_micros: AtomicU64,
    /// What the previous reports saw (for their interval figures).
    pub marks: Mutex<ReportMarks>,
}

impl DbStats {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }

    /// Counts a flush of any family (the DB-wide totals).
    pub fn record_flush(&self, bytes: u64) {
        Self::add(&self.flush_bytes, bytes);
        Self::add(&self.flushes, 1);
    }

    /// Counts a compaction of any family (the DB-wide total).
    pub fn record_compaction(&self, result: &JobResult) {
        Self::add(&self.compaction_bytes, result.bytes_written);
    }
}
