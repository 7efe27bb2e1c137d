//! A column family's key order as the engine's hot paths use it.
//!
//! [`KeyComparator`] names the built-in orders as variants, so comparing
//! under them is a predictable branch and an inlined `memcmp`, not an
//! indirect call; an application's [`Comparator`] costs one `dyn` call per
//! compare. Every structure that sorts or searches a family's keys
//! (memtable, blocks, tables, file search, merging, range tombstones,
//! compaction) holds one, so no path can fall back to bytewise by accident.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::comparator::{
    BytewiseComparator, Comparator, ReverseBytewiseComparator, BYTEWISE_COMPARATOR_NAME,
    REVERSE_BYTEWISE_COMPARATOR_NAME,
};
use crate::key::{
    pack_tag, short_successor, shortest_separator, tag, user_key, MAX_SEQUENCE_NUMBER,
    VALUE_TYPE_FOR_SEEK,
};

/// A family's order of user keys, and of internal keys built on it (user
/// key in this order, then newest first).
///
/// Built from a comparator by its name: a name stands for one order (see
/// [`Comparator`]), so an application comparator that calls itself
/// `leveldb.BytewiseComparator` is taken at its word.
#[derive(Debug, Clone, Default)]
pub enum KeyComparator {
    /// `memcmp` order, shorter first on a common prefix.
    #[default]
    Bytewise,
    /// Bytewise reversed.
    ReverseBytewise,
    /// An application's order.
    User(Arc<dyn Comparator>),
}

/// Two orders are the same when their names are: a name stands for one
/// order forever (see [`Comparator`]).
impl PartialEq for KeyComparator {
    fn eq(&self, other: &KeyComparator) -> bool {
        self.name() == other.name()
    }
}

impl Eq for KeyComparator {}

impl KeyComparator {
    /// The engine's form of `c`.
    pub fn new(c: &Arc<dyn Comparator>) -> KeyComparator {
        match c.name() {
            BYTEWISE_COMPARATOR_NAME => KeyComparator::Bytewise,
            REVERSE_BYTEWISE_COMPARATOR_NAME => KeyComparator::ReverseBytewise,
            _ => KeyComparator::User(c.clone()),
        }
    }

    /// The built-in order named `name`, if there is one.
    pub fn built_in(name: &str) -> Option<KeyComparator> {
        match name {
            BYTEWISE_COMPARATOR_NAME => Some(KeyComparator::Bytewise),
            REVERSE_BYTEWISE_COMPARATOR_NAME => Some(KeyComparator::ReverseBytewise),
            _ => None,
        }
    }

    /// The order's name, as the OPTIONS file and table properties record it.
    pub fn name(&self) -> &str {
        match self {
            KeyComparator::Bytewise => BYTEWISE_COMPARATOR_NAME,
            KeyComparator::ReverseBytewise => REVERSE_BYTEWISE_COMPARATOR_NAME,
            KeyComparator::User(c) => c.name(),
        }
    }

    /// The order as the comparator object an application sees.
    pub fn to_comparator(&self) -> Arc<dyn Comparator> {
        match self {
            KeyComparator::Bytewise => Arc::new(BytewiseComparator),
            KeyComparator::ReverseBytewise => Arc::new(ReverseBytewiseComparator),
            KeyComparator::User(c) => c.clone(),
        }
    }

    /// Whether this is bytewise order, for which integer key prefixes
    /// (the file index) and byte-range prefixes (prefix filters) hold.
    pub fn is_bytewise(&self) -> bool {
        matches!(self, KeyComparator::Bytewise)
    }

    /// Orders two user keys.
    #[inline]
    pub fn compare_user(&self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            KeyComparator::Bytewise => a.cmp(b),
            KeyComparator::ReverseBytewise => b.cmp(a),
            KeyComparator::User(c) => c.compare(a, b),
        }
    }

    /// `a < b` as user keys.
    #[inline]
    pub fn lt(&self, a: &[u8], b: &[u8]) -> bool {
        self.compare_user(a, b) == Ordering::Less
    }

    /// `a <= b` as user keys.
    #[inline]
    pub fn le(&self, a: &[u8], b: &[u8]) -> bool {
        self.compare_user(a, b) != Ordering::Greater
    }

    /// Orders two internal keys: user key in this order, then tag
    /// descending (newest first).
    #[inline]
    pub fn compare_internal(&self, a: &[u8], b: &[u8]) -> Ordering {
        match self.compare_user(user_key(a), user_key(b)) {
            Ordering::Equal => tag(b).cmp(&tag(a)),
            o => o,
        }
    }

    /// An internal key `k` with `start <= k < limit` (when `start < limit`),
    /// as short as the order allows, for index separators.
    pub fn shortest_separator(&self, start: &[u8], limit: &[u8]) -> Vec<u8> {
        let (su, lu) = (user_key(start), user_key(limit));
        let shorter = match self {
            KeyComparator::Bytewise => return shortest_separator(start, limit),
            KeyComparator::ReverseBytewise => reverse_separator(su, lu),
            KeyComparator::User(c) => Some(c.find_shortest_separator(su, lu)),
        };
        self.checked_shortening(start, shorter, |k| self.lt(k, lu))
    }

    /// An internal key `k >= last`, as short as the order allows, for the
    /// index entry after a table's last block.
    pub fn short_successor(&self, last: &[u8]) -> Vec<u8> {
        let shorter = match self {
            KeyComparator::Bytewise => return short_successor(last),
            // Any shorter key above `last` in reverse order is a bytewise
            // prefix of it; none is worth the trouble.
            KeyComparator::ReverseBytewise => None,
            KeyComparator::User(c) => Some(c.find_short_successor(user_key(last))),
        };
        self.checked_shortening(last, shorter, |_| true)
    }

    /// `shorter` as an internal key sorting before every entry of its user
    /// key, when it is strictly shorter than `ikey`'s user key, not below
    /// it, and passes `below_limit`; otherwise `ikey` itself. An
    /// application's shortening is checked, not trusted: a separator out of
    /// range would send seeks to the wrong block.
    fn checked_shortening(
        &self,
        ikey: &[u8],
        shorter: Option<Vec<u8>>,
        below_limit: impl Fn(&[u8]) -> bool,
    ) -> Vec<u8> {
        let uk = user_key(ikey);
        match shorter {
            Some(mut k) if k.len() < uk.len() && self.lt(uk, &k) && below_limit(&k) => {
                k.extend_from_slice(
                    &pack_tag(MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK).to_le_bytes(),
                );
                k
            }
            _ => ikey.to_vec(),
        }
    }
}

/// In reverse bytewise order `start < limit` means `start > limit`
/// bytewise; a prefix of `start` one byte past their common part is still
/// above `limit` bytewise (it differs from `limit` there, or extends it)
/// and not above `start`, so it separates them.
fn reverse_separator(start: &[u8], limit: &[u8]) -> Option<Vec<u8>> {
    let shared = start.iter().zip(limit).take_while(|(a, b)| a == b).count();
    (shared < start.len()).then(|| start[..=shared].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueType};
    use proptest::prelude::*;

    #[derive(Debug)]
    struct U64Le;
    impl Comparator for U64Le {
        fn name(&self) -> &str {
            "test.U64Le"
        }
        fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
            let num = |k: &[u8]| k.try_into().map(u64::from_le_bytes).ok();
            num(a).cmp(&num(b)).then_with(|| a.cmp(b))
        }
        fn find_shortest_separator(&self, start: &[u8], _limit: &[u8]) -> Vec<u8> {
            // A wrong answer on purpose: the engine must not trust it.
            start[..start.len() / 2].to_vec()
        }
    }

    fn orders() -> Vec<KeyComparator> {
        vec![
            KeyComparator::Bytewise,
            KeyComparator::ReverseBytewise,
            KeyComparator::User(Arc::new(U64Le)),
        ]
    }

    #[test]
    fn names_round_trip_through_built_in() {
        for o in orders() {
            let again = KeyComparator::built_in(o.name());
            assert_eq!(again.is_some(), !matches!(o, KeyComparator::User(_)));
        }
        assert!(KeyComparator::built_in("x.Nope").is_none());
    }

    proptest! {
        #[test]
        fn separators_lie_between_their_keys(
            a in proptest::collection::vec(0u8..4, 0..10),
            b in proptest::collection::vec(0u8..4, 0..10),
            sa in 1u64..100, sb in 1u64..100,
        ) {
            for o in orders() {
                let (x, y) = (internal_key(&a, sa, ValueType::Put), internal_key(&b, sb, ValueType::Put));
                let (start, limit) = match o.compare_internal(&x, &y) {
                    Ordering::Less => (x, y),
                    Ordering::Greater => (y, x),
                    Ordering::Equal => continue,
                };
                let sep = o.shortest_separator(&start, &limit);
                prop_assert_ne!(o.compare_internal(&start, &sep), Ordering::Greater, "{}", o.name());
                prop_assert_eq!(o.compare_internal(&sep, &limit), Ordering::Less, "{}", o.name());
                let succ = o.short_successor(&start);
                prop_assert_ne!(o.compare_internal(&start, &succ), Ordering::Greater, "{}", o.name());
            }
        }
    }
}
