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
use crate::compaction::CompactionTask;
use crate::version::NUM_LEVELS;

/// Work done into one level, by flushes (L0) or compactions (the output
/// level), as RocksDB's per-level compaction stats count it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LevelStats {
    /// Bytes read from the level above (RocksDB's `Rn`) and from this level
    /// (`Rnp1`).
    pub bytes_read_start: u64,
    pub bytes_read_output: u64,
    pub bytes_written: u64,
    /// Bytes moved into the level by trivial moves.
    pub bytes_moved: u64,
    pub micros: u64,
    pub cpu_micros: u64,
    pub jobs: u64,
    pub keys_in: u64,
    pub keys_dropped: u64,
}

impl LevelStats {
    /// The sum of two records.
    pub fn plus(&self, other: &LevelStats) -> LevelStats {
        LevelStats {
            bytes_read_start: self.bytes_read_start + other.bytes_read_start,
            bytes_read_output: self.bytes_read_output + other.bytes_read_output,
            bytes_written: self.bytes_written + other.bytes_written,
            bytes_moved: self.bytes_moved + other.bytes_moved,
            micros: self.micros + other.micros,
            cpu_micros: self.cpu_micros + other.cpu_micros,
            jobs: self.jobs + other.jobs,
            keys_in: self.keys_in + other.keys_in,
            keys_dropped: self.keys_dropped + other.keys_dropped,
        }
    }

    /// What was added since `earlier`.
    pub fn minus(&self, earlier: &LevelStats) -> LevelStats {
        LevelStats {
            bytes_read_start: self
                .bytes_read_start
                .saturating_sub(earlier.bytes_read_start),
            bytes_read_output: self
                .bytes_read_output
                .saturating_sub(earlier.bytes_read_output),
            bytes_written: self.bytes_written.saturating_sub(earlier.bytes_written),
            bytes_moved: self.bytes_moved.saturating_sub(earlier.bytes_moved),
            micros: self.micros.saturating_sub(earlier.micros),
            cpu_micros: self.cpu_micros.saturating_sub(earlier.cpu_micros),
            jobs: self.jobs.saturating_sub(earlier.jobs),
            keys_in: self.keys_in.saturating_sub(earlier.keys_in),
            keys_dropped: self.keys_dropped.saturating_sub(earlier.keys_dropped),
        }
    }
}

/// RocksDB's write stall counters, in the order its `Stalls(count)` line
/// prints them. Like RocksDB, a condition is counted each time a new version
/// is installed while it holds (the memtable stop: each time a writer finds
/// every memtable full). The `with_compaction` counters are the subset seen
/// while an L0 compaction was running. RocksDB's `memtable_slowdown` has no
/// counter: Strata never slows writes for memtables, it only stops them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StallCounter {
    L0Slowdown,
    L0SlowdownWithCompaction,
    L0Stop,
    L0StopWithCompaction,
    PendingBytesStop,
    PendingBytesSlowdown,
    MemtableStop,
}

pub(crate) const STALL_COUNTERS: usize = 7;

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
    /// Indexed by [`StallCounter`].
    pub stall_counts: [AtomicU64; STALL_COUNTERS],
    /// Per output level.
    pub levels: Mutex<[LevelStats; NUM_LEVELS]>,
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

    pub fn count_stall(&self, counter: StallCounter) {
        Self::add(&self.stall_counts[counter as usize], 1);
    }

    pub fn stall_counts(&self) -> [u64; STALL_COUNTERS] {
        std::array::from_fn(|i| Self::get(&self.stall_counts[i]))
    }

    pub fn record_flush(&self, bytes: u64, micros: u64, cpu_micros: u64) {
        Self::add(&self.flush_bytes, bytes);
        Self::add(&self.flushes, 1);
        let mut levels = self.levels.lock();
        levels[0].bytes_written += bytes;
        levels[0].micros += micros;
        levels[0].cpu_micros += cpu_micros;
        levels[0].jobs += 1;
    }

    pub fn record_compaction(&self, task: &CompactionTask, result: &JobResult) {
        Self::add(&self.compaction_bytes, result.bytes_written);
        let mut levels = self.levels.lock();
        let Some(level) = levels.get_mut(task.output_level) else {
            return;
        };
        level.bytes_read_start += result.bytes_read_start;
        level.bytes_read_output += result.bytes_read_output;
        level.bytes_written += result.bytes_written;
        level.bytes_moved += result.bytes_moved;
        level.micros += result.micros;
        level.cpu_micros += result.cpu_micros;
        level.jobs += 1;
        level.keys_in += result.counts.keys_in;
        level.keys_dropped += result.counts.keys_dropped;
    }
}
