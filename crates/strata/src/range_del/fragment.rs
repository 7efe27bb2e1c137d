//! Fragmenting range tombstones, and the queries reads and compactions ask.
//!
//! Tombstones overlap freely, so sorted by start (or by end) they cannot be
//! binary searched: `[c, d)@4`, `[g, h)@7`, `[a, z)@10` sorted by start put
//! `[c, d)` next to key `e`, which `[a, z)` deletes. Cutting them at every start
//! and end gives fragments that do not overlap:
//!
//! ```text
//! tombstones      [a ............................ z)@10
//!                        [c .. d)@4      [g .. h)@7
//! fragments       [a, c){10} [c, d){10,4} [d, g){10} [g, h){10,7} [h, z){10}
//! ```
//!
//! Each fragment carries the sequence numbers of the tombstones covering it,
//! newest first. The one fragment that can hold a key is found by binary search
//! over the starts, and the newest sequence number visible to a reader by binary
//! search over that fragment's numbers. Neighbouring fragments with the same
//! numbers are merged, so fragments are never more than needed.

use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BinaryHeap};

use bytes::Bytes;

use super::RangeTombstone;
use crate::key::{SequenceNumber, MAX_SEQUENCE_NUMBER};
use crate::key_order::KeyComparator;

/// A set of range tombstones, fragmented for O(log n) queries.
///
/// Invariants: fragments are sorted by start, `start < end` for each, and a
/// fragment's end is at or before the next one's start, all in `order`, the
/// family's key order; every fragment has at
/// least one sequence number, its numbers are distinct and stored newest first.
///
/// # How the engine uses it
///
/// - **Get** at `read_seq`: the newest entry found for a key at sequence
///   number `s` is deleted iff `s < max_covering_seq(key, read_seq)`, taking
///   the maximum over the memtables' and the tables' tombstones consulted so
///   far (a tombstone in a newer source also deletes entries in older ones).
/// - **Forward iteration** (seek, next; upper bound exclusive): for an entry
///   `(k, s)`, [`covering`](Self::covering)`(k, read_seq)` gives the fragment
///   holding `k` and its visible sequence number `t`; `s < t` deletes it. When
///   every entry of the fragment's range in the sources at or below the one
///   the tombstone came from is older than `t` (always true of sources older
///   than the tombstone's own: the LSM keeps newer versions above older ones),
///   those sources can skip the whole range with one
///   `seek(seek_key(end, MAX_SEQUENCE_NUMBER))`; an `end` at or past the upper
///   bound ends the iteration. [`next_visible`](Self::next_visible) gives the
///   next fragment to watch for, so a scan asks again only once it passes `end`.
/// - **Backward iteration** (seek_for_prev, prev; lower bound inclusive): the
///   same with [`prev_visible`](Self::prev_visible); a covered range is
///   skipped with one `seek_for_prev(seek_key(start, MAX_SEQUENCE_NUMBER))`,
///   which lands on the last entry of a user key below `start`; a `start` at
///   or below the lower bound ends the iteration.
/// - **Flush**: every tombstone of the memtable's view goes to the table
///   builder ([`tombstones`](Self::tombstones)).
/// - **Compaction**: merge the inputs' tombstones
///   ([`merge`](Self::merge)); drop a point entry when
///   [`compaction_may_drop`](Self::compaction_may_drop) says no reader can see
///   it; write to each output the tombstones [`clip`](Self::clip)ped to the
///   user keys between its cut points, after
///   [`for_compaction`](Self::for_compaction) drops the sequence numbers no
///   snapshot needs (and, at the bottommost level, the ones every reader sees).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FragmentedRangeTombstones {
    /// The order of the user keys; two sets are equal only in one order.
    order: KeyComparator,
    fragments: Vec<Slot>,
    /// The sequence numbers of all fragments; fragment `i`'s are
    /// `seqs[fragments[i].seqs_from..fragments[i].seqs_to]`, newest first.
    seqs: Vec<SequenceNumber>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Slot {
    start: Bytes,
    end: Bytes,
    seqs_from: usize,
    seqs_to: usize,
}

/// One fragment: the range `[start, end)` and the sequence numbers of the
/// tombstones covering it, newest first (never empty).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fragment<'a> {
    /// First user key of the fragment.
    pub start: &'a [u8],
    /// First user key past the fragment (exclusive).
    pub end: &'a [u8],
    /// Sequence numbers covering the fragment, newest first.
    pub seqs: &'a [SequenceNumber],
}

impl Fragment<'_> {
    /// The newest sequence number `<= read_seq`, if any: what a reader at
    /// `read_seq` sees of this fragment.
    pub fn visible_seq(&self, read_seq: SequenceNumber) -> Option<SequenceNumber> {
        let first_visible = self.seqs.partition_point(|&s| s > read_seq);
        self.seqs.get(first_visible).copied()
    }
}

/// A fragment as a reader at some sequence number sees it: the range and the
/// newest sequence number covering it that the reader can see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VisibleFragment<'a> {
    /// First user key of the fragment.
    pub start: &'a [u8],
    /// First user key past the fragment (exclusive).
    pub end: &'a [u8],
    /// Entries of keys in `[start, end)` below this sequence number are deleted.
    pub seq: SequenceNumber,
}

impl FragmentedRangeTombstones {
    /// No tombstones, in `order`.
    pub fn empty(order: &KeyComparator) -> Self {
        FragmentedRangeTombstones {
            order: order.clone(),
            ..FragmentedRangeTombstones::default()
        }
    }

    /// Fragments `tombstones` (whose user keys are in `order`), given in any
    /// order, possibly overlapping and possibly repeated. O(n log n) plus
    /// the size of the result.
    pub fn new(
        tombstones: impl IntoIterator<Item = RangeTombstone>,
        order: &KeyComparator,
    ) -> Self {
        let mut tombstones: Vec<RangeTombstone> = tombstones.into_iter().collect();
        tombstones.sort_by(|a, b| order.compare_user(&a.start, &b.start));
        let mut points: Vec<Bytes> = tombstones
            .iter()
            .flat_map(|t| [t.start.clone(), t.end.clone()])
            .collect();
        points.sort_by(|a, b| order.compare_user(a, b));
        points.dedup_by(|a, b| order.compare_user(a, b) == Ordering::Equal);
        // Every end is a point, so an end is known by its point's index,
        // which orders ends without comparing keys again.
        let point_index = |k: &[u8]| points.partition_point(|p| order.lt(p, k));

        let mut out = FragmentedRangeTombstones::empty(order);
        // Tombstones covering the current elementary range: their ends (to
        // expire them) and a count per sequence number (a number may repeat).
        let mut ends: BinaryHeap<Reverse<(usize, SequenceNumber)>> = BinaryHeap::new();
        let mut active: BTreeMap<SequenceNumber, usize> = BTreeMap::new();
        let mut pending = tombstones.into_iter().peekable();
        let mut seqs = Vec::new();
        for (i, pair) in points.windows(2).enumerate() {
            let [lo, hi] = pair else { continue };
            while let Some(Reverse((end, seq))) = ends.peek() {
                if *end > i {
                    break;
                }
                if let Some(n) = active.get_mut(seq) {
                    *n -= 1;
                    if *n == 0 {
                        active.remove(seq);
                    }
                }
                ends.pop();
            }
            // Every start is a point, so a tombstone starts exactly at `lo`
            // when it joins.
            while let Some(t) = pending.next_if(|t| order.le(&t.start, lo)) {
                *active.entry(t.seq).or_insert(0) += 1;
                ends.push(Reverse((point_index(&t.end), t.seq)));
            }
            if !active.is_empty() {
                seqs.clear();
                seqs.extend(active.keys().rev());
                out.push(lo.clone(), hi.clone(), &seqs);
            }
        }
        out
    }

    /// Appends the fragment `[start, end)` with `seqs` (newest first), which
    /// must start at or after the last fragment's end; it extends the last
    /// fragment instead when they touch and carry the same numbers.
    fn push(&mut self, start: Bytes, end: Bytes, seqs: &[SequenceNumber]) {
        debug_assert!(self.order.lt(&start, &end));
        debug_assert!(self
            .fragments
            .last()
            .is_none_or(|l| self.order.le(&l.end, &start)));
        debug_assert!(!seqs.is_empty() && seqs.windows(2).all(|w| w[0] > w[1]));
        if let Some(last) = self.fragments.last_mut() {
            if self.order.compare_user(&last.end, &start) == Ordering::Equal
                && self.seqs.get(last.seqs_from..last.seqs_to) == Some(seqs)
            {
                last.end = end;
                return;
            }
        }
        let seqs_from = self.seqs.len();
        self.seqs.extend_from_slice(seqs);
        self.fragments.push(Slot {
            start,
            end,
            seqs_from,
            seqs_to: self.seqs.len(),
        });
    }

    /// Fragments the tombstones of several sets together (e.g. the inputs of a
    /// compaction, or every source an iterator reads), all in `order`.
    pub fn merge<'a>(
        sets: impl IntoIterator<Item = &'a FragmentedRangeTombstones>,
        order: &KeyComparator,
    ) -> Self {
        FragmentedRangeTombstones::new(sets.into_iter().flat_map(|s| s.tombstones()), order)
    }

    /// The order of the tombstones' user keys.
    pub fn order(&self) -> &KeyComparator {
        &self.order
    }

    /// Number of fragments.
    pub fn len(&self) -> usize {
        self.fragments.len()
    }

    /// True when there is no tombstone.
    pub fn is_empty(&self) -> bool {
        self.fragments.is_empty()
    }

    fn fragment(&self, i: usize) -> Option<Fragment<'_>> {
        let slot = self.fragments.get(i)?;
        Some(Fragment {
            start: &slot.start,
            end: &slot.end,
            seqs: self.seqs.get(slot.seqs_from..slot.seqs_to)?,
        })
    }

    /// Every fragment in key order.
    pub fn fragments(&self) -> impl DoubleEndedIterator<Item = Fragment<'_>> + '_ {
        (0..self.fragments.len()).filter_map(|i| self.fragment(i))
    }

    /// One tombstone per fragment and sequence number, in the order a table's
    /// range-deletion block stores them: start ascending, then sequence number
    /// descending (internal-key order of `(start, seq, RangeDeletion)`).
    pub fn tombstones(&self) -> impl Iterator<Item = RangeTombstone> + '_ {
        self.fragments.iter().flat_map(move |slot| {
            let seqs = self.seqs.get(slot.seqs_from..slot.seqs_to).unwrap_or(&[]);
            seqs.iter().map(move |&seq| RangeTombstone {
                start: slot.start.clone(),
                end: slot.end.clone(),
                seq,
            })
        })
    }

    /// Number of (fragment, sequence number) pairs: the entries
    /// [`tombstones`](Self::tombstones) yields.
    pub fn num_tombstones(&self) -> usize {
        self.seqs.len()
    }

    /// The first user key covered, if any.
    pub fn smallest_key(&self) -> Option<&[u8]> {
        self.fragments.first().map(|f| &f.start[..])
    }

    /// The end of the last fragment (exclusive), if any.
    pub fn largest_end(&self) -> Option<&[u8]> {
        self.fragments.last().map(|f| &f.end[..])
    }

    /// The newest and the oldest sequence number of any tombstone.
    pub fn seq_range(&self) -> Option<(SequenceNumber, SequenceNumber)> {
        let oldest = self.seqs.iter().min()?;
        let newest = self.seqs.iter().max()?;
        Some((*newest, *oldest))
    }

    /// Index of the fragment whose start is the last one `<= user_key`.
    fn index_at_or_before(&self, user_key: &[u8]) -> Option<usize> {
        self.fragments
            .partition_point(|f| self.order.le(&f.start, user_key))
            .checked_sub(1)
    }

    /// The largest sequence number `<= read_seq` of a tombstone covering
    /// `user_key`, or 0 when none does. An entry of `user_key` at sequence
    /// number `s` is deleted for the reader iff `s` is below the answer.
    /// O(log n).
    pub fn max_covering_seq(&self, user_key: &[u8], read_seq: SequenceNumber) -> SequenceNumber {
        self.covering(user_key, read_seq).map_or(0, |f| f.seq)
    }

    /// The fragment holding `user_key`, when a tombstone covering it is
    /// visible at `read_seq`. O(log n).
    pub fn covering(
        &self,
        user_key: &[u8],
        read_seq: SequenceNumber,
    ) -> Option<VisibleFragment<'_>> {
        let f = self.fragment(self.index_at_or_before(user_key)?)?;
        if !self.order.lt(user_key, f.end) {
            return None;
        }
        visible(f, read_seq)
    }

    /// For forward iteration: the first fragment ending after `user_key` (so
    /// holding it, or starting after it) with a tombstone visible at
    /// `read_seq`. O(log n), plus one step per fragment passed over because
    /// all its tombstones are newer than `read_seq` (none for reads at the
    /// latest sequence number).
    pub fn next_visible(
        &self,
        user_key: &[u8],
        read_seq: SequenceNumber,
    ) -> Option<VisibleFragment<'_>> {
        let first = self
            .fragments
            .partition_point(|f| self.order.le(&f.end, user_key));
        (first..self.fragments.len())
            .filter_map(|i| self.fragment(i))
            .find_map(|f| visible(f, read_seq))
    }

    /// For backward iteration: the last fragment starting at or before
    /// `user_key` (so holding it, or ending at or before it) with a tombstone
    /// visible at `read_seq`. Same cost as [`next_visible`](Self::next_visible).
    pub fn prev_visible(
        &self,
        user_key: &[u8],
        read_seq: SequenceNumber,
    ) -> Option<VisibleFragment<'_>> {
        let last = self.index_at_or_before(user_key)?;
        (0..=last)
            .rev()
            .filter_map(|i| self.fragment(i))
            .find_map(|f| visible(f, read_seq))
    }

    /// True when a compaction may drop the entry `(user_key, seq)`: a
    /// tombstone covering it is newer and no snapshot (sorted ascending) lies
    /// between them, so every reader that sees the entry also sees the
    /// tombstone. Ask this of the compaction's input tombstones.
    pub fn compaction_may_drop(
        &self,
        user_key: &[u8],
        seq: SequenceNumber,
        snapshots: &[SequenceNumber],
    ) -> bool {
        debug_assert!(snapshots.windows(2).all(|w| w[0] <= w[1]));
        // The oldest reader that sees the entry: the first snapshot at or
        // above it, else the latest state. A tombstone it sees covers the
        // entry for every reader.
        let oldest_reader = snapshots
            .get(snapshots.partition_point(|&s| s < seq))
            .copied()
            .unwrap_or(MAX_SEQUENCE_NUMBER);
        self.max_covering_seq(user_key, oldest_reader) > seq
    }

    /// The tombstones restricted to user keys in `[lower, upper)` (`None`:
    /// unbounded). A compaction writes each output the tombstones clipped to
    /// the user keys between its cut points, so neighbouring outputs cover the
    /// range without overlap or gap.
    pub fn clip(&self, lower: Option<&[u8]>, upper: Option<&[u8]>) -> Self {
        let mut out = FragmentedRangeTombstones::empty(&self.order);
        for slot in &self.fragments {
            let start = match lower {
                Some(l) if self.order.lt(&slot.start, l) => Bytes::copy_from_slice(l),
                _ => slot.start.clone(),
            };
            let end = match upper {
                Some(u) if self.order.lt(u, &slot.end) => Bytes::copy_from_slice(u),
                _ => slot.end.clone(),
            };
            if self.order.lt(&start, &end) {
                let seqs = self.seqs.get(slot.seqs_from..slot.seqs_to).unwrap_or(&[]);
                out.push(start, end, seqs);
            }
        }
        out
    }

    /// The tombstones a compaction output must keep. `snapshots` (sorted
    /// ascending) split sequence numbers into stripes that the same readers
    /// see; per fragment, only the newest number of each stripe can be the
    /// one a reader sees, so the others go (RocksDB's snapshot-striped
    /// compaction of tombstones). With `bottommost` (nothing older lies below
    /// the output's key range), the oldest stripe, seen by every reader, goes
    /// as well: the compaction has dropped every entry it deletes.
    ///
    /// Every reader at a snapshot, or at or above the newest sequence number,
    /// gets the same [`max_covering_seq`](Self::max_covering_seq) from the
    /// result as from `self` (except for the dropped bottommost stripe).
    pub fn for_compaction(&self, snapshots: &[SequenceNumber], bottommost: bool) -> Self {
        debug_assert!(snapshots.windows(2).all(|w| w[0] <= w[1]));
        let stripe = |seq: SequenceNumber| snapshots.partition_point(|&s| s < seq);
        let mut out = FragmentedRangeTombstones::empty(&self.order);
        let mut kept = Vec::new();
        for slot in &self.fragments {
            kept.clear();
            // Newest first: the first number met in each stripe is its newest.
            let mut last_stripe = None;
            let seqs = self.seqs.get(slot.seqs_from..slot.seqs_to).unwrap_or(&[]);
            for &seq in seqs {
                let s = stripe(seq);
                if last_stripe != Some(s) && !(bottommost && s == 0) {
                    kept.push(seq);
                }
                last_stripe = Some(s);
            }
            if !kept.is_empty() {
                out.push(slot.start.clone(), slot.end.clone(), &kept);
            }
        }
        out
    }

    /// Bytes of memory held: the keys and sequence numbers plus bookkeeping.
    pub fn memory_usage(&self) -> usize {
        let keys: usize = self
            .fragments
            .iter()
            .map(|f| f.start.len() + f.end.len())
            .sum();
        keys + self.fragments.capacity() * std::mem::size_of::<Slot>()
            + self.seqs.capacity() * std::mem::size_of::<SequenceNumber>()
    }
}

fn visible(f: Fragment<'_>, read_seq: SequenceNumber) -> Option<VisibleFragment<'_>> {
    Some(VisibleFragment {
        start: f.start,
        end: f.end,
        seq: f.visible_seq(read_seq)?,
    })
}
