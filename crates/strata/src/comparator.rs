//! The order of a column family's user keys (RocksDB's `Comparator`).
//!
//! A family's comparator is chosen when the family is created and can never
//! change: every memtable, table and MANIFEST of the family is sorted by it.
//! Its name is what the OPTIONS file records and what a later open checks,
//! so a name must stand for one order forever.
//!
//! Two orders are built in, under RocksDB's names: bytewise
//! (`leveldb.BytewiseComparator`, the default) and reverse bytewise
//! (`rocksdb.ReverseBytewiseComparator`). An application may bring its own
//! by implementing [`Comparator`].

use std::cmp::Ordering;
use std::fmt::Debug;
use std::sync::Arc;

use crate::error::{Error, Result};

/// RocksDB's (LevelDB's) name of bytewise order.
pub const BYTEWISE_COMPARATOR_NAME: &str = "leveldb.BytewiseComparator";

/// RocksDB's name of reverse bytewise order.
pub const REVERSE_BYTEWISE_COMPARATOR_NAME: &str = "rocksdb.ReverseBytewiseComparator";

/// A total order on user keys.
///
/// `compare` must be a total order that never changes for a given `name`:
/// data written under one order and read under another is silently wrong,
/// and the name is the only thing a later open can check.
///
/// ```
/// use std::cmp::Ordering;
/// use strata::Comparator;
///
/// /// Keys are 8-byte little-endian numbers, ordered by value.
/// #[derive(Debug)]
/// struct U64Le;
///
/// impl Comparator for U64Le {
///     fn name(&self) -> &str {
///         "example.U64LittleEndian"
///     }
///     fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
///         let num = |k: &[u8]| k.try_into().map(u64::from_le_bytes).ok();
///         num(a).cmp(&num(b)).then_with(|| a.cmp(b))
///     }
/// }
///
/// assert_eq!(U64Le.compare(&256u64.to_le_bytes(), &1u64.to_le_bytes()), Ordering::Greater);
/// ```
pub trait Comparator: Send + Sync + Debug {
    /// The name the OPTIONS file records; an open with another name fails.
    fn name(&self) -> &str;

    /// Orders `a` and `b`.
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering;

    /// A key `k` with `start <= k < limit` (when `start < limit`) that is
    /// no longer than `start`, for index separators. The default, `start`
    /// itself, is always correct; a shorter one only makes indexes smaller.
    fn find_shortest_separator(&self, start: &[u8], _limit: &[u8]) -> Vec<u8> {
        start.to_vec()
    }

    /// A key `k >= key` no longer than `key`, for the last index entry.
    /// The default, `key` itself, is always correct.
    fn find_short_successor(&self, key: &[u8]) -> Vec<u8> {
        key.to_vec()
    }
}

/// Bytewise order (`memcmp`, shorter first on a common prefix).
#[derive(Debug, Clone, Copy, Default)]
pub struct BytewiseComparator;

impl Comparator for BytewiseComparator {
    fn name(&self) -> &str {
        BYTEWISE_COMPARATOR_NAME
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        a.cmp(b)
    }
}

/// Bytewise order reversed: the greatest key bytewise comes first.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReverseBytewiseComparator;

impl Comparator for ReverseBytewiseComparator {
    fn name(&self) -> &str {
        REVERSE_BYTEWISE_COMPARATOR_NAME
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        b.cmp(a)
    }
}

/// The default comparator: bytewise.
pub fn bytewise_comparator() -> Arc<dyn Comparator> {
    Arc::new(BytewiseComparator)
}

/// A built-in comparator by its RocksDB name.
///
/// # Errors
///
/// `InvalidArgument` naming `name` when no built-in has it.
pub fn comparator_from_name(name: &str) -> Result<Arc<dyn Comparator>> {
    match name {
        BYTEWISE_COMPARATOR_NAME => Ok(bytewise_comparator()),
        REVERSE_BYTEWISE_COMPARATOR_NAME => Ok(Arc::new(ReverseBytewiseComparator)),
        other => Err(Error::invalid_argument(
            "comparator",
            format!(
                "{other:?} is not a comparator Strata knows (built in: \
                 {BYTEWISE_COMPARATOR_NAME}, {REVERSE_BYTEWISE_COMPARATOR_NAME}; \
                 an application's own comparator is passed in LoadOptions::comparators)"
            ),
        )),
    }
}

/// Whether `c` orders keys bytewise: the only order in which a key prefix
/// names a contiguous byte range (prefix extractors need it).
pub(crate) fn is_bytewise(c: &dyn Comparator) -> bool {
    c.name() == BYTEWISE_COMPARATOR_NAME
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_ins_are_found_by_their_rocksdb_names() {
        for name in [BYTEWISE_COMPARATOR_NAME, REVERSE_BYTEWISE_COMPARATOR_NAME] {
            let c = comparator_from_name(name).unwrap();
            assert_eq!(c.name(), name);
        }
        let e = comparator_from_name("rocksdb.Nope")
            .unwrap_err()
            .to_string();
        assert!(e.contains("rocksdb.Nope"), "{e}");
    }

    #[test]
    fn reverse_inverts_bytewise() {
        let (f, r) = (BytewiseComparator, ReverseBytewiseComparator);
        for (a, b) in [
            (&b"a"[..], &b"b"[..]),
            (b"ab", b"a"),
            (b"", b"x"),
            (b"k", b"k"),
        ] {
            assert_eq!(f.compare(a, b), r.compare(b, a));
        }
    }

    #[test]
    fn default_shortening_returns_the_key_itself() {
        let r = ReverseBytewiseComparator;
        assert_eq!(
            BytewiseComparator.find_shortest_separator(b"ab", b"b"),
            b"ab"
        );
        assert_eq!(r.find_shortest_separator(b"zz", b"aa"), b"zz");
        assert_eq!(r.find_short_successor(b"k"), b"k");
    }
}
