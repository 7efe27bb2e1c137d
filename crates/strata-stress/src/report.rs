//! What a run prints: its outcome line, and for a violation everything
//! needed to reproduce and understand it.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::expected::ThreadLog;
use crate::workload::Workload;

/// Totals of a run.
#[derive(Debug, Default, Clone, Copy)]
pub struct Outcome {
    pub cycles: u64,
    pub ops: u64,
    pub violations: u64,
    /// Cycles that filled the disk (sim).
    pub full_disk: u64,
    /// CURRENT files deleted or damaged between cycles.
    pub current_attacks: u64,
    /// Checkpoints taken between cycles and opened to check (sim), and of
    /// them the ones a failed write cut short.
    pub checkpoints: u64,
    pub checkpoints_cut: u64,
    /// Databases repaired between cycles and checked (sim).
    pub repairs: u64,
    /// WALs damaged mid-file between cycles (sim).
    pub wal_damage: u64,
    /// WAL damages whose dropped records the engine reported fewer than
    /// followed the damage.
    pub dropped_undercounted: u64,
    /// WAL damages the open refused because a column family's tables held
    /// writes past the damage (no point in time to restore); the byte was
    /// then restored and the database checked whole.
    pub refused_families_ahead: u64,
    /// Rounds of a second process opening, destroying and checking the
    /// database while the writer held it (kill).
    pub intruder_rounds: u64,
    /// Merge operands in acknowledged batches.
    pub merges: u64,
    /// Values the compaction filter removed in this process (kill mode's
    /// writer removes its own, unseen).
    pub filter_removed: u64,
    /// Keys verification found absent that may have held a value the
    /// filter removes.
    pub expired_gone: u64,
}

impl Outcome {
    /// The run's last lines: what the attacks did, then the outcome line.
    pub fn print(&self, mode: &str) {
        println!(
            "strata-stress: attacks: full-disk={} current={} wal-damage={} \
             (dropped records under-counted: {}, refused with families ahead: {}) \
             intruder-rounds={} checkpoints={} (cut short by a failed write: {}) repairs={}",
            self.full_disk,
            self.current_attacks,
            self.wal_damage,
            self.dropped_undercounted,
            self.refused_families_ahead,
            self.intruder_rounds,
            self.checkpoints,
            self.checkpoints_cut,
            self.repairs
        );
        println!(
            "strata-stress: merges={} filter-removed={} expired-found-gone={}",
            self.merges, self.filter_removed, self.expired_gone
        );
        println!(
            "strata-stress: mode={mode} cycles={} ops={} violations={}",
            self.cycles, self.ops, self.violations
        );
    }
}

/// Ends the process if it is not dropped within its limit: a call that
/// hangs cannot be joined, so the watchdog reports the violation, prints the
/// outcome line and exits.
pub struct Watchdog {
    disarm: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    pub fn start(limit: Duration, on_expiry: impl FnOnce() + Send + 'static) -> Watchdog {
        let (disarm, armed) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            if let Err(RecvTimeoutError::Timeout) = armed.recv_timeout(limit) {
                on_expiry();
                std::process::exit(1);
            }
        });
        Watchdog {
            disarm: Some(disarm),
            thread: Some(thread),
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        // Disconnecting the channel wakes the thread without expiry.
        drop(self.disarm.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Prints a violation: the seed and flags to reproduce it, the options, and
/// each thread's history in the failing cycle (its last batches in full).
pub fn violation(
    mode: &str,
    w: &Workload,
    options: &str,
    cycle: u64,
    what: &str,
    logs: &[ThreadLog],
) {
    eprintln!("strata-stress: VIOLATION in cycle {cycle}: {what}");
    eprintln!(
        "  reproduce: strata-stress --mode={mode} --seed={} --threads={}",
        w.seed, w.threads
    );
    eprintln!("  options: {options}");
    for (t, log) in logs.iter().enumerate() {
        let acked = log.acked.iter().filter(|a| a.is_some()).count();
        eprintln!(
            "  thread {t}: {} batches started, {acked} acknowledged, last synced {:?}",
            log.started.len(),
            &log.synced[log.synced.len().saturating_sub(8)..]
        );
        let from = log.started.len().saturating_sub(3);
        for index in from..log.started.len() {
            let batch = w.batch(cycle, t, index as u64);
            let ops: Vec<String> = batch.ops.iter().map(|op| op.describe()).collect();
            eprintln!(
                "    batch {index} (started at {}, acknowledged at {:?}, sync {}): {}",
                log.started[index],
                log.acked[index],
                batch.sync,
                ops.join(", ")
            );
        }
    }
}
