//! Cumulative counters of the write path and flushes, read by properties
//! (`strata.dbstats`, `strata.bytes-written`, ...) and by strata-bench to
//! report write amplification.
//!
//! Relaxed atomics: each counter is exact on its own, but a reader may see one
//! counter updated before another.

use std::sync::atomic::{AtomicU64, Ordering};

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
    /// Bytes appended to WALs (records and their headers), and WAL fsyncs.
    pub wal_bytes: AtomicU64,
    pub wal_syncs: AtomicU64,
    /// Table bytes written by flushes, and the flushes that wrote them.
    pub flush_bytes: AtomicU64,
    pub flushes: AtomicU64,
}

impl DbStats {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }

    /// A report in the shape of RocksDB's `rocksdb.dbstats` cumulative lines.
    pub fn report(&self) -> String {
        let writes = Self::get(&self.writes);
        let groups = Self::get(&self.write_groups).max(1);
        let syncs = Self::get(&self.wal_syncs);
        let ingest = Self::get(&self.bytes_written);
        let flushed = Self::get(&self.flush_bytes);
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        format!(
            "Cumulative writes: {writes} writes, {} keys, {} commit groups, {:.1} writes per commit group, ingest: {:.3} GB\n\
             Cumulative WAL: {} writes, {syncs} syncs, {:.1} writes per sync, written: {:.3} GB\n\
             Cumulative flush: {} flushes, written: {:.3} GB, {:.2} flushed bytes per ingested byte\n\
             Parallel memtable inserts: {} batches\n",
            Self::get(&self.keys_written),
            Self::get(&self.write_groups),
            writes as f64 / groups as f64,
            gib(ingest),
            Self::get(&self.write_groups),
            Self::get(&self.write_groups) as f64 / syncs.max(1) as f64,
            gib(Self::get(&self.wal_bytes)),
            Self::get(&self.flushes),
            gib(flushed),
            flushed as f64 / ingest.max(1) as f64,
            Self::get(&self.parallel_inserts),
        )
    }
}
