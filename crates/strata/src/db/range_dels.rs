//! Range deletions on the read path: what a point read and an iterator
//! consult besides the point keys.

use std::sync::Arc;

use bytes::Bytes;

use super::DbInner;
use crate::blob::{BlobRead, BlobSource};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::{seek_key, ParsedInternalKey, SequenceNumber, ValueType};
use crate::key_order::KeyComparator;
use crate::range_del::FragmentedRangeTombstones;
use crate::version::SuperVersion;

/// The newest visible range tombstone covering one key among the sources a
/// point read has consulted so far, newest first.
///
/// Invariant the read relies on: a version of the key in an older source
/// than the tombstone's is older than the tombstone (the LSM keeps every
/// newer write, tombstones included, in a newer source or the same one), so
/// once the key is covered, only a version in the current source can be
/// newer; every older source's versions are deleted.
#[derive(Debug, Default)]
pub(super) struct RangeCover {
    /// The largest covering sequence number seen; 0 when none covers the key.
    seq: SequenceNumber,
}

impl RangeCover {
    /// Takes a source's tombstones into account (one binary search).
    pub(super) fn add(
        &mut self,
        tombstones: &FragmentedRangeTombstones,
        key: &[u8],
        read_seq: SequenceNumber,
    ) {
        if !tombstones.is_empty() {
            self.seq = self.seq.max(tombstones.max_covering_seq(key, read_seq));
        }
    }

    /// True when a visible tombstone covers the key.
    pub(super) fn is_covered(&self) -> bool {
        self.seq > 0
    }

    /// True when a version at sequence number `seq` is deleted.
    pub(super) fn deletes(&self, seq: SequenceNumber) -> bool {
        seq < self.seq
    }
}

/// The end of a point read's chain in a source whose tombstones (or a newer
/// source's) cover the key: the versions of `key` at or below `seq` that
/// are not older than the covering tombstone, read from `it` (the source),
/// merge operands appended to `operands`. Returns the value or `None` for a
/// deletion; running into the tombstone is a deletion too, and so is
/// reaching the source's end, since every older source's versions are older
/// than the tombstone (see [`RangeCover`]). The slow path, taken only for
/// covered keys: one seek and a step per version. A separated value is read
/// through `blobs` (`None` for a memtable, which holds no references).
pub(super) fn covered_chain(
    it: &mut dyn InternalIterator,
    key: &[u8],
    seq: SequenceNumber,
    cover: &RangeCover,
    operands: &mut Vec<Bytes>,
    blobs: Option<(&BlobSource, BlobRead<'_>)>,
) -> Result<Option<Bytes>> {
    it.seek(&seek_key(key, seq));
    while it.valid() {
        let Some(parsed) = ParsedInternalKey::parse(it.key()) else {
            return Err(Error::corruption(
                "",
                0,
                "internal key shorter than its tag",
            ));
        };
        if parsed.user_key != key || cover.deletes(parsed.seq) {
            break;
        }
        match parsed.value_type() {
            Some(ValueType::Put) => return Ok(Some(Bytes::copy_from_slice(it.value()))),
            Some(ValueType::Merge) => operands.push(Bytes::copy_from_slice(it.value())),
            Some(ValueType::Delete) => return Ok(None),
            Some(ValueType::BlobIndex) if blobs.is_some() => {
                if let Some((source, read)) = blobs {
                    return Ok(Some(source.get(key, it.value(), read)?));
                }
            }
            Some(ValueType::RangeDeletion | ValueType::BlobIndex) | None => {
                return Err(Error::corruption(
                    "",
                    0,
                    format!(
                        "entry of type {:#04x} in the point-key stream at sequence number {}",
                        parsed.type_code, parsed.seq
                    ),
                ))
            }
        }
        it.next();
    }
    it.status()?;
    Ok(None)
}

/// The tombstones of every source of `sv`, merged, for an iterator: the
/// memtables' (cached per memtable) and the tables' (cached per version), so
/// a database without range deletions pays a few atomic loads. An error
/// opening a table is returned (the iterator reports it).
pub(super) fn iterator_tombstones(
    inner: &DbInner,
    sv: &SuperVersion,
) -> Result<Arc<FragmentedRangeTombstones>> {
    let tables = sv.version.range_tombstones(|version| {
        let mut sets = Vec::new();
        for (level, file) in version.all_files() {
            let table = inner.table_cache.get(file, level, version.order())?;
            if !table.range_tombstones().is_empty() {
                sets.push(table.range_tombstones().clone());
            }
        }
        Ok::<_, crate::Error>(merge_sets(sets, version.order()))
    })?;
    let mut sets: Vec<Arc<FragmentedRangeTombstones>> = std::iter::once(&sv.mem)
        .chain(sv.imm.iter())
        .filter(|m| m.num_range_deletions() > 0)
        .map(|m| m.range_tombstones())
        .collect();
    if !tables.is_empty() {
        sets.push(tables);
    }
    Ok(merge_sets(sets, sv.version.order()))
}

/// One set of all the tombstones of `sets` (all in `order`); no copy when
/// there is at most one.
fn merge_sets(
    mut sets: Vec<Arc<FragmentedRangeTombstones>>,
    order: &KeyComparator,
) -> Arc<FragmentedRangeTombstones> {
    if sets.len() <= 1 {
        if let Some(one) = sets.pop() {
            return one;
        }
        return Arc::new(FragmentedRangeTombstones::empty(order));
    }
    Arc::new(FragmentedRangeTombstones::merge(
        sets.iter().map(|s| &**s),
        order,
    ))
}
