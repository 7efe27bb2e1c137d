//! The universal (tiered) compaction picker: a pure function of a version.
//!
//! Sorted runs, newest first: each L0 file, then each non-empty level. Data in
//! an earlier run is always newer than data in a later one; every task keeps
//! that true by merging a run of consecutive runs into the level just above
//! the next older run (or into the last level when the oldest run is merged).
//!
//! Once there are `level0_file_num_compaction_trigger` runs, the checks are
//! RocksDB's, in order: space amplification (all runs but the oldest, as a
//! percent of the oldest, above `max_size_amplification_percent`: merge
//! everything); size ratio (from the newest run, take runs while the next is
//! no larger than the accumulated size plus `size_ratio` percent, at least
//! `min_merge_width`, at most `max_merge_width`); then, if there are still too
//! many runs, merge the newest ones down to the trigger. Last, while L0
//! holds writes back (at `level0_slowdown_writes_trigger` files), every L0
//! run is merged down even if no rule is due: no option setting may leave
//! writes stopped with no compaction to end it.
//!
//! Compactions run in parallel on disjoint runs (RocksDB's picker skips
//! runs being compacted too): while some run, a task may take only runs
//! newer than every run they hold, and merges them into the level above the
//! first held run, so data in newer runs stays above older data whatever
//! finishes first. Space amplification, which merges everything, waits until
//! nothing runs.

use std::collections::HashSet;
use std::sync::Arc;

use super::{CompactionReason, CompactionTask};
use crate::compression::CompressionType;
use crate::options::CompactionOptions;
use crate::version::{FileMetaData, Version};

/// One sorted run: an L0 file, or a whole level.
#[derive(Debug, Clone)]
pub struct SortedRun {
    pub level: usize,
    pub files: Vec<Arc<FileMetaData>>,
    pub bytes: u64,
}

/// The sorted runs of `version`, newest first.
pub fn sorted_runs(version: &Version, num_levels: usize) -> Vec<SortedRun> {
    let l0 = version.files(0).iter().map(|f| SortedRun {
        level: 0,
        files: vec![f.clone()],
        bytes: f.file_size,
    });
    let deeper = (1..num_levels)
        .filter(|&l| version.num_files(l) > 0)
        .map(|l| SortedRun {
            level: l,
            files: version.files(l).to_vec(),
            bytes: version.level_bytes(l),
        });
    l0.chain(deeper).collect()
}

/// Picks the next universal compaction, if one is due, among the runs no
/// running compaction (`busy` holds their files) takes part in.
pub fn pick(
    version: &Version,
    options: &CompactionOptions,
    default_compression: CompressionType,
    busy: &HashSet<u64>,
) -> Option<CompactionTask> {
    let runs = sorted_runs(version, options.num_levels);
    // The runs newer than every run a running compaction holds.
    let free = runs
        .iter()
        .position(|r| r.files.iter().any(|f| busy.contains(&f.number)))
        .unwrap_or(runs.len());
    pick_due(&runs, free, options, default_compression)
        .or_else(|| relieve_l0(version, &runs, free, options, default_compression))
}

/// The fourth rule: writes held back by L0 (at
/// `level0_slowdown_writes_trigger` files) and none of RocksDB's rules
/// due: every L0 run is merged down, with the
/// run below when L0 alone would stay in L0, so L0 empties. Without it a
/// lone L0 run (stop trigger 1), or runs whose sizes the size-ratio rule
/// never merges with the trigger at the stop trigger, stopped writes for
/// good. Waits while a compaction holds any run it would take.
fn relieve_l0(
    version: &Version,
    runs: &[SortedRun],
    free: usize,
    options: &CompactionOptions,
    default_compression: CompressionType,
) -> Option<CompactionTask> {
    let l0_files = version.num_files(0);
    if l0_files == 0 || l0_files < options.level0_slowdown_writes_trigger {
        return None;
    }
    let mut end = l0_files;
    if runs.get(end).is_some_and(|next| next.level == 1) {
        end += 1;
    }
    if end > free {
        return None;
    }
    let score = l0_files as f64 / options.level0_file_num_compaction_trigger.max(1) as f64;
    let task = task(
        runs,
        0..end,
        options,
        default_compression,
        (CompactionReason::UniversalSortedRunNum, score),
    )?;
    // A single-level tree cannot move its lone run anywhere.
    (task.output_level > 0 || end > 1).then_some(task)
}

/// RocksDB's three rules, in order, over `runs`, of which the first `free`
/// are held by no running compaction.
fn pick_due(
    runs: &[SortedRun],
    free: usize,
    options: &CompactionOptions,
    default_compression: CompressionType,
) -> Option<CompactionTask> {
    let trigger = options.level0_file_num_compaction_trigger.max(1);
    if runs.len() < trigger || runs.len() < 2 {
        return None;
    }
    let u = &options.compaction_options_universal;
    // 1. Space amplification.
    let (oldest, newer) = runs.split_last()?;
    let newer_bytes: u64 = newer.iter().map(|r| r.bytes).sum();
    if free == runs.len()
        && u128::from(newer_bytes) * 100
            > u128::from(oldest.bytes) * u128::from(u.max_size_amplification_percent)
    {
        let score = newer_bytes as f64 / oldest.bytes.max(1) as f64;
        return task(
            runs,
            0..runs.len(),
            options,
            default_compression,
            (CompactionReason::UniversalSizeAmplification, score),
        );
    }
    // 2. Size ratio, from each start position in turn.
    let max_width = usize::try_from(u.max_merge_width).unwrap_or(usize::MAX);
    let min_width = usize::try_from(u.min_merge_width).unwrap_or(usize::MAX);
    for start in 0..free {
        let mut accumulated = runs[start].bytes;
        let mut end = start + 1;
        while end < free && end - start < max_width {
            let limit = u128::from(accumulated) * u128::from(100 + u.size_ratio) / 100;
            if u128::from(runs[end].bytes) > limit {
                break;
            }
            accumulated += runs[end].bytes;
            end += 1;
        }
        if end - start >= min_width {
            let score = runs.len() as f64 / trigger as f64;
            return task(
                runs,
                start..end,
                options,
                default_compression,
                (CompactionReason::UniversalSizeRatio, score),
            );
        }
    }
    // 3. Too many runs: merge the newest down to the trigger.
    if runs.len() > trigger {
        let width = (runs.len() - trigger + 1).max(2).min(free);
        if width < 2 {
            return None;
        }
        let score = runs.len() as f64 / trigger as f64;
        return task(
            runs,
            0..width,
            options,
            default_compression,
            (CompactionReason::UniversalSortedRunNum, score),
        );
    }
    None
}

/// Everything into one run in the last level (manual compaction).
pub fn full_task(
    version: &Version,
    options: &CompactionOptions,
    default_compression: CompressionType,
) -> Option<CompactionTask> {
    let runs = sorted_runs(version, options.num_levels);
    if runs.is_empty() {
        return None;
    }
    task(
        &runs,
        0..runs.len(),
        options,
        default_compression,
        (CompactionReason::Manual, 0.0),
    )
}

/// The task merging `runs[picked]` into the level above the next older run.
fn task(
    runs: &[SortedRun],
    picked: std::ops::Range<usize>,
    options: &CompactionOptions,
    default_compression: CompressionType,
    (reason, score): (CompactionReason, f64),
) -> Option<CompactionTask> {
    let last_level = options.num_levels - 1;
    let chosen = runs.get(picked.clone())?;
    let deepest_picked = chosen.iter().map(|r| r.level).max()?;
    let output_level = match runs.get(picked.end) {
        None => last_level,
        Some(next) if next.level == 0 => 0,
        Some(next) => (next.level - 1).max(deepest_picked),
    };
    let start_level = chosen.first()?.level;
    let mut task = CompactionTask {
        reason,
        start_level,
        output_level,
        inputs: Vec::new(),
        output_level_inputs: Vec::new(),
        middle_inputs: Vec::new(),
        deletion_only: false,
        grandparents: Vec::new(),
        // A run in L0 is a single file; deeper runs are cut at the target.
        target_file_size: if output_level == 0 {
            u64::MAX
        } else {
            options.target_file_size(output_level, 1)
        },
        max_grandparent_overlap: u64::MAX,
        compression: options.compression_for_level(output_level, 1, default_compression),
        trivial_move: false,
        score,
    };
    for run in chosen {
        for f in &run.files {
            if run.level == start_level {
                task.inputs.push(f.clone());
            } else if run.level == output_level {
                task.output_level_inputs.push(f.clone());
            } else {
                task.middle_inputs.push((run.level, f.clone()));
            }
        }
    }
    Some(task)
}

#[cfg(test)]
#[path = "universal_tests.rs"]
mod tests;
