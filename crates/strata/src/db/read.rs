//! The read path. Reads pin a super version and never take the DB mutex.
//!
//! A point read consults, newest first: the active memtable, the immutable
//! memtables, every L0 table whose key range holds the key (newest first), then
//! at most one table per deeper level. The first source that knows the key
//! answers: a value, or a deletion that hides everything older. Range
//! deletions are consulted on the way ([`RangeCover`]): a version older than a
//! visible tombstone covering its key, in its own source or a newer one, is
//! deleted.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;

use super::key_range::{KeyRange, RangeEnds};
use super::range_dels::{covered_chain, iterator_tombstones, RangeCover};
use super::DbInner;
use crate::blob::{BlobRead, BlobValues};
use crate::cache::Cache;
use crate::cf::CfShared;
use crate::error::Result;
use crate::iter::db_iter::DbIterator;
use crate::iter::db_range::DbRange;
use crate::iter::level::LevelIterator;
use crate::iter::merging::{BoxedIterator, MergingIterator};
use crate::iter::InternalIterator;
use crate::key::{user_key, SequenceNumber, ValueType};
use crate::memtable::MemGet;
use crate::options::ReadOptions;
use crate::perf_context::{self, PerfTimer};
use crate::statistics::{micros_since, Histogram, Ticker};
use crate::table::{TableLookup, TableReader};
use crate::version::{FileMetaData, SuperVersion, NUM_LEVELS};

/// The sequence number a read sees: the snapshot's, or the latest visible one.
/// Taken *after* the super version is loaded. The loaded super version pins its
/// tables, and a compaction only drops a version that a newer one of the same
/// key hides at every live snapshot; so every version at or below the sequence
/// that the super version holds stays readable. Taken the other way round, a
/// write, flush and compaction between the two steps could drop exactly the
/// version the older sequence needs, and the read would miss the key. Writes
/// at or below the sequence that went into a memtable newer than the super
/// version are not seen: the read is then at the state the super version was
/// loaded at, still a consistent prefix, because a memtable switch happens
/// between write groups.
///
/// A snapshot in the options is live (they hold it) and at or below the
/// latest visible sequence (it was one when taken); one of another database
/// is refused.
pub(super) fn read_sequence(inner: &DbInner, options: &ReadOptions) -> Result<SequenceNumber> {
    match &options.snapshot {
        None => Ok(inner.publisher.visible()),
        Some(snapshot) if snapshot.belongs_to(&inner.snapshots) => Ok(snapshot.sequence()),
        Some(_) => Err(crate::Error::invalid_argument(
            "snapshot",
            "the snapshot was taken from another database (or an earlier open of this one)",
        )),
    }
}

pub(super) fn get(
    inner: &DbInner,
    cf: &CfShared,
    options: &ReadOptions,
    key: &[u8],
) -> Result<Option<Bytes>> {
    let _tier = crate::read_tier::enter(options.read_tier);
    let start = inner.options.statistics.as_ref().map(|_| Instant::now());
    let timer = PerfTimer::start();
    let sv = cf.super_version.load();
    let seq = read_sequence(inner, options)?;
    timer.stop(|c| &mut c.get_snapshot_time);
    let result = get_in(inner, &sv, options, key, seq);
    if let (Some(stats), Some(start)) = (&inner.options.statistics, start) {
        stats.record(Histogram::DbGetMicros, micros_since(start));
    }
    result
}

fn get_in(
    inner: &DbInner,
    sv: &SuperVersion,
    options: &ReadOptions,
    key: &[u8],
    seq: SequenceNumber,
) -> Result<Option<Bytes>> {
    let stats = inner.options.statistics.as_deref();
    let count = |ticker: Ticker, n: u64| {
        if let Some(stats) = stats {
            stats.add(ticker, n);
        }
    };
    count(Ticker::NumberKeysRead, 1);
    let found = |value: Option<Bytes>| {
        count(
            Ticker::BytesRead,
            value.as_ref().map_or(0, |v| v.len() as u64),
        );
        Ok(value)
    };
    // Merge operands met on the way, newest first; the first value or
    // deletion below them ends the chain.
    let mut operands: Vec<Bytes> = Vec::new();
    let timer = PerfTimer::start();
    let mut base = get_from_memtables(sv, key, seq, &mut operands)?;
    timer.stop(|c| &mut c.get_from_memtable_time);
    if base.is_some() || !operands.is_empty() {
        count(Ticker::MemtableHit, 1);
    } else {
        count(Ticker::MemtableMiss, 1);
    }
    if base.is_none() {
        let timer = PerfTimer::start();
        base = get_from_tables(inner, sv, options, key, seq, &mut operands)?;
        timer.stop(|c| &mut c.get_from_output_files_time);
    }
    let timer = PerfTimer::start();
    let value = finish_get(sv, key, base, &operands)?;
    timer.stop(|c| &mut c.get_post_process_time);
    perf_context::count(|c| c.get_read_bytes += value.as_ref().map_or(0, |v| v.len() as u64));
    found(value)
}

/// The newest value or deletion of `key` in the memtables of `sv` (`Some(None)`
/// for a deletion, `None` when none has one), appending the merge operands
/// met before it to `operands`.
pub(super) fn get_from_memtables(
    sv: &SuperVersion,
    key: &[u8],
    seq: SequenceNumber,
    operands: &mut Vec<Bytes>,
) -> Result<Option<Option<Bytes>>> {
    let mut cover = RangeCover::default();
    for mem in std::iter::once(&sv.mem).chain(sv.imm.iter()) {
        perf_context::count(|c| c.get_from_memtable_count += 1);
        if mem.num_range_deletions() > 0 {
            cover.add(&mem.range_tombstones(), key, seq);
        }
        if cover.is_covered() {
            return Ok(Some(covered_chain(
                &mut mem.iter(),
                key,
                seq,
                &cover,
                operands,
                None,
            )?));
        }
        match mem.get(key, seq, operands) {
            MemGet::Found(v) => return Ok(Some(Some(v))),
            MemGet::Deleted => return Ok(Some(None)),
            MemGet::NotFound => continue,
        }
    }
    Ok(None)
}

/// A get's answer from what the sources gave: the base value (or none) with
/// the merge operands above it applied.
pub(super) fn finish_get(
    sv: &SuperVersion,
    key: &[u8],
    base: Option<Option<Bytes>>,
    operands: &[Bytes],
) -> Result<Option<Bytes>> {
    let value = base.flatten();
    if operands.is_empty() {
        return Ok(value);
    }
    Ok(Some(full_merge(sv, key, value.as_deref(), operands)?))
}

/// The newest value or deletion of `key` in the tables (`Some(None)` for a
/// deletion, `None` when no table has one), appending the merge operands met
/// before it to `operands`.
fn get_from_tables(
    inner: &DbInner,
    sv: &SuperVersion,
    options: &ReadOptions,
    key: &[u8],
    seq: SequenceNumber,
    operands: &mut Vec<Bytes>,
) -> Result<Option<Option<Bytes>>> {
    // A memtable tombstone covering the key ended the read before here.
    let mut cover = RangeCover::default();
    for (level, file) in sv.version.files_for_key(key) {
        if file.smallest_seqno > seq {
            // Every entry of this file is newer than the read.
            continue;
        }
        let table = inner.table_cache.get(file, level, sv.version.order())?;
        let mut lookup = TableLookup::new(&table, options);
        let probe = TableProbe {
            options,
            key,
            seq,
            blob_cache: sv.options.blob.blob_cache.as_ref(),
            level,
        };
        if let Some(base) = probe.run(inner, &table, &mut lookup, &mut cover, operands)? {
            return Ok(Some(base));
        }
    }
    Ok(None)
}

/// One key's read of one table, after newer sources left it unanswered.
pub(super) struct TableProbe<'a> {
    pub options: &'a ReadOptions,
    pub key: &'a [u8],
    pub seq: SequenceNumber,
    /// The family's blob cache, for separated values.
    pub blob_cache: Option<&'a Arc<dyn Cache>>,
    /// The table's level, for the get-hit-per-level tickers.
    pub level: usize,
}

impl TableProbe<'_> {
    /// How this read fetches a separated value.
    fn blob_read(&self) -> BlobRead<'_> {
        BlobRead {
            cache: self.blob_cache,
            verify_checksums: self.options.verify_checksums,
            fill_cache: self.options.fill_cache,
        }
    }

    /// The key's value (`Some(Some)`) or deletion (`Some(None)`) in `table`,
    /// or `None` to go on to older tables; merge operands met are appended
    /// to `operands`, and the table's range tombstones join `cover`.
    /// `lookup` is a lookup in `table`.
    pub(super) fn run(
        &self,
        inner: &DbInner,
        table: &Arc<TableReader>,
        lookup: &mut TableLookup<'_>,
        cover: &mut RangeCover,
        operands: &mut Vec<Bytes>,
    ) -> Result<Option<Option<Bytes>>> {
        let count = |ticker: Ticker| {
            if let Some(stats) = &inner.options.statistics {
                stats.add(ticker, 1);
            }
        };
        let (key, seq) = (self.key, self.seq);
        // Before the filter: the filter knows the point keys, not the ranges.
        cover.add(table.range_tombstones(), key, seq);
        if cover.is_covered() {
            let mut it = table.iter(self.options);
            let blobs = Some((&*inner.blobs, self.blob_read()));
            return Ok(Some(covered_chain(
                &mut it, key, seq, cover, operands, blobs,
            )?));
        }
        match lookup.filter_answer(key) {
            Some(false) => {
                count(Ticker::BloomFilterUseful);
                perf_context::count(|c| c.bloom_sst_miss_count += 1);
                return Ok(None);
            }
            Some(true) => {
                count(Ticker::BloomFilterFullPositive);
                perf_context::count(|c| c.bloom_sst_hit_count += 1);
            }
            None => {}
        }
        let Some(entry) = lookup.get(key, seq, operands)? else {
            return Ok(None);
        };
        if matches!(entry.value_type, ValueType::Put | ValueType::BlobIndex) {
            count(match self.level {
                0 => Ticker::GetHitL0,
                1 => Ticker::GetHitL1,
                _ => Ticker::GetHitL2AndUp,
            });
        }
        match entry.value_type {
            ValueType::Put => Ok(Some(Some(entry.value))),
            ValueType::Delete => Ok(Some(None)),
            ValueType::BlobIndex => {
                let value = inner.blobs.get(key, &entry.value, self.blob_read())?;
                Ok(Some(Some(value)))
            }
            // The lookup reports these as corruption or collects them;
            // neither reaches here.
            ValueType::Merge | ValueType::RangeDeletion => Err(crate::error::Error::corruption(
                table.path(),
                0,
                "unexpected entry type",
            )),
        }
    }
}

/// Applies the family's merge operator to `operands` (newest first) over
/// `base` (see [`crate::merge::merge_for_read`]).
fn full_merge(
    sv: &SuperVersion,
    key: &[u8],
    base: Option<&[u8]>,
    operands: &[Bytes],
) -> Result<Bytes> {
    let oldest_first: Vec<&[u8]> = operands.iter().rev().map(|o| o.as_ref()).collect();
    crate::merge::merge_for_read(
        sv.options.merge_operator.as_deref(),
        key,
        base,
        &oldest_first,
    )
    .map(Bytes::from)
}

/// Everything an iterator reads: the memtables and every table, merged, at the
/// read's sequence number, limited to the bounds.
pub(super) fn iter(
    inner: &DbInner,
    cf: &CfShared,
    options: &ReadOptions,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
) -> DbIterator {
    let sv = cf.super_version.load_full();
    match read_sequence(inner, options) {
        Ok(seq) => build_iter(inner, &sv, options, seq, lower, upper),
        Err(e) => failed_iter(e, lower, upper),
    }
}

/// An iterator that is never valid and reports `e`.
pub(super) fn failed_iter(
    e: crate::Error,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
) -> DbIterator {
    let child: BoxedIterator = Box::new(FailedIterator(e));
    DbIterator::new(
        Box::new(MergingIterator::new(vec![child])),
        0,
        lower,
        upper,
        crate::key_order::KeyComparator::Bytewise,
    )
}

/// A double-ended Rust iterator over `[lower, upper)`: two cursors over one
/// super version and sequence number, meeting in the middle.
pub(super) fn range(
    inner: &DbInner,
    cf: &CfShared,
    options: &ReadOptions,
    range: impl KeyRange,
) -> DbRange {
    let sv = cf.super_version.load_full();
    let ends = RangeEnds::of(range, options, sv.version.order());
    let (lower, upper) = (ends.lower.clone(), ends.upper.clone());
    match read_sequence(inner, options) {
        Ok(seq) => {
            let front = build_iter(inner, &sv, options, seq, lower.clone(), upper.clone());
            let back = build_iter(inner, &sv, options, seq, lower, upper);
            DbRange::new(front, back).with_ends(ends.excluded_first, ends.included_last)
        }
        Err(e) => DbRange::new(
            failed_iter(e.clone(), lower.clone(), upper.clone()),
            failed_iter(e, lower, upper),
        ),
    }
}

fn build_iter(
    inner: &DbInner,
    sv: &Arc<SuperVersion>,
    options: &ReadOptions,
    seq: SequenceNumber,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
) -> DbIterator {
    let _tier = crate::read_tier::enter(options.read_tier);
    let children = point_sources(inner, sv, options, seq, lower.as_deref(), upper.as_deref());
    let tombstones = match iterator_tombstones(inner, sv) {
        Ok(tombstones) => tombstones,
        Err(e) => return failed_iter(e, lower, upper),
    };
    let order = sv.version.order().clone();
    let merged = MergingIterator::with_order(children, order.clone());
    let it = DbIterator::new(Box::new(merged), seq, lower, upper, order)
        .with_statistics(inner.options.statistics.clone())
        .with_range_tombstones(tombstones)
        .with_merge_operator(sv.options.merge_operator.clone())
        .with_blobs(BlobValues {
            source: inner.blobs.clone(),
            cache: sv.options.blob.blob_cache.clone(),
            verify_checksums: options.verify_checksums,
            fill_cache: options.fill_cache,
        })
        .with_prefix_extractor(sv.options.table.prefix_extractor, options)
        .with_read_tier(options.read_tier)
        .pinning(sv.clone());
    match &options.snapshot {
        Some(snapshot) => it.pinning(Arc::new(snapshot.clone())),
        None => it,
    }
}

/// One iterator per source of point entries a read at `seq` within the
/// bounds needs: each memtable, each L0 table, and one per sorted level.
pub(super) fn point_sources(
    inner: &DbInner,
    sv: &SuperVersion,
    options: &ReadOptions,
    seq: SequenceNumber,
    lower: Option<&[u8]>,
    upper: Option<&[u8]>,
) -> Vec<BoxedIterator> {
    let mut children: Vec<BoxedIterator> = Vec::with_capacity(1 + sv.imm.len());
    children.push(Box::new(sv.mem.iter()));
    children.extend(sv.imm.iter().map(|m| Box::new(m.iter()) as BoxedIterator));
    // Tables wholly outside the bounds, or newer than the read, cannot
    // contribute.
    let order = sv.version.order();
    let relevant = |file: &FileMetaData| {
        let below = lower.is_some_and(|l| order.lt(user_key(&file.largest), l));
        let above = upper.is_some_and(|u| order.le(u, user_key(&file.smallest)));
        !(below || above || file.smallest_seqno > seq)
    };
    for file in sv.version.files(0).iter().filter(|f| relevant(f)) {
        match inner.table_cache.get(file, 0, order) {
            Ok(table) => children.push(Box::new(table.iter(options))),
            Err(e) => children.push(Box::new(FailedIterator(e))),
        }
    }
    // Each sorted level is one child: a seek opens one table per level.
    for level in 1..NUM_LEVELS {
        let files: Vec<_> = sv
            .version
            .files(level)
            .iter()
            .filter(|f| relevant(f))
            .cloned()
            .collect();
        if !files.is_empty() {
            children.push(Box::new(LevelIterator::new(
                sv.version.clone(),
                inner.table_cache.clone(),
                level,
                files,
                options,
            )));
        }
    }
    children
}

/// Stands in for a table that could not be opened: never valid, always failing,
/// so the merged iterator reports the error instead of skipping the table.
struct FailedIterator(crate::Error);

impl InternalIterator for FailedIterator {
    fn valid(&self) -> bool {
        false
    }
    fn seek_to_first(&mut self) {}
    fn seek_to_last(&mut self) {}
    fn seek(&mut self, _target: &[u8]) {}
    fn seek_for_prev(&mut self, _target: &[u8]) {}
    fn next(&mut self) {}
    fn prev(&mut self) {}
    fn key(&self) -> &[u8] {
        &[]
    }
    fn value(&self) -> &[u8] {
        &[]
    }
    fn status(&self) -> Result<()> {
        Err(self.0.clone())
    }
}
