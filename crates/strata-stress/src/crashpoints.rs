//! `--mode=crashpoints`: like `sim`, but each cycle's crash comes from inside
//! the engine, at a named crash point (WAL append and sync, memtable switch,
//! table and blob file write and sync, flush and compaction install, MANIFEST append and
//! sync, CURRENT replacement, obsolete-file deletion): the point's k-th hit
//! halts the file system there. Every other cycle crashes a second time
//! during the recovery that follows. Each point must fire at least three
//! times over a run long enough to give it the chance.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use rand::Rng;
use strata::crash_point::CRASH_POINTS;
use strata::fs::SimFs;

use crate::report::Outcome;
use crate::sim::{run_cycle, SimRun};
use crate::RunLimits;

/// Points recovery passes: the second crash of a cycle is armed at one of
/// these while the database reopens.
const RECOVERY_POINTS: &[&str] = &[
    "recovery.replayed",
    "recovery.flushed",
    "recovery.new_wal",
    "recovery.new_manifest",
    "manifest.new.written",
    "current.temp_synced",
    "current.renamed",
    "table.before_footer",
    "table.before_sync",
    "table.after_sync",
];

/// Fires at least this often per point in a run of enough cycles.
const MIN_HITS: u64 = 3;

/// Arms `point` to halt `fs` at its `nth` hit, setting `halted` first so the
/// writer threads take the errors that follow as the crash they are.
fn arm(point: &'static str, nth: u64, fs: &SimFs, halted: &Arc<AtomicBool>, hits: &Arc<AtomicU64>) {
    let (fs, halted, hits) = (fs.clone(), halted.clone(), hits.clone());
    let countdown = AtomicU64::new(nth);
    let armed = fail::cfg_callback(point, move || {
        if countdown.fetch_sub(1, Ordering::AcqRel) == 1 {
            halted.store(true, Ordering::Release);
            fs.halt();
            hits.fetch_add(1, Ordering::Relaxed);
        }
    });
    if let Err(e) = armed {
        eprintln!("strata-stress: cannot arm crash point {point}: {e}");
    }
}

pub fn run(limits: &RunLimits) -> Outcome {
    let mut run = SimRun::new(limits, "crashpoints");
    // Crash points on the sync path need synced writes and a WAL; those of
    // flush and compaction need both in every cycle: small memtables.
    run.opts.disable_wal = false;
    run.opts.db.write_buffer_size = 64 << 10;
    run.opts.db.compaction.level0_file_num_compaction_trigger = 2;
    run.opts.sync_ratio = run.opts.sync_ratio.max(0.1);
    // Blob files in every cycle, small ones collected often, so the blob
    // write and deletion points fire too.
    let blob = &mut run.opts.db.blob;
    blob.enable_blob_files = true;
    blob.min_blob_size = blob.min_blob_size.min(100);
    blob.blob_file_size = blob.blob_file_size.min(64 << 10);
    blob.blob_file_starting_level = 0;
    blob.enable_blob_garbage_collection = true;
    run.w.sync_ratio = run.opts.sync_ratio;
    run.described = run.opts.to_string();
    run.announce();
    let hits: Vec<Arc<AtomicU64>> = CRASH_POINTS.iter().map(|_| Arc::default()).collect();
    let hits_of = |point: &str| {
        let i = CRASH_POINTS.iter().position(|p| *p == point).unwrap_or(0);
        hits[i].clone()
    };
    let running: Vec<&'static str> = CRASH_POINTS
        .iter()
        .copied()
        .filter(|p| !p.starts_with("recovery."))
        .collect();
    let Some(mut db) = run.open_first() else {
        return run.totals();
    };
    let start = Instant::now();
    let mut second_crashes = 0u64;
    while !limits.done(run.out.cycles, start) {
        let cycle = run.out.cycles;
        let point = running[cycle as usize % running.len()];
        let halted = Arc::new(AtomicBool::new(false));
        let nth = run.rng.gen_range(1..=3);
        arm(point, nth, &run.fs, &halted, &hits_of(point));
        let ran = run_cycle(&db, &run, cycle, 4_000, &halted);
        fail::remove(point);
        run.count(&ran);
        let logs = ran.logs;
        if let Some(e) = ran.error {
            run.fail(cycle, &format!("crash point {point}: {e}"), &logs);
            return run.totals();
        }
        drop(db);
        let mode = run.crash_mode();
        run.fs.crash(mode);
        if cycle % 2 == 1 {
            // A second crash, while recovery runs.
            let point = RECOVERY_POINTS[(cycle as usize / 2) % RECOVERY_POINTS.len()];
            let halted = Arc::new(AtomicBool::new(false));
            arm(point, 1, &run.fs, &halted, &hits_of(point));
            let attempt = run.open();
            fail::remove(point);
            if halted.load(Ordering::Acquire) {
                drop(attempt);
                let again = run.crash_mode();
                run.fs.crash(again);
                second_crashes += 1;
            } else if let Ok(reopened) = attempt {
                // Recovery did not pass the point this time.
                db = reopened;
                let what = format!("crash point {point}");
                if !run.verify_reopened(&db, cycle, &logs, mode, &what) {
                    return run.totals();
                }
                run.out.cycles += 1;
                continue;
            }
        }
        // Anything the first crash left is durable, so a crash during
        // recovery may lose nothing more: the first crash's promise holds.
        db = match run.reopen_and_verify(cycle, &logs, mode, &format!("crash point {point}")) {
            Some(db) => db,
            None => return run.totals(),
        };
        run.out.cycles += 1;
    }
    let counts: Vec<(&str, u64)> = CRASH_POINTS
        .iter()
        .zip(&hits)
        .map(|(p, h)| (*p, h.load(Ordering::Relaxed)))
        .collect();
    let listed: Vec<String> = counts.iter().map(|(p, n)| format!("{p}={n}")).collect();
    println!(
        "strata-stress: crash points fired: {} (second crashes during recovery: {second_crashes})",
        listed.join(" ")
    );
    // Each running point is armed every `running.len()` cycles, each recovery
    // point every `2 * RECOVERY_POINTS.len()`; judge only runs long enough.
    let enough =
        run.out.cycles >= 3 * MIN_HITS * running.len().max(2 * RECOVERY_POINTS.len()) as u64;
    if enough {
        for (p, n) in counts.iter().filter(|(_, n)| *n < MIN_HITS) {
            eprintln!("strata-stress: crash point {p} fired {n} times, fewer than {MIN_HITS}");
            run.out.violations += 1;
        }
    }
    run.totals()
}
