//! Key ranges for [`Db::range`](super::Db::range).
//!
//! `std::ops::RangeBounds<[u8]>` is not implemented for `a..b` over slices
//! (its range impls need a sized element type), so a caller would have to
//! spell every range as a pair of `Bound`s. [`KeyRange`] accepts every std
//! range form over any key type that is a byte string (`&[u8]`, `Vec<u8>`,
//! `&str`, `Bytes`, ...), plus `..` and a `(Bound, Bound)` pair.

use std::ops::{Bound, Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

use crate::key_order::KeyComparator;
use crate::options::ReadOptions;

/// A range of user keys, seen as its lower and upper bound.
///
/// ```
/// use std::ops::Bound;
/// use strata::{Db, DbOptions, KeyRange};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// assert_eq!(("a".."c").lower(), Bound::Included(&b"a"[..]));
/// assert_eq!(("a".."c").upper(), Bound::Excluded(&b"c"[..]));
/// assert_eq!((..=b"z".to_vec()).upper(), Bound::Included(&b"z"[..]));
/// assert_eq!((..).lower(), Bound::Unbounded);
/// # let dir = tempfile::tempdir()?;
/// # let db = Db::open(dir.path(), DbOptions { create_if_missing: true, ..Default::default() })?;
/// for k in ["a", "b", "c"] {
///     db.put(k, "")?;
/// }
/// assert_eq!(db.range("a"..="b").count(), 2);
/// # Ok(())
/// # }
/// ```
pub trait KeyRange {
    /// The lower bound.
    fn lower(&self) -> Bound<&[u8]>;
    /// The upper bound.
    fn upper(&self) -> Bound<&[u8]>;
}

impl KeyRange for RangeFull {
    fn lower(&self) -> Bound<&[u8]> {
        Bound::Unbounded
    }
    fn upper(&self) -> Bound<&[u8]> {
        Bound::Unbounded
    }
}

impl<K: AsRef<[u8]>> KeyRange for Range<K> {
    fn lower(&self) -> Bound<&[u8]> {
        Bound::Included(self.start.as_ref())
    }
    fn upper(&self) -> Bound<&[u8]> {
        Bound::Excluded(self.end.as_ref())
    }
}

impl<K: AsRef<[u8]>> KeyRange for RangeInclusive<K> {
    fn lower(&self) -> Bound<&[u8]> {
        Bound::Included(self.start().as_ref())
    }
    fn upper(&self) -> Bound<&[u8]> {
        Bound::Included(self.end().as_ref())
    }
}

impl<K: AsRef<[u8]>> KeyRange for RangeFrom<K> {
    fn lower(&self) -> Bound<&[u8]> {
        Bound::Included(self.start.as_ref())
    }
    fn upper(&self) -> Bound<&[u8]> {
        Bound::Unbounded
    }
}

impl<K: AsRef<[u8]>> KeyRange for RangeTo<K> {
    fn lower(&self) -> Bound<&[u8]> {
        Bound::Unbounded
    }
    fn upper(&self) -> Bound<&[u8]> {
        Bound::Excluded(self.end.as_ref())
    }
}

impl<K: AsRef<[u8]>> KeyRange for RangeToInclusive<K> {
    fn lower(&self) -> Bound<&[u8]> {
        Bound::Unbounded
    }
    fn upper(&self) -> Bound<&[u8]> {
        Bound::Included(self.end.as_ref())
    }
}

impl<K: AsRef<[u8]>> KeyRange for (Bound<K>, Bound<K>) {
    fn lower(&self) -> Bound<&[u8]> {
        as_bytes(&self.0)
    }
    fn upper(&self) -> Bound<&[u8]> {
        as_bytes(&self.1)
    }
}

fn as_bytes<K: AsRef<[u8]>>(bound: &Bound<K>) -> Bound<&[u8]> {
    match bound {
        Bound::Included(k) => Bound::Included(k.as_ref()),
        Bound::Excluded(k) => Bound::Excluded(k.as_ref()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// Where a range's ends fall for the iterators that read it, in the
/// family's order.
///
/// Iterator bounds are an inclusive lower and an exclusive upper key. In
/// bytewise order every range form maps onto them: the key right after `k`
/// is `k` followed by a zero byte. Other orders may have no such key (in
/// reverse bytewise order nothing comes right after `b"b"`), so an
/// exclusive lower or inclusive upper end is kept as a key the
/// [`DbRange`](crate::DbRange) checks itself.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct RangeEnds {
    /// Inclusive lower bound of the iterators.
    pub(crate) lower: Option<Vec<u8>>,
    /// Exclusive upper bound of the iterators.
    pub(crate) upper: Option<Vec<u8>>,
    /// An exclusive lower end the bounds could not express.
    pub(crate) excluded_first: Option<Vec<u8>>,
    /// An inclusive upper end the bounds could not express.
    pub(crate) included_last: Option<Vec<u8>>,
}

impl RangeEnds {
    /// The ends of `range`, narrowed by `options`' bounds, in `order`.
    pub(crate) fn of(range: impl KeyRange, options: &ReadOptions, order: &KeyComparator) -> Self {
        let after = |k: &[u8]| [k, &[0u8]].concat();
        let mut ends = RangeEnds::default();
        match range.lower() {
            Bound::Included(k) => ends.lower = Some(k.to_vec()),
            Bound::Excluded(k) if order.is_bytewise() => ends.lower = Some(after(k)),
            Bound::Excluded(k) => {
                ends.lower = Some(k.to_vec());
                ends.excluded_first = Some(k.to_vec());
            }
            Bound::Unbounded => {}
        }
        match range.upper() {
            Bound::Included(k) if order.is_bytewise() => ends.upper = Some(after(k)),
            Bound::Included(k) => ends.included_last = Some(k.to_vec()),
            Bound::Excluded(k) => ends.upper = Some(k.to_vec()),
            Bound::Unbounded => {}
        }
        let later = |a: Vec<u8>, b: Vec<u8>| if order.lt(&a, &b) { b } else { a };
        let earlier = |a: Vec<u8>, b: Vec<u8>| if order.lt(&a, &b) { a } else { b };
        ends.lower = tighter(ends.lower, options.iterate_lower_bound.clone(), later);
        ends.upper = tighter(ends.upper, options.iterate_upper_bound.clone(), earlier);
        ends
    }
}

/// Combines two optional bounds, keeping the tighter one.
fn tighter(
    a: Option<Vec<u8>>,
    b: Option<Vec<u8>>,
    pick: impl Fn(Vec<u8>, Vec<u8>) -> Vec<u8>,
) -> Option<Vec<u8>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(pick(a, b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(r: impl KeyRange) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
        let own = |b: Bound<&[u8]>| b.map(<[u8]>::to_vec);
        (own(r.lower()), own(r.upper()))
    }

    #[test]
    fn every_range_form_maps_to_its_bounds() {
        use Bound::*;
        let a = b"a".as_slice();
        let z = b"z".to_vec();
        assert_eq!(bounds(..), (Unbounded, Unbounded));
        assert_eq!(
            bounds(a..z.as_slice()),
            (Included(b"a".to_vec()), Excluded(z.clone()))
        );
        assert_eq!(
            bounds("a"..="z"),
            (Included(b"a".to_vec()), Included(z.clone()))
        );
        assert_eq!(bounds(z.clone()..), (Included(z.clone()), Unbounded));
        assert_eq!(bounds(..a), (Unbounded, Excluded(b"a".to_vec())));
        assert_eq!(bounds(..="a"), (Unbounded, Included(b"a".to_vec())));
        assert_eq!(
            bounds((Excluded(a), Unbounded::<&[u8]>)),
            (Excluded(b"a".to_vec()), Unbounded)
        );
    }
}
