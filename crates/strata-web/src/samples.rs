//! The history the plots draw: one point a second, ten minutes of them.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use strata::{Db, Ticker};

use crate::source::Source;

/// Points kept: ten minutes at one a second.
const KEEP: usize = 600;

/// One second of the database.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sample {
    /// Seconds since the view started.
    pub at: f64,
    /// Sequence numbers used per second: keys written.
    pub writes_per_sec: f64,
    /// Table bytes flushed and compacted per byte written, so far (not
    /// known to a read-only view).
    pub write_amp: Option<f64>,
    /// 1 while writes are stopped, 0.5 while delayed, 0 otherwise (not
    /// known to a read-only view).
    pub stall: Option<f64>,
    /// Block cache hits per lookup over the second (needs statistics).
    pub cache_hit_rate: Option<f64>,
}

/// The points, oldest first.
#[derive(Debug, Default)]
pub(crate) struct History {
    pub points: VecDeque<Sample>,
}

/// The counters a sample is computed from.
#[derive(Debug, Clone, Copy, Default)]
struct Reading {
    sequence: u64,
    written: u64,
    table_bytes: u64,
    cache_hits: u64,
    cache_misses: u64,
}

fn number(db: &Db, name: &str) -> u64 {
    db.property(name).and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn read(db: &Db) -> Reading {
    let ticker = |t| db.statistics().map_or(0, |s| s.ticker(t));
    Reading {
        sequence: number(db, "rocksdb.latest-sequence-number"),
        written: number(db, "strata.bytes-written"),
        table_bytes: number(db, "strata.flush-bytes-written")
            + number(db, "strata.compaction-bytes-written"),
        cache_hits: ticker(Ticker::BlockCacheHit),
        cache_misses: ticker(Ticker::BlockCacheMiss),
    }
}

/// Samples the database into `history` every second until `stop`. A
/// read-only view gives a point each time it was reopened (at most one a
/// second), its rates averaged over the time between the two opens; the
/// writing process's own counters (bytes written, stalls) are not seen
/// from it, so those are left out.
pub(crate) fn run(source: &Source, history: &Mutex<History>, stop: &AtomicBool) {
    let start = Instant::now();
    let Some(first) = source.for_sample() else {
        return;
    };
    let live = !source.is_read_only();
    let mut last = (first.as_of, read(&first.db));
    drop(first);
    while !stop.load(Ordering::Acquire) {
        // Short naps, so a stop is seen within a tenth of a second.
        std::thread::sleep(Duration::from_millis(100));
        if last.0.elapsed() < crate::SAMPLE_EVERY {
            continue;
        }
        // A handle only for the sample: the view must not keep the
        // database open.
        let Some(seen) = source.for_sample() else {
            return;
        };
        if seen.as_of.duration_since(last.0) < crate::SAMPLE_EVERY {
            // A read-only view not reopened since the last point: nothing new.
            continue;
        }
        let db = &seen.db;
        let now = (seen.as_of, read(db));
        let secs = now.0.duration_since(last.0).as_secs_f64().max(1e-3);
        let (a, b) = (last.1, now.1);
        let lookups = (b.cache_hits + b.cache_misses).saturating_sub(a.cache_hits + a.cache_misses);
        let stall = if number(db, "rocksdb.is-write-stopped") > 0 {
            1.0
        } else if number(db, "rocksdb.actual-delayed-write-rate") > 0 {
            0.5
        } else {
            0.0
        };
        let write_amp = if b.written > 0 {
            b.table_bytes as f64 / b.written as f64
        } else {
            0.0
        };
        let sample = Sample {
            at: now.0.saturating_duration_since(start).as_secs_f64(),
            writes_per_sec: b.sequence.saturating_sub(a.sequence) as f64 / secs,
            write_amp: live.then_some(write_amp),
            stall: live.then_some(stall),
            cache_hit_rate: (lookups > 0)
                .then(|| b.cache_hits.saturating_sub(a.cache_hits) as f64 / lookups as f64),
        };
        drop(seen);
        let mut h = history
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        h.points.push_back(sample);
        while h.points.len() > KEEP {
            h.points.pop_front();
        }
        drop(h);
        last = now;
    }
}
