//! Write stall conditions: whether compaction is far enough behind that writes
//! must slow down or stop. The write path holds writers back by them; every
//! installed version is counted by them for the `Stalls(count)` line of
//! `strata.stats`, as RocksDB's `RecalculateWriteStallConditions` counts.

use std::collections::HashSet;

use super::DbState;
use crate::cf::stats::StallCounter;
use crate::cf::CfState;
use crate::options::{CompactionOptions, CompactionStyle};
use crate::version::Version;

/// Why writes are held back. `l0`: L0 reached its trigger (else the pending
/// compaction bytes reached their limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StallCondition {
    /// Writes wait until compaction catches up: `level0_stop_writes_trigger`
    /// or `hard_pending_compaction_bytes_limit`.
    Stopped { l0: bool },
    /// Writes are held to `delayed_write_rate`:
    /// `level0_slowdown_writes_trigger` or `soft_pending_compaction_bytes_limit`.
    Delayed { l0: bool },
}

/// The condition for `l0_files` L0 files and `pending_bytes` of compaction
/// debt, in RocksDB's order: a stop before a slowdown, L0 before pending
/// bytes. None when automatic compaction is off (nothing would catch up) and
/// under FIFO, which keeps every table in L0 by design: its L0 is bounded by
/// the FIFO size limit, not by compaction.
pub(super) fn stall_condition(
    options: &CompactionOptions,
    l0_files: usize,
    pending_bytes: u64,
) -> Option<StallCondition> {
    if options.disable_auto_compactions || options.compaction_style == CompactionStyle::Fifo {
        return None;
    }
    let over = |limit: u64| limit != 0 && pending_bytes >= limit;
    if l0_files >= options.level0_stop_writes_trigger {
        Some(StallCondition::Stopped { l0: true })
    } else if over(options.hard_pending_compaction_bytes_limit) {
        Some(StallCondition::Stopped { l0: false })
    } else if l0_files >= options.level0_slowdown_writes_trigger {
        Some(StallCondition::Delayed { l0: true })
    } else if over(options.soft_pending_compaction_bytes_limit) {
        Some(StallCondition::Delayed { l0: false })
    } else {
        None
    }
}

/// The worst condition over every family (writes are held back for any
/// family that is behind, as RocksDB's write controller is shared), with the
/// `delayed_write_rate` of the family that causes it.
pub(super) fn current(state: &DbState) -> Option<(StallCondition, u64)> {
    let mut worst: Option<(StallCondition, u64)> = None;
    for (&id, family) in &state.cfs {
        let options = &family.options.compaction;
        let l0_files = state.versions.current(id).num_files(0);
        let Some(condition) = stall_condition(options, l0_files, family.pending_compaction_bytes)
        else {
            continue;
        };
        let stops = matches!(condition, StallCondition::Stopped { .. });
        if worst.is_none_or(|(w, _)| stops && !matches!(w, StallCondition::Stopped { .. })) {
            worst = Some((condition, options.delayed_write_rate));
        }
    }
    worst
}

/// Counts the condition of family `family`'s version just installed.
pub(super) fn count(family: &CfState, version: &Version, compacting: &HashSet<u64>) {
    let options = &family.options.compaction;
    let Some(condition) = stall_condition(
        options,
        version.num_files(0),
        family.pending_compaction_bytes,
    ) else {
        return;
    };
    let stats = &family.shared.stats;
    let (counter, while_compacting) = match condition {
        StallCondition::Stopped { l0: true } => (
            StallCounter::L0Stop,
            Some(StallCounter::L0StopWithCompaction),
        ),
        StallCondition::Stopped { l0: false } => (StallCounter::PendingBytesStop, None),
        StallCondition::Delayed { l0: true } => (
            StallCounter::L0Slowdown,
            Some(StallCounter::L0SlowdownWithCompaction),
        ),
        StallCondition::Delayed { l0: false } => (StallCounter::PendingBytesSlowdown, None),
    };
    stats.count_stall(counter);
    let l0_compacting = || {
        version
            .files(0)
            .iter()
            .any(|f| compacting.contains(&f.number))
    };
    if let Some(subset) = while_compacting.filter(|_| l0_compacting()) {
        stats.count_stall(subset);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_win_over_slowdowns_and_l0_over_pending_bytes() {
        use StallCondition::*;
        let options = CompactionOptions {
            level0_slowdown_writes_trigger: 20,
            level0_stop_writes_trigger: 36,
            soft_pending_compaction_bytes_limit: 100,
            hard_pending_compaction_bytes_limit: 200,
            ..CompactionOptions::default()
        };
        let at = |l0, pending| stall_condition(&options, l0, pending);
        assert_eq!(at(19, 99), None);
        assert_eq!(at(20, 0), Some(Delayed { l0: true }));
        assert_eq!(at(20, 100), Some(Delayed { l0: true }));
        assert_eq!(at(0, 100), Some(Delayed { l0: false }));
        assert_eq!(at(36, 0), Some(Stopped { l0: true }));
        assert_eq!(at(36, 200), Some(Stopped { l0: true }));
        assert_eq!(at(20, 200), Some(Stopped { l0: false }));
        // A zero limit is no limit.
        let unlimited = CompactionOptions {
            soft_pending_compaction_bytes_limit: 0,
            hard_pending_compaction_bytes_limit: 0,
            ..options.clone()
        };
        assert_eq!(stall_condition(&unlimited, 0, u64::MAX), None);
        for off in [
            CompactionOptions {
                disable_auto_compactions: true,
                ..options.clone()
            },
            CompactionOptions {
                compaction_style: CompactionStyle::Fifo,
                ..options.clone()
            },
        ] {
            assert_eq!(stall_condition(&off, 100, u64::MAX), None);
        }
    }
}
