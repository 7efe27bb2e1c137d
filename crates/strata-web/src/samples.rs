//! The history the plots draw: one point a second, ten minutes of them.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use strata::{Db, Ticker, WeakDb};

/// Points kept: ten minutes at one a second.
const KEEP: usize = 600;

/// One second of the database.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sample {
    /// Seconds since the view started.
    pub at: f64,
    /// Sequence numbers used per second: keys written.
    pub writes_per_sec: f64,
    /// Table bytes flushed and compacted per byte written, so far.
    pub write_amp: f64,
    /// 1 while writes are stopped, 0.5 while delayed, 0 otherwise.
    pub stall: f64,
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

/// Samples `db` into `history` every second until `stop`.
pub(crate) fn run(weak: &WeakDb, history: &Mutex<History>, stop: &AtomicBool) {
    let start = Instant::now();
    let Some(first) = weak.upgrade().map(|db| read(&db)) else {
        return;
    };
    let mut last = (Instant::now(), first);
    while !stop.load(Ordering::Acquire) {
        // Short naps, so a stop is seen within a tenth of a second.
        std::thread::sleep(Duration::from_millis(100));
        if last.0.elapsed() < crate::SAMPLE_EVERY {
            continue;
        }
        // A handle only for the sample: the view must not keep the
        // database open.
        let Some(db) = weak.upgrade() else {
            return;
        };
        let db = &db;
        let now = (Instant::now(), read(db));
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
        let sample = Sample {
            at: now.0.duration_since(start).as_secs_f64(),
            writes_per_sec: b.sequence.saturating_sub(a.sequence) as f64 / secs,
            write_amp: if b.written > 0 {
                b.table_bytes as f64 / b.written as f64
            } else {
                0.0
            },
            stall,
            cache_hit_rate: (lookups > 0)
                .then(|| b.cache_hits.saturating_sub(a.cache_hits) as f64 / lookups as f64),
        };
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
