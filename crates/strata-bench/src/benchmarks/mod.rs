//! The benchmarks, with db_bench's semantics: what each one writes or reads, how
//! many operations it counts, and when the DB is destroyed first.

mod ingest;
mod micro;
mod ops;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;

use crate::engine::{self, Engine, EngineKind, StrataEngine};
use crate::flags::Flags;
use crate::generator::{thread_rng, ValueCursor, ValuePool};
use crate::intervals::{self, Series};
use crate::json::{self, Record};
use crate::report::{self, Resources, Stats, Suffix, Usage};

use crate::ycsb::{InsertCounter, Workload};
use micro::Micro;
use ops::KeyOrder;

/// One benchmark, by db_bench name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bench {
    FillSeq,
    FillRandom,
    FillUniqueRandom,
    Overwrite,
    UpdateRandom,
    DeleteRandom,
    ReadRandom,
    ReadMissing,
    ReadHot,
    MultiReadRandom,
    ReadSeq,
    ReadReverse,
    SeekRandom,
    /// seekrandom reading `--seek_nexts` entries on (10 when it is 0), forward
    /// or backward, as RocksDB's benchmark scripts run fwdrange and revrange.
    Range {
        forward: bool,
    },
    ReadRandomWriteRandom,
    MergeRandom,
    ReadRandomMergeRandom,
    /// A read benchmark while one more thread writes.
    WhileWriting(Reader),
    /// YCSB's load phase: `--ycsb_record_count` records, split over threads.
    YcsbLoad,
    /// YCSB core workload `a`..`f`: `--ycsb_operation_count` requests per thread.
    Ycsb(char),
}

/// The readers of the `*whilewriting` benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reader {
    ReadRandom,
    SeekRandom,
    Range { forward: bool },
}

impl Bench {
    /// The operations all threads run, where the flags fix them (not for
    /// timed runs, scans of whatever the database holds, or the mixed
    /// benchmarks): the total a progress bar shows.
    fn expected_ops(self, flags: &Flags) -> Option<u64> {
        if flags.duration > 0 {
            return None;
        }
        let threads = flags.threads as u64;
        match self {
            Bench::FillSeq | Bench::FillRandom | Bench::FillUniqueRandom | Bench::Overwrite => {
                Some(flags.num * threads)
            }
            _ if self.reads_points() => Some(flags.reads * threads),
            Bench::YcsbLoad => Some(flags.ycsb_records()),
            Bench::Ycsb(_) => Some(flags.ycsb_operations() * threads),
            _ => None,
        }
    }

    fn from_name(name: &str) -> Option<Bench> {
        Some(match name {
            "fillseq" => Bench::FillSeq,
            "fillrandom" => Bench::FillRandom,
            "filluniquerandom" => Bench::FillUniqueRandom,
            "overwrite" => Bench::Overwrite,
            "updaterandom" => Bench::UpdateRandom,
            "deleterandom" => Bench::DeleteRandom,
            "readrandom" => Bench::ReadRandom,
            "readmissing" => Bench::ReadMissing,
            "readhot" => Bench::ReadHot,
            "multireadrandom" => Bench::MultiReadRandom,
            "readseq" => Bench::ReadSeq,
            "readreverse" => Bench::ReadReverse,
            "seekrandom" => Bench::SeekRandom,
            "fwdrange" => Bench::Range { forward: true },
            "revrange" => Bench::Range { forward: false },
            "readrandomwriterandom" => Bench::ReadRandomWriteRandom,
            "mergerandom" => Bench::MergeRandom,
            "readrandommergerandom" => Bench::ReadRandomMergeRandom,
            "readwhilewriting" => Bench::WhileWriting(Reader::ReadRandom),
            "seekrandomwhilewriting" => Bench::WhileWriting(Reader::SeekRandom),
            "fwdrangewhilewriting" => Bench::WhileWriting(Reader::Range { forward: true }),
            "revrangewhilewriting" => Bench::WhileWriting(Reader::Range { forward: false }),
            "ycsb_load" => Bench::YcsbLoad,
            _ => {
                let letter = name.strip_prefix("ycsb_")?.chars().next()?;
                Workload::core(letter)?;
                Bench::Ycsb(letter)
            }
        })
    }

    /// db_bench's `fresh_db`: the fills start from an empty database.
    fn fresh_db(self) -> bool {
        matches!(
            self,
            Bench::FillSeq | Bench::FillRandom | Bench::FillUniqueRandom | Bench::YcsbLoad
        )
    }

    /// Whether each thread runs `--reads` point reads or seeks, counting
    /// what they found.
    fn reads_points(self) -> bool {
        matches!(
            self,
            Bench::ReadRandom
                | Bench::ReadMissing
                | Bench::ReadHot
                | Bench::MultiReadRandom
                | Bench::SeekRandom
                | Bench::Range { .. }
                | Bench::WhileWriting(_)
        )
    }

    /// What the result line ends with.
    fn suffix(self) -> Suffix {
        match self {
            _ if self.reads_points() => Suffix::Found,
            Bench::ReadRandomWriteRandom | Bench::ReadRandomMergeRandom => Suffix::ReadsWrites,
            Bench::MergeRandom => Suffix::Updates,
            Bench::UpdateRandom => Suffix::Updates,
            Bench::Ycsb(_) => Suffix::Kinds,
            _ => Suffix::None,
        }
    }
}

/// What every benchmark thread shares.
struct Ctx<'a, E: Engine> {
    flags: &'a Flags,
    db: &'a E,
    pool: &'a ValuePool,
    /// YCSB: records loaded plus inserted so far (new records take the next
    /// number; reads pick among the acknowledged ones).
    records: InsertCounter,
    progress: Option<report::Progress>,
    /// Operations of all threads so far, when throughput is sampled.
    ops: Option<Arc<AtomicU64>>,
}

/// The state of one thread while it runs.
struct Worker<'a, E: Engine> {
    ctx: &'a Ctx<'a, E>,
    rng: SmallRng,
    values: ValueCursor,
    key: Vec<u8>,
    stats: Stats,
    /// Writes so far, for `--writes_per_range_tombstone`.
    writes: u64,
}

impl<'a, E: Engine> Worker<'a, E> {
    /// A worker drawing keys from its own random stream, seeded with `seed`.
    fn new(ctx: &'a Ctx<'a, E>, seed: u64, stats: Stats) -> Self {
        Worker {
            ctx,
            rng: thread_rng(seed),
            values: ctx.pool.cursor(),
            key: vec![0; ctx.flags.key_size],
            stats,
            writes: 0,
        }
    }
}

/// Runs the benchmarks `flags` names on the engine `--engine` names,
/// printing db_bench's header and one result block per benchmark. Returns the
/// first error, after closing the database.
pub fn run(flags: &Flags) -> Result<(), String> {
    match flags.engine {
        EngineKind::Strata => run_on::<StrataEngine>(flags),
        #[cfg(feature = "rocksdb")]
        EngineKind::RocksDb => run_on::<engine::RocksEngine>(flags),
        #[cfg(feature = "fjall")]
        EngineKind::Fjall => run_on::<engine::FjallEngine>(flags),
        #[allow(unreachable_patterns)] // every engine is built in
        other => Err(engine::not_built(other)),
    }
}

fn run_on<E: Engine>(flags: &Flags) -> Result<(), String> {
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
    println!("{}", report::header(flags, &dir, &E::describe()));
    // What every database the run opens shares, statistics printed once at
    // the end among them.
    let env = E::env(flags)?;
    if !flags.use_existing_db {
        E::destroy(flags, &dir, &env)?;
    }
    let mut db = Some(E::open(flags, &dir, &env)?);
    let mut out = Outputs::default();
    let result = run_all(flags, &dir, &mut db, &env, &mut out).and_then(|()| {
        if let Some(path) = &flags.report_json {
            json::write(path, flags.engine.name(), &E::describe(), &out.records)?;
        }
        if let Some(path) = &flags.plot {
            std::fs::write(path, intervals::svg(&out.series))
                .map_err(|e| format!("--plot {}: {e}", path.display()))?;
        }
        Ok(())
    });
    if flags.statistics {
        if let Some(report) = E::statistics(&env) {
            print!("STATISTICS:\n{report}");
        }
    }
    let closed = match db {
        Some(db) => db
            .close()
            .map_err(|e| format!("closing {}: {e}", dir.display())),
        None => Ok(()),
    };
    result.and(closed)
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
    fn run<E: Engine>(self, name: &str, db: &E, dir: &Path) -> Result<(), String> {
        // db_bench's PrintStats: a blank line, the property, a newline.
        let print_report = |p: &str| match db.report(p) {
            Some(report) => println!("\n{report}"),
            None => println!("{name:<12} : not reported by {}", E::describe()),
        };
        match self {
            Utility::Compact | Utility::Flush => {
                let start = Instant::now();
                let done = if self == Utility::Compact {
                    db.compact_all()
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
            Utility::Stats => print_report("strata.stats"),
            Utility::LevelStats => print_report("strata.levelstats"),
            Utility::SsTables => print_report("strata.sstables"),
        }
        Ok(())
    }
}

/// The web view of `db` with `--http_addr`.
fn start_view<E: Engine>(
    flags: &Flags,
    db: Option<&E>,
) -> Result<Option<Box<dyn std::any::Any>>, String> {
    match (&flags.http_addr, db) {
        (Some(addr), Some(db)) => db.web_view(addr).map(Some),
        _ => Ok(None),
    }
}

fn run_all<E: Engine>(
    flags: &Flags,
    dir: &Path,
    db_slot: &mut Option<E>,
    env: &E::Env,
    out: &mut Outputs,
) -> Result<(), String> {
    let pool = ValuePool::new(flags.compression_ratio, flags.value_size);
    // db_bench seeds each thread with `seed + threads created so far`, counting
    // across benchmarks, so readrandom does not replay fillrandom's keys.
    let mut threads_created = 0u64;
    // Restarted on every fresh database, which the old one's view cannot show.
    let mut view = start_view(flags, db_slot.as_ref())?;
    for name in &flags.benchmarks {
        if let Some(utility) = Utility::from_name(name) {
            let db = db_slot
                .as_ref()
                .ok_or_else(|| format!("{name}: the database is not open"))?;
            utility.run(name, db, dir)?;
            continue;
        }
        if name == ingest::NAME {
            let db = db_slot
                .as_ref()
                .ok_or_else(|| format!("{name}: the database is not open"))?;
            ingest::run(flags, db, dir, &pool, &mut out.records)?;
            continue;
        }
        if let Some(micro) = Micro::from_name(name) {
            let (stats, suffix) = micro.run(&pool, flags.compression_type)?;
            println!("{}", report::result_line(name, &stats, &suffix));
            out.records.push(Record::new(name, &stats));
            continue;
        }
        let bench = Bench::from_name(name).ok_or_else(|| format!("unknown benchmark {name:?}"))?;
        if bench.fresh_db() {
            if flags.use_existing_db {
                println!("{name:<12} : skipped (--use_existing_db is true)");
                continue;
            }
            drop(view.take());
            if let Some(db) = db_slot.take() {
                db.close()
                    .map_err(|e| format!("{name}: closing the old DB: {e}"))?;
            }
            E::destroy(flags, dir, env)?;
            *db_slot = Some(E::open(flags, dir, env)?);
            view = start_view(flags, db_slot.as_ref())?;
        }
        let db = db_slot
            .as_ref()
            .ok_or_else(|| format!("{name}: the database is not open"))?;
        let ctx = Ctx {
            flags,
            db,
            pool: &pool,
            records: InsertCounter::new(flags.ycsb_records()),
            progress: Some(report::Progress::new(name, bench.expected_ops(flags))),
            ops: (sample_every(flags).is_some() || flags.stats_interval_seconds > 0)
                .then(Arc::default),
        };
        let before = Usage::now()?;
        let writes_before = db.write_counters();
        let (stats, points) =
            run_threads(&ctx, bench, threads_created).map_err(|e| format!("{name}: {e}"))?;
        if !points.is_empty() {
            let s = Series {
                name: name.clone(),
                points,
            };
            if flags.report_interval_seconds > 0 {
                intervals::append_csv(&flags.report_file, &s)?;
            }
            out.series.push(s);
        }
        let after = Usage::now()?;
        if let Some(progress) = &ctx.progress {
            progress.finish();
        }
        let writes = db
            .write_counters()
            .zip(writes_before)
            .map(|(now, before)| now.since(&before));
        threads_created += flags.threads as u64;
        println!("{}", report::result_line(name, &stats, &bench.suffix()));
        let resources = Resources::measure(&before, &after, stats.done, dir);
        println!("{}", resources.lines());
        let mut record = Record::new(name, &stats);
        record.resources = Some(resources);
        if let Some(writes) = writes.filter(|w| w.ingest > 0) {
            println!("{}", writes.line());
            record.write_amp = Some(writes.write_amp());
        }
        if let Some(hist) = &stats.hist {
            println!("{}", report::histogram_lines(hist));
        }
        if let Some(perf) = &stats.perf {
            println!("PERF_CONTEXT:\n{perf}");
        }
        out.records.push(record);
    }
    Ok(())
}

/// `--stats_interval_seconds`: every interval, the operations done in it and
/// their rate; with `--stats_per_interval`, the engine's `strata.stats` too.
fn report_stats<E: Engine>(ctx: &Ctx<'_, E>, ops: &AtomicU64, done: &AtomicBool) {
    let every = Duration::from_secs(ctx.flags.stats_interval_seconds);
    let start = Instant::now();
    let (mut last, mut next) = (0u64, start + every);
    while !done.load(Ordering::Acquire) {
        thread::sleep(Duration::from_millis(10));
        if Instant::now() < next {
            continue;
        }
        let total = ops.load(Ordering::Relaxed);
        println!(
            "stats: {:.0} s: {} ops in the last {} s ({:.0} ops/sec), {total} in all",
            start.elapsed().as_secs_f64(),
            total - last,
            every.as_secs(),
            (total - last) as f64 / every.as_secs_f64()
        );
        if ctx.flags.stats_per_interval {
            if let Some(stats) = ctx.db.report("strata.stats") {
                println!("{stats}");
            }
        }
        last = total;
        next += every;
    }
}

/// The throughput sampling interval, if any is asked for.
fn sample_every(flags: &Flags) -> Option<Duration> {
    match (flags.report_interval_seconds, &flags.plot) {
        (0, None) => None,
        (0, Some(_)) => Some(Duration::from_secs(1)),
        (n, _) => Some(Duration::from_secs(n)),
    }
}

/// What a run collects for the files written at its end.
#[derive(Debug, Default)]
struct Outputs {
    records: Vec<Record>,
    series: Vec<Series>,
}

/// Runs `bench` on `--threads` threads that start together and merges their
/// stats. The `*whilewriting` benchmarks add one writer thread, not counted,
/// that writes until the readers are done.
fn run_threads<E: Engine>(
    ctx: &Ctx<'_, E>,
    bench: Bench,
    threads_before: u64,
) -> Result<(Stats, Vec<(f64, f64)>), String> {
    let n = ctx.flags.threads;
    let writing = matches!(bench, Bench::WhileWriting(_));
    let barrier = Barrier::new(n + usize::from(writing));
    let stop = AtomicBool::new(false);
    let readers_done = AtomicBool::new(false);
    let (results, writer, points) = thread::scope(|s| {
        let sampler = match (&ctx.ops, sample_every(ctx.flags)) {
            (Some(ops), Some(every)) => {
                let done = &readers_done;
                Some(s.spawn(move || intervals::sample(ops, done, every)))
            }
            _ => None,
        };
        let reporter = match &ctx.ops {
            Some(ops) if ctx.flags.stats_interval_seconds > 0 => {
                let done = &readers_done;
                Some(s.spawn(move || report_stats(ctx, ops, done)))
            }
            _ => None,
        };
        let writer = writing.then(|| {
            let seed = ctx.flags.seed.wrapping_add(threads_before + n as u64 + 1);
            let (barrier, stop) = (&barrier, &stop);
            s.spawn(move || background_writer(ctx, seed, barrier, stop))
        });
        let handles: Vec<_> = (0..n as u64)
            .map(|i| {
                let seed = ctx.flags.seed.wrapping_add(threads_before + i + 1);
                let barrier = &barrier;
                s.spawn(move || thread_body(ctx, bench, (i, seed), barrier))
            })
            .collect();
        let results: Vec<Result<Stats, String>> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a benchmark thread panicked".to_string()))
            })
            .collect();
        stop.store(true, Ordering::Release);
        readers_done.store(true, Ordering::Release);
        let writer = writer.map(|h| {
            h.join()
                .unwrap_or_else(|_| Err("the writer thread panicked".to_string()))
        });
        let points = sampler.map_or(Vec::new(), |h| h.join().unwrap_or_default());
        if let Some(h) = reporter {
            let _ = h.join();
        }
        (results, writer, points)
    });
    writer.transpose()?;
    let mut merged: Option<Stats> = None;
    for result in results {
        let stats = result?;
        match merged.as_mut() {
            Some(m) => m.merge(stats)?,
            None => merged = Some(stats),
        }
    }
    let merged = merged.ok_or_else(|| "no thread ran".to_string())?;
    Ok((merged, points))
}

fn background_writer<E: Engine>(
    ctx: &Ctx<'_, E>,
    seed: u64,
    barrier: &Barrier,
    stop: &AtomicBool,
) -> Result<(), String> {
    // Its writes count in the interval samples but not in the result line,
    // as db_bench's reporter counts every thread's operations while its
    // result excludes the writer's.
    let stats = Stats::new(false).map(|mut s| {
        s.shared_ops = ctx.ops.clone();
        s
    });
    barrier.wait();
    let mut w = Worker::new(ctx, seed, stats?);
    w.write_until(stop)
        .map_err(|e| format!("the writer thread: {e}"))
}

fn thread_body<E: Engine>(
    ctx: &Ctx<'_, E>,
    bench: Bench,
    (thread, seed): (u64, u64),
    barrier: &Barrier,
) -> Result<Stats, String> {
    // Wait at the barrier whatever happens, or the other threads would hang.
    let stats = Stats::new(ctx.flags.histogram).map(|mut s| {
        s.progress = ctx.progress.clone();
        s.shared_ops = ctx.ops.clone();
        s
    });
    barrier.wait();
    let perf = ctx.flags.perf_level > 1;
    if perf {
        E::perf_begin(ctx.flags.perf_level);
    }
    let mut w = Worker::new(ctx, seed, stats?);
    w.stats.start = Instant::now();
    let flags = ctx.flags;
    // RocksDB's benchmark scripts run fwdrange/revrange with 10 nexts.
    let range_nexts = if flags.seek_nexts == 0 {
        10
    } else {
        flags.seek_nexts
    };
    let result = match bench {
        Bench::FillSeq => w.write(KeyOrder::Sequential),
        Bench::FillRandom | Bench::Overwrite => w.write(KeyOrder::Random),
        Bench::FillUniqueRandom => w.write(KeyOrder::UniqueRandom),
        Bench::UpdateRandom => w.update_random(),
        Bench::DeleteRandom => w.delete_random(),
        Bench::ReadRandom | Bench::WhileWriting(Reader::ReadRandom) => {
            w.read_random(flags.num, false)
        }
        Bench::ReadMissing => w.read_random(flags.num, true),
        // LevelDB's readhot: random reads from the first 1% of the keys.
        Bench::ReadHot => w.read_random(flags.num.div_ceil(100), false),
        Bench::MultiReadRandom => w.multi_read_random(),
        Bench::ReadSeq => w.scan(true),
        Bench::ReadReverse => w.scan(false),
        Bench::SeekRandom | Bench::WhileWriting(Reader::SeekRandom) => {
            w.seek_random(flags.seek_nexts, !flags.reverse_iterator)
        }
        Bench::Range { forward } | Bench::WhileWriting(Reader::Range { forward }) => {
            w.seek_random(range_nexts, forward)
        }
        Bench::ReadRandomWriteRandom => w.read_random_write_random(),
        Bench::MergeRandom => w.merge_random(),
        Bench::ReadRandomMergeRandom => w.read_random_merge_random(),
        Bench::YcsbLoad => w.ycsb_load(thread, flags.threads as u64),
        Bench::Ycsb(letter) => match Workload::core(letter) {
            Some(workload) => w.ycsb_run(workload),
            None => Ok(()),
        },
    };
    w.stats.finish = Instant::now();
    w.stats.thread_seconds = w.stats.finish.duration_since(w.stats.start).as_secs_f64();
    if perf {
        w.stats.perf = E::perf_report();
    }
    result.map_err(|e| e.to_string())?;
    Ok(w.stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_name_has_a_benchmark() {
        for name in crate::flags::KNOWN_BENCHMARKS {
            let known = Bench::from_name(name).is_some()
                || *name == ingest::NAME
                || Utility::from_name(name).is_some()
                || Micro::from_name(name).is_some();
            assert!(known, "{name}");
        }
        assert!(Bench::FillSeq.fresh_db() && !Bench::Overwrite.fresh_db());
    }
}
