//! `--mode=sim`: the engine on the simulated file system. Each cycle runs the
//! threads until a random number of operations, halts the file system at that
//! instant (the process dies), crashes it (dropping unsynced bytes, keeping a
//! random prefix of them, tearing the last write, or losing unsynced
//! directory entries), reopens, and checks the expected state. Drawn from
//! the seed, some cycles fill the disk instead (`full_disk`), some damage a
//! WAL before the reopen (`wal_damage`), and after some CURRENT is deleted
//! or damaged while the database is closed (`current`), a checkpoint is
//! taken, or the closed database is repaired (`repair`).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use strata::fs::sim::{CrashMode, DataLoss};
use strata::fs::SimFs;
use strata::Db;

use crate::expected::{verify, Durability, Expected, ThreadLog};
use crate::options::{self, StressOptions};
use crate::report::{violation, Outcome};
use crate::runner::{run_thread, Shared};
use crate::workload::Workload;
use crate::RunLimits;

pub const DB_PATH: &str = "/db";

/// What a simulated run keeps between cycles.
pub struct SimRun {
    pub fs: SimFs,
    pub opts: StressOptions,
    pub described: String,
    pub w: Workload,
    pub rng: SmallRng,
    pub expected: Expected,
    pub out: Outcome,
    pub mode: &'static str,
}

impl SimRun {
    pub fn new(limits: &RunLimits, mode: &'static str) -> SimRun {
        let fs = SimFs::new(limits.seed);
        // Files buffer appends in the process, as the real file system's do:
        // an acknowledged write the engine never flushed is lost by a kill.
        fs.buffer_appends(true);
        let opts = options::draw(limits.seed, Arc::new(fs.clone()));
        let described = opts.to_string();
        let w = Workload::new(limits.seed, limits.threads, &opts);
        SimRun {
            fs,
            opts,
            described,
            w,
            rng: SmallRng::seed_from_u64(limits.seed.rotate_left(17)),
            expected: Expected::new(limits.threads),
            out: Outcome::default(),
            mode,
        }
    }

    pub fn open(&self) -> strata::Result<Db> {
        crate::families::open(Path::new(DB_PATH), &self.opts)
    }

    /// Opens the database for the first cycle; `None` once the failure is
    /// reported.
    pub fn open_first(&mut self) -> Option<Db> {
        match self.open() {
            Ok(db) => Some(db),
            Err(e) => {
                self.fail(0, &format!("open failed: {e}"), &[]);
                None
            }
        }
    }

    /// Prints the run's header: mode, seed and the options in force.
    pub fn announce(&self) {
        println!(
            "strata-stress: mode={} seed={} options: {}",
            self.mode, self.w.seed, self.described
        );
    }

    /// The run's totals, with what the filter and verification counted.
    pub fn totals(&self) -> Outcome {
        Outcome {
            filter_removed: self.opts.filter.removed(),
            expired_gone: self.expected.expired_gone,
            ..self.out
        }
    }

    /// Counts what the threads of a cycle did.
    pub fn count(&mut self, ran: &Ran) {
        self.out.ops += ran.ops;
        self.out.merges += ran.merges;
    }

    /// Reports a violation of `cycle` and counts it.
    pub fn fail(&mut self, cycle: u64, what: &str, logs: &[ThreadLog]) {
        violation(self.mode, &self.w, &self.described, cycle, what, logs);
        self.out.violations += 1;
    }

    /// A random crash: what happens to unsynced bytes and directory entries.
    pub fn crash_mode(&mut self) -> CrashMode {
        CrashMode {
            data: [
                DataLoss::KeepAll,
                DataLoss::DropUnsynced,
                DataLoss::KeepRandomPrefix,
                DataLoss::TearLastWrite,
            ][self.rng.gen_range(0..4)],
            lose_unsynced_dir_entries: self.rng.gen_bool(0.5),
        }
    }

    /// Reopens after the crash of `cycle` (made with `mode`) and checks the
    /// expected state; `None` once a violation is reported. `what` names the
    /// crash in the report.
    pub fn reopen_and_verify(
        &mut self,
        cycle: u64,
        logs: &[ThreadLog],
        mode: CrashMode,
        what: &str,
    ) -> Option<Db> {
        let db = match self.open() {
            Ok(db) => db,
            Err(e) => {
                self.fail(cycle, &format!("reopen after {what}, {mode:?}: {e}"), logs);
                return None;
            }
        };
        self.verify_reopened(&db, cycle, logs, mode, what)
            .then_some(db)
    }

    /// Checks the reopened `db` against the expected state; false once a
    /// violation is reported.
    pub fn verify_reopened(
        &mut self,
        db: &Db,
        cycle: u64,
        logs: &[ThreadLog],
        mode: CrashMode,
        what: &str,
    ) -> bool {
        let durability = self.durability(mode);
        match verify(db, &self.w, cycle, &mut self.expected, logs, durability) {
            Ok(_) => true,
            Err(e) => {
                self.fail(cycle, &format!("after {what}, {mode:?}: {e}"), logs);
                false
            }
        }
    }

    /// What survives `mode`: every acknowledged write if the OS kept all it
    /// had (unless `manual_wal_flush` left some in the process), the synced
    /// ones after power loss, a prefix without a WAL.
    pub fn durability(&self, mode: CrashMode) -> Durability {
        if self.opts.disable_wal {
            Durability::PrefixOnly
        } else if mode.data == DataLoss::KeepAll
            && !mode.lose_unsynced_dir_entries
            && !self.opts.db.manual_wal_flush
        {
            Durability::Acknowledged
        } else {
            Durability::Synced
        }
    }
}

/// Shares of cycles, in percent, that fill the disk, that damage a WAL
/// before the reopen, and after which CURRENT is attacked.
const FULL_DISK_PERCENT: u32 = 3;
const WAL_DAMAGE_PERCENT: u32 = 5;
const CURRENT_PERCENT: u32 = 4;
/// Cycles followed by a checkpoint, half of them cut short by a failed write.
const CHECKPOINT_PERCENT: u32 = 5;

/// Cycles followed by a repair of the closed database (`repair`).
const REPAIR_PERCENT: u32 = 3;

pub fn run(limits: &RunLimits) -> Outcome {
    let mut run = SimRun::new(limits, "sim");
    run.announce();
    run_cycles(&mut run, limits);
    run.totals()
}

fn run_cycles(run: &mut SimRun, limits: &RunLimits) {
    let Some(mut db) = run.open_first() else {
        return;
    };
    let start = Instant::now();
    while !limits.done(run.out.cycles, start) {
        let cycle = run.out.cycles;
        let roll = run.rng.gen_range(0..100);
        let reopened = if roll < FULL_DISK_PERCENT {
            crate::full_disk::cycle(run, db, cycle)
        } else {
            let damage_wal = roll < FULL_DISK_PERCENT + WAL_DAMAGE_PERCENT && !run.opts.disable_wal;
            halt_cycle(run, db, cycle, damage_wal)
        };
        db = match reopened {
            Some(db) => db,
            None => return,
        };
        run.out.cycles += 1;
        if run.rng.gen_range(0..100) < CURRENT_PERCENT {
            db = match attack_current(run, db, cycle) {
                Some(db) => db,
                None => return,
            };
        }
        if run.rng.gen_range(0..100) < CHECKPOINT_PERCENT {
            db = match checkpoint(run, db, cycle) {
                Some(db) => db,
                None => return,
            };
        }
        if run.rng.gen_range(0..100) < REPAIR_PERCENT {
            db = match crate::repair::cycle(run, db, cycle) {
                Some(db) => db,
                None => return,
            };
        }
    }
}

/// The ordinary cycle: the threads run to a random operation count, the
/// file system halts and crashes, and the reopened database is checked;
/// with `damage_wal`, a WAL is damaged between the crash and the reopen.
fn halt_cycle(run: &mut SimRun, db: Db, cycle: u64, damage_wal: bool) -> Option<Db> {
    let target = run.rng.gen_range(1..=2_000u64);
    let halted = Arc::new(AtomicBool::new(false));
    let ran = run_cycle(&db, run, cycle, target, &halted);
    run.count(&ran);
    let logs = ran.logs;
    if let Some(e) = ran.error {
        run.fail(cycle, &e, &logs);
        return None;
    }
    drop(db);
    if damage_wal {
        run.fs.crash(crate::wal_damage::CRASH);
        if let Some(damage) = crate::wal_damage::damage(run, cycle) {
            let db = crate::wal_damage::reopen(run, cycle, &logs, &damage)?;
            run.out.wal_damage += 1;
            return Some(db);
        }
        let mode = crate::wal_damage::CRASH;
        return run.reopen_and_verify(cycle, &logs, mode, "a halt (no WAL to damage)");
    }
    let mode = run.crash_mode();
    run.fs.crash(mode);
    run.reopen_and_verify(cycle, &logs, mode, "a halt")
}

/// Closes the database, attacks CURRENT, and reopens it once CURRENT is
/// restored: it must hold exactly the expected state. Counts as a cycle.
fn attack_current(run: &mut SimRun, db: Db, cycle: u64) -> Option<Db> {
    drop(db);
    let fs = run.fs.clone();
    let what = match crate::current::attack(&fs, Path::new(DB_PATH), &run.opts.db, &mut run.rng) {
        Ok(what) => what,
        Err(e) => {
            run.fail(cycle, &e, &[]);
            return None;
        }
    };
    run.out.ops += 2;
    let db = match run.open() {
        Ok(db) => db,
        Err(e) => {
            run.fail(cycle, &format!("{what}, restored: reopen failed: {e}"), &[]);
            return None;
        }
    };
    if let Err(e) = crate::expected::verify_unchanged(&db, &run.w, &run.expected) {
        run.fail(cycle, &format!("{what}, restored: {e}"), &[]);
        return None;
    }
    run.out.current_attacks += 1;
    run.out.cycles += 1;
    Some(db)
}

/// Takes a checkpoint of the quiet database (just reopened and checked), for
/// half of them failing the `n`-th append of the copy: a finished one must
/// open and hold exactly the expected state; a failed one must leave the
/// database as it was. Then a power loss, and the database must still hold
/// exactly the expected state (everything in it was durable before).
fn checkpoint(run: &mut SimRun, db: Db, cycle: u64) -> Option<Db> {
    use strata::fs::sim::{Fault, OpKind};
    let dir = format!("/checkpoint-{cycle}");
    let cut = run.rng.gen_bool(0.5).then(|| run.rng.gen_range(1..40u64));
    if let Some(n) = cut {
        run.fs.inject(Fault::ErrorOnNth {
            op: OpKind::Append,
            n,
        });
    }
    let made = db.create_checkpoint(Path::new(&dir));
    run.fs.clear_faults();
    run.out.ops += 1;
    match made {
        Ok(()) => {
            let checked = crate::families::open(Path::new(&dir), &run.opts)
                .map_err(|e| format!("opening checkpoint {dir}: {e}"))
                .and_then(|copy| {
                    crate::expected::verify_unchanged(&copy, &run.w, &run.expected)
                        .map_err(|e| format!("checkpoint {dir}: {e}"))
                });
            if let Err(e) = checked {
                run.fail(cycle, &e, &[]);
                return None;
            }
            run.out.checkpoints += 1;
        }
        Err(_) if cut.is_some() => run.out.checkpoints_cut += 1,
        Err(e) => {
            run.fail(cycle, &format!("checkpoint {dir} failed: {e}"), &[]);
            return None;
        }
    }
    run.fs.halt();
    drop(db);
    run.fs.crash(strata::fs::sim::CrashMode::POWER_LOSS);
    let db = match run.open() {
        Ok(db) => db,
        Err(e) => {
            run.fail(
                cycle,
                &format!("after checkpoint {dir} and a power loss: reopen failed: {e}"),
                &[],
            );
            return None;
        }
    };
    if let Err(e) = crate::expected::verify_unchanged(&db, &run.w, &run.expected) {
        run.fail(
            cycle,
            &format!("after checkpoint {dir} and a power loss: {e}"),
            &[],
        );
        return None;
    }
    Some(db)
}

/// Runs the threads until `target` operations or until `halted` is set (by
/// a crash point), then halts the file system.
pub fn run_cycle(db: &Db, run: &SimRun, cycle: u64, target: u64, halted: &Arc<AtomicBool>) -> Ran {
    run_threads(db, run, cycle, halted, false, |shared| {
        shared.ops.load(Ordering::Relaxed) < target
    })
}

/// What the threads of a cycle did.
pub struct Ran {
    pub logs: Vec<ThreadLog>,
    pub ops: u64,
    /// Merge operands in acknowledged batches.
    pub merges: u64,
    /// The first violation a thread found.
    pub error: Option<String>,
    /// Threads that ended on `NoSpace` (with `disk_full`).
    pub no_space_hits: u64,
}

/// Runs the threads while `keep_going` (polled every 100 µs) says so, every
/// thread is running and `halted` is clear. Without `disk_full` the file
/// system is then halted (the process dies there); with it, `NoSpace` on a
/// write ends a thread, and the threads are only stopped, the database left
/// working.
pub fn run_threads(
    db: &Db,
    run: &SimRun,
    cycle: u64,
    halted: &Arc<AtomicBool>,
    disk_full: bool,
    mut keep_going: impl FnMut(&Shared<'_>) -> bool,
) -> Ran {
    let w = run.w;
    let mut shared = match Shared::new(db, w, cycle, run.opts.disable_wal, halted.clone()) {
        Ok(shared) => shared,
        Err(e) => {
            return Ran {
                logs: vec![ThreadLog::default(); w.threads],
                ops: 0,
                merges: 0,
                error: Some(e),
                no_space_hits: 0,
            }
        }
    };
    shared.no_space_expected = disk_full;
    let results: Vec<(ThreadLog, Result<(), String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..w.threads)
            .map(|t| {
                let (shared, state) = (&shared, run.expected.keys[t].clone());
                s.spawn(move || {
                    let mut log = ThreadLog::default();
                    let result = run_thread(shared, t, state, &mut log);
                    (log, result)
                })
            })
            .collect();
        while keep_going(&shared)
            && !halted.load(Ordering::Acquire)
            && !handles.iter().all(|h| h.is_finished())
        {
            std::thread::sleep(Duration::from_micros(100));
        }
        if !disk_full {
            // The process dies here: from now on nothing reaches the disk.
            halted.store(true, Ordering::Release);
            run.fs.halt();
        }
        shared.stop.store(true, Ordering::Release);
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    (ThreadLog::default(), Err("a writer thread panicked".into()))
                })
            })
            .collect()
    });
    let mut error = None;
    let mut logs = Vec::with_capacity(results.len());
    for (log, result) in results {
        if let Err(e) = result {
            error.get_or_insert(e);
        }
        logs.push(log);
    }
    Ran {
        logs,
        ops: shared.ops.load(Ordering::Relaxed),
        merges: shared.merges.load(Ordering::Relaxed),
        error,
        no_space_hits: shared.no_space_hits.load(Ordering::Relaxed),
    }
}
