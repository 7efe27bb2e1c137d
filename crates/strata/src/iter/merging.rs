//! The merging iterator: one sorted view over several sorted sources (memtables,
//! level-0 tables, levels), in both directions.
//!
//! Children are ordered newest source first. The merged order is the internal-key
//! order, with ties (equal internal keys in two children, which unique sequence
//! numbers rule out in practice) broken by child index: the lower index, the newer
//! source, comes first. Going backward walks exactly the reverse of that order.
//!
//! The valid children sit in a binary heap of child indices keyed by their current
//! key: a min-heap while moving forward, a max-heap while moving backward, so each
//! step costs one child step plus O(log n) key comparisons and no allocation. A
//! change of direction repositions every other child around the current key
//! (LevelDB's and RocksDB's approach), which costs a seek per child.

use std::cmp::Ordering;
use std::fmt;

use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key_order::KeyComparator;
use crate::options::PrefixExtractor;

/// A boxed child iterator.
pub type BoxedIterator = Box<dyn InternalIterator + Send>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Backward,
}

/// Merges sorted children into one sorted cursor.
///
/// Invariants while no error is recorded:
/// - `heap` holds exactly the indices of the valid children, each once.
/// - Forward: every valid child is positioned at its first entry after the
///   current entry in the merged order, except the current child (the heap root),
///   which is on the current entry. Backward: the mirror image.
/// - An error from any child makes the merged iterator invalid until the next
///   seek, so that child's data is never silently skipped.
pub struct MergingIterator {
    children: Vec<BoxedIterator>,
    /// The children's key order, which the merge keeps.
    order: KeyComparator,
    /// Indices of the valid children in heap order; the root is the current child.
    heap: Vec<usize>,
    direction: Direction,
    /// First error met since the last seek.
    error: Option<Error>,
    /// The current key, copied while a direction switch moves the children (the
    /// current child's key borrow cannot be held across those moves). Reused.
    saved_key: Vec<u8>,
}

impl MergingIterator {
    /// Merges `children`, ordered newest source first, each in bytewise
    /// order. The result is unpositioned.
    pub fn new(children: Vec<BoxedIterator>) -> Self {
        MergingIterator::with_order(children, KeyComparator::Bytewise)
    }

    /// Merges `children`, ordered newest source first, each in `order`.
    pub(crate) fn with_order(children: Vec<BoxedIterator>, order: KeyComparator) -> Self {
        let heap = Vec::with_capacity(children.len());
        MergingIterator {
            children,
            order,
            heap,
            direction: Direction::Forward,
            error: None,
            saved_key: Vec::new(),
        }
    }

    /// Number of children.
    pub fn num_children(&self) -> usize {
        self.children.len()
    }

    /// The child holding the current entry.
    #[inline]
    fn current(&self) -> Option<usize> {
        if self.error.is_some() {
            return None;
        }
        self.heap.first().copied()
    }

    fn record_error(&mut self, e: Error) {
        self.error.get_or_insert(e);
    }

    /// Rebuilds the heap from scratch after every child has been repositioned.
    ///
    /// Every child's status is read here, valid or not: a child may keep an old
    /// error while positioned again, and a seek is rare enough to pay n calls.
    fn rebuild(&mut self, direction: Direction) {
        self.direction = direction;
        self.heap.clear();
        for (i, child) in self.children.iter().enumerate() {
            if let Err(e) = child.status() {
                self.error.get_or_insert(e);
            } else if child.valid() {
                self.heap.push(i);
            }
        }
        let n = self.heap.len();
        for i in (0..n / 2).rev() {
            sift_down(&self.children, &self.order, &mut self.heap, direction, i);
        }
    }

    /// Moves the current child one step in the current direction and restores
    /// the heap. A child that runs out has its status checked: by the cursor
    /// contract an error always makes a child invalid, so this is where errors
    /// that arise between seeks are noticed.
    fn step_current(&mut self) {
        let Some(&top) = self.heap.first() else {
            return;
        };
        let Some(child) = self.children.get_mut(top) else {
            return;
        };
        match self.direction {
            Direction::Forward => child.next(),
            Direction::Backward => child.prev(),
        }
        if child.valid() {
            sift_down(
                &self.children,
                &self.order,
                &mut self.heap,
                self.direction,
                0,
            );
            return;
        }
        if let Err(e) = child.status() {
            self.record_error(e);
        }
        self.heap.swap_remove(0);
        sift_down(
            &self.children,
            &self.order,
            &mut self.heap,
            self.direction,
            0,
        );
    }

    /// Repositions every non-current child on the other side of the current entry
    /// `(K, c)` so the heap invariant holds for `to`, then rebuilds the heap.
    ///
    /// Forward: child `j` must sit on its first entry after `(K, c)` in the merged
    /// order: `seek(K)` finds the first key >= K, and an entry equal to K counts as
    /// after `(K, c)` only when `j > c`. Backward is the mirror image.
    fn switch_direction(&mut self, to: Direction) {
        let Some(current) = self.current() else {
            return;
        };
        let Some(cur_child) = self.children.get(current) else {
            return;
        };
        self.saved_key.clear();
        self.saved_key.extend_from_slice(cur_child.key());
        let target = self.saved_key.as_slice();
        for (j, child) in self.children.iter_mut().enumerate() {
            if j == current {
                continue;
            }
            match to {
                Direction::Forward => {
                    child.seek(target);
                    if j < current
                        && child.valid()
                        && self.order.compare_internal(child.key(), target).is_eq()
                    {
                        child.next();
                    }
                }
                Direction::Backward => {
                    child.seek_for_prev(target);
                    if j > current
                        && child.valid()
                        && self.order.compare_internal(child.key(), target).is_eq()
                    {
                        child.prev();
                    }
                }
            }
        }
        self.rebuild(to);
    }
}

/// True when child `a` belongs nearer the heap root than child `b`.
#[inline]
fn above(
    children: &[BoxedIterator],
    order: &KeyComparator,
    direction: Direction,
    a: usize,
    b: usize,
) -> bool {
    let (Some(ca), Some(cb)) = (children.get(a), children.get(b)) else {
        return false;
    };
    // The merged order: internal key, then child index (newer source first).
    let merged = order.compare_internal(ca.key(), cb.key()).then(a.cmp(&b));
    match direction {
        Direction::Forward => merged == Ordering::Less,
        Direction::Backward => merged == Ordering::Greater,
    }
}

/// Restores the heap property below slot `i`, assuming it holds elsewhere.
fn sift_down(
    children: &[BoxedIterator],
    order: &KeyComparator,
    heap: &mut [usize],
    direction: Direction,
    mut i: usize,
) {
    let n = heap.len();
    loop {
        let left = 2 * i + 1;
        if left >= n {
            return;
        }
        let right = left + 1;
        let mut best = left;
        if right < n && above(children, order, direction, heap[right], heap[left]) {
            best = right;
        }
        if !above(children, order, direction, heap[best], heap[i]) {
            return;
        }
        heap.swap(i, best);
        i = best;
    }
}

impl InternalIterator for MergingIterator {
    fn valid(&self) -> bool {
        self.current().is_some()
    }

    fn seek_to_first(&mut self) {
        self.error = None;
        for child in &mut self.children {
            child.seek_to_first();
        }
        self.rebuild(Direction::Forward);
    }

    fn seek_to_last(&mut self) {
        self.error = None;
        for child in &mut self.children {
            child.seek_to_last();
        }
        self.rebuild(Direction::Backward);
    }

    fn seek(&mut self, target: &[u8]) {
        self.error = None;
        for child in &mut self.children {
            child.seek(target);
        }
        self.rebuild(Direction::Forward);
    }

    fn seek_in_prefix(&mut self, target: &[u8], extractor: &PrefixExtractor, prefix: &[u8]) {
        self.error = None;
        for child in &mut self.children {
            child.seek_in_prefix(target, extractor, prefix);
        }
        self.rebuild(Direction::Forward);
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.error = None;
        for child in &mut self.children {
            child.seek_for_prev(target);
        }
        self.rebuild(Direction::Backward);
    }

    fn next(&mut self) {
        if !self.valid() {
            return;
        }
        if self.direction == Direction::Backward {
            self.switch_direction(Direction::Forward);
            if !self.valid() {
                return;
            }
        }
        self.step_current();
    }

    fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        if self.direction == Direction::Forward {
            self.switch_direction(Direction::Backward);
            if !self.valid() {
                return;
            }
        }
        self.step_current();
    }

    fn key(&self) -> &[u8] {
        match self.current().and_then(|i| self.children.get(i)) {
            Some(child) => child.key(),
            None => &[],
        }
    }

    fn value(&self) -> &[u8] {
        match self.current().and_then(|i| self.children.get(i)) {
            Some(child) => child.value(),
            None => &[],
        }
    }

    fn status(&self) -> Result<()> {
        match &self.error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

impl fmt::Debug for MergingIterator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MergingIterator")
            .field("children", &self.children.len())
            .field("direction", &self.direction)
            .field("current", &self.current())
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}
