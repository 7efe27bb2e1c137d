//! Subcompactions: one compaction split by key range across threads
//! (RocksDB's `max_subcompactions`). Each subcompaction merges the inputs'
//! entries in its range `[lower, upper)` of user keys and writes its own
//! outputs; the ranges are disjoint and cover every key, so the outputs of
//! all of them together are what one job would have written, cut at a few
//! more places. They join one version edit, installed at once.
//!
//! Like RocksDB, only compactions from L0 into a lower level, manual ones,
//! and universal compactions into a level below L0 are split: those are the
//! large jobs that hold up L0 (and so writers) while the other compaction
//! threads have nothing to take.

use super::{CompactionReason, CompactionTask};
use crate::key::user_key;
use crate::key_order::KeyComparator;

/// A subcompaction's user keys: from `lower` (inclusive; `None` from below
/// everything) to `upper` (exclusive; `None` to above everything).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeySpan {
    pub lower: Option<Vec<u8>>,
    pub upper: Option<Vec<u8>>,
}

impl KeySpan {
    /// Every key.
    pub fn all() -> KeySpan {
        KeySpan {
            lower: None,
            upper: None,
        }
    }

    /// Whether `key` is past this span's upper end.
    pub fn ends_before(&self, key: &[u8], order: &KeyComparator) -> bool {
        self.upper.as_deref().is_some_and(|u| !order.lt(key, u))
    }
}

/// Whether `task` is the kind of compaction that may be split.
fn may_split(task: &CompactionTask) -> bool {
    if task.trivial_move || task.deletion_only || task.output_level == 0 {
        return false;
    }
    match task.reason {
        CompactionReason::Manual => true,
        CompactionReason::UniversalSizeAmplification
        | CompactionReason::UniversalSizeRatio
        | CompactionReason::UniversalSortedRunNum => true,
        CompactionReason::L0FilesNum | CompactionReason::LevelMaxLevelSize => task.start_level == 0,
        CompactionReason::ForcedBlobGc => false,
        CompactionReason::FifoMaxSize | CompactionReason::FifoTtl => false,
    }
}

/// The key spans `task` runs in, at most `max_subcompactions` of them: one
/// span of everything when it is not split. Split keys are the smallest keys
/// of the input files, picked so each span holds about the same number of
/// input bytes, and no span less than an output file's worth (RocksDB caps
/// the count the same way: more spans would only write smaller files).
pub(crate) fn split(
    task: &CompactionTask,
    order: &KeyComparator,
    max_subcompactions: u32,
) -> Vec<KeySpan> {
    let total = task.input_bytes();
    let by_size = total / task.target_file_size.max(1);
    let wanted = u64::from(max_subcompactions).min(by_size);
    if wanted < 2 || !may_split(task) {
        return vec![KeySpan::all()];
    }
    // Each input file's bytes, counted at its smallest key.
    let mut starts: Vec<(&[u8], u64)> = task
        .all_inputs()
        .map(|(_, f)| (user_key(&f.smallest), f.file_size))
        .collect();
    starts.sort_by(|a, b| order.compare_user(a.0, b.0));
    let mut cuts: Vec<Vec<u8>> = Vec::new();
    let mut seen = 0u64;
    let mut next = 1u64;
    for (i, &(key, bytes)) in starts.iter().enumerate() {
        // A key can start a span only if some file starts before it: the
        // first span must not be empty, and cuts must increase.
        let after_first = i > 0 && order.lt(starts[0].0, key);
        let after_last_cut = cuts.last().is_none_or(|c| order.lt(c, key));
        if after_first && after_last_cut && seen >= total * next / wanted {
            cuts.push(key.to_vec());
            next += 1;
            if next >= wanted {
                break;
            }
        }
        seen += bytes;
    }
    let mut spans = Vec::with_capacity(cuts.len() + 1);
    let mut lower = None;
    for cut in cuts {
        spans.push(KeySpan {
            lower: lower.take(),
            upper: Some(cut.clone()),
        });
        lower = Some(cut);
    }
    spans.push(KeySpan { lower, upper: None });
    spans
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compression::CompressionType;
    use crate::key::{internal_key, ValueType};
    use crate::version::FileMetaData;
    use std::sync::Arc;

    fn file(number: u64, lo: &str, hi: &str, size: u64) -> Arc<FileMetaData> {
        Arc::new(FileMetaData {
            number,
            file_size: size,
            smallest: internal_key(lo.as_bytes(), 1, ValueType::Put),
            largest: internal_key(hi.as_bytes(), 1, ValueType::Put),
            smallest_seqno: 1,
            largest_seqno: 1,
            blob_files: Vec::new(),
            global_seqno: None,
        })
    }

    fn l0_task(l0: Vec<Arc<FileMetaData>>, l1: Vec<Arc<FileMetaData>>) -> CompactionTask {
        CompactionTask {
            reason: CompactionReason::L0FilesNum,
            start_level: 0,
            output_level: 1,
            inputs: l0,
            output_level_inputs: l1,
            middle_inputs: Vec::new(),
            deletion_only: false,
            grandparents: Vec::new(),
            target_file_size: 10,
            max_grandparent_overlap: u64::MAX,
            compression: CompressionType::None,
            trivial_move: false,
            score: 1.0,
        }
    }

    fn uppers(spans: &[KeySpan]) -> Vec<Option<&str>> {
        spans
            .iter()
            .map(|s| s.upper.as_deref().map(|u| std::str::from_utf8(u).unwrap()))
            .collect()
    }

    #[test]
    fn spans_are_contiguous_and_balanced_by_input_bytes() {
        let l1: Vec<_> = ["b", "d", "f", "h", "j", "l"]
            .iter()
            .enumerate()
            .map(|(i, k)| file(10 + i as u64, k, k, 100))
            .collect();
        let task = l0_task(vec![file(1, "a", "m", 100)], l1);
        let spans = split(&task, &KeyComparator::Bytewise, 3);
        // 700 bytes, a third is 233: "a" (L0), "b" and "d" come before the
        // first cut at "f" (300 bytes), "f" and "h" before the second at "j".
        assert_eq!(spans.len(), 3);
        assert_eq!(spans[0].lower, None);
        for pair in spans.windows(2) {
            assert_eq!(pair[0].upper, pair[1].lower, "no gap, no overlap");
        }
        assert_eq!(spans[2].upper, None);
        assert_eq!(uppers(&spans), vec![Some("f"), Some("j"), None]);
    }

    #[test]
    fn small_jobs_and_other_kinds_are_not_split() {
        let l1 = vec![file(10, "b", "c", 5), file(11, "d", "e", 5)];
        // 15 bytes, output files of 10: one span.
        let task = l0_task(vec![file(1, "a", "z", 5)], l1.clone());
        assert_eq!(
            split(&task, &KeyComparator::Bytewise, 4),
            vec![KeySpan::all()]
        );
        let mut level = l0_task(vec![file(1, "a", "z", 500)], l1);
        level.start_level = 1;
        level.output_level = 2;
        level.reason = CompactionReason::LevelMaxLevelSize;
        assert_eq!(
            split(&level, &KeyComparator::Bytewise, 4),
            vec![KeySpan::all()]
        );
        level.reason = CompactionReason::Manual;
        assert!(split(&level, &KeyComparator::Bytewise, 4).len() > 1);
        let mut moved = level.clone();
        moved.trivial_move = true;
        assert_eq!(
            split(&moved, &KeyComparator::Bytewise, 4),
            vec![KeySpan::all()]
        );
    }

    #[test]
    fn spans_follow_the_family_order() {
        let l1: Vec<_> = ["j", "h", "f", "d", "b"]
            .iter()
            .enumerate()
            .map(|(i, k)| file(10 + i as u64, k, k, 100))
            .collect();
        let task = l0_task(vec![file(1, "k", "a", 100)], l1);
        let spans = split(&task, &KeyComparator::ReverseBytewise, 2);
        assert_eq!(spans.len(), 2);
        let cut = spans[0].upper.clone().unwrap();
        // In reverse order the first span holds the larger keys.
        assert!(KeyComparator::ReverseBytewise.lt(b"k", &cut));
        assert!(spans[0].ends_before(&cut, &KeyComparator::ReverseBytewise));
        assert!(!spans[0].ends_before(b"k", &KeyComparator::ReverseBytewise));
    }
}
