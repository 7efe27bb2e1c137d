//! Sim mode's full-disk cycle: the simulated disk gets a quota a little
//! above what the database uses, and the threads write until each write
//! fails with `NoSpace` (a write that hangs instead is a violation, caught
//! by a watchdog). The acknowledged batches are recorded as in any cycle.
//! Then space comes back (`clear_faults`), and without any call to
//! `Db::resume` writes must be accepted again within a bounded number of
//! retries; the live database must hold every acknowledged batch, and a
//! crash and reopen follow as in any cycle.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rand::Rng;
use strata::fs::sim::Fault;
use strata::Db;

use crate::expected::{verify, Durability};
use crate::report::{violation, Watchdog};
use crate::sim::{run_threads, SimRun};

/// A write (or the whole filling of the disk) taking this long is hung.
const HANG_LIMIT: Duration = Duration::from_secs(60);
/// Operations after which a quota not yet reached is lowered to what the
/// files use now: compaction can keep a database below a loose quota.
const OPS_BEFORE_TIGHTENING: u64 = 2_000;
/// Retries of a write once space is back, and the pause between them.
/// Automatic recovery waits 200 ms, doubling per failed attempt up to 5 s,
/// so 30 s leaves room for several attempts at the longest pause.
const RESUME_RETRIES: u32 = 600;
const RESUME_PAUSE: Duration = Duration::from_millis(50);

/// Runs a full-disk cycle on `db`; the reopened database, or `None` once a
/// violation is reported.
pub fn cycle(run: &mut SimRun, db: Db, cycle: u64) -> Option<Db> {
    let slack = run.rng.gen_range(1..=256u64) << 10;
    let mut quota = run.fs.total_bytes() + slack;
    run.fs.inject(Fault::SpaceQuota { bytes: quota });
    let halted = Arc::new(AtomicBool::new(false));
    let watchdog = hang_watchdog(
        run,
        cycle,
        format!("writes on a full disk (quota {quota} bytes)"),
    );
    let mut tightened_at = 0;
    let fs = run.fs.clone();
    let ran = run_threads(&db, run, cycle, &halted, true, |shared| {
        let ops = shared.ops.load(Ordering::Relaxed);
        if ops - tightened_at >= OPS_BEFORE_TIGHTENING {
            quota = quota.min(fs.total_bytes());
            fs.inject(Fault::SpaceQuota { bytes: quota });
            tightened_at = ops;
        }
        true
    });
    drop(watchdog);
    run.count(&ran);
    let logs = ran.logs;
    if let Some(e) = ran.error {
        run.fail(
            cycle,
            &format!("full disk (quota {quota} bytes): {e}"),
            &logs,
        );
        return None;
    }
    if ran.no_space_hits == 0 {
        let e = "full disk: the threads ended, none on NoSpace";
        run.fail(cycle, e, &logs);
        return None;
    }
    run.fs.clear_faults();
    let watchdog = hang_watchdog(run, cycle, "a write once space was back".into());
    let resumed = retry_write(&db);
    drop(watchdog);
    match resumed {
        Ok(tries) => run.out.ops += u64::from(tries),
        Err(e) => {
            let e = format!(
                "writes did not resume by themselves within {RESUME_RETRIES} retries \
                 {RESUME_PAUSE:?} apart once space was back: {e}"
            );
            run.fail(cycle, &e, &logs);
            return None;
        }
    }
    // Every acknowledged batch is readable at once; what a crash keeps is
    // checked next, against the state before this cycle.
    let mut live = run.expected.clone();
    if let Err(e) = verify(
        &db,
        &run.w,
        cycle,
        &mut live,
        &logs,
        Durability::Acknowledged,
    ) {
        run.fail(
            cycle,
            &format!("after the disk was full and writes resumed: {e}"),
            &logs,
        );
        return None;
    }
    run.out.full_disk += 1;
    run.fs.halt();
    drop(db);
    let mode = run.crash_mode();
    run.fs.crash(mode);
    run.reopen_and_verify(cycle, &logs, mode, "a full disk, then a halt")
}

/// Writes a key outside every thread's until it is accepted; the number of
/// attempts, or the last error.
fn retry_write(db: &Db) -> Result<u32, strata::Error> {
    let mut tries = 0;
    loop {
        tries += 1;
        match db.put(b"full-disk~probe", b"space is back") {
            Ok(()) => return Ok(tries),
            Err(e) if tries >= RESUME_RETRIES => return Err(e),
            Err(_) => std::thread::sleep(RESUME_PAUSE),
        }
    }
}

/// A watchdog that reports `what` as hung in `cycle`, with the run's totals.
fn hang_watchdog(run: &SimRun, cycle: u64, what: String) -> Watchdog {
    let (mode, w, described) = (run.mode, run.w, run.described.clone());
    let mut out = run.out;
    Watchdog::start(HANG_LIMIT, move || {
        let what = format!("{what} hung for more than {HANG_LIMIT:?}");
        violation(mode, &w, &described, cycle, &what, &[]);
        out.violations += 1;
        out.print(mode);
    })
}
