//! The leveled compaction picker: a pure function of a version, the options and
//! the set of files already being compacted.
//!
//! Level targets follow RocksDB's rules. Without dynamic level bytes, L1 holds
//! `max_bytes_for_level_base` and each level below `multiplier` times more. With
//! them (the default), targets are derived from the largest level: each level up
//! is `multiplier` times smaller, the first whose target would fall below
//! `max_bytes_for_level_base` becomes the *base level* (where L0 compacts to),
//! and the levels above it stay empty. As data grows the base level moves up.
//!
//! Scores: L0 is due at `level0_file_num_compaction_trigger` files (or when its
//! bytes outgrow the base level's share); a level below it when its bytes (not
//! counting files being compacted) exceed its target. The highest score >= 1
//! wins; within a level, the file whose compaction rewrites the fewest bytes of
//! the next level per byte moved (RocksDB's `kMinOverlappingRatio`).

use std::collections::HashSet;
use std::sync::Arc;

use super::{key_range, CompactionReason, CompactionTask};
use crate::compression::CompressionType;
use crate::key::user_key;
use crate::key_order::KeyComparator;
use crate::options::{BlobOptions, CompactionOptions};
use crate::version::{FileMetaData, Version, NUM_LEVELS};

/// Target sizes of the levels, and the base level.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelTargets {
    /// The level L0 compacts into.
    pub base_level: usize,
    /// Target bytes per level; `u64::MAX` for levels above the base level.
    pub max_bytes: [u64; NUM_LEVELS],
}

/// Computes the level targets for `version` (RocksDB's `CalculateBaseBytes`).
pub fn level_targets(version: &Version, options: &CompactionOptions) -> LevelTargets {
    let levels = options.num_levels;
    let mult = options.max_bytes_for_level_multiplier;
    let base_max = options.max_bytes_for_level_base;
    let mut max_bytes = [u64::MAX; NUM_LEVELS];
    let scale = |bytes: u64, by: f64| -> u64 {
        let scaled = bytes as f64 * by;
        if scaled >= u64::MAX as f64 {
            u64::MAX
        } else {
            scaled as u64
        }
    };
    if !options.level_compaction_dynamic_level_bytes {
        let mut size = base_max;
        for (level, slot) in max_bytes.iter_mut().enumerate().take(levels).skip(1) {
            if level > 1 {
                size = scale(size, mult);
            }
            *slot = size;
        }
        return LevelTargets {
            base_level: 1,
            max_bytes,
        };
    }
    let first_non_empty = (1..levels).find(|&l| version.num_files(l) > 0);
    let max_level_size = (1..levels)
        .map(|l| version.level_bytes(l))
        .max()
        .unwrap_or(0);
    let Some(first_non_empty) = first_non_empty.filter(|_| max_level_size > 0) else {
        // Nothing below L0 yet: L0 compacts straight into the last level.
        return LevelTargets {
            base_level: levels - 1,
            max_bytes,
        };
    };
    let base_min = base_max as f64 / mult;
    let mut cur = max_level_size as f64;
    for _ in first_non_empty..levels - 1 {
        cur /= mult;
    }
    let mut base_level = first_non_empty;
    let base_size = if cur <= base_min {
        base_min as u64 + 1
    } else {
        while base_level > 1 && cur > base_max as f64 {
            base_level -= 1;
            cur /= mult;
        }
        if cur > base_max as f64 {
            base_max
        } else {
            (cur as u64).max(1)
        }
    };
    // RocksDB before 7.5 also raised the base level's target to a large
    // L0's size (and lowered the multiplier); current RocksDB does not, and
    // neither does Strata: the base level then compacts down sooner and L0
    // drains into a smaller level.
    let mut size = base_size;
    for (level, slot) in max_bytes
        .iter_mut()
        .enumerate()
        .take(levels)
        .skip(base_level)
    {
        if level > base_level {
            size = scale(size, mult);
        }
        // No level below the base level's floor: an hourglass-shaped tree would
        // starve L0 of compactions.
        *slot = size.max(base_max);
    }
    LevelTargets {
        base_level,
        max_bytes,
    }
}

/// Compaction scores, highest first: `(level, score)` for L0 and every level
/// from the base level to the second-to-last.
pub fn scores(
    version: &Version,
    options: &CompactionOptions,
    targets: &LevelTargets,
    busy: &HashSet<u64>,
) -> Vec<(usize, f64)> {
    let idle = |level: usize| {
        version
            .files(level)
            .iter()
            .filter(|f| !busy.contains(&f.number))
    };
    let l0_files = idle(0).count();
    let l0_bytes: u64 = idle(0).map(|f| f.file_size).sum();
    let mut l0_score = l0_files as f64 / options.level0_file_num_compaction_trigger as f64;
    // L0 is also due by size, so that L0 -> L0 growth cannot make the next
    // L0 -> base compaction huge. Its size target is never below
    // max_bytes_for_level_base (with dynamic level bytes, the base level's
    // target over the multiplier if that is larger), as in RocksDB: a smaller
    // target would compact after nearly every flush and rewrite the base
    // level each time.
    let base_share = targets.max_bytes[targets.base_level];
    let l0_target = if options.level_compaction_dynamic_level_bytes && base_share != u64::MAX {
        options
            .max_bytes_for_level_base
            .max((base_share as f64 / options.max_bytes_for_level_multiplier) as u64)
    } else {
        options.max_bytes_for_level_base
    };
    if l0_files > 0 {
        l0_score = l0_score.max(l0_bytes as f64 / l0_target.max(1) as f64);
    }
    let mut out = vec![(0, l0_score)];
    for level in targets.base_level..options.num_levels.saturating_sub(1) {
        let bytes: u64 = idle(level).map(|f| f.file_size).sum();
        out.push((level, bytes as f64 / targets.max_bytes[level].max(1) as f64));
    }
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

/// Picks the most needed compaction, or `None` when nothing is due or every due
/// compaction would touch files already being compacted.
pub fn pick(
    version: &Version,
    options: &CompactionOptions,
    default_compression: CompressionType,
    busy: &HashSet<u64>,
) -> Option<CompactionTask> {
    let targets = level_targets(version, options);
    for (level, score) in scores(version, options, &targets, busy) {
        if score < 1.0 {
            break;
        }
        let picked = if level == 0 {
            pick_l0(version, &targets, busy)
        } else {
            pick_level(version, level, busy)
        };
        if let Some((inputs, output_level)) = picked {
            let reason = if level == 0 {
                CompactionReason::L0FilesNum
            } else {
                CompactionReason::LevelMaxLevelSize
            };
            return build_task(
                version,
                options,
                default_compression,
                &targets,
                busy,
                (reason, score),
                (level, inputs, output_level),
            );
        }
    }
    None
}

/// The manual compaction of `[begin, end]` (unbounded where `None`) out of
/// `level`: L0's overlapping files into the base level, or a level's
/// overlapping files (expanded to a clean cut) into the next one. At the last
/// level the files numbered below `last_level_before` are rewritten in place,
/// so that deleted and overwritten data goes (RocksDB's
/// `BottommostLevelCompaction::kForceOptimized`: files the same manual
/// compaction just wrote are left alone). `None` when nothing qualifies. Busy
/// files are the caller's concern.
pub fn manual_task(
    version: &Version,
    options: &CompactionOptions,
    default_compression: CompressionType,
    (level, last_level_before): (usize, u64),
    begin: Option<&[u8]>,
    end: Option<&[u8]>,
) -> Option<CompactionTask> {
    let targets = level_targets(version, options);
    let order = version.order();
    let in_range = |f: &Arc<FileMetaData>| {
        begin.is_none_or(|b| order.le(b, user_key(&f.largest)))
            && end.is_none_or(|e| f.starts_at_or_before(e, order))
    };
    let last_level = options.num_levels - 1;
    let files = version.files(level);
    let (inputs, output_level) = if level == 0 {
        let chosen: Vec<_> = files.iter().filter(|f| in_range(f)).cloned().collect();
        (
            with_overlapping_l0(files, chosen, order),
            targets.base_level,
        )
    } else {
        let old = |f: &&Arc<FileMetaData>| {
            in_range(f) && (level < last_level || f.number < last_level_before)
        };
        let chosen: Vec<_> = files.iter().filter(old).cloned().collect();
        // A clean cut: files sharing a boundary user key with the chosen ones
        // join them (sorted levels overlap only at such boundaries).
        let (lo, hi) = key_range(&chosen, order)?;
        let (lo, hi) = (lo.to_vec(), hi.to_vec());
        let output_level = if level == last_level {
            level
        } else {
            level + 1
        };
        (version.overlapping_files(level, &lo, &hi), output_level)
    };
    if inputs.is_empty() {
        return None;
    }
    build_task(
        version,
        options,
        default_compression,
        &targets,
        &HashSet::new(),
        (CompactionReason::Manual, 0.0),
        (level, inputs, output_level),
    )
}

/// RocksDB's forced blob garbage collection under leveled compaction: when
/// the blob files within `blob_garbage_collection_age_cutoff` (the oldest
/// ones) hold garbage of at least `blob_garbage_collection_force_threshold`
/// of their record bytes, a table that references the oldest of them is
/// rewritten (into the next level, or in place at the last), which relocates
/// its values out of those files. `None` when garbage collection is off,
/// those files hold no garbage, nothing is due, or every such table is busy.
pub fn pick_forced_blob_gc(
    version: &Version,
    options: &CompactionOptions,
    blob: &BlobOptions,
    default_compression: CompressionType,
    busy: &HashSet<u64>,
) -> Option<CompactionTask> {
    if !blob.enable_blob_garbage_collection {
        return None;
    }
    let files = version.blob_files();
    let within = (blob.blob_garbage_collection_age_cutoff * files.len() as f64).floor() as usize;
    let (garbage, total) = files.values().take(within).fold((0u64, 0u64), |(g, t), b| {
        (g + b.garbage_bytes, t + b.addition.record_bytes)
    });
    // Files without garbage are never rewritten, whatever the threshold: at
    // 0.0 the ratio test alone holds with no garbage at all, and the same
    // values would be copied from file to file forever.
    if within == 0
        || garbage == 0
        || (garbage as f64) < blob.blob_garbage_collection_force_threshold * total as f64
    {
        return None;
    }
    let oldest = *files.keys().next()?;
    let targets = level_targets(version, options);
    let last_level = options.num_levels - 1;
    let order = version.order();
    (0..options.num_levels).find_map(|level| {
        let files = version.files(level);
        let i = files
            .iter()
            .position(|f| f.blob_files.contains(&oldest) && !busy.contains(&f.number))?;
        let (inputs, output_level) = match level {
            0 => (
                with_overlapping_l0(files, vec![files[i].clone()], order),
                targets.base_level,
            ),
            _ if level == last_level => (expand_to_clean_cut(files, i, order), level),
            _ => (expand_to_clean_cut(files, i, order), level + 1),
        };
        if inputs.iter().any(|f| busy.contains(&f.number)) {
            return None;
        }
        let mut task = build_task(
            version,
            options,
            default_compression,
            &targets,
            busy,
            (
                CompactionReason::ForcedBlobGc,
                garbage as f64 / total.max(1) as f64,
            ),
            (level, inputs, output_level),
        )?;
        // A move would carry the references along: the values must be read
        // and written again.
        task.trivial_move = false;
        Some(task)
    })
}

/// `chosen` L0 files plus every L0 file that shares a key with them, again
/// and again until none is added. An L0 file left behind that overlaps a
/// moved one could be older and would then shadow it from above: reads
/// consult L0 before the base level.
fn with_overlapping_l0(
    files: &[Arc<FileMetaData>],
    mut chosen: Vec<Arc<FileMetaData>>,
    order: &KeyComparator,
) -> Vec<Arc<FileMetaData>> {
    loop {
        let Some((lo, hi)) = key_range(&chosen, order) else {
            return chosen;
        };
        let (lo, hi) = (lo.to_vec(), hi.to_vec());
        let grown: Vec<_> = files
            .iter()
            .filter(|f| order.le(&lo, user_key(&f.largest)) && f.starts_at_or_before(&hi, order))
            .cloned()
            .collect();
        if grown.len() == chosen.len() {
            return grown;
        }
        chosen = grown;
    }
}

/// Every L0 file (they overlap one another, so taking them all keeps L0's
/// newest-first order intact below), unless an L0 compaction is running.
fn pick_l0(
    version: &Version,
    targets: &LevelTargets,
    busy: &HashSet<u64>,
) -> Option<(Vec<Arc<FileMetaData>>, usize)> {
    let files = version.files(0);
    if files.is_empty() || files.iter().any(|f| busy.contains(&f.number)) {
        return None;
    }
    Some((files.to_vec(), targets.base_level))
}

/// The file of `level` whose compaction into `level + 1` rewrites the fewest
/// bytes per byte it moves, among those not blocked by running compactions.
fn pick_level(
    version: &Version,
    level: usize,
    busy: &HashSet<u64>,
) -> Option<(Vec<Arc<FileMetaData>>, usize)> {
    let mut candidates: Vec<(u128, usize)> = version
        .files(level)
        .iter()
        .enumerate()
        .filter(|(_, f)| !busy.contains(&f.number))
        .map(|(i, f)| {
            let lo = user_key(&f.smallest);
            let hi = user_key(&f.largest);
            let overlap: u64 = version
                .overlapping_files(level + 1, lo, hi)
                .iter()
                .map(|g| g.file_size)
                .sum();
            // Integer ratio, scaled, so the order is total and exact.
            (
                u128::from(overlap) * 1024 / u128::from(f.file_size.max(1)),
                i,
            )
        })
        .collect();
    candidates.sort_unstable();
    candidates.into_iter().find_map(|(_, i)| {
        let inputs = expand_to_clean_cut(version.files(level), i, version.order());
        let blocked = inputs.iter().any(|f| busy.contains(&f.number));
        (!blocked).then_some((inputs, level + 1))
    })
}

/// File `i` of a sorted level plus its neighbours that share a boundary user
/// key with it: versions of one user key must move down together, or a newer
/// version could end up below an older one.
fn expand_to_clean_cut(
    files: &[Arc<FileMetaData>],
    i: usize,
    order: &KeyComparator,
) -> Vec<Arc<FileMetaData>> {
    let mut start = i;
    let shares_boundary = |left: &FileMetaData, right: &FileMetaData| {
        !left.ends_before(user_key(&right.smallest), order)
    };
    while start > 0 && shares_boundary(&files[start - 1], &files[start]) {
        start -= 1;
    }
    let mut end = i;
    while end + 1 < files.len() && shares_boundary(&files[end], &files[end + 1]) {
        end += 1;
    }
    files[start..=end].to_vec()
}

/// Completes a pick with the output level's overlapping files, grandparents,
/// sizes, codec, and whether a trivial move does it; `None` if the output level's
/// files are busy.
fn build_task(
    version: &Version,
    options: &CompactionOptions,
    default_compression: CompressionType,
    targets: &LevelTargets,
    busy: &HashSet<u64>,
    (reason, score): (CompactionReason, f64),
    (start_level, inputs, output_level): (usize, Vec<Arc<FileMetaData>>, usize),
) -> Option<CompactionTask> {
    let order = version.order();
    let (lo, hi) = key_range(&inputs, order)?;
    let output_level_inputs = if output_level == start_level {
        Vec::new()
    } else {
        version.overlapping_files(output_level, lo, hi)
    };
    if output_level_inputs.iter().any(|f| busy.contains(&f.number)) {
        return None;
    }
    let (lo, hi) = key_range(inputs.iter().chain(&output_level_inputs), order)?;
    let grandparents = if output_level + 1 < options.num_levels {
        version.overlapping_files(output_level + 1, lo, hi)
    } else {
        Vec::new()
    };
    let base = targets.base_level;
    let compression = options.compression_for_level(output_level, base, default_compression);
    let same_codec =
        options.compression_for_level(start_level, base, default_compression) == compression;
    let max_grandparent_overlap = options.max_compaction_bytes();
    let grandparent_bytes: u64 = grandparents.iter().map(|f| f.file_size).sum();
    let trivial_move = output_level != start_level
        && output_level_inputs.is_empty()
        && same_codec
        && grandparent_bytes <= max_grandparent_overlap
        && pairwise_disjoint(&inputs, order);
    Some(CompactionTask {
        reason,
        start_level,
        output_level,
        inputs,
        output_level_inputs,
        middle_inputs: Vec::new(),
        deletion_only: false,
        grandparents,
        target_file_size: options.target_file_size(output_level, base),
        max_grandparent_overlap,
        compression,
        trivial_move,
        score,
    })
}

/// Whether no two of `files` share a user key (always true below L0).
fn pairwise_disjoint(files: &[Arc<FileMetaData>], order: &KeyComparator) -> bool {
    let mut sorted: Vec<&Arc<FileMetaData>> = files.iter().collect();
    sorted.sort_by(|a, b| order.compare_user(user_key(&a.smallest), user_key(&b.smallest)));
    sorted
        .windows(2)
        .all(|w| w[0].ends_before(user_key(&w[1].smallest), order))
}

/// Bytes compaction must still rewrite to bring every level within its target
/// (RocksDB's `EstimatedCompactionNeededBytes`), for the pending-bytes stalls.
pub fn estimated_pending_bytes(version: &Version, options: &CompactionOptions) -> u64 {
    let targets = level_targets(version, options);
    let l0_bytes = version.level_bytes(0);
    let l0_due = version.num_files(0) >= options.level0_file_num_compaction_trigger
        || l0_bytes >= options.max_bytes_for_level_base;
    let mut estimate = if l0_due { l0_bytes } else { 0 };
    let mut carried = if l0_due { l0_bytes } else { 0 };
    let mut next_level_bytes = 0u64;
    for level in targets.base_level..options.num_levels.saturating_sub(1) {
        let mut size = if next_level_bytes > 0 {
            std::mem::take(&mut next_level_bytes)
        } else {
            version.level_bytes(level)
        };
        if level == targets.base_level && l0_due {
            estimate = estimate.saturating_add(size);
        }
        size = size.saturating_add(std::mem::take(&mut carried));
        let target = targets.max_bytes[level];
        if size > target {
            carried = size - target;
            next_level_bytes = version.level_bytes(level + 1);
            if next_level_bytes > 0 {
                let ratio = next_level_bytes as f64 / size as f64 + 1.0;
                estimate = estimate.saturating_add((carried as f64 * ratio) as u64);
            }
        }
    }
    estimate
}

#[cfg(test)]
#[path = "leveled_tests.rs"]
mod tests;
