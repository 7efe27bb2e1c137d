//! A column family's cumulative counters: work into each level by flushes and
//! compactions, and write stall conditions, for its `** Compaction Stats
//! [name] **` section of `strata.stats`.
//!
//! Relaxed atomics: each counter is exact on its own, but a reader may see one
//! counter updated before another.

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

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
    /// Of `bytes_written`, the bytes written to blob files (`Wblob`).
    pub blob_bytes_written: u64,
    /// Bytes read from blob files by compactions (`Rblob`): values read back
    /// for relocation, filters and merges.
    pub blob_bytes_read: u64,
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
            blob_bytes_written: self.blob_bytes_written + other.blob_bytes_written,
            blob_bytes_read: self.blob_bytes_read + other.blob_bytes_read,
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
            blob_bytes_written: self
                .blob_bytes_written
                .saturating_sub(earlier.blob_bytes_written),
            blob_bytes_read: self.blob_bytes_read.saturating_sub(earlier.blob_bytes_read),
        }
    }
}

/// RocksDB's write stall counters, in the order its `Stalls(count)` line
/// prints them. Like RocksDB, a condition is counted each time a new version
/// is installed while it holds (the memtable stop: each time a writer finds
/// every memtable full). The `with_compaction` counters are the subset seen
/// while an L0 compaction was running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StallCounter {
    L0Slowdown,
    L0SlowdownWithCompaction,
    L0Stop,
    L0StopWithCompaction,
    PendingBytesStop,
    PendingBytesSlowdown,
    MemtableStop,
    MemtableSlowdown,
}

pub(crate) const STALL_COUNTERS: usize = 8;

/// One family's counters.
#[derive(Debug, Default)]
pub(crate) struct CfStats {
    /// Table bytes written by this family's flushes, and the flushes.
    pub flush_bytes: AtomicU64,
    pub flushes: AtomicU64,
    /// Indexed by [`StallCounter`].
    pub stall_counts: [AtomicU64; STALL_COUNTERS],
    /// Per output level.
    pub levels: Mutex<[LevelStats; NUM_LEVELS]>,
}

impl CfStats {
    pub fn count_stall(&self, counter: StallCounter) {
        self.stall_counts[counter as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub fn stall_counts(&self) -> [u64; STALL_COUNTERS] {
        std::array::from_fn(|i| self.stall_counts[i].load(Ordering::Relaxed))
    }

    pub fn flushed_bytes(&self) -> u64 {
        self.flush_bytes.load(Ordering::Relaxed)
    }

    /// Counts a flush that wrote `bytes`, `blob_bytes` of them to blob files.
    pub fn record_flush(&self, bytes: u64, blob_bytes: u64, micros: u64, cpu_micros: u64) {
        self.flush_bytes.fetch_add(bytes, Ordering::Relaxed);
        self.flushes.fetch_add(1, Ordering::Relaxed);
        let mut levels = self.levels.lock();
        levels[0].bytes_written += bytes;
        levels[0].blob_bytes_written += blob_bytes;
        levels[0].micros += micros;
        levels[0].cpu_micros += cpu_micros;
        levels[0].jobs += 1;
    }

    pub fn record_compaction(&self, task: &CompactionTask, result: &JobResult) {
        let mut levels = self.levels.lock();
        let Some(level) = levels.get_mut(task.output_level) else {
            return;
        };
        level.bytes_read_start += result.bytes_read_start;
        level.bytes_read_output += result.bytes_read_output;
        level.bytes_written += result.bytes_written;
        level.blob_bytes_written += result.blob_bytes_written;
        level.blob_bytes_read += result.blob_bytes_read;
        level.bytes_moved += result.bytes_moved;
        level.micros += result.micros;
        level.cpu_micros += result.cpu_micros;
        level.jobs += 1;
        level.keys_in += result.counts.keys_in;
        level.keys_dropped += result.counts.keys_dropped;
    }
}
