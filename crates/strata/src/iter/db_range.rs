//! [`DbRange`]: two [`DbIterator`]s over one snapshot, consumed from both
//! ends as a Rust [`DoubleEndedIterator`].

use std::iter::FusedIterator;

use crate::error::Result;
use crate::iter::db_iter::DbIterator;

/// A Rust iterator over `(key, value)` pairs, consumable from both ends.
///
/// It holds two [`DbIterator`]s over the same data (same sources, snapshot and
/// bounds): the front one walks forward from the first key, the back one backward
/// from the last. The ends stop when they meet, so every key is yielded once.
/// An error is yielded once, as `Some(Err(_))`, and ends the iteration.
///
/// ```
/// use strata::{Db, DbOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let db = Db::open(dir.path(), DbOptions { create_if_missing: true, ..Default::default() })?;
/// for k in ["a", "b", "c", "d"] {
///     db.put(k, "")?;
/// }
/// let mut range = db.range("a".."d");
/// let (first, _) = range.next().unwrap()?;
/// let (last, _) = range.next_back().unwrap()?;
/// assert_eq!((&first[..], &last[..]), (&b"a"[..], &b"c"[..]));
/// // The two ends meet in the middle: "b" is yielded once.
/// assert_eq!(range.count(), 1);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct DbRange {
    front: DbIterator,
    back: DbIterator,
    front_started: bool,
    back_started: bool,
    /// The last key yielded by each end (buffers reused); the other end stops
    /// on reaching it. Meaningful only once that end has yielded something.
    front_last: Vec<u8>,
    back_last: Vec<u8>,
    front_yielded: bool,
    back_yielded: bool,
    finished: bool,
    /// An exclusive first key and an inclusive last key of the range, which
    /// the iterators' bounds could not express (see
    /// `RangeEnds`): the front end skips the first, the back end starts at
    /// the last.
    excluded_first: Option<Vec<u8>>,
    included_last: Option<Vec<u8>>,
}

impl DbRange {
    /// Combines a front and a back iterator over the same data. Both are
    /// repositioned (to the first and the last key) on first use.
    pub fn new(front: DbIterator, back: DbIterator) -> Self {
        DbRange {
            front,
            back,
            front_started: false,
            back_started: false,
            front_last: Vec::new(),
            back_last: Vec::new(),
            front_yielded: false,
            back_yielded: false,
            finished: false,
            excluded_first: None,
            included_last: None,
        }
    }

    /// Narrows the range to keys after `excluded_first` and up to
    /// `included_last`, in the iterators' order.
    pub(crate) fn with_ends(
        mut self,
        excluded_first: Option<Vec<u8>>,
        included_last: Option<Vec<u8>>,
    ) -> Self {
        self.excluded_first = excluded_first;
        self.included_last = included_last;
        self
    }

    /// Ends the iteration, turning an iterator error into the last item.
    fn finish(&mut self, status: Result<()>) -> Option<Result<()>> {
        self.finished = true;
        status.err().map(Err)
    }
}

impl DbRange {
    /// The next entry from the front, borrowed until the next step: what
    /// [`Iterator::next`] yields, without copying it out. A caller that
    /// copies entries into its own buffers (a binding, a batch) saves an
    /// allocation per key and per value.
    pub fn next_entry(&mut self) -> Option<Result<(&[u8], &[u8])>> {
        match self.step_front() {
            Some(Ok(())) => Some(Ok(entry_of(&self.front))),
            Some(Err(e)) => Some(Err(e)),
            None => None,
        }
    }

    /// The next entry from the back, borrowed; see [`next_entry`](Self::next_entry).
    pub fn next_back_entry(&mut self) -> Option<Result<(&[u8], &[u8])>> {
        match self.step_back() {
            Some(Ok(())) => Some(Ok(entry_of(&self.back))),
            Some(Err(e)) => Some(Err(e)),
            None => None,
        }
    }

    /// Moves the front end to its next entry: `Some(Ok)` when it stands on
    /// one to yield (remembered in `front_last`), else the end or an error.
    fn step_front(&mut self) -> Option<Result<()>> {
        if self.finished {
            return None;
        }
        if self.front_started {
            self.front.next();
        } else {
            self.front.seek_to_first();
            self.front_started = true;
            // The lower bound is the excluded key itself: step past it.
            if self.excluded_first.is_some() && self.front.key() == self.excluded_first.as_deref() {
                self.front.next();
            }
        }
        let (Some(key), Some(_)) = (self.front.key(), self.front.value()) else {
            let status = self.front.status();
            return self.finish(status);
        };
        let order = self.front.order();
        if (self.back_yielded && order.le(&self.back_last, key))
            || self
                .included_last
                .as_ref()
                .is_some_and(|last| order.lt(last, key))
        {
            return self.finish(Ok(()));
        }
        self.front_last.clear();
        self.front_last.extend_from_slice(key);
        self.front_yielded = true;
        Some(Ok(()))
    }

    /// Moves the back end to its next entry; see `step_front`.
    fn step_back(&mut self) -> Option<Result<()>> {
        if self.finished {
            return None;
        }
        if self.back_started {
            self.back.prev();
        } else {
            match &self.included_last {
                Some(last) => self.back.seek_for_prev(last),
                None => self.back.seek_to_last(),
            }
            self.back_started = true;
        }
        let (Some(key), Some(_)) = (self.back.key(), self.back.value()) else {
            let status = self.back.status();
            return self.finish(status);
        };
        if (self.front_yielded && self.back.order().le(key, &self.front_last))
            || self.excluded_first.as_deref() == Some(key)
        {
            return self.finish(Ok(()));
        }
        self.back_last.clear();
        self.back_last.extend_from_slice(key);
        self.back_yielded = true;
        Some(Ok(()))
    }
}

/// The entry `it` stands on; a step that returned `Some(Ok)` left it valid.
fn entry_of(it: &DbIterator) -> (&[u8], &[u8]) {
    (it.key().unwrap_or_default(), it.value().unwrap_or_default())
}

impl Iterator for DbRange {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(
            self.next_entry()?
                .map(|(key, value)| (key.to_vec(), value.to_vec())),
        )
    }
}

impl DoubleEndedIterator for DbRange {
    fn next_back(&mut self) -> Option<Self::Item> {
        Some(
            self.next_back_entry()?
                .map(|(key, value)| (key.to_vec(), value.to_vec())),
        )
    }
}

impl FusedIterator for DbRange {}
