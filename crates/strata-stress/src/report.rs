//! What a run prints: its outcome line, and for a violation everything
//! needed to reproduce and understand it.

use crate::expected::ThreadLog;
use crate::workload::Workload;

/// Totals of a run.
#[derive(Debug, Default, Clone, Copy)]
pub struct Outcome {
    pub cycles: u64,
    pub ops: u64,
    pub violations: u64,
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
            let ops: Vec<String> = batch
                .ops
                .iter()
                .map(|op| match &op.value {
                    Some(v) => format!("put k{} ({} bytes)", op.key, v.len()),
                    None => format!("delete k{}", op.key),
                })
                .collect();
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
