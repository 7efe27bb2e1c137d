//! The user-facing iterator: user keys and values as of a snapshot, within
//! optional bounds, over an internal iterator (normally a [`MergingIterator`]).
//!
//! The inner iterator yields every version of every key, newest first within a
//! user key. [`DbIterator`] shows, for each user key, only its newest version with
//! sequence number <= the snapshot, and only when that version is a value; a
//! deletion hides every older version. The logic is LevelDB's `DBIter` (RocksDB's
//! `DBIter` without merge operands), with RocksDB's `iterate_lower_bound`
//! (inclusive) and `iterate_upper_bound` (exclusive).
//!
//! Two modes, which decide where the inner iterator stands and where the current
//! entry lives:
//! - Forward: the inner iterator is on the current entry itself, the newest
//!   visible version of the current user key, so key and value are read from it.
//! - Reverse: going backward meets a user key's versions oldest first, so the
//!   newest visible one is only known after passing all of them. The inner
//!   iterator then stands before every entry of the current user key, and every
//!   entry between it and the current user key's entries is invisible; the current
//!   key and value are copies in `saved_key` / `saved_value`.
//!
//! Range deletions: the iterator holds the fragmented tombstones of every
//! source it reads, and treats a version that a tombstone visible at the
//! snapshot covers with a larger sequence number as a deletion (which hides
//! the older versions too: they are covered as well).
//!
//! [`DbRange`](super::db_range::DbRange) wraps two of these into a Rust
//! [`Iterator`] that can be consumed from both ends.
//!
//! [`MergingIterator`]: crate::iter::merging::MergingIterator

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use crate::blob::BlobValues;
use crate::error::{Error, Result};
use crate::iter::prefix_seek::PrefixSeek;
use crate::iter::InternalIterator;
use crate::key::{
    pack_tag, ParsedInternalKey, SequenceNumber, ValueType, MAX_SEQUENCE_NUMBER, TAG_LEN,
    VALUE_TYPE_FOR_SEEK,
};
use crate::key_order::KeyComparator;
use crate::merge::MergeOperator;
use crate::options::{PrefixExtractor, ReadOptions, ReadTier};
use crate::range_del::FragmentedRangeTombstones;
use crate::statistics::{micros_since, Histogram, Statistics, Ticker};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Reverse,
}

/// The kinds of entry the point-key stream holds. Range tombstones live in
/// their own structures, so a [`ValueType::RangeDeletion`] key in this stream is
/// corruption and never becomes a `PointType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PointType {
    Put,
    Delete,
    Merge,
}

/// One decoded inner entry, checked for a known point type.
struct Entry<'a> {
    user_key: &'a [u8],
    seq: SequenceNumber,
    value_type: PointType,
    /// A put whose value is a reference into a blob file.
    blob: bool,
}

/// Decodes an inner key; a malformed one is corruption of the source it came from.
fn parse_entry(ikey: &[u8]) -> Result<Entry<'_>> {
    let Some(parsed) = ParsedInternalKey::parse(ikey) else {
        return Err(Error::corruption(
            "",
            0,
            format!(
                "internal key of {} bytes is shorter than its {TAG_LEN}-byte tag",
                ikey.len()
            ),
        ));
    };
    let (value_type, blob) = match parsed.value_type() {
        Some(ValueType::Put) => (PointType::Put, false),
        Some(ValueType::BlobIndex) => (PointType::Put, true),
        Some(ValueType::Delete) => (PointType::Delete, false),
        Some(ValueType::Merge) => (PointType::Merge, false),
        Some(ValueType::RangeDeletion) => {
            return Err(Error::corruption(
                "",
                0,
                format!(
                    "range deletion in the point-key stream at sequence number {}",
                    parsed.seq
                ),
            ))
        }
        None => {
            return Err(Error::corruption(
                "",
                0,
                format!(
                    "unknown value type {:#04x} in internal key at sequence number {}",
                    parsed.type_code, parsed.seq
                ),
            ))
        }
    };
    Ok(Entry {
        user_key: parsed.user_key,
        seq: parsed.seq,
        value_type,
        blob,
    })
}

/// `entry` as a reader at `read_seq` sees it: a deletion when a visible range
/// tombstone covers it with a larger sequence number. O(log fragments).
fn apply_range_tombstones<'a>(
    tombstones: Option<&FragmentedRangeTombstones>,
    read_seq: SequenceNumber,
    mut entry: Entry<'a>,
) -> Entry<'a> {
    if let Some(t) = tombstones {
        if entry.seq < t.max_covering_seq(entry.user_key, read_seq) {
            entry.value_type = PointType::Delete;
        }
    }
    entry
}

/// What a backward scan holds for a user key before its merge operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    Nothing,
    Deleted,
    Value,
}

/// The merge of `operands` (oldest first) over `base` by `operator`.
fn merge_values(
    operator: Option<&dyn MergeOperator>,
    key: &[u8],
    base: Option<&[u8]>,
    operands: &[Vec<u8>],
) -> Result<Vec<u8>> {
    let operands: Vec<&[u8]> = operands.iter().map(Vec::as_slice).collect();
    crate::merge::merge_for_read(operator, key, base, &operands)
}

/// Writes into `buf` the internal key `(user_key, seq, type_code)`.
fn build_internal_key(buf: &mut Vec<u8>, user_key: &[u8], seq: SequenceNumber, type_code: u8) {
    buf.clear();
    buf.extend_from_slice(user_key);
    buf.extend_from_slice(&pack_tag(seq, type_code).to_le_bytes());
}

/// A cursor over the user keys visible at a snapshot, within optional bounds.
///
/// Like every cursor here, positioning never fails directly: an error makes the
/// iterator invalid and is reported by [`status`](Self::status).
///
/// ```
/// use strata::{Db, DbOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let db = Db::open(dir.path(), DbOptions { create_if_missing: true, ..Default::default() })?;
/// for k in ["a", "c", "e"] {
///     db.put(k, k)?;
/// }
/// let mut it = db.iter();
/// it.seek(b"b"); // the first key at or after "b"
/// assert_eq!(it.key(), Some(&b"c"[..]));
/// it.seek_for_prev(b"d"); // the last key at or before "d"
/// assert_eq!(it.value(), Some(&b"c"[..]));
/// it.seek_to_last();
/// assert_eq!(it.key(), Some(&b"e"[..]));
/// it.status()?;
/// # Ok(())
/// # }
/// ```
pub struct DbIterator {
    inner: Box<dyn InternalIterator + Send>,
    /// The order of `inner`'s user keys, which bounds are compared in.
    order: KeyComparator,
    /// The snapshot: versions with a larger sequence number are invisible.
    seq: SequenceNumber,
    /// Smallest user key shown (inclusive).
    lower_bound: Option<Vec<u8>>,
    /// User keys shown are smaller than this (exclusive).
    upper_bound: Option<Vec<u8>>,
    direction: Direction,
    valid: bool,
    /// Reverse, or forward on a saved entry: the current user key. Otherwise
    /// scratch, the user key being skipped.
    saved_key: Vec<u8>,
    /// Reverse, or forward on a saved entry: the current value.
    saved_value: Vec<u8>,
    /// Forward: the current entry is held in `saved_key`/`saved_value`:
    /// the merge of a chain of operands (the inner iterator stands past the
    /// chain, on the value or deletion that ended it, or a later key), or a
    /// value read from a blob file (the inner iterator stands on its
    /// reference).
    value_saved: bool,
    /// Reads separated values; `None` when the sources hold no references
    /// (one met then is corruption).
    blobs: Option<BlobValues>,
    /// Combines merge operands; `None` when the family has no operator (a
    /// key with operands is then an error).
    merge_operator: Option<Arc<dyn MergeOperator>>,
    /// Scratch for building the internal seek keys; reused.
    seek_buf: Vec<u8>,
    /// Corruption found by this iterator since the last seek.
    error: Option<Error>,
    /// Where seek latencies go, if anywhere.
    statistics: Option<Arc<Statistics>>,
    /// The family's prefix extractor and the read's prefix settings.
    prefix_seek: Option<Box<PrefixSeek>>,
    /// The range tombstones of every source `inner` reads; `None` when there
    /// are none.
    range_tombstones: Option<Arc<FragmentedRangeTombstones>>,
    /// Where each step may look: with `BlockCache`, a step that would read
    /// a file fails with `Incomplete` (see `crate::read_tier`).
    tier: ReadTier,
    /// What the iterator reads from (a super version), kept alive for its
    /// whole life so its tables stay on disk.
    _pinned: Vec<Arc<dyn std::any::Any + Send + Sync>>,
}

impl DbIterator {
    /// A view of `inner` (whose user keys are in `order`) at snapshot `seq`,
    /// showing user keys in `[lower_bound, upper_bound)` (either side open
    /// when `None`). Unpositioned.
    pub fn new(
        inner: Box<dyn InternalIterator + Send>,
        seq: SequenceNumber,
        lower_bound: Option<Vec<u8>>,
        upper_bound: Option<Vec<u8>>,
        order: KeyComparator,
    ) -> Self {
        DbIterator {
            inner,
            order,
            // Every stored sequence number fits in 56 bits; a larger snapshot sees
            // the same entries, and clamping keeps seek keys well formed.
            seq: seq.min(MAX_SEQUENCE_NUMBER),
            lower_bound,
            upper_bound,
            direction: Direction::Forward,
            valid: false,
            saved_key: Vec::new(),
            saved_value: Vec::new(),
            value_saved: false,
            blobs: None,
            merge_operator: None,
            seek_buf: Vec::new(),
            error: None,
            statistics: None,
            prefix_seek: None,
            range_tombstones: None,
            tier: ReadTier::ReadAll,
            _pinned: Vec::new(),
        }
    }

    /// The order of the user keys.
    pub fn order(&self) -> &KeyComparator {
        &self.order
    }

    /// Hides the versions `tombstones` (those of every source the inner
    /// iterator reads) delete at the iterator's snapshot.
    pub fn with_range_tombstones(mut self, tombstones: Arc<FragmentedRangeTombstones>) -> Self {
        self.range_tombstones = (!tombstones.is_empty()).then_some(tombstones);
        self
    }

    /// Keeps `source` alive as long as the iterator: the tables of a version
    /// are deleted only once no holder of it is left, and a snapshot's
    /// versions only once it is released.
    pub fn pinning(mut self, source: Arc<dyn std::any::Any + Send + Sync>) -> Self {
        self._pinned.push(source);
        self
    }

    /// Reads the values of `BlobIndex` entries through `blobs`.
    pub fn with_blobs(mut self, blobs: BlobValues) -> Self {
        self.blobs = Some(blobs);
        self
    }

    /// Applies `operator` to keys with merge operands.
    pub fn with_merge_operator(mut self, operator: Option<Arc<dyn MergeOperator>>) -> Self {
        self.merge_operator = operator;
        self
    }

    /// Seeks with `extractor` (the family's) as `options` ask:
    /// `prefix_same_as_start`, `total_order_seek`, and prefix filters when
    /// the bounds keep a seek inside its target's prefix. `options` must be
    /// the read's; the iterator's own bounds are the ones restored between
    /// seeks.
    pub(crate) fn with_prefix_extractor(
        mut self,
        extractor: Option<PrefixExtractor>,
        options: &ReadOptions,
    ) -> Self {
        let bounds = (self.lower_bound.clone(), self.upper_bound.clone());
        self.prefix_seek = PrefixSeek::new(extractor, options, bounds).map(Box::new);
        self
    }

    /// Steps within `tier` (`ReadOptions::read_tier`).
    pub fn with_read_tier(mut self, tier: ReadTier) -> Self {
        self.tier = tier;
        self
    }

    /// Records the latency of every seek in `statistics` (`db.seek.micros`).
    pub fn with_statistics(mut self, statistics: Option<Arc<Statistics>>) -> Self {
        self.statistics = statistics;
        self
    }

    /// True when positioned on a visible entry.
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// The current user key, or `None` when not positioned on an entry
    /// (before any seek, past either end, or after an error: check
    /// [`DbIterator::status`]).
    pub fn key(&self) -> Option<&[u8]> {
        if !self.valid {
            return None;
        }
        Some(match self.direction {
            Direction::Forward if !self.value_saved => crate::key::user_key(self.inner.key()),
            _ => &self.saved_key,
        })
    }

    /// The current value, or `None` when not positioned on an entry.
    pub fn value(&self) -> Option<&[u8]> {
        if !self.valid {
            return None;
        }
        Some(match self.direction {
            Direction::Forward if !self.value_saved => self.inner.value(),
            _ => &self.saved_value,
        })
    }

    /// The first error met: corruption seen here, or the inner iterator's error.
    pub fn status(&self) -> Result<()> {
        match &self.error {
            Some(e) => Err(e.clone()),
            None => self.inner.status(),
        }
    }

    /// Positions on the first visible key (at or after the lower bound).
    pub fn seek_to_first(&mut self) {
        let _tier = crate::read_tier::enter(self.tier);
        self.error = None;
        if let Some(p) = self.prefix_seek.as_mut() {
            p.restore(&mut self.lower_bound, &mut self.upper_bound);
        }
        self.direction = Direction::Forward;
        match &self.lower_bound {
            Some(lower) => {
                build_internal_key(&mut self.seek_buf, lower, self.seq, VALUE_TYPE_FOR_SEEK);
                self.inner.seek(&self.seek_buf);
            }
            None => self.inner.seek_to_first(),
        }
        self.find_next_user_entry(false);
    }

    /// Positions on the last visible key (before the upper bound).
    pub fn seek_to_last(&mut self) {
        let _tier = crate::read_tier::enter(self.tier);
        if let Some(p) = self.prefix_seek.as_mut() {
            p.restore(&mut self.lower_bound, &mut self.upper_bound);
        }
        self.seek_to_last_within_bounds();
    }

    /// The last visible key below the upper bound as it stands (a
    /// `prefix_same_as_start` seek_for_prev may have narrowed it).
    fn seek_to_last_within_bounds(&mut self) {
        self.error = None;
        match &self.upper_bound {
            Some(upper) => {
                // The smallest internal key of `upper` (newest possible version and
                // the seek type): every entry of a smaller user key sorts before it.
                build_internal_key(
                    &mut self.seek_buf,
                    upper,
                    MAX_SEQUENCE_NUMBER,
                    VALUE_TYPE_FOR_SEEK,
                );
                self.inner.seek_for_prev(&self.seek_buf);
            }
            None => self.inner.seek_to_last(),
        }
        self.find_prev_user_entry();
    }

    /// Positions on the first visible key >= `target` (and >= the lower bound).
    pub fn seek(&mut self, target: &[u8]) {
        let _tier = crate::read_tier::enter(self.tier);
        let timer = self
            .statistics
            .as_ref()
            .map(|s| (s.clone(), Instant::now()));
        self.seek_untimed(target);
        if let Some((stats, start)) = timer {
            stats.record(Histogram::DbSeekMicros, micros_since(start));
            stats.add(Ticker::NumberDbSeek, 1);
        }
    }

    fn seek_untimed(&mut self, target: &[u8]) {
        self.error = None;
        self.direction = Direction::Forward;
        if let Some(p) = self.prefix_seek.as_mut() {
            p.restore(&mut self.lower_bound, &mut self.upper_bound);
        }
        let clamped;
        let target = match &self.lower_bound {
            Some(lower) if self.order.lt(target, lower) => {
                clamped = lower.clone();
                clamped.as_slice()
            }
            _ => target,
        };
        let confined = self.prefix_seek.as_mut().and_then(|p| {
            let len = p.confine(target, &mut self.lower_bound, &mut self.upper_bound)?;
            Some((*p.extractor(), len))
        });
        // Seeking to `(target, snapshot)` skips the versions newer than the snapshot.
        build_internal_key(&mut self.seek_buf, target, self.seq, VALUE_TYPE_FOR_SEEK);
        match confined {
            Some((extractor, len)) => {
                self.inner
                    .seek_in_prefix(&self.seek_buf, &extractor, &target[..len])
            }
            None => self.inner.seek(&self.seek_buf),
        }
        self.find_next_user_entry(false);
    }

    /// Positions on the last visible key <= `target` (and below the upper bound).
    pub fn seek_for_prev(&mut self, target: &[u8]) {
        let _tier = crate::read_tier::enter(self.tier);
        let timer = self
            .statistics
            .as_ref()
            .map(|s| (s.clone(), Instant::now()));
        self.seek_for_prev_untimed(target);
        if let Some((stats, start)) = timer {
            stats.record(Histogram::DbSeekMicros, micros_since(start));
            stats.add(Ticker::NumberDbSeek, 1);
        }
    }

    fn seek_for_prev_untimed(&mut self, target: &[u8]) {
        if let Some(p) = self.prefix_seek.as_mut() {
            // Narrows the bounds with `prefix_same_as_start`; the filters
            // serve forward seeks only.
            p.confine(target, &mut self.lower_bound, &mut self.upper_bound);
        }
        if matches!(&self.upper_bound, Some(upper) if self.order.le(upper, target)) {
            self.seek_to_last_within_bounds();
            return;
        }
        self.error = None;
        // Sequence 0 and type 0 make the largest internal key of `target`, so the
        // inner iterator lands on the last entry whose user key is <= `target`.
        build_internal_key(&mut self.seek_buf, target, 0, 0);
        self.inner.seek_for_prev(&self.seek_buf);
        self.find_prev_user_entry();
    }

    /// Moves to the next visible key. Does nothing when not valid.
    pub fn next(&mut self) {
        let _tier = crate::read_tier::enter(self.tier);
        if !self.valid {
            return;
        }
        match self.direction {
            // A saved entry: the inner iterator is past its operands or on
            // its blob reference, and `saved_key` names the key whose
            // versions to skip.
            Direction::Forward if self.value_saved => {}
            Direction::Forward => {
                // Skip every remaining (older) version of the current user key.
                self.saved_key.clear();
                self.saved_key
                    .extend_from_slice(crate::key::user_key(self.inner.key()));
                self.inner.next();
            }
            Direction::Reverse => {
                // The inner iterator stands before the current key's entries with
                // only invisible entries in between; step into them and skip them
                // (`saved_key` already names the key to skip).
                self.direction = Direction::Forward;
                if self.inner.valid() {
                    self.inner.next();
                } else {
                    self.inner.seek_to_first();
                }
            }
        }
        self.find_next_user_entry(true);
    }

    /// Moves to the previous visible key. Does nothing when not valid.
    pub fn prev(&mut self) {
        let _tier = crate::read_tier::enter(self.tier);
        if !self.valid {
            return;
        }
        if self.direction == Direction::Forward && self.value_saved {
            // The inner iterator is past the merged key's entries, or on the
            // blob reference: go back to before the first of them.
            build_internal_key(
                &mut self.seek_buf,
                &self.saved_key,
                MAX_SEQUENCE_NUMBER,
                VALUE_TYPE_FOR_SEEK,
            );
            self.inner.seek(&self.seek_buf);
            if self.inner.valid() {
                self.inner.prev();
            } else if self.inner.status().is_ok() {
                self.inner.seek_to_last();
            }
        } else if self.direction == Direction::Forward {
            // Step off the current entry. The entries of its user key before it
            // are all newer than the snapshot (the current entry is the first
            // visible one), so the backward scan passes over them unseen.
            self.inner.prev();
        }
        self.find_prev_user_entry();
    }

    /// Forward scan from the inner position to the newest visible value of a user
    /// key, skipping invisible versions, deleted keys and, when `skipping`, the
    /// versions of `saved_key`. Stops (invalid) at the upper bound.
    fn find_next_user_entry(&mut self, mut skipping: bool) {
        self.value_saved = false;
        while self.inner.valid() {
            let entry = match parse_entry(self.inner.key()) {
                Ok(entry) => entry,
                Err(e) => return self.fail(e),
            };
            let entry = apply_range_tombstones(self.range_tombstones.as_deref(), self.seq, entry);
            if matches!(&self.upper_bound, Some(upper) if self.order.le(upper, entry.user_key)) {
                break;
            }
            if entry.seq <= self.seq {
                match entry.value_type {
                    PointType::Delete => {
                        // Older versions of this key are hidden; user keys only
                        // grow from here, so the skip key can be replaced.
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(entry.user_key);
                        skipping = true;
                    }
                    PointType::Put => {
                        if !(skipping && self.order.le(entry.user_key, &self.saved_key)) {
                            if entry.blob {
                                return self.resolve_forward();
                            }
                            self.valid = true;
                            return;
                        }
                    }
                    PointType::Merge => {
                        if !(skipping && self.order.le(entry.user_key, &self.saved_key)) {
                            return self.merge_forward();
                        }
                    }
                }
            }
            self.inner.next();
        }
        self.valid = false;
    }

    /// On the newest visible entry of a key, a merge operand: reads the
    /// key's older entries (all visible) until a value, a deletion or the
    /// next key ends the chain, and holds the merged value as the current
    /// entry.
    fn merge_forward(&mut self) {
        self.saved_key.clear();
        self.saved_key
            .extend_from_slice(crate::key::user_key(self.inner.key()));
        let mut operands: Vec<Vec<u8>> = vec![self.inner.value().to_vec()];
        let mut base: Option<Vec<u8>> = None;
        self.inner.next();
        while self.inner.valid() {
            let entry = match parse_entry(self.inner.key()) {
                Ok(entry) => entry,
                Err(e) => return self.fail(e),
            };
            // A covered version ends the chain as a deletion would.
            let entry = apply_range_tombstones(self.range_tombstones.as_deref(), self.seq, entry);
            if entry.user_key != self.saved_key.as_slice() {
                break;
            }
            match entry.value_type {
                PointType::Merge => operands.push(self.inner.value().to_vec()),
                PointType::Put if entry.blob => {
                    match self.read_blob(entry.user_key, self.inner.value()) {
                        Ok(value) => base = Some(value),
                        Err(e) => return self.fail(e),
                    }
                    break;
                }
                PointType::Put => {
                    base = Some(self.inner.value().to_vec());
                    break;
                }
                PointType::Delete => break,
            }
            self.inner.next();
        }
        if let Err(e) = self.inner.status() {
            return self.fail(e);
        }
        // Operands arrived newest first.
        operands.reverse();
        match merge_values(
            self.merge_operator.as_deref(),
            &self.saved_key,
            base.as_deref(),
            &operands,
        ) {
            Ok(value) => {
                self.saved_value = value;
                self.value_saved = true;
                self.valid = true;
            }
            Err(e) => self.fail(e),
        }
    }

    /// Backward scan from the inner position: the last user key (before the
    /// current one) whose newest visible version is a value. Versions arrive
    /// oldest first, so each visible one overwrites the saved candidate; the scan
    /// ends on the first visible entry of a smaller user key once a value is held,
    /// which leaves the inner iterator at the reverse-mode position.
    fn find_prev_user_entry(&mut self) {
        self.direction = Direction::Reverse;
        self.value_saved = false;
        // What the visible entries of `saved_key` seen so far (oldest first)
        // make of it: a value (in `saved_value`), a deletion, or nothing,
        // with the merge operands since.
        let mut base = Held::Nothing;
        // `saved_value` holds a blob reference rather than the value.
        let mut base_is_blob = false;
        let mut operands: Vec<Vec<u8>> = Vec::new();
        let mut started = false;
        while self.inner.valid() {
            let entry = match parse_entry(self.inner.key()) {
                Ok(entry) => entry,
                Err(e) => return self.fail(e),
            };
            let entry = apply_range_tombstones(self.range_tombstones.as_deref(), self.seq, entry);
            if matches!(&self.lower_bound, Some(lower) if self.order.lt(entry.user_key, lower)) {
                break;
            }
            if entry.seq <= self.seq {
                let resolves = base == Held::Value || !operands.is_empty();
                if resolves && self.order.lt(entry.user_key, &self.saved_key) {
                    break;
                }
                if !started || entry.user_key != self.saved_key.as_slice() {
                    started = true;
                    base = Held::Nothing;
                    operands.clear();
                    self.saved_key.clear();
                    self.saved_key.extend_from_slice(entry.user_key);
                }
                match entry.value_type {
                    PointType::Delete => {
                        base = Held::Deleted;
                        operands.clear();
                    }
                    PointType::Put => {
                        base = Held::Value;
                        base_is_blob = entry.blob;
                        operands.clear();
                        self.saved_value.clear();
                        self.saved_value.extend_from_slice(self.inner.value());
                    }
                    PointType::Merge => operands.push(self.inner.value().to_vec()),
                }
            }
            self.inner.prev();
        }
        let mut holding_value = started && (base == Held::Value || !operands.is_empty());
        // An inner error mid-scan may hide newer versions of the held key: the
        // candidate cannot be trusted. The error itself is reported by status().
        if !self.inner.valid() && self.inner.status().is_err() {
            holding_value = false;
        }
        if holding_value && base == Held::Value && base_is_blob {
            // Read only now: older versions of the key passed on the way
            // were overwritten without being read.
            match self.read_blob(&self.saved_key, &self.saved_value) {
                Ok(value) => self.saved_value = value,
                Err(e) => return self.fail(e),
            }
        }
        if holding_value && !operands.is_empty() {
            let existing = (base == Held::Value).then(|| std::mem::take(&mut self.saved_value));
            match merge_values(
                self.merge_operator.as_deref(),
                &self.saved_key,
                existing.as_deref(),
                &operands,
            ) {
                Ok(value) => self.saved_value = value,
                Err(e) => return self.fail(e),
            }
        }
        self.valid = holding_value;
        if !holding_value {
            self.saved_key.clear();
            self.saved_value.clear();
        }
    }

    /// On the newest visible entry of a key, a blob reference: holds the
    /// value it points at as the current entry.
    fn resolve_forward(&mut self) {
        let key = crate::key::user_key(self.inner.key());
        match self.read_blob(key, self.inner.value()) {
            Ok(value) => {
                self.saved_key.clear();
                self.saved_key.extend_from_slice(key);
                self.saved_value = value;
                self.value_saved = true;
                self.valid = true;
            }
            Err(e) => self.fail(e),
        }
    }

    /// The value the blob reference `encoded` of `user_key` points at.
    fn read_blob(&self, user_key: &[u8], encoded: &[u8]) -> Result<Vec<u8>> {
        match &self.blobs {
            Some(blobs) => Ok(blobs.get(user_key, encoded)?.to_vec()),
            None => Err(Error::corruption(
                "",
                0,
                "blob reference in a source that cannot hold one",
            )),
        }
    }

    fn fail(&mut self, e: Error) {
        self.error.get_or_insert(e);
        self.valid = false;
        self.saved_key.clear();
        self.saved_value.clear();
    }
}

impl fmt::Debug for DbIterator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DbIterator")
            .field("seq", &self.seq)
            .field("lower_bound", &self.lower_bound)
            .field("upper_bound", &self.upper_bound)
            .field("direction", &self.direction)
            .field("valid", &self.valid)
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}
