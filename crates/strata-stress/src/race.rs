//! Race mode: reads that race flushes and compactions, on the real file
//! system, in one process. Each cycle opens a fresh database with tiny
//! buffers, files and blocks. One writer bumps `k` and `k2` together in one
//! batch (1, 2, 3, ...) and publishes each acknowledged number; every
//! eighth batch also adds 1 to the counter `n` with a merge (`uint64add`),
//! so `n` follows from `k` however compactions combined its operands, and
//! every batch puts `EXPIRED-<k>` in `x`, a value the compaction filter
//! removes once no snapshot sees it; each batch also puts `k` in a second
//! column family, `side`. One thread flushes and compacts both families
//! nonstop; readers (more than the cores) take snapshots and read
//! every key at the snapshot, with `multi_get` and at the latest state, read
//! `k` of both families and `k2` in one `multi_get_cfs` at the latest state,
//! iterate, and seek inside the prefix of `k` and `k2` (prefix filters in
//! the tables and a memtable bloom). Every read must see a whole batch, no older than what was
//! acknowledged before the read began (`x` may be gone, never older); a
//! snapshot's answers never change, neither within a round nor when a
//! reader reads `n` and `x` again at its previous round's snapshot, which
//! has lived through a round of compactions. Any miss, split or older value
//! is a violation.
//!
//! The flushing thread also ingests, every other round, one `SstFileWriter`
//! file into `side` that rewrites 64 keys with the round's number: each
//! ingestion overlaps the one before, so it lands above it with a global
//! sequence number while compactions run, and readers must never see two
//! rounds among those keys at one snapshot, nor a round older than the last
//! ingestion acknowledged.
//!
//! `x` may be gone when a snapshot is taken (the filter removed it), but
//! once a snapshot has read it, it must keep reading it: the engine redoes a
//! compaction whose filter changed what a snapshot taken meanwhile sees
//! (RocksDB makes no such promise).

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use strata::{
    BlobOptions, ColumnFamily, CompactionOptions, Db, DbOptions, IngestExternalFileOptions,
    PrefixExtractor, ReadOptions, SstFileWriter, TableOptions, WriteBatch,
};

use crate::model::{show, ExpiredFilter, MergeKind, MARK};
use crate::race_drop;
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
        let filter = Arc::new(ExpiredFilter::default());
        let shared = Arc::new(Shared::default());
        let (ops, violations) = cycle(
            dir.path(),
            &mut rng,
            &filter,
            &shared,
            readers,
            bounded,
            cycle_end,
        );
        if violations > 0 {
            eprintln!(
                "  reproduce: strata-stress --mode=race --seed={} --threads={} (cycle {})",
                limits.seed, limits.threads, outcome.cycles
            );
        }
        outcome.cycles += 1;
        outcome.ops += ops.reads + ops.writes;
        outcome.merges += ops.writes.div_ceil(MERGE_EVERY);
        outcome.filter_removed += filter.removed();
        outcome.violations += violations;
    }
    outcome
}

/// What one database's race did.
#[derive(Default)]
struct Done {
    writes: u64,
    reads: u64,
}

/// One database's race; returns what it did and its violations.
fn cycle(
    dir: &Path,
    rng: &mut SmallRng,
    filter: &Arc<ExpiredFilter>,
    shared: &Arc<Shared>,
    readers: usize,
    writes: Option<u64>,
    end: Instant,
) -> (Done, u64) {
    let options = DbOptions {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        table: TableOptions {
            block_size: 256,
            // `k` and `k2` share the prefix "k": prefix seeks race too.
            prefix_extractor: Some(PrefixExtractor::Capped(1)),
            ..TableOptions::default()
        },
        memtable_prefix_bloom_size_ratio: 0.1,
        compaction: CompactionOptions {
            target_file_size_base: 4 << 10,
            level0_file_num_compaction_trigger: rng.gen_range(1..=4),
            // One compaction thread (1 or 2 jobs) in half the cycles.
            max_background_jobs: rng.gen_range(1..=4),
            max_subcompactions: rng.gen_range(1..=3),
            ..CompactionOptions::default()
        },
        merge_operator: Some(MergeKind::UInt64Add.operator()),
        compaction_filter: Some(filter.clone()),
        // Half the cycles keep every value in small blob files, so readers
        // race blob files being written, collected and deleted too.
        blob: if rng.gen_bool(0.5) {
            BlobOptions {
                enable_blob_files: true,
                blob_file_size: 4 << 10,
                enable_blob_garbage_collection: rng.gen_bool(0.5),
                // Extremes included: at 0.0 forced collection is due as
                // soon as there is garbage, and must still leave
                // compaction to the families that need it.
                blob_garbage_collection_age_cutoff: [0.0, 0.5, 1.0][rng.gen_range(0..3)],
                blob_garbage_collection_force_threshold: [0.0, 0.5, 1.0][rng.gen_range(0..3)],
                ..BlobOptions::default()
            }
        } else {
            BlobOptions::default()
        },
        ..DbOptions::default()
    };
    eprintln!("strata-stress: race: {}", options.blob);
    let side_options = options.cf_options();
    let copies = Arc::new(Checkpoints {
        dir: dir.to_path_buf(),
        options: options.clone(),
        checked: AtomicU64::new(0),
        ingested: AtomicU64::new(0),
    });
    let opened = Db::open(dir.join("db"), options)
        .and_then(|db| Ok((db.create_column_family("side", side_options.clone())?, db)));
    let (side, db) = match opened {
        Ok((side, db)) => (side, Arc::new(db)),
        Err(e) => {
            eprintln!("strata-stress: VIOLATION: race: open failed: {e}");
            return (Done::default(), 1);
        }
    };
    if let Err(e) = write_pair(&db, &side, 0) {
        eprintln!("strata-stress: VIOLATION: race: first write failed: {e}");
        return (Done::default(), 1);
    }
    let mut threads = Vec::new();
    {
        let (db, side, shared, copies) = (db.clone(), side.clone(), shared.clone(), copies.clone());
        threads.push(std::thread::spawn(move || {
            churn(&db, &side, &shared, &copies)
        }));
    }
    {
        let (db, shared) = (db.clone(), shared.clone());
        let (options, seed) = (side_options.clone(), rng.gen());
        threads.push(std::thread::spawn(move || {
            let violate = |what: String| shared.violate(what);
            race_drop::run(&db, &options, seed, &shared.done, &violate, &shared.drops);
        }));
    }
    {
        let shared = shared.clone();
        threads.push(std::thread::spawn(move || watch_progress(&shared)));
    }
    for _ in 0..readers {
        let (db, side, shared) = (db.clone(), side.clone(), shared.clone());
        threads.push(std::thread::spawn(move || read_loop(&db, &side, &shared)));
    }
    let mut n = 1u64;
    let more = |n: u64| match writes {
        Some(w) => n <= w || shared.reads.load(Ordering::Relaxed) < MIN_READS,
        None => Instant::now() < end,
    };
    while more(n) && shared.violations.load(Ordering::Relaxed) == 0 {
        if let Err(e) = write_pair(&db, &side, n) {
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
    eprintln!(
        "strata-stress: race: {} checkpoints taken during writes and checked, {} files ingested",
        copies.checked.load(Ordering::Relaxed),
        copies.ingested.load(Ordering::Relaxed)
    );
    let drops = &shared.drops;
    eprintln!(
        "strata-stress: race: {} families dropped under writers: {} batches across them \
         acknowledged whole, {} refused whole",
        drops.families.load(Ordering::Relaxed),
        drops.acknowledged.load(Ordering::Relaxed),
        drops.refused.load(Ordering::Relaxed)
    );
    let done = Done {
        writes: n,
        reads: shared.reads.load(Ordering::Relaxed),
    };
    (done, shared.violations.load(Ordering::Relaxed))
}

/// Rounds of reads the readers check per cycle, at the least, in a
/// cycle-bounded run. A round reads four keys at a snapshot three ways;
/// this many keep CI's run (a debug build) near 10 s of CPU.
const MIN_READS: u64 = 150_000;

#[derive(Default)]
struct Shared {
    /// The last number whose batch was acknowledged.
    acked: AtomicU64,
    /// The family drop rounds (`race_drop.rs`).
    drops: race_drop::DropCounts,
    /// The round of the last ingestion acknowledged.
    ingested: AtomicU64,
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

/// How long the writer may go without an acknowledged write before the run
/// is a liveness violation. Nothing in a race cycle blocks writes for good:
/// stalls end once compaction catches up, however its work is scheduled.
const NO_PROGRESS_LIMIT: Duration = Duration::from_secs(120);

/// Watches the writer's acknowledged count until the cycle ends. A writer
/// stuck past [`NO_PROGRESS_LIMIT`] ends the process: the stuck thread could
/// never be joined, so the run reports the violation and exits failing.
fn watch_progress(shared: &Shared) {
    let (mut last, mut since) = (shared.acked.load(Ordering::SeqCst), Instant::now());
    while !shared.done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(200));
        let now = shared.acked.load(Ordering::SeqCst);
        if now != last {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() > NO_PROGRESS_LIMIT {
            eprintln!(
                "strata-stress: VIOLATION: race: no write acknowledged for {} s after \
                 batch {last} (liveness)",
                NO_PROGRESS_LIMIT.as_secs()
            );
            eprintln!("strata-stress: mode=race violations=1 (stopped: a writer is stuck)");
            std::process::exit(1);
        }
    }
}

/// The counter batches add 1 to, and the key every batch puts a value the
/// filter removes into.
const COUNTER: &[u8] = b"n";
const EXPIRING: &[u8] = b"x";

/// Batches that merge into the counter: one in this many. A read merges
/// every operand not yet combined by a compaction, so a merge in every
/// batch would make reads of the counter several times slower.
const MERGE_EVERY: u64 = 8;

/// The counter after batch `n`.
fn counter_after(n: u64) -> u64 {
    n / MERGE_EVERY + 1
}

fn expiring_value(n: u64) -> Vec<u8> {
    [MARK, format!("-{n}").as_bytes()].concat()
}

fn write_pair(db: &Db, side: &ColumnFamily, n: u64) -> strata::Result<()> {
    let mut batch = WriteBatch::new();
    let value = n.to_string();
    batch.put(b"k", value.as_bytes())?;
    batch.put(b"k2", value.as_bytes())?;
    batch.put_cf(side, b"k", value.as_bytes())?;
    if n % MERGE_EVERY == 0 {
        batch.merge(COUNTER, 1u64.to_le_bytes())?;
    }
    batch.put(EXPIRING, expiring_value(n))?;
    db.write(&strata::WriteOptions::default(), batch)
}

/// Flushes and compacts both families until the cycle ends, taking a
/// checkpoint every fourth round.
fn churn(db: &Db, side: &ColumnFamily, shared: &Shared, copies: &Checkpoints) {
    let mut rounds = 0u64;
    while !shared.done.load(Ordering::Relaxed) {
        let round = db
            .flush()
            .and_then(|()| db.flush_cf(side))
            .and_then(|()| db.compact_range(None, None))
            .and_then(|()| db.compact_range_cf(side, None, None));
        if let Err(e) = round {
            shared.violate(format!("flush or compaction failed: {e}"));
        }
        rounds += 1;
        if rounds % 2 == 1 {
            if let Err(what) = copies.ingest(db, side, shared, rounds) {
                shared.violate(what);
            }
        }
        if rounds % 4 == 0 {
            if let Err(what) = copies.take_and_check(db, shared, rounds) {
                shared.violate(what);
            }
        }
    }
}

/// Checkpoints of the racing database, each opened and checked, and the
/// files ingested into it.
struct Checkpoints {
    dir: std::path::PathBuf,
    options: DbOptions,
    checked: AtomicU64,
    ingested: AtomicU64,
}

/// Keys of `side` each ingestion rewrites, all with its round.
const INGESTED_KEYS: u32 = 64;

fn ingested_key(i: u32) -> Vec<u8> {
    format!("ing{i:03}").into_bytes()
}

impl Checkpoints {
    /// Writes every ingested key with `round` into one file and ingests it
    /// into `side` (moving it every other time), then publishes the round.
    fn ingest(
        &self,
        db: &Db,
        side: &ColumnFamily,
        shared: &Shared,
        round: u64,
    ) -> Result<(), String> {
        let path = self.dir.join(format!("ingest-{round}.sst"));
        let value = round.to_string();
        let written = SstFileWriter::create(&path, &self.options.cf_options()).and_then(|mut w| {
            for i in 0..INGESTED_KEYS {
                w.put(ingested_key(i), &value)?;
            }
            w.finish()
        });
        written.map_err(|e| format!("writing {}: {e}", path.display()))?;
        let options = IngestExternalFileOptions {
            move_files: round % 4 == 1,
            ..IngestExternalFileOptions::default()
        };
        db.ingest_external_file_cf(side, &[&path], &options)
            .map_err(|e| format!("ingesting round {round}: {e}"))?;
        let _ = std::fs::remove_file(&path);
        shared.ingested.store(round, Ordering::SeqCst);
        self.ingested.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Takes a checkpoint while the writer goes on, opens it, and checks it
    /// holds a whole batch at least as new as the last acknowledged before
    /// the call, in both families, with the counter merged up to it.
    fn take_and_check(&self, db: &Db, shared: &Shared, round: u64) -> Result<(), String> {
        let floor = shared.acked.load(Ordering::SeqCst);
        let path = self.dir.join(format!("checkpoint-{round}"));
        db.create_checkpoint(&path)
            .map_err(|e| format!("checkpoint failed: {e}"))?;
        // Every family the checkpoint holds (the drop rounds' among them),
        // all with the same options.
        let families = Db::list_column_families(&path, &self.options)
            .map_err(|e| format!("listing the families of {}: {e}", path.display()))?;
        let families = families
            .into_iter()
            .filter(|name| name != strata::DEFAULT_COLUMN_FAMILY_NAME)
            .map(|name| (name, self.options.cf_options()));
        let copy = Db::open_cf(&path, self.options.clone(), families)
            .map_err(|e| format!("opening checkpoint {}: {e}", path.display()))?;
        let side = copy
            .cf_handle("side")
            .ok_or("the checkpoint lacks family side")?;
        let k = number(copy.get(b"k"), "k in the checkpoint")?;
        let k2 = number(copy.get(b"k2"), "k2 in the checkpoint")?;
        let side_k = number(copy.get_cf(&side, b"k"), "side k in the checkpoint")?;
        if k != k2 || k != side_k {
            return Err(format!(
                "the checkpoint holds half a batch: k={k} k2={k2} side k={side_k}"
            ));
        }
        if k < floor {
            return Err(format!(
                "the checkpoint holds batch {k}, older than the acknowledged {floor}"
            ));
        }
        let counter = copy
            .get(COUNTER)
            .map_err(|e| format!("reading the counter in the checkpoint: {e}"))?;
        if counter.as_deref() != Some(&counter_after(k).to_le_bytes()[..]) {
            return Err(format!(
                "the checkpoint's counter at batch {k} reads {}",
                shown(COUNTER, counter.as_deref())
            ));
        }
        drop(copy);
        // Best effort: the cycle's directory goes at its end anyway.
        let _ = std::fs::remove_dir_all(&path);
        self.checked.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

fn read_loop(db: &Db, side: &ColumnFamily, shared: &Shared) {
    let mut held = None;
    while !shared.done.load(Ordering::Relaxed) {
        let round = check_held(db, held.take())
            .and_then(|()| check_across(db, side, shared))
            .and_then(|()| check_once(db, shared));
        match round {
            Ok(next) => held = Some(next),
            Err(what) => {
                shared.violate(what);
                return;
            }
        }
        shared.reads.fetch_add(1, Ordering::Relaxed);
    }
}

/// A round's snapshot (kept alive by the read options) and what it read of
/// the counter and `x`, read again in the reader's next round: a snapshot
/// that lived through a round, and maybe a compaction, must answer the same.
struct Held {
    at: ReadOptions,
    k: u64,
    seen: [Option<Vec<u8>>; 2],
}

fn check_held(db: &Db, held: Option<Held>) -> Result<(), String> {
    let Some(held) = held else {
        return Ok(());
    };
    let keys: [&[u8]; 2] = [COUNTER, EXPIRING];
    let again = db.multi_get(&held.at, &keys);
    for ((key, result), seen) in keys.iter().zip(again).zip(&held.seen) {
        let got = result.map_err(|e| format!("multi_get failed: {e}"))?;
        let got = got.map(|v| v.to_vec());
        if got != *seen {
            return Err(format!(
                "snapshot {} changed a round later: {} read {}, then {}",
                held.k,
                show(Some(key)),
                shown(key, seen.as_deref()),
                shown(key, got.as_deref())
            ));
        }
    }
    Ok(())
}

/// `k` of both families and `k2` in one `multi_get_cfs` at the latest
/// state: one batch wrote all three, so they must read the same number, no
/// older than what was acknowledged before the read.
fn check_across(db: &Db, side: &ColumnFamily, shared: &Shared) -> Result<(), String> {
    check_ingested(db, side, shared)?;
    let floor = shared.acked.load(Ordering::SeqCst);
    let default = db.default_cf();
    let keys: [(&ColumnFamily, &[u8]); 3] = [(&default, b"k"), (side, b"k"), (&default, b"k2")];
    let got = db.multi_get_cfs(&ReadOptions::default(), &keys);
    let mut numbers = Vec::new();
    for (result, what) in got.into_iter().zip(["k", "side k", "k2"]) {
        numbers.push(number(result, what)?);
    }
    if numbers.iter().any(|&n| n != numbers[0]) {
        return Err(format!(
            "multi_get_cfs saw half a batch: k={} side k={} k2={}",
            numbers[0], numbers[1], numbers[2]
        ));
    }
    if numbers[0] < floor {
        return Err(format!(
            "multi_get_cfs read {}, older than the acknowledged {floor}",
            numbers[0]
        ));
    }
    Ok(())
}

/// The first, a middle and the last ingested key of `side` at one snapshot:
/// one file wrote them, so they read one round (or none yet), no older than
/// the last ingestion acknowledged before the read.
fn check_ingested(db: &Db, side: &ColumnFamily, shared: &Shared) -> Result<(), String> {
    let floor = shared.ingested.load(Ordering::SeqCst);
    let at = ReadOptions {
        snapshot: Some(db.snapshot()),
        ..ReadOptions::default()
    };
    let keys: Vec<Vec<u8>> = [0, INGESTED_KEYS / 2, INGESTED_KEYS - 1]
        .map(ingested_key)
        .into();
    let pairs: Vec<(&ColumnFamily, &Vec<u8>)> = keys.iter().map(|k| (side, k)).collect();
    let mut rounds = Vec::new();
    for result in db.multi_get_cfs(&at, &pairs) {
        let value = result.map_err(|e| format!("reading ingested keys: {e}"))?;
        rounds.push(value.map(|v| parse(&v)).transpose()?);
    }
    if rounds.iter().any(|r| *r != rounds[0]) {
        return Err(format!("one snapshot saw two ingestions: {rounds:?}"));
    }
    if rounds[0].unwrap_or(0) < floor {
        return Err(format!(
            "ingested keys read round {:?}, older than the acknowledged {floor}",
            rounds[0]
        ));
    }
    Ok(())
}

/// One round of reads; the error says what was wrong.
fn check_once(db: &Db, shared: &Shared) -> Result<Held, String> {
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
    // Every key at the snapshot in one call: `k` and `k2` must read as
    // before, the counter as merged up to batch `k`, `x` as batch `k` wrote
    // it unless the filter removed it.
    let keys: [&[u8]; 4] = [b"k", b"k2", COUNTER, EXPIRING];
    let mut first = [
        Some(k.to_string().into_bytes()),
        Some(k.to_string().into_bytes()),
        Some(counter_after(k).to_le_bytes().to_vec()),
        Some(expiring_value(k)),
    ];
    let all = db.multi_get(&at, &keys);
    for (i, result) in all.into_iter().enumerate() {
        let got = result.map_err(|e| format!("multi_get failed: {e}"))?;
        let got = got.map(|v| v.to_vec());
        if got != first[i] {
            if !(keys[i] == EXPIRING && got.is_none()) {
                return Err(format!(
                    "at snapshot {k}, {} read {}, expected {}",
                    show(Some(keys[i])),
                    shown(keys[i], got.as_deref()),
                    shown(keys[i], first[i].as_deref())
                ));
            }
            first[i] = None;
        }
    }
    let scanned: Vec<(Vec<u8>, Vec<u8>)> = db
        .range_opt(&at, ..)
        .map(|entry| {
            let (key, value) = entry.map_err(|e| format!("scan failed: {e}"))?;
            Ok((key.to_vec(), value.to_vec()))
        })
        .collect::<Result<_, String>>()?;
    let expected: Vec<(Vec<u8>, Vec<u8>)> = keys
        .iter()
        .zip(first)
        .filter_map(|(key, value)| Some((key.to_vec(), value?)))
        .collect();
    if scanned != expected {
        return Err(format!(
            "a scan at snapshot {k} saw {}, expected {}",
            listed(&scanned),
            listed(&expected)
        ));
    }
    check_prefix_seek(db, &snapshot, k)?;
    let read = |key: &[u8]| {
        scanned
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let seen = [read(COUNTER), read(EXPIRING)];
    Ok(Held { at, k, seen })
}

/// A seek to `k` confined to its prefix "k" at the snapshot of batch `k`
/// reads exactly `k` and `k2` of that batch: the prefix filters of the
/// memtables and tables flushed and compacted meanwhile may skip sources,
/// never a key.
fn check_prefix_seek(db: &Db, snapshot: &strata::Snapshot, k: u64) -> Result<(), String> {
    let in_prefix = ReadOptions {
        snapshot: Some(snapshot.clone()),
        prefix_same_as_start: true,
        ..ReadOptions::default()
    };
    let mut it = db.iter_opt(&in_prefix);
    it.seek(b"k");
    let mut seen = Vec::new();
    while let (Some(key), Some(value)) = (it.key(), it.value()) {
        seen.push((key.to_vec(), value.to_vec()));
        it.next();
    }
    it.status()
        .map_err(|e| format!("prefix seek failed: {e}"))?;
    let value = k.to_string().into_bytes();
    let expected = vec![(b"k".to_vec(), value.clone()), (b"k2".to_vec(), value)];
    if seen != expected {
        return Err(format!(
            "a prefix seek at snapshot {k} saw {}, expected {}",
            listed(&seen),
            listed(&expected)
        ));
    }
    Ok(())
}

/// Keys and values for a report.
fn listed(entries: &[(Vec<u8>, Vec<u8>)]) -> String {
    let listed: Vec<String> = entries
        .iter()
        .map(|(key, value)| format!("{}={}", show(Some(key)), shown(key, Some(value))))
        .collect();
    listed.join(" ")
}

/// A value of `key` for a report: the counter's as the number it holds.
fn shown(key: &[u8], value: Option<&[u8]>) -> String {
    match value.map(<[u8; 8]>::try_from) {
        Some(Ok(number)) if key == COUNTER => u64::from_le_bytes(number).to_string(),
        _ => show(value),
    }
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
