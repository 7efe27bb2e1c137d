//! How a [`DbIterator`](super::db_iter::DbIterator) seek uses the family's
//! prefix extractor: `prefix_same_as_start` narrows the iterator's bounds to
//! the target's prefix, and a seek whose bounds cannot leave the target's
//! prefix lets sources with a prefix filter that proves the prefix absent
//! stay out of it.
//!
//! Why this never loses a key: the keys sharing a prefix `p` are exactly
//! `[p, prefix_end(p))` (see [`PrefixExtractor`]). A filter is consulted only
//! when the iterator's upper bound is at or below `prefix_end(p)`, so every
//! key the iterator may show from the seek on has prefix `p`, and a source
//! holding no key with prefix `p` has nothing to show.

use crate::options::{PrefixExtractor, ReadOptions};

/// The prefix settings of one iterator, and the bounds it was opened with.
#[derive(Debug, Clone)]
pub(crate) struct PrefixSeek {
    extractor: PrefixExtractor,
    same_as_start: bool,
    total_order: bool,
    /// The bounds the user gave, restored before every positioning call.
    user_lower: Option<Vec<u8>>,
    user_upper: Option<Vec<u8>>,
    /// The iterator's bounds are narrowed to a prefix now.
    narrowed: bool,
    /// Scratch for the end of the prefix being sought.
    end: Vec<u8>,
}

impl PrefixSeek {
    /// For an iterator with `bounds` (lower, upper) and the prefix settings
    /// of `options`. `None` when the family has no extractor: every seek is
    /// in total order.
    pub(crate) fn new(
        extractor: Option<PrefixExtractor>,
        options: &ReadOptions,
        (user_lower, user_upper): (Option<Vec<u8>>, Option<Vec<u8>>),
    ) -> Option<PrefixSeek> {
        Some(PrefixSeek {
            extractor: extractor?,
            same_as_start: options.prefix_same_as_start,
            total_order: options.total_order_seek,
            user_lower,
            user_upper,
            narrowed: false,
            end: Vec::new(),
        })
    }

    pub(crate) fn extractor(&self) -> &PrefixExtractor {
        &self.extractor
    }

    /// Puts the user's bounds back (`seek_to_first` and `seek_to_last`
    /// ignore prefixes, and every seek starts from them).
    pub(crate) fn restore(&mut self, lower: &mut Option<Vec<u8>>, upper: &mut Option<Vec<u8>>) {
        if self.narrowed {
            lower.clone_from(&self.user_lower);
            upper.clone_from(&self.user_upper);
            self.narrowed = false;
        }
    }

    /// Prepares a seek to `target` (already clamped to the lower bound):
    /// with `prefix_same_as_start`, narrows the bounds to the target's
    /// prefix. Returns the prefix's length (a prefix is always the start of
    /// its key) when the bounds keep the iteration inside it and filters
    /// may be used; `None` for a total-order seek (a target outside the
    /// extractor's domain, `total_order_seek`, or bounds that reach past
    /// the prefix). Reuses the bounds' buffers: a seek allocates nothing
    /// once they have grown.
    pub(crate) fn confine(
        &mut self,
        target: &[u8],
        lower: &mut Option<Vec<u8>>,
        upper: &mut Option<Vec<u8>>,
    ) -> Option<usize> {
        self.restore(lower, upper);
        let prefix = self.extractor.prefix(target)?;
        let has_end = self.extractor.prefix_end_into(prefix, &mut self.end);
        if self.same_as_start {
            if lower.as_deref().is_none_or(|l| l < prefix) {
                set_bound(lower, prefix);
            }
            if has_end && upper.as_deref().is_none_or(|u| self.end.as_slice() < u) {
                set_bound(upper, &self.end);
            }
            self.narrowed = true;
        }
        // Without an end, every key at or after the prefix has it.
        let inside = !has_end || upper.as_deref().is_some_and(|u| u <= self.end.as_slice());
        (inside && !self.total_order).then_some(prefix.len())
    }
}

/// Sets `bound` to `value`, reusing its buffer.
fn set_bound(bound: &mut Option<Vec<u8>>, value: &[u8]) {
    match bound {
        Some(b) => {
            b.clear();
            b.extend_from_slice(value);
        }
        None => *bound = Some(value.to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seek(options: &ReadOptions, target: &[u8]) -> (Option<Vec<u8>>, Option<Vec<u8>>, bool) {
        let (mut lower, mut upper) = (
            options.iterate_lower_bound.clone(),
            options.iterate_upper_bound.clone(),
        );
        let bounds = (lower.clone(), upper.clone());
        let mut p = PrefixSeek::new(Some(PrefixExtractor::Fixed(2)), options, bounds).unwrap();
        let filtered = p.confine(target, &mut lower, &mut upper).is_some();
        (lower, upper, filtered)
    }

    #[test]
    fn filters_are_used_only_when_the_bounds_stay_in_the_prefix() {
        let plain = ReadOptions::default();
        assert_eq!(seek(&plain, b"abc"), (None, None, false));
        let same = ReadOptions {
            prefix_same_as_start: true,
            ..ReadOptions::default()
        };
        let ab = (Some(b"ab".to_vec()), Some(b"ac".to_vec()), true);
        assert_eq!(seek(&same, b"abc"), ab);
        // Outside the domain: total order, bounds untouched.
        assert_eq!(seek(&same, b"a"), (None, None, false));
        let bounded = |upper: &[u8]| ReadOptions {
            iterate_upper_bound: Some(upper.to_vec()),
            ..ReadOptions::default()
        };
        assert!(seek(&bounded(b"ac"), b"abc").2);
        assert!(seek(&bounded(b"abz"), b"abc").2);
        assert!(!seek(&bounded(b"ac\0"), b"abc").2);
        let total = ReadOptions {
            total_order_seek: true,
            ..same.clone()
        };
        assert_eq!(seek(&total, b"abc"), (ab.0, ab.1, false));
        // The last prefix has no end: every later key shares it.
        assert!(seek(&plain, b"\xff\xffz").2);
        assert!(seek(&same, b"\xff\xffz").2);
    }

    #[test]
    fn user_bounds_come_back_for_the_next_seek() {
        let options = ReadOptions {
            prefix_same_as_start: true,
            iterate_upper_bound: Some(b"b".to_vec()),
            ..ReadOptions::default()
        };
        let (mut lower, mut upper) = (None, options.iterate_upper_bound.clone());
        let bounds = (lower.clone(), upper.clone());
        let mut p = PrefixSeek::new(Some(PrefixExtractor::Fixed(2)), &options, bounds).unwrap();
        p.confine(b"aa", &mut lower, &mut upper);
        assert_eq!(
            (lower.as_deref(), upper.as_deref()),
            (Some(&b"aa"[..]), Some(&b"ab"[..]))
        );
        p.restore(&mut lower, &mut upper);
        assert_eq!((lower, upper), (None, Some(b"b".to_vec())));
    }
}
