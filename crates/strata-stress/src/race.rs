//! Race mode: reads that race flushes and compactions, on the real file
//! system, in one process. Each cycle opens a fresh database with tiny
//! buffers, files and blocks. One writer bumps `k` and `k2` together in one
//! batch (1, 2, 3, ...) and publishes each acknowledged number; one thread
//! flushes and compacts everything nonstop; readers (more than the cores)
//! take snapshots and read both keys at the snapshot, with `multi_get` and
//! at the latest state, and iterate. Every read must see a whole batch, no
//! older than what was acknowledged before the read began; a snapshot's
//! answers never change. Any miss, split or older value is a violation.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use strata::{CompactionOptions, Db, DbOptions, ReadOptions, TableOptions, WriteBatch};

use crate::report::Outcome;
use crate::RunLimits;

/// How long one cycle (one database) races when the run is bounded by time.
const CYCLE: Duration = Duration::from_secs(20);

/// Writes per cycle when the run is bounded by a cycle count.
const WRITES_PER_CYCLE: u64 = 20_000;

pub fn run(limits: &RunLimits) -> Outcome {
    let mut outcome = Outcome::default();
    let mut rng = SmallRng::seed_from_u64(limits.seed);
    let start = Instant::now();
    while !limits.done(outcome.cycles, start) {
        let dir = match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(e) => {
                eprintln!("strata-stress: race: no temporary directory: {e}");
                outcome.violations += 1;
                return outcome;
            }
        };
        let readers = limits.threads.max(2) * 2;
        let bounded = limits.cycles.map(|_| WRITES_PER_CYCLE);
        let until = start + limits.duration;
        let cycle_end = (Instant::now() + CYCLE).min(until);
        let (ops, violations) = cycle(dir.path(), &mut rng, readers, bounded, cycle_end);
        if violations > 0 {
            eprintln!(
                "  reproduce: strata-stress --mode=race --seed={} --threads={} (cycle {})",
                limits.seed, limits.threads, outcome.cycles
            );
        }
        outcome.cycles += 1;
        outcome.ops += ops;
        outcome.violations += violations;
    }
    outcome
}

/// One database's race; returns (operations, violations).
fn cycle(
    dir: &Path,
    rng: &mut SmallRng,
    readers: usize,
    writes: Option<u64>,
    end: Instant,
) -> (u64, u64) {
    let options = DbOptions {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        table: TableOptions {
            block_size: 256,
            ..TableOptions::default()
        },
        compaction: CompactionOptions {
            target_file_size_base: 4 << 10,
            level0_file_num_compaction_trigger: rng.gen_range(1..=4),
            max_background_jobs: rng.gen_range(2..=4),
            ..CompactionOptions::default()
        },
        ..DbOptions::default()
    };
    let db = match Db::open(dir.join("db"), options) {
        Ok(db) => Arc::new(db),
        Err(e) => {
            eprintln!("strata-stress: VIOLATION: race: open failed: {e}");
            return (0, 1);
        }
    };
    let shared = Arc::new(Shared::default());
    if let Err(e) = write_pair(&db, 0) {
        eprintln!("strata-stress: VIOLATION: race: first write failed: {e}");
        return (0, 1);
    }
    let mut threads = Vec::new();
    {
        let (db, shared) = (db.clone(), shared.clone());
        threads.push(std::thread::spawn(move || churn(&db, &shared)));
    }
    for _ in 0..readers {
        let (db, shared) = (db.clone(), shared.clone());
        threads.push(std::thread::spawn(move || read_loop(&db, &shared)));
    }
    let mut n = 1u64;
    let more = |n: u64| match writes {
        Some(w) => n <= w || shared.reads.load(Ordering::Relaxed) < MIN_READS,
        None => Instant::now() < end,
    };
    while more(n) && shared.violations.load(Ordering::Relaxed) == 0 {
        if let Err(e) = write_pair(&db, n) {
            shared.violate(format!("write {n} failed: {e}"));
            break;
        }
        shared.acked.store(n, Ordering::SeqCst);
        n += 1;
    }
    shared.done.store(true, Ordering::Relaxed);
    for thread in threads {
        if thread.join().is_err() {
            shared.violate("a race thread panicked".into());
        }
    }
    let ops = n + shared.reads.load(Ordering::Relaxed);
    (ops, shared.violations.load(Ordering::Relaxed))
}

/// Reads the readers check per cycle, at the least, in a cycle-bounded run.
const MIN_READS: u64 = 200_000;

#[derive(Default)]
struct Shared {
    /// The last number whose batch was acknowledged.
    acked: AtomicU64,
    done: AtomicBool,
    reads: AtomicU64,
    violations: AtomicU64,
}

impl Shared {
    fn violate(&self, what: String) {
        eprintln!("strata-stress: VIOLATION: race: {what}");
        self.violations.fetch_add(1, Ordering::Relaxed);
        self.done.store(true, Ordering::Relaxed);
    }
}

fn write_pair(db: &Db, n: u64) -> strata::Result<()> {
    let mut batch = WriteBatch::new();
    let value = n.to_string();
    batch.put(b"k", value.as_bytes())?;
    batch.put(b"k2", value.as_bytes())?;
    db.write(&strata::WriteOptions::default(), batch)
}

/// Flushes and compacts everything until the cycle ends.
fn churn(db: &Db, shared: &Shared) {
    while !shared.done.load(Ordering::Relaxed) {
        if let Err(e) = db.flush().and_then(|()| db.compact_range(None, None)) {
            shared.violate(format!("flush or compaction failed: {e}"));
        }
    }
}

fn read_loop(db: &Db, shared: &Shared) {
    while !shared.done.load(Ordering::Relaxed) {
        if let Err(what) = check_once(db, shared) {
            shared.violate(what);
            return;
        }
        shared.reads.fetch_add(1, Ordering::Relaxed);
    }
}

/// One round of reads; the error says what was wrong.
fn check_once(db: &Db, shared: &Shared) -> Result<(), String> {
    let floor = shared.acked.load(Ordering::SeqCst);
    let snapshot = db.snapshot();
    let at = ReadOptions {
        snapshot: Some(snapshot.clone()),
        ..ReadOptions::default()
    };
    let k = number(db.get_opt(&at, b"k"), "k at the snapshot")?;
    let k2 = number(db.get_opt(&at, b"k2"), "k2 at the snapshot")?;
    if k != k2 {
        return Err(format!("the snapshot saw half a batch: k={k} k2={k2}"));
    }
    if k < floor {
        return Err(format!(
            "the snapshot read {k}, older than the acknowledged {floor}"
        ));
    }
    let latest = number(db.get(b"k"), "k at the latest state")?;
    if latest < k {
        return Err(format!(
            "the latest read {latest}, older than the snapshot's {k}"
        ));
    }
    let both = db.multi_get(&at, &[&b"k"[..], &b"k2"[..]]);
    for (name, result) in ["k", "k2"].iter().zip(both) {
        let again = number(result, name)?;
        if again != k {
            return Err(format!(
                "the snapshot changed: {name} read {k}, then {again}"
            ));
        }
    }
    let scanned: Vec<u64> = db
        .range_opt(&at, ..)
        .map(|entry| {
            let (_, value) = entry.map_err(|e| format!("scan failed: {e}"))?;
            parse(&value)
        })
        .collect::<Result<_, _>>()?;
    if scanned != [k, k] {
        return Err(format!("a scan at snapshot {k} saw {scanned:?}"));
    }
    Ok(())
}

fn number(read: strata::Result<Option<strata::Bytes>>, what: &str) -> Result<u64, String> {
    match read {
        Ok(Some(v)) => parse(&v),
        Ok(None) => Err(format!("{what} was not found")),
        Err(e) => Err(format!("reading {what} failed: {e}")),
    }
}

fn parse(value: &[u8]) -> Result<u64, String> {
    std::str::from_utf8(value)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("a value is not a number: {value:?}"))
}
