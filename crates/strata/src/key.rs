//! Internal keys: the user key followed by an 8-byte tag.
//!
//! ```text
//! +----------------------+-------------------------------------------+
//! | user key (n bytes)   | tag: fixed64 LE = sequence << 8 | type    |
//! +----------------------+-------------------------------------------+
//! ```
//!
//! Order: user key ascending (in the family's comparator's order; the
//! functions here are the bytewise case, `key_order::KeyComparator` the
//! general one), then tag descending, so that for one user
//! key the newest version comes first and a seek to `(key, snapshot)` lands on the
//! newest version visible at that snapshot.

use std::cmp::Ordering;

use crate::encoding::decode_fixed64;

/// A sequence number: 56 bits, assigned to every write in commit order.
///
/// ```
/// use strata::{Db, DbOptions, SequenceNumber, WriteBatch};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let db = Db::open(dir.path(), DbOptions { create_if_missing: true, ..Default::default() })?;
/// let before: SequenceNumber = db.latest_sequence_number();
/// db.put("a", "1")?;
/// assert_eq!(db.latest_sequence_number(), before + 1);
/// // A batch takes one sequence number per entry.
/// let mut batch = WriteBatch::new();
/// batch.put("b", "2")?;
/// batch.delete("a")?;
/// db.write(&Default::default(), batch)?;
/// assert_eq!(db.latest_sequence_number(), before + 3);
/// # Ok(())
/// # }
/// ```
pub type SequenceNumber = u64;

/// Largest representable sequence number.
pub const MAX_SEQUENCE_NUMBER: SequenceNumber = (1 << 56) - 1;

/// Length of the tag that ends every internal key.
pub const TAG_LEN: usize = 8;

/// What an entry means. Codes match RocksDB's so dumps read the same.
///
/// ```
/// use strata::{Db, DbOptions, ValueType};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// assert_eq!(ValueType::from_code(1), Some(ValueType::Put));
/// assert_eq!(ValueType::Delete as u8, 0);
/// # let dir = tempfile::tempdir()?;
/// # let db = Db::open(dir.path(), DbOptions { create_if_missing: true, ..Default::default() })?;
/// db.put("k", "v")?;
/// db.delete("k")?;
/// let versions = db.get_all_key_versions(&db.default_cf(), None, None, 10)?;
/// let types: Vec<ValueType> = versions.iter().map(|v| v.value_type).collect();
/// assert_eq!(types, [ValueType::Delete, ValueType::Put]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ValueType {
    /// A tombstone: the key is deleted as of this sequence number.
    Delete = 0,
    /// A value.
    Put = 1,
    /// A merge operand: combined by the family's merge operator with the
    /// older versions of the key, down to a value or a deletion (RocksDB's
    /// `kTypeMerge`).
    Merge = 2,
    /// A range tombstone `[start, end)`: the key is the range's start and the
    /// value its end (RocksDB's `kTypeRangeDeletion`). Range tombstones live in
    /// their own structures (the memtable's range-deletion list, the table's
    /// range-deletion block); one in the point-key stream of a memtable or a data
    /// block is corruption.
    RangeDeletion = 0x0F,
    /// A value kept in a blob file: the entry's value is a
    /// blob reference to it (RocksDB's `kTypeBlobIndex`; see `docs/format/blob.md`).
    /// Only tables hold these; flush and compaction write them, and reads
    /// resolve them to the value.
    BlobIndex = 0x11,
}

/// The type byte used in seek keys: larger than every stored type, so that
/// `(key, seq, VALUE_TYPE_FOR_SEEK)` sorts before every entry of `key` at `seq`.
/// It is never written to disk.
pub const VALUE_TYPE_FOR_SEEK: u8 = 0xff;

impl ValueType {
    /// Parses a stored type byte; `None` for unknown codes (corruption).
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(ValueType::Delete),
            1 => Some(ValueType::Put),
            2 => Some(ValueType::Merge),
            0x0F => Some(ValueType::RangeDeletion),
            0x11 => Some(ValueType::BlobIndex),
            _ => None,
        }
    }
}

/// Packs a sequence number and type byte into a tag.
#[inline]
pub fn pack_tag(seq: SequenceNumber, type_code: u8) -> u64 {
    debug_assert!(seq <= MAX_SEQUENCE_NUMBER);
    (seq << 8) | u64::from(type_code)
}

/// Appends the internal key `(user_key, seq, t)` to `dst`.
#[inline]
pub fn append_internal_key(dst: &mut Vec<u8>, user_key: &[u8], seq: SequenceNumber, t: ValueType) {
    dst.extend_from_slice(user_key);
    dst.extend_from_slice(&pack_tag(seq, t as u8).to_le_bytes());
}

/// Builds an owned internal key.
pub fn internal_key(user_key: &[u8], seq: SequenceNumber, t: ValueType) -> Vec<u8> {
    let mut k = Vec::with_capacity(user_key.len() + TAG_LEN);
    append_internal_key(&mut k, user_key, seq, t);
    k
}

/// The key to seek to for the newest version of `user_key` visible at `seq`.
pub fn seek_key(user_key: &[u8], seq: SequenceNumber) -> Vec<u8> {
    let mut k = Vec::with_capacity(user_key.len() + TAG_LEN);
    k.extend_from_slice(user_key);
    k.extend_from_slice(&pack_tag(seq, VALUE_TYPE_FOR_SEEK).to_le_bytes());
    k
}

/// A decoded view of an internal key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParsedInternalKey<'a> {
    /// The user's key.
    pub user_key: &'a [u8],
    /// Sequence number of the write.
    pub seq: SequenceNumber,
    /// Raw type byte; see [`ValueType::from_code`].
    pub type_code: u8,
}

impl<'a> ParsedInternalKey<'a> {
    /// Splits an internal key; `None` if it is shorter than the tag.
    #[inline]
    pub fn parse(ikey: &'a [u8]) -> Option<Self> {
        let split = ikey.len().checked_sub(TAG_LEN)?;
        let (user_key, tag) = ikey.split_at(split);
        let tag = decode_fixed64(tag)?;
        Some(ParsedInternalKey {
            user_key,
            seq: tag >> 8,
            type_code: tag as u8,
        })
    }

    /// The value type, if the type byte is a known stored type.
    pub fn value_type(&self) -> Option<ValueType> {
        ValueType::from_code(self.type_code)
    }
}

/// The user-key part of an internal key (the whole slice if it is too short,
/// which only corrupt data produces and which then compares consistently).
#[inline]
pub fn user_key(ikey: &[u8]) -> &[u8] {
    &ikey[..ikey.len().saturating_sub(TAG_LEN)]
}

#[inline]
pub(crate) fn tag(ikey: &[u8]) -> u64 {
    let n = ikey.len();
    if n < TAG_LEN {
        return 0;
    }
    decode_fixed64(&ikey[n - TAG_LEN..]).unwrap_or(0)
}

/// Total order on internal keys: user key ascending, tag descending.
#[inline]
pub fn compare_internal(a: &[u8], b: &[u8]) -> Ordering {
    match user_key(a).cmp(user_key(b)) {
        Ordering::Equal => tag(b).cmp(&tag(a)),
        o => o,
    }
}

/// Shortest internal key `k` with `start <= k < limit` (for index separators).
///
/// Shortens the user key when it can; a shortened user key gets the largest tag so
/// it sorts before every real entry of that user key.
pub fn shortest_separator(start: &[u8], limit: &[u8]) -> Vec<u8> {
    let (su, lu) = (user_key(start), user_key(limit));
    let shared = su.iter().zip(lu).take_while(|(a, b)| a == b).count();
    if shared < su.len() && shared < lu.len() {
        let byte = su[shared];
        if byte < 0xff && byte + 1 < lu[shared] {
            let mut k = su[..=shared].to_vec();
            k[shared] = byte + 1;
            k.extend_from_slice(&pack_tag(MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK).to_le_bytes());
            return k;
        }
    }
    start.to_vec()
}

/// Shortest internal key `k >= start` (for the separator after the last block).
pub fn short_successor(start: &[u8]) -> Vec<u8> {
    let su = user_key(start);
    if let Some(i) = su.iter().position(|&b| b != 0xff) {
        let mut k = su[..=i].to_vec();
        k[i] += 1;
        k.extend_from_slice(&pack_tag(MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK).to_le_bytes());
        return k;
    }
    start.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ordering_user_asc_seq_desc() {
        let a1 = internal_key(b"a", 1, ValueType::Put);
        let a2 = internal_key(b"a", 2, ValueType::Put);
        let b1 = internal_key(b"b", 1, ValueType::Put);
        assert_eq!(compare_internal(&a2, &a1), Ordering::Less);
        assert_eq!(compare_internal(&a1, &b1), Ordering::Less);
        assert_eq!(compare_internal(&seek_key(b"a", 2), &a2), Ordering::Less);
        let empty = internal_key(b"", 9, ValueType::Delete);
        assert_eq!(compare_internal(&empty, &a1), Ordering::Less);
    }

    #[test]
    fn parse_roundtrip() {
        let k = internal_key(b"user", MAX_SEQUENCE_NUMBER, ValueType::Delete);
        let p = ParsedInternalKey::parse(&k).unwrap();
        assert_eq!(p.user_key, b"user");
        assert_eq!(p.seq, MAX_SEQUENCE_NUMBER);
        assert_eq!(p.value_type(), Some(ValueType::Delete));
        assert!(ParsedInternalKey::parse(b"short").is_none());
    }

    #[test]
    fn separator_examples() {
        let s = shortest_separator(
            &internal_key(b"abcdef", 5, ValueType::Put),
            &internal_key(b"abzz", 3, ValueType::Put),
        );
        assert_eq!(user_key(&s), b"abd");
        // No room to shorten: keep the start key.
        let start = internal_key(b"abc", 5, ValueType::Put);
        assert_eq!(
            shortest_separator(&start, &internal_key(b"abd", 1, ValueType::Put)),
            start
        );
        assert_eq!(
            user_key(&short_successor(&internal_key(
                b"\xff\xffa",
                1,
                ValueType::Put
            ))),
            b"\xff\xffb"
        );
    }

    proptest! {
        #[test]
        fn separator_is_between(a in proptest::collection::vec(any::<u8>(), 0..8),
                                b in proptest::collection::vec(any::<u8>(), 0..8),
                                sa in 0u64..100, sb in 0u64..100) {
            let mut x = internal_key(&a, sa, ValueType::Put);
            let mut y = internal_key(&b, sb, ValueType::Put);
            if compare_internal(&x, &y) == Ordering::Greater { std::mem::swap(&mut x, &mut y); }
            prop_assume!(compare_internal(&x, &y) == Ordering::Less);
            let s = shortest_separator(&x, &y);
            prop_assert!(compare_internal(&x, &s) != Ordering::Greater);
            prop_assert!(compare_internal(&s, &y) == Ordering::Less);
            let succ = short_successor(&x);
            prop_assert!(compare_internal(&x, &succ) != Ordering::Greater);
        }
    }
}
