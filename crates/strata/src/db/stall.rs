//! Write stall conditions per family: the write controller's rules
//! (`write/controller.rs`) applied to each family's L0, compaction debt and
//! memtables. The write path holds writers back by them; every
//! installed version is counted by them for the `Stalls(count)` line of
//! `strata.stats`, as RocksDB's `RecalculateWriteStallConditions` counts.

use std::collections::HashSet;

use super::DbState;
use crate::cf::stats::StallCounter;
use crate::cf::CfState;
use crate::listener::WriteStallCondition;
use crate::version::Version;
use crate::write::controller::{stall_condition, StallCause, StallCondition};

/// Family `family`'s condition with `l0_files` L0 files, in RocksDB's
/// order: compaction's stops, then memtables near their limit (more than
/// three allowed, and the active one the last: every flush is behind), then
/// compaction's slowdowns. Memtables slow writes even when compaction is
/// off, as RocksDB's do.
pub(super) fn family_condition(family: &CfState, l0_files: usize) -> Option<StallCondition> {
    let options = &family.options;
    let compaction = stall_condition(
        &options.compaction,
        l0_files,
        family.pending_compaction_bytes,
    );
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

/// `condition` as the listeners see it.
pub(super) fn listener_condition(condition: Option<StallCondition>) -> WriteStallCondition {
    match condition {
        None => WriteStallCondition::Normal,
        Some(StallCondition::Delayed { .. }) => WriteStallCondition::Delayed,
        Some(StallCondition::Stopped { .. }) => WriteStallCondition::Stopped,
    }
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
        StallCondition::Stopped {
            cause: StallCause::L0,
        } => (
            StallCounter::L0Stop,
            Some(StallCounter::L0StopWithCompaction),
        ),
        StallCondition::Stopped { .. } => (StallCounter::PendingBytesStop, None),
        StallCondition::Delayed {
            cause: StallCause::L0,
        } => (
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
