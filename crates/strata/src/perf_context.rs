//! Per-thread counters of what this thread's operations did (RocksDB's
//! `PerfContext` and `PerfLevel`): block cache hits and block reads by
//! kind, bytes read, bloom filter answers, memtables searched, and the time
//! spent in each step of a get and a write.
//!
//! Off by default; [`set_perf_level`] turns counting (and timing) on for the
//! calling thread only, so one request can be traced without slowing the
//! others. The counters only grow until [`reset_perf_context`].
//!
//! ```
//! use strata::perf_context::{perf_context, reset_perf_context, set_perf_level, PerfLevel};
//! use strata::{Db, DbOptions};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let db = Db::open(dir.path(), DbOptions { create_if_missing: true, ..Default::default() })?;
//! db.put("k", "v")?;
//! set_perf_level(PerfLevel::EnableTime);
//! reset_perf_context();
//! db.get("k")?;
//! let context = perf_context();
//! assert_eq!(context.get_from_memtable_count, 1);
//! assert_eq!(context.get_read_bytes, 1);
//! set_perf_level(PerfLevel::Disable);
//! # Ok(())
//! # }
//! ```

use std::cell::{Cell, RefCell};
use std::fmt;
use std::time::Instant;

/// How much the calling thread counts (RocksDB's `PerfLevel`, with its
/// numbers). Strata takes no mutex timings, so the three timing levels
/// count the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PerfLevel {
    /// Nothing (the default).
    Disable = 1,
    /// Counts, no times.
    EnableCount = 2,
    /// Counts and times.
    EnableTimeExceptForMutex = 3,
    /// Counts and times.
    EnableTimeAndCpuTimeExceptForMutex = 4,
    /// Counts and times.
    EnableTime = 5,
}

impl PerfLevel {
    /// The level RocksDB numbers `n` (1 to 5; db_bench's `--perf_level`).
    pub fn from_number(n: u32) -> Option<PerfLevel> {
        Some(match n {
            1 => PerfLevel::Disable,
            2 => PerfLevel::EnableCount,
            3 => PerfLevel::EnableTimeExceptForMutex,
            4 => PerfLevel::EnableTimeAndCpuTimeExceptForMutex,
            5 => PerfLevel::EnableTime,
            _ => return None,
        })
    }
}

/// Declares the counters once: the struct, its sum, and its text.
macro_rules! perf_counters {
    ($($(#[doc = $doc:literal])* $name:ident,)*) => {
        /// One thread's counters (RocksDB's `PerfContext`, by its field
        /// names); times are in nanoseconds.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct PerfContext {
            $($(#[doc = $doc])* pub $name: u64,)*
        }

        impl PerfContext {
            /// Adds `other`'s counters (another thread's) to these.
            pub fn merge(&mut self, other: &PerfContext) {
                $(self.$name += other.$name;)*
            }

            fn fields(&self) -> impl Iterator<Item = (&'static str, u64)> {
                [$((stringify!($name), self.$name),)*].into_iter()
            }
        }
    };
}

perf_counters! {
    /// Blocks of any kind found in the block cache.
    block_cache_hit_count,
    /// Blocks read from a file (the cache missed, or there is none).
    block_read_count,
    /// Bytes of those blocks, trailers included.
    block_read_byte,
    /// Time reading, checking and decompressing them.
    block_read_time,
    /// Index blocks found in the block cache.
    block_cache_index_hit_count,
    /// Index blocks read on a cache miss.
    index_block_read_count,
    /// Filter blocks found in the block cache.
    block_cache_filter_hit_count,
    /// Filter blocks read on a cache miss.
    filter_block_read_count,
    /// Time taking a get's sequence number.
    get_snapshot_time,
    /// Time searching the memtables.
    get_from_memtable_time,
    /// Memtables searched.
    get_from_memtable_count,
    /// Time searching the tables.
    get_from_output_files_time,
    /// Time applying merge operands after the search.
    get_post_process_time,
    /// Bytes of the values gets returned.
    get_read_bytes,
    /// Bytes of the values batched reads returned.
    multiget_read_bytes,
    /// Table filters that proved a key absent.
    bloom_sst_miss_count,
    /// Table filters that let a key through.
    bloom_sst_hit_count,
    /// Time writing the WAL (as the leader of a commit group).
    write_wal_time,
    /// Time inserting into the memtable.
    write_memtable_time,
}

impl fmt::Display for PerfContext {
    /// RocksDB's `PerfContext::ToString`: `name = value, ` for every counter.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, value) in self.fields() {
            write!(f, "{name} = {value}, ")?;
        }
        Ok(())
    }
}

thread_local! {
    static LEVEL: Cell<PerfLevel> = const { Cell::new(PerfLevel::Disable) };
    static CONTEXT: RefCell<PerfContext> = RefCell::new(PerfContext::default());
}

/// Sets the calling thread's level.
pub fn set_perf_level(level: PerfLevel) {
    LEVEL.with(|l| l.set(level));
}

/// The calling thread's level.
pub fn perf_level() -> PerfLevel {
    LEVEL.with(Cell::get)
}

/// A copy of the calling thread's counters.
pub fn perf_context() -> PerfContext {
    CONTEXT.with(|c| *c.borrow())
}

/// Sets the calling thread's counters to zero.
pub fn reset_perf_context() {
    CONTEXT.with(|c| *c.borrow_mut() = PerfContext::default());
}

/// Counts with `f` when the thread counts.
#[inline]
pub(crate) fn count(f: impl FnOnce(&mut PerfContext)) {
    if perf_level() >= PerfLevel::EnableCount {
        CONTEXT.with(|c| f(&mut c.borrow_mut()));
    }
}

/// Times a step when the thread times: started by [`PerfTimer::start`],
/// added by [`stop`](PerfTimer::stop).
#[derive(Debug)]
pub(crate) struct PerfTimer(Option<Instant>);

impl PerfTimer {
    #[inline]
    pub(crate) fn start() -> PerfTimer {
        PerfTimer((perf_level() >= PerfLevel::EnableTimeExceptForMutex).then(Instant::now))
    }

    /// Adds the nanoseconds since the start to the counter `field` picks.
    #[inline]
    pub(crate) fn stop(self, field: impl FnOnce(&mut PerfContext) -> &mut u64) {
        if let Some(start) = self.0 {
            let nanos = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
            CONTEXT.with(|c| *field(&mut c.borrow_mut()) += nanos);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting_follows_the_threads_level_and_prints_rocksdbs_names() {
        set_perf_level(PerfLevel::Disable);
        reset_perf_context();
        count(|c| c.block_read_count += 1);
        assert_eq!(perf_context().block_read_count, 0, "counted while disabled");
        set_perf_level(PerfLevel::EnableCount);
        count(|c| c.block_read_count += 1);
        PerfTimer::start().stop(|c| &mut c.block_read_time);
        assert_eq!(perf_context().block_read_count, 1);
        assert_eq!(perf_context().block_read_time, 0, "timed at a count level");
        set_perf_level(PerfLevel::EnableTime);
        let timer = PerfTimer::start();
        std::thread::sleep(std::time::Duration::from_millis(1));
        timer.stop(|c| &mut c.block_read_time);
        assert!(perf_context().block_read_time >= 1_000_000);
        // Another thread counts on its own.
        std::thread::spawn(|| {
            assert_eq!(perf_level(), PerfLevel::Disable);
            assert_eq!(perf_context(), PerfContext::default());
        })
        .join()
        .unwrap();
        let mut sum = perf_context();
        sum.merge(&perf_context());
        assert_eq!(sum.block_read_count, 2);
        let text = perf_context().to_string();
        assert!(
            text.starts_with("block_cache_hit_count = 0, block_read_count = 1, "),
            "{text}"
        );
        assert_eq!(PerfLevel::from_number(2), Some(PerfLevel::EnableCount));
        assert_eq!(PerfLevel::from_number(0), None);
        set_perf_level(PerfLevel::Disable);
    }
}
