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

/// What holds writes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StallCause {
    /// L0 reached a trigger.
    L0,
    /// The pending compaction bytes reached a limit.
    PendingBytes,
    /// Every memtable but the active one is full, waiting for flushes.
    Memtables,
}

/// Why writes are held back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StallCondition {
    /// Writes wait until compaction catches up: `level0_stop_writes_trigger`
    /// or `hard_pending_compaction_bytes_limit`. (Writes that find every
    /// memtable full wait for a flush where they switch memtables.)
    Stopped { cause: StallCause },
    /// Writes are held to the write controller's rate:
    /// `level0_slowdown_writes_trigger`, `soft_pending_compaction_bytes_limit`,
    /// or memtables near `max_write_buffer_number`.
    Delayed { cause: StallCause },
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
    use StallCause::{PendingBytes, L0};
    use StallCondition::{Delayed, Stopped};
    if l0_files >= options.level0_stop_writes_trigger {
        Some(Stopped { cause: L0 })
    } else if over(options.hard_pending_compaction_bytes_limit) {
        Some(Stopped {
            cause: PendingBytes,
        })
    } else if l0_files >= options.level0_slowdown_writes_trigger {
        Some(Delayed { cause: L0 })
    } else if over(options.soft_pending_compaction_bytes_limit) {
        Some(Delayed {
            cause: PendingBytes,
        })
    } else {
        None
    }
}

/// Family `family`'s condition with `l0_files` L0 files, in RocksDB's
/// order: compaction's stops, then memtables near their limit (more than
/// three allowed, and the active one the last: every flush is behind), then
/// compaction's slowdowns. Memtables slow writes even when compaction is
/// off, as RocksDB's do.
pub(super) fn family_condition(family: &CfState, l0_files: usize) -> Option<StallCondition> {
    let options = &family.options;
    let compaction = stall_condition(&options.compaction, l0_files, family.pending_compaction_bytes);
    if matches!(compaction, Some(StallCondition::Stopped { .. })) {
        return compaction;
    }
    let limit = options.max_write_buffer_number;
    if limit > 3 && family.imm.len() + 1 >= limit - 1 && !family.imm.is_empty() {
        return Some(StallCondition::Delayed {
            cause: StallCause::Memtables,
        });
    }
    compaction
}

/// Whether family `family` with `l0_files` L0 files is a step from a stop:
/// L0 two files from its stop trigger, or its pending bytes in the last
/// quarter between the soft and the hard limit (RocksDB's near-stop rule).
pub(super) fn near_stop(family: &CfState, l0_files: usize) -> bool {
    let options = &family.options.compaction;
    let (soft, hard) = (
        options.soft_pending_compaction_bytes_limit,
        options.hard_pending_compaction_bytes_limit,
    );
    l0_files + 2 >= options.level0_stop_writes_trigger
        || (hard > 0
            && family.pending_compaction_bytes > soft
            && family.pending_compaction_bytes - soft > hard.saturating_sub(soft) / 4 * 3)
}

/// The worst condition over every family (writes are held back for any
/// family that is behind, as RocksDB's write controller is shared).
pub(super) fn current(state: &DbState) -> Option<StallCondition> {
    let mut worst: Option<StallCondition> = None;
    for (&id, family) in &state.cfs {
        let l0_files = state.versions.current(id).num_files(0);
        let Some(condition) = family_condition(family, l0_files) else {
            continue;
        };
        let stops = matches!(condition, StallCondition::Stopped { .. });
        if worst.is_none_or(|w| stops && !matches!(w, StallCondition::Stopped { .. })) {
            worst = Some(condition);
        }
    }
    worst
}

/// Counts the condition of family `family`'s version just installed.
pub(super) fn count(family: &CfState, version: &Version, compacting: &HashSet<u64>) {
    let Some(condition) = family_condition(family, version.num_files(0)) else {
        return;
    };
    let stats = &family.shared.stats;
    let (counter, while_compacting) = match condition {
        StallCondition::Stopped { cause: StallCause::L0 } => (
            StallCounter::L0Stop,
            Some(StallCounter::L0StopWithCompaction),
        ),
        StallCondition::Stopped { .. } => (StallCounter::PendingBytesStop, None),
        StallCondition::Delayed { cause: StallCause::L0 } => (
            StallCounter::L0Slowdown,
            Some(StallCounter::L0SlowdownWithCompaction),
        ),
        StallCondition::Delayed {
            cause: StallCause::PendingBytes,
        } => (StallCounter::PendingBytesSlowdown, None),
        StallCondition::Delayed {
            cause: StallCause::Memtables,
        } => (StallCounter::MemtableSlowdown, None),
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
        use StallCause::{PendingBytes, L0};
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
        assert_eq!(at(20, 0), Some(Delayed { cause: L0 }));
        assert_eq!(at(20, 100), Some(Delayed { cause: L0 }));
        assert_eq!(at(0, 100), Some(Delayed { cause: PendingBytes }));
        assert_eq!(at(36, 0), Some(Stopped { cause: L0 }));
        assert_eq!(at(36, 200), Some(Stopped { cause: L0 }));
        assert_eq!(at(20, 200), Some(Stopped { cause: PendingBytes }));
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
