//! Tests of the merging and user-facing iterators, against sorted-vector and
//! `BTreeMap` models. [`VecIterator`] stands in for memtables and tables.

mod db_iter;
mod level;
mod merging;

use std::cmp::Ordering;

use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key_order::KeyComparator;

/// `(key, value)` pairs, internal or user.
pub(super) type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

/// An [`InternalIterator`] over a sorted vector of `(internal key, value)`.
///
/// With `fail_at = Some(i)`, landing on entry `i` (by any move) makes it invalid
/// with a sticky error instead, like a table whose block `i` fails to read; a
/// later seek elsewhere leaves it valid but still failed, as `TableIterator` does.
/// A transient error instead clears on the next move, like a retried read.
#[derive(Debug, Clone)]
pub(super) struct VecIterator {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    order: KeyComparator,
    pos: Option<usize>,
    fail_at: Option<usize>,
    transient: bool,
    error: Option<Error>,
}

impl VecIterator {
    /// Sorts `entries` into internal-key order, user keys bytewise.
    pub(super) fn new(entries: Vec<(Vec<u8>, Vec<u8>)>) -> Self {
        VecIterator::with_order(entries, KeyComparator::Bytewise)
    }

    /// Sorts `entries` into internal-key order, user keys in `order`.
    pub(super) fn with_order(mut entries: Vec<(Vec<u8>, Vec<u8>)>, order: KeyComparator) -> Self {
        entries.sort_by(|a, b| order.compare_internal(&a.0, &b.0));
        VecIterator {
            entries,
            order,
            pos: None,
            fail_at: None,
            transient: false,
            error: None,
        }
    }

    /// Like `new`, but fails when landing on entry `fail_at` (in sorted order).
    pub(super) fn failing_at(entries: Vec<(Vec<u8>, Vec<u8>)>, fail_at: usize) -> Self {
        let mut it = VecIterator::new(entries);
        it.fail_at = Some(fail_at);
        it
    }

    /// Like `failing_at`, but the error clears on the next move.
    pub(super) fn failing_transiently_at(entries: Vec<(Vec<u8>, Vec<u8>)>, fail_at: usize) -> Self {
        let mut it = VecIterator::failing_at(entries, fail_at);
        it.transient = true;
        it
    }

    pub(super) fn boxed(self) -> Box<dyn InternalIterator + Send> {
        Box::new(self)
    }

    fn land(&mut self, pos: Option<usize>) {
        if self.transient {
            self.error = None;
        }
        if pos.is_some() && pos == self.fail_at {
            self.pos = None;
            self.error = Some(Error::corruption(
                "child",
                pos.unwrap_or(0) as u64,
                "injected read error",
            ));
        } else {
            self.pos = pos.filter(|&p| p < self.entries.len());
        }
    }
}

impl InternalIterator for VecIterator {
    fn valid(&self) -> bool {
        self.pos.is_some()
    }
    fn seek_to_first(&mut self) {
        self.land(Some(0));
    }
    fn seek_to_last(&mut self) {
        self.land(self.entries.len().checked_sub(1));
    }
    fn seek(&mut self, target: &[u8]) {
        let i = self
            .entries
            .partition_point(|e| self.order.compare_internal(&e.0, target) == Ordering::Less);
        self.land(Some(i));
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        let i = self
            .entries
            .partition_point(|e| self.order.compare_internal(&e.0, target) != Ordering::Greater);
        self.land(i.checked_sub(1));
    }
    fn next(&mut self) {
        let p = self.pos.expect("next on an invalid VecIterator");
        self.land(Some(p + 1));
    }
    fn prev(&mut self) {
        let p = self.pos.expect("prev on an invalid VecIterator");
        self.land(p.checked_sub(1));
    }
    fn key(&self) -> &[u8] {
        &self.entries[self.pos.expect("key on an invalid VecIterator")].0
    }
    fn value(&self) -> &[u8] {
        &self.entries[self.pos.expect("value on an invalid VecIterator")].1
    }
    fn status(&self) -> Result<()> {
        match &self.error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}
