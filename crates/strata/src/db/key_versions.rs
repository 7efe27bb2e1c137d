//! Every stored version of the keys in a range (RocksDB's
//! `GetAllKeyVersions`), for debugging and `strata idump`: what the user
//! iterator hides — older values, deletions, merge operands, range
//! tombstones — as it is stored now, in internal-key order.

use crate::cf::ColumnFamily;
use crate::error::{Error, Result};
use crate::iter::merging::MergingIterator;
use crate::iter::InternalIterator;
use crate::key::{ParsedInternalKey, SequenceNumber, ValueType};
use crate::options::ReadOptions;

use super::{range_dels, read, Db};

/// One stored version of a key.
///
/// ```
/// use strata::{Db, DbOptions, ValueType};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let db = Db::open(dir.path(), DbOptions { create_if_missing: true, ..Default::default() })?;
/// db.put("k", "v1")?;
/// db.put("k", "v2")?;
/// let versions = db.get_all_key_versions(&db.default_cf(), None, None, 10)?;
/// assert_eq!(versions.len(), 2);
/// assert_eq!(versions[0].user_key, b"k");
/// assert_eq!(versions[0].value, b"v2");
/// assert_eq!(versions[0].value_type, ValueType::Put);
/// assert!(versions[0].sequence > versions[1].sequence, "newest first");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyVersion {
    /// The user key (a range tombstone's start key).
    pub user_key: Vec<u8>,
    /// The value, merge operand, or a range tombstone's end key; empty for a
    /// deletion.
    pub value: Vec<u8>,
    /// The sequence number of the write.
    pub sequence: SequenceNumber,
    /// What kind of entry this is.
    pub value_type: ValueType,
}

impl Db {
    /// Up to `max` stored versions of the keys of family `cf` in
    /// `[begin, end)` (either bound open when `None`), newest first within a
    /// key, with the range tombstones among them at their start key: as the
    /// non-overlapping fragments reads use, one per fragment and sequence
    /// number, those starting in the range. Reads the newest state, ignoring snapshots: versions
    /// a compaction has dropped are gone.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// # let options = strata::DbOptions { create_if_missing: true, ..Default::default() };
    /// # let db = strata::Db::open(dir.path(), options)?;
    /// db.put("k", "old")?;
    /// db.put("k", "new")?;
    /// db.delete_range("a", "b")?;
    /// let versions = db.get_all_key_versions(&db.default_cf(), None, None, 100)?;
    /// let shown: Vec<_> = versions
    ///     .iter()
    ///     .map(|v| (v.user_key.as_slice(), v.value.as_slice(), v.value_type))
    ///     .collect();
    /// use strata::ValueType::{Put, RangeDeletion};
    /// assert_eq!(
    ///     shown,
    ///     [(&b"a"[..], &b"b"[..], RangeDeletion), (b"k", b"new", Put), (b"k", b"old", Put)]
    /// );
    /// # Ok(())
    /// # }
    /// ```
    pub fn get_all_key_versions(
        &self,
        cf: &ColumnFamily,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
        max: usize,
    ) -> Result<Vec<KeyVersion>> {
        cf.shared.check_usable(self.inner.instance)?;
        let sv = cf.shared.super_version.load_full();
        let options = ReadOptions::default();
        let seq = read::read_sequence(&self.inner, &options)?;
        let sources = read::point_sources(&self.inner, &sv, &options, seq, begin, end);
        let order = sv.version.order();
        let mut points = MergingIterator::with_order(sources, order.clone());
        let in_range = |key: &[u8]| {
            begin.is_none_or(|b| order.le(b, key)) && end.is_none_or(|e| order.lt(key, e))
        };
        // Already in internal-key order: start ascending, then newest first.
        let tombstones: Vec<KeyVersion> = range_dels::iterator_tombstones(&self.inner, &sv)?
            .tombstones()
            .filter(|t| in_range(t.start()))
            .map(|t| KeyVersion {
                user_key: t.start().to_vec(),
                value: t.end().to_vec(),
                sequence: t.seq(),
                value_type: ValueType::RangeDeletion,
            })
            .collect();
        let mut tombstones = tombstones.into_iter().peekable();
        let mut out = Vec::new();
        match begin {
            Some(b) => points.seek(&crate::key::seek_key(b, seq)),
            None => points.seek_to_first(),
        }
        while out.len() < max {
            let point = match points.valid() {
                true => Some(point_version(&points)?),
                false => None,
            };
            let point = point.filter(|p| in_range(&p.user_key));
            let take_tombstone = match (&point, tombstones.peek()) {
                (_, None) => false,
                (None, Some(_)) => true,
                (Some(p), Some(t)) => order
                    .compare_user(&t.user_key, &p.user_key)
                    .then(p.sequence.cmp(&t.sequence))
                    .is_lt(),
            };
            match (take_tombstone, point) {
                (true, _) => out.extend(tombstones.next()),
                (false, Some(p)) => {
                    out.push(p);
                    points.next();
                }
                (false, None) => break,
            }
        }
        points.status()?;
        Ok(out)
    }
}

/// The version the merged iterator stands on.
fn point_version(points: &MergingIterator) -> Result<KeyVersion> {
    let corrupt = |reason: &str| Error::corruption("(a table or memtable)", 0, reason);
    let parsed =
        ParsedInternalKey::parse(points.key()).ok_or_else(|| corrupt("internal key too short"))?;
    let value_type = ValueType::from_code(parsed.type_code)
        .ok_or_else(|| corrupt("unknown entry type in the point-key stream"))?;
    Ok(KeyVersion {
        user_key: parsed.user_key.to_vec(),
        value: points.value().to_vec(),
        sequence: parsed.seq,
        value_type,
    })
}
