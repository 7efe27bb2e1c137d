//! Where a compaction cuts its outputs, so that later compactions of them
//! rewrite as few bytes as possible (RocksDB's
//! `CompactionOutputs::ShouldStopBefore`).
//!
//! The outputs of a compaction into level `n` are compacted into `n + 1`
//! later, together with every file of `n + 1` (the *grandparents*) they
//! overlap. An output that ends in the middle of a grandparent file drags
//! that file into two later compactions; one cut at a grandparent boundary
//! drags it into one. So:
//!
//! - **Size**: an output is cut at the target size when it has no
//!   grandparents (it goes to the last level, or nothing lies below it),
//!   and at twice the target otherwise, so that an output past the target
//!   can run on to the next grandparent boundary instead of ending inside a
//!   grandparent (RocksDB's `max_output_file_size`). Cutting at exactly the
//!   target left outputs ending mid-file whenever no boundary fell in the
//!   pre-cut window below, and each such file was rewritten by two later
//!   compactions: on random keys it cost Strata two extra L5->L6 jobs in 34
//!   flushes' worth of data.
//! - **Pre-cut at a boundary**: at a grandparent boundary, an output of at
//!   least half the target size is cut; the threshold grows by 5% of the
//!   target per boundary the output has already crossed (up to 90%), since an
//!   output that has seen many boundaries will likely see another before it
//!   fills.
//! - **Skippable grandparent**: when the next key would add a whole
//!   grandparent file of more than 1/8 of the target to the output's
//!   overlap (crossing its start and end, plus the gap before it), the
//!   output is cut, so a later compaction can leave that file alone.
//! - **Overlap limit**: an output whose bytes plus its grandparents' reach
//!   `max_compaction_bytes` is cut, so no later compaction grows past it.
//!
//! The state follows the keys, which come in ascending order: `index` is the
//! grandparent the current key is in, or the one after the gap it is in.

use std::sync::Arc;

use crate::key_order::KeyComparator;
use crate::version::FileMetaData;

/// Decides, key by key, where one compaction's outputs end.
#[derive(Debug)]
pub struct OutputCutter {
    grandparents: Vec<Arc<FileMetaData>>,
    order: KeyComparator,
    target_file_size: u64,
    /// `target_file_size`, or twice it when there are grandparents to align
    /// with.
    max_output_file_size: u64,
    max_compaction_bytes: u64,
    /// The grandparent the current key is in, or the first one after it.
    index: usize,
    /// The current key lies before `grandparents[index]` (in a gap), not
    /// inside it.
    in_gap: bool,
    seen_key: bool,
    /// Bytes of the grandparents the current output overlaps.
    overlapped_bytes: u64,
    /// Grandparent boundaries (file starts and ends) the current output
    /// crossed.
    boundaries_crossed: usize,
}

impl OutputCutter {
    /// A cutter for outputs sorted in `order` over `grandparents` (sorted,
    /// disjoint), aimed at `target_file_size` (at most twice it when there
    /// are grandparents) and kept below `max_compaction_bytes` of output
    /// plus grandparent bytes.
    pub fn new(
        grandparents: Vec<Arc<FileMetaData>>,
        order: KeyComparator,
        target_file_size: u64,
        max_compaction_bytes: u64,
    ) -> Self {
        let max_output_file_size = if grandparents.is_empty() {
            target_file_size
        } else {
            target_file_size.saturating_mul(2)
        };
        OutputCutter {
            grandparents,
            order,
            target_file_size,
            max_output_file_size,
            max_compaction_bytes,
            index: 0,
            in_gap: true,
            seen_key: false,
            overlapped_bytes: 0,
            boundaries_crossed: 0,
        }
    }

    /// Moves past the grandparent boundaries up to `user_key`, returning how
    /// many it crossed (none for the first key).
    fn advance(&mut self, user_key: &[u8]) -> usize {
        let mut crossed = 0;
        while let Some(g) = self.grandparents.get(self.index) {
            if self.in_gap {
                if !g.starts_at_or_before(user_key, &self.order) {
                    break;
                }
                if self.seen_key {
                    crossed += 1;
                    self.overlapped_bytes += g.file_size;
                }
                self.in_gap = false;
            } else {
                if !g.ends_before(user_key, &self.order) {
                    break;
                }
                if self.seen_key {
                    crossed += 1;
                }
                self.in_gap = true;
                self.index += 1;
            }
        }
        if !self.seen_key {
            self.overlapped_bytes = self.current_file_bytes();
        }
        self.seen_key = true;
        self.boundaries_crossed += crossed;
        crossed
    }

    /// The bytes of the grandparent the current key is in (0 in a gap).
    fn current_file_bytes(&self) -> u64 {
        match self.grandparents.get(self.index) {
            Some(g) if !self.in_gap => g.file_size,
            _ => 0,
        }
    }

    /// Whether the output of `output_size` bytes (`None`: no output is open)
    /// ends before `user_key`, the next user key to write. Call once per
    /// user key, in order; after `true`, the caller starts a new output
    /// with `user_key`.
    pub fn should_cut_before(&mut self, user_key: &[u8], output_size: Option<u64>) -> bool {
        let before = self.overlapped_bytes;
        let crossed = self.advance(user_key);
        let Some(size) = output_size else {
            return false;
        };
        let target = self.target_file_size.max(1);
        let cut = size >= self.max_output_file_size.max(1)
            || (crossed > 0
                && (self.overlapped_bytes.saturating_add(size) > self.max_compaction_bytes
                    || (crossed >= if self.in_gap { 2 } else { 3 }
                        && self.overlapped_bytes.saturating_sub(before) > target / 8)
                    || size
                        >= target.div_ceil(100)
                            * (50 + (self.boundaries_crossed as u64 * 5).min(40))));
        if cut {
            // The new output starts with `user_key`, overlapping only the
            // grandparent it is in.
            self.boundaries_crossed = 0;
            self.overlapped_bytes = self.current_file_bytes();
        }
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueType};

    fn file(lo: &str, hi: &str, size: u64) -> Arc<FileMetaData> {
        Arc::new(FileMetaData {
            number: 1,
            file_size: size,
            smallest: internal_key(lo.as_bytes(), 1, ValueType::Put),
            largest: internal_key(hi.as_bytes(), 1, ValueType::Put),
            smallest_seqno: 1,
            largest_seqno: 1,
            blob_files: Vec::new(),
            global_seqno: None,
        })
    }

    /// Feeds `keys` with an output growing by `step` bytes per key; returns
    /// the keys each new output starts with.
    fn cuts(cutter: &mut OutputCutter, keys: &[&str], step: u64) -> Vec<String> {
        let mut size = None;
        let mut starts = Vec::new();
        for k in keys {
            if cutter.should_cut_before(k.as_bytes(), size) {
                starts.push((*k).to_owned());
                size = Some(0);
            }
            size = Some(size.unwrap_or(0) + step);
        }
        starts
    }

    #[test]
    fn cuts_at_the_target_size_without_grandparents() {
        let mut c = OutputCutter::new(Vec::new(), KeyComparator::Bytewise, 100, u64::MAX);
        let keys = ["a", "b", "c", "d", "e", "f", "g"];
        assert_eq!(cuts(&mut c, &keys, 40), ["d", "g"]);
    }

    /// With grandparents, an output that fills the target inside a
    /// grandparent runs on to that grandparent's end, up to twice the target.
    #[test]
    fn runs_past_the_target_to_a_grandparent_boundary() {
        let gp = vec![file("a", "m", 1000), file("n", "z", 1000)];
        let mut c = OutputCutter::new(gp, KeyComparator::Bytewise, 100, u64::MAX);
        // 40 bytes a key: 120 by "c", past the target, but the cut waits for
        // the boundary at "n".
        assert_eq!(cuts(&mut c, &["a", "b", "c", "d", "n", "o"], 40), ["n"]);
        // No boundary in sight: cut at twice the target.
        let gp = vec![file("a", "z", 1000)];
        let mut c = OutputCutter::new(gp, KeyComparator::Bytewise, 100, u64::MAX);
        let keys = ["a", "b", "c", "d", "e", "f", "g", "h"];
        assert_eq!(cuts(&mut c, &keys, 40), ["f"]);
    }

    /// An output past half the target is cut where a grandparent ends, so
    /// the next output starts with the next grandparent's keys.
    #[test]
    fn pre_cuts_at_a_grandparent_boundary() {
        let gp = vec![file("a", "c", 1000), file("d", "f", 1000)];
        let mut c = OutputCutter::new(gp, KeyComparator::Bytewise, 100, u64::MAX);
        // Output reaches 60 bytes by "c"; "d" crosses the boundary.
        assert_eq!(cuts(&mut c, &["a", "b", "c", "d", "e"], 20), ["d"]);
        // Below half the target, the boundary is no reason to cut.
        let gp = vec![file("a", "c", 1000), file("d", "f", 1000)];
        let mut c = OutputCutter::new(gp, KeyComparator::Bytewise, 100, u64::MAX);
        assert!(cuts(&mut c, &["a", "b", "c", "d", "e"], 10).is_empty());
    }

    /// Passing a whole grandparent file (its start and end, from a gap)
    /// worth more than 1/8 of the target cuts the output, so that file is
    /// left out of the later compaction.
    #[test]
    fn cuts_before_a_skippable_grandparent() {
        let gp = vec![file("c", "d", 200), file("x", "y", 1000)];
        let mut c = OutputCutter::new(gp, KeyComparator::Bytewise, 1000, u64::MAX);
        // "a" is in the gap before "c"; "m" passes all of [c, d] and lands
        // in the gap before "x": three boundaries would be a skippable file
        // only from inside a file, two suffice from a gap.
        assert_eq!(cuts(&mut c, &["a", "m", "n"], 1), ["m"]);
        // A small file (not more than 1/8 of the target) is not worth it.
        let gp = vec![file("c", "d", 100), file("x", "y", 1000)];
        let mut c = OutputCutter::new(gp, KeyComparator::Bytewise, 1000, u64::MAX);
        assert!(cuts(&mut c, &["a", "m", "n"], 1).is_empty());
    }

    #[test]
    fn cuts_when_output_and_grandparents_reach_the_limit() {
        let gp = vec![
            file("b", "b", 500),
            file("d", "d", 500),
            file("f", "f", 500),
        ];
        let mut c = OutputCutter::new(gp, KeyComparator::Bytewise, 10_000, 1_200);
        // Each file entered adds 500 bytes of overlap: entering the third
        // passes the limit, and the next output starts there.
        let starts = cuts(&mut c, &["a", "b", "c", "d", "e", "f", "g"], 1);
        assert_eq!(starts, ["f"]);
    }

    /// In reverse order the grandparents run from high keys to low.
    #[test]
    fn follows_the_familys_order() {
        let gp = vec![file("f", "d", 1000), file("c", "a", 1000)];
        let mut c = OutputCutter::new(gp, KeyComparator::ReverseBytewise, 100, u64::MAX);
        assert_eq!(cuts(&mut c, &["f", "e", "d", "c", "b"], 20), ["c"]);
    }
}
