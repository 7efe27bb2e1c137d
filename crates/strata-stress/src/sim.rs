//! `--mode=sim`: the engine on the simulated file system. Each cycle runs the
//! threads until a random number of operations, halts the file system at that
//! instant (the process dies), crashes it (dropping unsynced bytes, keeping a
//! random prefix of them, tearing the last write, or losing unsynced
//! directory entries), reopens, and checks the expected state.

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
        let opts = options::draw(limits.seed, Arc::new(fs.clone()));
        let described = opts.to_string();
        let w = Workload {
            seed: limits.seed,
            threads: limits.threads,
            keys_per_thread: 200,
            sync_ratio: opts.sync_ratio,
        };
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
        Db::open(Path::new(DB_PATH), self.opts.db.clone())
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
            Ok(()) => true,
            Err(e) => {
                self.fail(cycle, &format!("after {what}, {mode:?}: {e}"), logs);
                false
            }
        }
    }

    /// What survives `mode`: every acknowledged write if the OS kept all it
    /// had, the synced ones after power loss, a prefix without a WAL.
    pub fn durability(&self, mode: CrashMode) -> Durability {
        if self.opts.disable_wal {
            Durability::PrefixOnly
        } else if mode.data == DataLoss::KeepAll && !mode.lose_unsynced_dir_entries {
            Durability::Acknowledged
        } else {
            Durability::Synced
        }
    }
}

pub fn run(limits: &RunLimits) -> Outcome {
    let mut run = SimRun::new(limits, "sim");
    run.announce();
    let Some(mut db) = run.open_first() else {
        return run.out;
    };
    let start = Instant::now();
    while !limits.done(run.out.cycles, start) {
        let cycle = run.out.cycles;
        let target = run.rng.gen_range(1..=2_000u64);
        let halted = Arc::new(AtomicBool::new(false));
        let (logs, ops, error) = run_cycle(&db, &run, cycle, target, &halted);
        run.out.ops += ops;
        if let Some(e) = error {
            run.fail(cycle, &e, &logs);
            return run.out;
        }
        drop(db);
        let mode = run.crash_mode();
        run.fs.crash(mode);
        db = match run.reopen_and_verify(cycle, &logs, mode, "a halt") {
            Some(db) => db,
            None => return run.out,
        };
        run.out.cycles += 1;
    }
    run.out
}

/// Runs the threads until `target` operations or until `halted` is set (by
/// a crash point), then halts the file system. Returns the threads' logs,
/// the operations done, and the first violation.
pub fn run_cycle(
    db: &Db,
    run: &SimRun,
    cycle: u64,
    target: u64,
    halted: &Arc<AtomicBool>,
) -> (Vec<ThreadLog>, u64, Option<String>) {
    let w = run.w;
    let shared = Shared::new(db, w, cycle, run.opts.disable_wal, halted.clone());
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
        while shared.ops.load(Ordering::Relaxed) < target
            && !halted.load(Ordering::Acquire)
            && !handles.iter().all(|h| h.is_finished())
        {
            std::thread::sleep(Duration::from_micros(100));
        }
        // The process dies here: from now on nothing reaches the disk.
        halted.store(true, Ordering::Release);
        run.fs.halt();
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
    (logs, shared.ops.load(Ordering::Relaxed), error)
}
