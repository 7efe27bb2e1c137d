//! What a compaction keeps: the rules for dropping versions, applied to its
//! merged input in internal-key order (user key ascending, newest first).
//!
//! Live snapshots split the sequence numbers into *stripes*: entries in one
//! stripe are seen by exactly the same snapshots (and by reads of the latest
//! state), so only the newest entry of a user key in each stripe is ever read.
//! Older ones in the same stripe are dropped, but for merge operands: an
//! operand hides nothing, so the entries below it in its stripe stay, down to
//! the first value or deletion (the job then combines the chain, see
//! `merge_collapse.rs`). A tombstone in the oldest stripe
//! (every snapshot sees it) hides everything older of its key from every
//! reader; when no level below the output can hold an older version of the
//! key, the tombstone itself is dropped too. An entry that a range tombstone
//! of the compaction's inputs deletes for every reader that could see it goes
//! as well ([`DropRules::with_range_tombstones`]).

use std::sync::Arc;

use crate::error::Result;
use crate::key::{ParsedInternalKey, SequenceNumber, ValueType};
use crate::key_order::KeyComparator;
use crate::range_del::FragmentedRangeTombstones;
use crate::version::{FileMetaData, Version};

/// Answers "can a level below the output hold `user_key`?" for ascending keys,
/// walking one cursor per level (RocksDB's `KeyNotExistsBeyondOutputLevel`).
#[derive(Debug)]
struct DeeperLevels {
    levels: Vec<Vec<Arc<FileMetaData>>>,
    cursors: Vec<usize>,
    order: KeyComparator,
}

impl DeeperLevels {
    fn new(version: &Version, output_level: usize, num_levels: usize) -> Self {
        let levels: Vec<_> = (output_level + 1..num_levels)
            .map(|l| version.files(l).to_vec())
            .collect();
        let cursors = vec![0; levels.len()];
        DeeperLevels {
            levels,
            cursors,
            order: version.order().clone(),
        }
    }

    /// Keys must be passed in ascending order (the family's).
    fn may_contain(&mut self, user_key: &[u8]) -> bool {
        for (files, cursor) in self.levels.iter().zip(self.cursors.iter_mut()) {
            while let Some(f) = files.get(*cursor) {
                if self.order.lt(crate::key::user_key(&f.largest), user_key) {
                    *cursor += 1;
                    continue;
                }
                if f.starts_at_or_before(user_key, &self.order) {
                    return true;
                }
                break;
            }
        }
        false
    }
}

/// Counts of what a compaction read and dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DropCounts {
    pub keys_in: u64,
    /// Every entry dropped: the three kinds below.
    pub keys_dropped: u64,
    /// Hidden by a newer entry of the key in the same snapshot stripe.
    pub dropped_newer: u64,
    /// Deletions with nothing below them to delete.
    pub dropped_obsolete: u64,
    /// Covered by a range tombstone.
    pub dropped_range_del: u64,
}

impl DropCounts {
    /// Adds `other`'s counts (another subcompaction's).
    pub fn add(&mut self, other: &DropCounts) {
        self.keys_in += other.keys_in;
        self.keys_dropped += other.keys_dropped;
        self.dropped_newer += other.dropped_newer;
        self.dropped_obsolete += other.dropped_obsolete;
        self.dropped_range_del += other.dropped_range_del;
    }
}

/// Decides, entry by entry, what the compaction keeps.
#[derive(Debug)]
pub struct DropRules {
    /// Live snapshot sequence numbers, ascending.
    snapshots: Vec<SequenceNumber>,
    deeper: DeeperLevels,
    /// False when older data may hide outside the compaction where the deeper
    /// levels cannot show it (older L0 files a universal task left out).
    may_drop_tombstones: bool,
    current_user_key: Vec<u8>,
    /// Stripe of the newest entry of the current user key seen so far.
    last_stripe: Option<usize>,
    /// The range tombstones of the compaction's inputs.
    range_tombstones: Option<Arc<FragmentedRangeTombstones>>,
    /// Stripe of the newest value or deletion of the current user key seen
    /// so far: it hides the older entries of its stripe. A merge operand
    /// hides nothing (it needs the entries below it).
    last_complete_stripe: Option<usize>,
    pub counts: DropCounts,
}

impl DropRules {
    /// `snapshots` in any order; `version` is the one the task was picked from.
    pub fn new(
        mut snapshots: Vec<SequenceNumber>,
        version: &Version,
        output_level: usize,
        num_levels: usize,
    ) -> Self {
        snapshots.sort_unstable();
        snapshots.dedup();
        DropRules {
            snapshots,
            deeper: DeeperLevels::new(version, output_level, num_levels),
            may_drop_tombstones: true,
            current_user_key: Vec::new(),
            last_stripe: None,
            range_tombstones: None,
            last_complete_stripe: None,
            counts: DropCounts::default(),
        }
    }

    /// Keeps every tombstone that shadows nothing in the compaction: for tasks
    /// that leave older L0 files out, whose keys the deeper-level check does
    /// not see.
    pub fn keeping_tombstones(mut self) -> Self {
        self.may_drop_tombstones = false;
        self
    }

    /// Drops the entries `tombstones` (the inputs' range tombstones) delete
    /// for every reader that can see them.
    pub fn with_range_tombstones(mut self, tombstones: Arc<FragmentedRangeTombstones>) -> Self {
        self.range_tombstones = (!tombstones.is_empty()).then_some(tombstones);
        self
    }

    /// True when a range tombstone deletes `(user_key, seq)` for every
    /// reader that sees it: no snapshot lies between them.
    fn range_deleted(&self, user_key: &[u8], seq: SequenceNumber) -> bool {
        self.range_tombstones
            .as_ref()
            .is_some_and(|t| t.compaction_may_drop(user_key, seq, &self.snapshots))
    }

    /// True when no version of `user_key` can exist below what this
    /// compaction reads (no deeper level may hold it, and no older L0 file
    /// was left out). Keys must be passed in ascending order.
    pub fn nothing_below(&mut self, user_key: &[u8]) -> bool {
        self.may_drop_tombstones && !self.deeper.may_contain(user_key)
    }

    /// Whether to keep the entry with internal key `ikey`. Entries must come in
    /// internal-key order. A malformed key is an error saying what is wrong
    /// with it; the job, which knows its input tables, names them.
    pub fn keep(&mut self, ikey: &[u8]) -> Result<bool, String> {
        let parsed = ParsedInternalKey::parse(ikey)
            .ok_or_else(|| "internal key shorter than its tag".to_string())?;
        let value_type = match parsed.value_type() {
            // Range tombstones never travel in the point-key stream.
            Some(ValueType::RangeDeletion) => {
                return Err("range deletion in the point-key stream".to_string())
            }
            Some(t) => t,
            None => return Err(format!("unknown value type {}", parsed.type_code)),
        };
        self.counts.keys_in += 1;
        if self.last_stripe.is_none() || parsed.user_key != self.current_user_key.as_slice() {
            self.current_user_key.clear();
            self.current_user_key.extend_from_slice(parsed.user_key);
            self.last_stripe = None;
            self.last_complete_stripe = None;
        }
        // Snapshots below `seq` cannot see this entry; the rest can.
        let stripe = self.snapshots.partition_point(|&s| s < parsed.seq);
        let shadowed = self.last_complete_stripe == Some(stripe);
        self.last_stripe = Some(stripe);
        if value_type != ValueType::Merge {
            self.last_complete_stripe = Some(stripe);
        }
        let obsolete_tombstone = !shadowed
            && self.may_drop_tombstones
            && value_type == ValueType::Delete
            && stripe == 0
            && !self.deeper.may_contain(parsed.user_key);
        let range_deleted = !shadowed && self.range_deleted(parsed.user_key, parsed.seq);
        if shadowed || obsolete_tombstone || range_deleted {
            self.counts.keys_dropped += 1;
            let kind = if shadowed {
                &mut self.counts.dropped_newer
            } else if obsolete_tombstone {
                &mut self.counts.dropped_obsolete
            } else {
                &mut self.counts.dropped_range_del
            };
            *kind += 1;
            return Ok(false);
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::internal_key;
    use crate::version::VersionEdit;

    fn run(filter: &mut DropRules, entries: &[(&str, u64, ValueType)]) -> Vec<String> {
        entries
            .iter()
            .filter(|(k, s, t)| filter.keep(&internal_key(k.as_bytes(), *s, *t)).unwrap())
            .map(|(k, s, t)| {
                format!(
                    "{k}@{s}{}",
                    if *t == ValueType::Delete { "del" } else { "" }
                )
            })
            .collect()
    }

    #[test]
    fn without_snapshots_only_the_newest_version_survives_and_bottom_tombstones_go() {
        use ValueType::*;
        let mut f = DropRules::new(vec![], &Version::default(), 1, 7);
        let kept = run(
            &mut f,
            &[
                ("a", 9, Put),
                ("a", 5, Put),
                ("b", 8, Delete),
                ("b", 3, Put),
                ("c", 1, Put),
            ],
        );
        assert_eq!(kept, vec!["a@9", "c@1"]);
        assert_eq!(
            f.counts,
            DropCounts {
                keys_in: 5,
                keys_dropped: 3,
                // a@5 under a@9, b@3 under b's deletion; the deletion itself
                // has nothing below it.
                dropped_newer: 2,
                dropped_obsolete: 1,
                dropped_range_del: 0,
            }
        );
    }

    #[test]
    fn every_snapshot_keeps_the_version_it_sees() {
        use ValueType::*;
        // Snapshots at 4 and 7: stripes (..=4], (4..=7], (7..).
        let mut f = DropRules::new(vec![7, 4], &Version::default(), 1, 7);
        let kept = run(
            &mut f,
            &[
                ("a", 9, Put),
                ("a", 8, Put),    // same stripe as 9: dropped
                ("a", 6, Delete), // seen by snapshot 7
                ("a", 4, Put),    // seen by snapshot 4
                ("a", 2, Put),    // same stripe as 4: dropped
                ("b", 3, Delete), // oldest stripe, nothing below: dropped
                ("b", 1, Put),    // hidden by it: dropped
            ],
        );
        assert_eq!(kept, vec!["a@9", "a@6del", "a@4"]);
    }

    #[test]
    fn a_tombstone_stays_while_a_deeper_level_may_hold_its_key() {
        use ValueType::*;
        let mut edit = VersionEdit::new();
        edit.add_file(
            3,
            FileMetaData {
                number: 5,
                file_size: 10,
                smallest: internal_key(b"m", 1, Put),
                largest: internal_key(b"p", 1, Put),
                smallest_seqno: 1,
                largest_seqno: 1,
                blob_files: Vec::new(),
                global_seqno: None,
            },
        );
        let version = Version::default().apply(&edit).unwrap();
        let mut f = DropRules::new(vec![], &version, 1, 7);
        let kept = run(
            &mut f,
            &[
                ("a", 5, Delete),
                ("n", 5, Delete),
                ("n", 4, Put),
                ("z", 5, Delete),
            ],
        );
        assert_eq!(kept, vec!["n@5del"]);
        // Output at the last level: nothing deeper.
        let mut f = DropRules::new(vec![], &version, 6, 7);
        assert!(run(&mut f, &[("n", 5, Delete)]).is_empty());
    }

    #[test]
    fn merge_operands_keep_what_lies_below_them() {
        use ValueType::*;
        // A snapshot at 5: stripes (..=5], (5..).
        let mut f = DropRules::new(vec![5], &Version::default(), 6, 7);
        let kept = run(
            &mut f,
            &[
                ("a", 9, Merge),
                ("a", 8, Merge),
                ("a", 7, Put),    // the base of 9 and 8
                ("a", 6, Put),    // hidden by 7
                ("a", 4, Merge),  // seen by the snapshot
                ("a", 3, Delete), // ends its chain; bottom, nothing below: dropped
                ("a", 2, Put),    // hidden by 3
                ("b", 1, Merge),  // alone at the bottom: kept
            ],
        );
        assert_eq!(kept, vec!["a@9", "a@8", "a@7", "a@4", "b@1"]);
    }

    #[test]
    fn malformed_keys_are_corruption() {
        let mut f = DropRules::new(vec![], &Version::default(), 1, 7);
        assert!(f.keep(b"short").unwrap_err().contains("shorter"));
        let mut bad = b"key".to_vec();
        bad.extend_from_slice(&((5u64 << 8) | 0x7f).to_le_bytes());
        assert!(f.keep(&bad).unwrap_err().contains("value type"));
    }
}
