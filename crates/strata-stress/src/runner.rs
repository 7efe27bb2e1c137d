//! The writer threads: random batches, gets, scans and snapshot reads over
//! each thread's own keys. A thread knows the value of every key it owns
//! (or the few it may have, where the compaction filter may have removed
//! one), so every read it makes is checked on the spot.

use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use strata::{Db, ReadOptions, ReadTier, WriteBatch, WriteOptions};

use crate::families::Families;
use crate::model::{allows, expected_of, mismatch, show, Found, KeyState};
use crate::workload::{key, parse_key, seq_key, seq_value, Op, Workload};

/// Where a thread records when its batches start and are acknowledged. A
/// failure to record ends the thread (the record is the expected state).
pub trait Recorder {
    fn start(&mut self, index: usize, clock: u64) -> std::io::Result<()>;
    fn ack(&mut self, index: usize, clock: u64, sync: bool) -> std::io::Result<()>;
}

impl Recorder for crate::expected::ThreadLog {
    fn start(&mut self, _index: usize, clock: u64) -> std::io::Result<()> {
        crate::expected::ThreadLog::start(self, clock);
        Ok(())
    }

    fn ack(&mut self, index: usize, clock: u64, sync: bool) -> std::io::Result<()> {
        crate::expected::ThreadLog::ack(self, index, clock, sync);
        Ok(())
    }
}

/// What the threads of one cycle share.
#[derive(Debug)]
pub struct Shared<'a> {
    pub db: &'a Db,
    /// The handles of the families the keys are spread over.
    pub families: Families,
    pub workload: Workload,
    pub cycle: u64,
    pub disable_wal: bool,
    /// The logical clock batches are stamped with.
    pub clock: AtomicU64,
    /// Operations done by all threads.
    pub ops: AtomicU64,
    /// Merge operands in acknowledged batches.
    pub merges: AtomicU64,
    /// Set to end the cycle.
    pub stop: AtomicBool,
    /// Set just before the file system is halted (by the harness, or by a
    /// crash point inside the engine): from then on errors are expected, not
    /// violations.
    pub halted: Arc<AtomicBool>,
    /// The disk is full on purpose: a `NoSpace` error ends the thread (its
    /// batch counts as started, not acknowledged) instead of being a violation.
    pub no_space_expected: bool,
    /// Threads that ended on `NoSpace`.
    pub no_space_hits: AtomicU64,
}

impl<'a> Shared<'a> {
    pub fn new(
        db: &'a Db,
        workload: Workload,
        cycle: u64,
        disable_wal: bool,
        halted: Arc<AtomicBool>,
    ) -> Result<Self, String> {
        Ok(Shared {
            db,
            families: Families::of(db, workload.families)?,
            workload,
            cycle,
            disable_wal,
            clock: AtomicU64::new(0),
            ops: AtomicU64::new(0),
            merges: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            halted,
            no_space_expected: false,
            no_space_hits: AtomicU64::new(0),
        })
    }

    /// An engine error: the end of the thread once the file system is
    /// halted, else a violation.
    fn failed(&self, what: &str, e: strata::Error) -> Result<bool, String> {
        if self.halted.load(Ordering::Acquire) {
            Ok(false)
        } else {
            Err(format!("{what} failed with no fault injected: {e}"))
        }
    }

    /// A failed write: as [`Shared::failed`], except that on a disk full on
    /// purpose `NoSpace` ends the thread. Reads never write, so they get no
    /// such allowance.
    fn write_failed(&self, e: strata::Error) -> Result<bool, String> {
        if self.no_space_expected && matches!(e, strata::Error::NoSpace { .. }) {
            self.no_space_hits.fetch_add(1, Ordering::Relaxed);
            return Ok(false);
        }
        self.failed("write", e)
    }
}

/// One thread's run of one cycle, starting from its expected `state`. Ends
/// when `stop` is set or the file system is halted; an error is a violation.
pub fn run_thread(
    shared: &Shared<'_>,
    thread: usize,
    mut state: KeyState,
    recorder: &mut dyn Recorder,
) -> Result<(), String> {
    let w = &shared.workload;
    let mut rng = SmallRng::seed_from_u64(
        w.seed ^ shared.cycle.rotate_left(20) ^ (thread as u64).rotate_left(40),
    );
    let mut index = 0usize;
    while !shared.stop.load(Ordering::Acquire) {
        let roll = rng.gen_range(0..100);
        let go_on = if roll < 85 {
            write_batch(shared, thread, &mut index, &mut state, recorder)?
        } else if roll < 92 {
            check_get(shared, thread, &state, rng.gen_range(0..w.keys_per_thread))?
        } else if roll < 97 {
            check_scan(shared, thread, &state)?
        } else if thread == 0 && roll == 97 {
            scratch_family(shared)?
        } else {
            check_snapshot(shared, thread, &mut index, &mut state, recorder, &mut rng)?
        };
        shared.ops.fetch_add(1, Ordering::Relaxed);
        if !go_on {
            break;
        }
    }
    Ok(())
}

/// Writes the thread's next batch; false when the thread must stop.
fn write_batch(
    shared: &Shared<'_>,
    thread: usize,
    index: &mut usize,
    state: &mut KeyState,
    recorder: &mut dyn Recorder,
) -> Result<bool, String> {
    let batch = shared.workload.batch(shared.cycle, thread, *index as u64);
    let mut wb = WriteBatch::new();
    for op in &batch.ops {
        let k = key(thread, op.key());
        let cf = shared.families.for_key(op.key());
        let added = match op {
            // The range's keys are spread over the families: delete it in
            // every one, in each family's order.
            Op::DeleteRange { end, .. } => shared.families.all().iter().try_for_each(|cf| {
                let (begin, end) = crate::families::range_in_order(cf, thread, op.key(), *end);
                wb.delete_range_cf(cf, begin, end)
            }),
            Op::Put { value, .. } => wb.put_cf(cf, &k, value),
            Op::Delete { .. } => wb.delete_cf(cf, &k),
            Op::Merge { operand, .. } => wb.merge_cf(cf, &k, operand),
        };
        added.map_err(|e| format!("building a batch: {e}"))?;
    }
    wb.put(seq_key(thread), seq_value(shared.cycle, *index as u64))
        .map_err(|e| format!("building a batch: {e}"))?;
    let options = WriteOptions {
        sync: batch.sync && !shared.disable_wal,
        disable_wal: shared.disable_wal,
        no_slowdown: false,
    };
    let started = shared.clock.fetch_add(1, Ordering::AcqRel);
    recorder
        .start(*index, started)
        .map_err(|e| format!("recording a batch start: {e}"))?;
    if let Err(e) = shared.db.write(&options, wb) {
        return shared.write_failed(e);
    }
    let acked = shared.clock.fetch_add(1, Ordering::AcqRel);
    recorder
        .ack(*index, acked, options.sync)
        .map_err(|e| format!("recording an acknowledgement: {e}"))?;
    shared.merges.fetch_add(batch.merges(), Ordering::Relaxed);
    shared.workload.apply(state, &batch);
    *index += 1;
    Ok(true)
}

fn check_get(shared: &Shared<'_>, thread: usize, state: &KeyState, n: u32) -> Result<bool, String> {
    let cf = shared.families.for_key(n);
    // Every fourth key is first read from memory only (`kBlockCacheTier`):
    // that answers as a full read would, or is `Incomplete`.
    if n % 4 == 0 {
        let memory = ReadOptions {
            read_tier: ReadTier::BlockCache,
            ..ReadOptions::default()
        };
        match shared.db.get_cf_opt(cf, &memory, key(thread, n)) {
            Ok(got) => return judge_get(thread, state, n, got.as_deref(), "memory-only get"),
            Err(strata::Error::Incomplete { .. }) => {}
            Err(e) => return shared.failed("memory-only get", e),
        }
    }
    match shared.db.get_cf(cf, key(thread, n)) {
        Ok(got) => judge_get(thread, state, n, got.as_deref(), "get"),
        Err(e) => shared.failed("get", e),
    }
}

/// Whether `got` is a value key `n` may hold now.
fn judge_get(
    thread: usize,
    state: &KeyState,
    n: u32,
    got: Option<&[u8]>,
    what: &str,
) -> Result<bool, String> {
    if !allows(state, n, got) {
        return Err(format!(
            "thread {thread}: {what} of key {n} returned {}, expected {}",
            show(got),
            expected_of(state, n)
        ));
    }
    Ok(true)
}

fn check_scan(shared: &Shared<'_>, thread: usize, state: &KeyState) -> Result<bool, String> {
    let (from, to) = (key(thread, 0), key(thread, 99_999));
    let mut seen = Found::new();
    // One consistent state across the families' scans.
    let snapshot = shared.db.snapshot();
    let at = ReadOptions {
        snapshot: Some(snapshot.clone()),
        ..ReadOptions::default()
    };
    for (i, cf) in shared.families.all().iter().enumerate() {
        let span = crate::families::key_span(cf, &from, Bound::Included(&to));
        for entry in shared.db.range_cf_opt(cf, &at, span) {
            match entry {
                Ok((k, v)) => {
                    let n = parse_key(thread, &k)
                        .filter(|&n| crate::families::of_key(n, shared.workload.families) == i)
                        .ok_or_else(|| format!("thread {thread}: scan returned a foreign key"))?;
                    seen.insert(n, v);
                }
                Err(e) => return shared.failed("scan", e),
            }
        }
    }
    if let Some(difference) = mismatch(state, &seen) {
        return Err(format!("thread {thread}: scan: {difference}"));
    }
    Ok(true)
}

/// Takes a snapshot, writes a few more batches, and reads through the
/// snapshot: it must show the state as of the snapshot.
fn check_snapshot(
    shared: &Shared<'_>,
    thread: usize,
    index: &mut usize,
    state: &mut KeyState,
    recorder: &mut dyn Recorder,
    rng: &mut SmallRng,
) -> Result<bool, String> {
    let snapshot = shared.db.snapshot();
    let frozen = state.clone();
    for _ in 0..rng.gen_range(1..4) {
        if !write_batch(shared, thread, index, state, recorder)? {
            return Ok(false);
        }
    }
    let options = ReadOptions {
        snapshot: Some(snapshot.clone()),
        ..ReadOptions::default()
    };
    for _ in 0..5 {
        let n = rng.gen_range(0..shared.workload.keys_per_thread);
        match shared
            .db
            .get_cf_opt(shared.families.for_key(n), &options, key(thread, n))
        {
            Ok(got) => {
                if !allows(&frozen, n, got.as_deref()) {
                    return Err(format!(
                        "thread {thread}: snapshot get of key {n} returned {}, expected {}",
                        show(got.as_deref()),
                        expected_of(&frozen, n)
                    ));
                }
            }
            Err(e) => return shared.failed("snapshot get", e),
        }
    }
    Ok(true)
}

/// Creates the scratch family, writes, merges into and reads a key in it,
/// and drops it; false when the thread must stop. Crashes in the middle
/// leave the family or not, never a database that will not open.
fn scratch_family(shared: &Shared<'_>) -> Result<bool, String> {
    let db = shared.db;
    // One an earlier op left (it stopped on a full disk) goes first.
    if let Some(left) = db.cf_handle(crate::families::SCRATCH) {
        if let Err(e) = db.drop_column_family(&left) {
            return shared.write_failed(e);
        }
    }
    let options = crate::families::scratch_options();
    let cf = match db.create_column_family(crate::families::SCRATCH, options) {
        Ok(cf) => cf,
        Err(e) => return shared.write_failed(e),
    };
    let written = db
        .put_cf(&cf, "scratch-key", "scratch-value")
        .and_then(|()| db.merge_cf(&cf, "scratch-key", "merged"));
    if let Err(e) = written {
        return shared.write_failed(e);
    }
    match db.get_cf(&cf, "scratch-key") {
        Ok(Some(v)) if v.as_ref() == b"scratch-value,merged" => {}
        Ok(other) => {
            return Err(format!(
                "the scratch family's get returned {}, expected scratch-value,merged",
                show(other.as_deref())
            ))
        }
        Err(e) => return shared.failed("scratch get", e),
    }
    if let Err(e) = db.drop_column_family(&cf) {
        return shared.write_failed(e);
    }
    Ok(true)
}
