//! The benchmarks, with db_bench's semantics: what each one writes or reads, how
//! many operations it counts, and when the DB is destroyed first.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Instant;

use rand::rngs::SmallRng;
use strata::cache::Cache;
use strata::{Db, DbOptions, ReadOptions, Statistics, WriteOptions};

use crate::flags::Flags;
use crate::generator::{make_key, random_key_number, thread_rng, ValueCursor, ValuePool};
use crate::report::{self, Stats, Usage, WriteCounters};

/// One benchmark, by db_bench name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bench {
    FillSeq,
    FillRandom,
    Overwrite,
    ReadRandom,
    ReadHot,
    ReadSeq,
    ReadReverse,
    SeekRandom,
}

impl Bench {
    fn from_name(name: &str) -> Option<Bench> {
        Some(match name {
            "fillseq" => Bench::FillSeq,
            "fillrandom" => Bench::FillRandom,
            "overwrite" => Bench::Overwrite,
            "readrandom" => Bench::ReadRandom,
            "readhot" => Bench::ReadHot,
            "readseq" => Bench::ReadSeq,
            "readreverse" => Bench::ReadReverse,
            "seekrandom" => Bench::SeekRandom,
            _ => return None,
        })
    }

    /// db_bench's `fresh_db`: the fills start from an empty database.
    fn fresh_db(self) -> bool {
        matches!(self, Bench::FillSeq | Bench::FillRandom)
    }

    /// Whether the result line ends with `(found of reads found)`.
    fn reports_found(self) -> bool {
        matches!(self, Bench::ReadRandom | Bench::ReadHot | Bench::SeekRandom)
    }
}

/// What every benchmark thread shares.
struct Ctx<'a> {
    flags: &'a Flags,
    db: &'a Db,
    pool: &'a ValuePool,
    write_options: WriteOptions,
    read_options: ReadOptions,
}

/// The state of one thread while it runs.
struct Worker<'a> {
    ctx: &'a Ctx<'a>,
    rng: SmallRng,
    values: ValueCursor,
    key: Vec<u8>,
    stats: Stats,
}

/// Runs the benchmarks `flags` names, printing db_bench's header and one result
/// block per benchmark. Returns the first error, after closing the database.
pub fn run(flags: &Flags) -> Result<(), String> {
    // Held until the end so the temporary directory outlives the database.
    let temp;
    let dir: PathBuf = match &flags.db {
        Some(path) => path.clone(),
        None => {
            temp = tempfile::Builder::new()
                .prefix("strata-bench-")
                .tempdir()
                .map_err(|e| format!("creating a temporary directory: {e}"))?;
            temp.path().to_path_buf()
        }
    };
    println!("{}", report::header(flags, &dir));
    if !flags.use_existing_db {
        destroy_db(&dir)?;
    }
    // One Statistics for every database the run opens, printed once at the end.
    let shared = Shared {
        statistics: flags.statistics.then(|| Arc::new(Statistics::new())),
        block_cache: flags.block_cache().map_err(|e| e.to_string())?,
    };
    let mut db = Some(open(flags, &dir, &shared)?);
    let result = run_all(flags, &dir, &mut db, &shared);
    if let Some(stats) = &shared.statistics {
        print!("STATISTICS:\n{}", stats.report());
    }
    let closed = match db {
        Some(db) => db
            .close()
            .map_err(|e| format!("closing {}: {e}", dir.display())),
        None => Ok(()),
    };
    result.and(closed)
}

/// What every database a run opens shares: statistics and the block cache.
struct Shared {
    statistics: Option<Arc<Statistics>>,
    block_cache: Option<Arc<dyn Cache>>,
}

fn open(flags: &Flags, dir: &Path, shared: &Shared) -> Result<Db, String> {
    let options = DbOptions {
        statistics: shared.statistics.clone(),
        block_cache: shared.block_cache.clone(),
        ..flags.db_options()
    };
    Db::open(dir, options).map_err(|e| format!("opening {}: {e}", dir.display()))
}

/// db_bench's benchmarks that run once on the open database rather than
/// counting operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Utility {
    Compact,
    Flush,
    WaitForCompaction,
    Stats,
    LevelStats,
    SsTables,
}

impl Utility {
    fn from_name(name: &str) -> Option<Utility> {
        Some(match name {
            "compact" => Utility::Compact,
            "flush" => Utility::Flush,
            "waitforcompaction" => Utility::WaitForCompaction,
            "stats" => Utility::Stats,
            "levelstats" => Utility::LevelStats,
            "sstables" => Utility::SsTables,
            _ => return None,
        })
    }

    /// Runs it, printing what db_bench prints for it.
    fn run(self, name: &str, db: &Db, dir: &Path) -> Result<(), String> {
        let property = |p: &str| {
            db.property(p)
                .ok_or_else(|| format!("{name}: no property {p}"))
        };
        match self {
            Utility::Compact | Utility::Flush => {
                let start = Instant::now();
                let done = if self == Utility::Compact {
                    db.compact_range(None, None)
                } else {
                    db.flush()
                };
                done.map_err(|e| format!("{name}: {e}"))?;
                let secs = start.elapsed().as_secs_f64();
                println!(
                    "{name:<12} : {:11.3} micros/op {} ops/sec {secs:.3} seconds 1 operations;",
                    secs * 1e6,
                    (1.0 / secs.max(1e-9)) as u64
                );
            }
            Utility::WaitForCompaction => {
                println!("waitforcompaction({}): started", dir.display());
                db.wait_for_compaction()
                    .map_err(|e| format!("{name}: {e}"))?;
                println!("waitforcompaction({}): finished", dir.display());
            }
            // db_bench's PrintStats: a blank line, the property, a newline.
            Utility::Stats => println!("\n{}", property("strata.stats")?),
            Utility::LevelStats => println!("\n{}", property("strata.levelstats")?),
            Utility::SsTables => println!("\n{}", property("strata.sstables")?),
        }
        Ok(())
    }
}

fn run_all(
    flags: &Flags,
    dir: &Path,
    db_slot: &mut Option<Db>,
    shared: &Shared,
) -> Result<(), String> {
    let pool = ValuePool::new(flags.compression_ratio, flags.value_size);
    // db_bench seeds each thread with `seed + threads created so far`, counting
    // across benchmarks, so readrandom does not replay fillrandom's keys.
    let mut threads_created = 0u64;
    for name in &flags.benchmarks {
        if let Some(utility) = Utility::from_name(name) {
            let db = db_slot
                .as_ref()
                .ok_or_else(|| format!("{name}: the database is not open"))?;
            utility.run(name, db, dir)?;
            continue;
        }
        let bench = Bench::from_name(name).ok_or_else(|| format!("unknown benchmark {name:?}"))?;
        if bench.fresh_db() {
            if flags.use_existing_db {
                println!("{name:<12} : skipped (--use_existing_db is true)");
                continue;
            }
            if let Some(db) = db_slot.take() {
                db.close()
                    .map_err(|e| format!("{name}: closing the old DB: {e}"))?;
            }
            destroy_db(dir)?;
            *db_slot = Some(open(flags, dir, shared)?);
        }
        let db = db_slot
            .as_ref()
            .ok_or_else(|| format!("{name}: the database is not open"))?;
        let ctx = Ctx {
            flags,
            db,
            pool: &pool,
            write_options: WriteOptions {
                sync: flags.sync,
                disable_wal: flags.disable_wal,
            },
            read_options: ReadOptions::default(),
        };
        let before = Usage::now()?;
        let writes_before = WriteCounters::of(db);
        let stats =
            run_threads(&ctx, bench, threads_created).map_err(|e| format!("{name}: {e}"))?;
        let after = Usage::now()?;
        let writes = WriteCounters::of(db).since(&writes_before);
        threads_created += flags.threads as u64;
        println!(
            "{}",
            report::result_line(name, &stats, bench.reports_found())
        );
        println!(
            "{}",
            report::resource_lines(&before, &after, stats.done, dir)
        );
        if writes.ingest > 0 {
            println!("{}", writes.line());
        }
        if let Some(hist) = &stats.hist {
            println!("{}", report::histogram_lines(hist));
        }
    }
    Ok(())
}

/// Runs `bench` on `--threads` threads that start together and merges their
/// stats.
fn run_threads(ctx: &Ctx<'_>, bench: Bench, threads_before: u64) -> Result<Stats, String> {
    let n = ctx.flags.threads;
    let barrier = Barrier::new(n);
    let results: Vec<Result<Stats, String>> = thread::scope(|s| {
        let handles: Vec<_> = (0..n as u64)
            .map(|i| {
                let seed = ctx.flags.seed.wrapping_add(threads_before + i + 1);
                let barrier = &barrier;
                s.spawn(move || thread_body(ctx, bench, seed, barrier))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a benchmark thread panicked".to_string()))
            })
            .collect()
    });
    let mut merged: Option<Stats> = None;
    for result in results {
        let stats = result?;
        match merged.as_mut() {
            Some(m) => m.merge(stats)?,
            None => merged = Some(stats),
        }
    }
    merged.ok_or_else(|| "no thread ran".to_string())
}

fn thread_body(ctx: &Ctx<'_>, bench: Bench, seed: u64, barrier: &Barrier) -> Result<Stats, String> {
    // Wait at the barrier whatever happens, or the other threads would hang.
    let stats = Stats::new(ctx.flags.histogram);
    barrier.wait();
    let mut w = Worker {
        ctx,
        rng: thread_rng(seed),
        values: ctx.pool.cursor(),
        key: vec![0; ctx.flags.key_size],
        stats: stats?,
    };
    w.stats.start = Instant::now();
    let result = match bench {
        Bench::FillSeq => w.write(false),
        Bench::FillRandom | Bench::Overwrite => w.write(true),
        Bench::ReadRandom => w.read_random(ctx.flags.num),
        // LevelDB's readhot: random reads from the first 1% of the keys.
        Bench::ReadHot => w.read_random(ctx.flags.num.div_ceil(100)),
        Bench::ReadSeq => w.scan(true),
        Bench::ReadReverse => w.scan(false),
        Bench::SeekRandom => w.seek_random(),
    };
    w.stats.finish = Instant::now();
    w.stats.thread_seconds = w.stats.finish.duration_since(w.stats.start).as_secs_f64();
    result.map_err(|e| e.to_string())?;
    Ok(w.stats)
}

impl Worker<'_> {
    /// The clock is read per operation only when latencies are recorded.
    #[inline]
    fn op_start(&self) -> Option<Instant> {
        self.stats.hist.is_some().then(Instant::now)
    }

    /// `--num` puts, of keys `0..num` in order or of random keys in `0..num`
    /// (so a random fill leaves about 63% of the range present, as db_bench).
    fn write(&mut self, random: bool) -> Result<(), Box<dyn std::error::Error>> {
        let flags = self.ctx.flags;
        for i in 0..flags.num {
            let t = self.op_start();
            let n = if random {
                random_key_number(&mut self.rng, flags.num)
            } else {
                i
            };
            make_key(n, &mut self.key);
            let value = self.values.next_value(flags.value_size);
            self.ctx
                .db
                .put_opt(&self.ctx.write_options, &self.key, value)?;
            self.stats.bytes += (self.key.len() + value.len()) as u64;
            self.stats.finished_op(t)?;
        }
        Ok(())
    }

    /// `--reads` point lookups of random keys in `0..num`; bytes count only
    /// what was found.
    /// `--reads` random point reads of keys `0..range`.
    fn read_random(&mut self, range: u64) -> Result<(), Box<dyn std::error::Error>> {
        let flags = self.ctx.flags;
        for _ in 0..flags.reads {
            let t = self.op_start();
            make_key(random_key_number(&mut self.rng, range), &mut self.key);
            self.stats.reads += 1;
            if let Some(value) = self.ctx.db.get_opt(&self.ctx.read_options, &self.key)? {
                self.stats.found += 1;
                self.stats.bytes += (self.key.len() + value.len()) as u64;
            }
            self.stats.finished_op(t)?;
        }
        Ok(())
    }

    /// readseq / readreverse: one iterator over the whole DB, one operation per
    /// entry, stopping after `--reads` entries as db_bench does (by default
    /// reads = num, so a full scan of a DB of num keys).
    fn scan(&mut self, forward: bool) -> Result<(), Box<dyn std::error::Error>> {
        let mut it = self.ctx.db.iter(&self.ctx.read_options);
        if forward {
            it.seek_to_first();
        } else {
            it.seek_to_last();
        }
        let mut entries = 0u64;
        while entries < self.ctx.flags.reads && it.valid() {
            let t = self.op_start();
            self.stats.bytes += (it.key().len() + it.value().len()) as u64;
            if forward {
                it.next();
            } else {
                it.prev();
            }
            entries += 1;
            self.stats.finished_op(t)?;
        }
        it.status()?;
        Ok(())
    }

    /// `--reads` seeks to random keys in `0..num` with one iterator, reading
    /// the entry the seek lands on; found counts exact hits. db_bench reads no
    /// entry with its default `--seek_nexts=0` (and so prints no MB/s); reading
    /// one makes the figure comparable with a point lookup.
    fn seek_random(&mut self) -> Result<(), Box<dyn std::error::Error>> {
        let flags = self.ctx.flags;
        let mut it = self.ctx.db.iter(&self.ctx.read_options);
        for _ in 0..flags.reads {
            let t = self.op_start();
            make_key(random_key_number(&mut self.rng, flags.num), &mut self.key);
            it.seek(&self.key);
            self.stats.reads += 1;
            if it.valid() {
                if it.key() == self.key.as_slice() {
                    self.stats.found += 1;
                }
                self.stats.bytes += (it.key().len() + it.value().len()) as u64;
            }
            self.stats.finished_op(t)?;
        }
        it.status()?;
        Ok(())
    }
}

/// db_bench's `DestroyDB`: removes the engine's own files from `dir` (named as
/// [`strata::filename::parse_file_name`] recognizes) and nothing else, so a
/// mistyped `--db` cannot wipe unrelated files. A missing directory is fine.
fn destroy_db(dir: &Path) -> Result<(), String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("listing {}: {e}", dir.display())),
    };
    for entry in entries {
        let entry = entry.map_err(|e| format!("listing {}: {e}", dir.display()))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if strata::filename::parse_file_name(name).is_none() {
            continue;
        }
        match std::fs::remove_file(entry.path()) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("removing {}: {e}", entry.path().display())),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_name_has_a_benchmark() {
        for name in crate::flags::KNOWN_BENCHMARKS {
            let known = Bench::from_name(name).is_some() || Utility::from_name(name).is_some();
            assert!(known, "{name}");
        }
        assert!(Bench::FillSeq.fresh_db() && !Bench::Overwrite.fresh_db());
    }

    #[test]
    fn destroy_removes_only_engine_files() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "CURRENT",
            "MANIFEST-000001",
            "000007.sst",
            "000008.log",
            "LOG",
        ] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        std::fs::write(dir.path().join("notes.txt"), b"keep").unwrap();
        destroy_db(dir.path()).unwrap();
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["notes.txt"]);
        destroy_db(&dir.path().join("missing")).unwrap();
    }
}
