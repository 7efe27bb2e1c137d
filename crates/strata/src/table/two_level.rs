//! Two-level iteration: an outer iterator whose values are block handles,
//! and a cursor inside the block it is on. A table iterator is one (its
//! index over the data blocks), and so is a two-level index (its top level
//! over the index partitions); a table iterator over a two-level index nests
//! the second inside the first, three levels in all.

use crate::encoding::Decoder;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key_order::KeyComparator;
use crate::table::block::{Block, BlockIter};
use crate::table::format::BlockHandle;

/// An iterator whose values are block handles: an index block, or a
/// two-level index.
pub(crate) trait HandleIter: InternalIterator + std::fmt::Debug {
    /// The current value as a block handle. Requires `valid()`. A value that
    /// is not exactly one handle is `Error::Corruption` naming the file and
    /// the index block holding it.
    fn handle(&self) -> Result<BlockHandle>;
}

impl HandleIter for BlockIter<KeyComparator> {
    fn handle(&self) -> Result<BlockHandle> {
        let mut d = Decoder::new(self.value());
        BlockHandle::decode_from(&mut d)
            .filter(|_| d.is_empty())
            .ok_or_else(|| {
                let origin = self.origin();
                Error::corruption(&origin.file, origin.offset, "bad index entry")
            })
    }
}

/// Where the inner blocks come from: the cache or the file, with the
/// caller's checksum, cache-fill and readahead choices.
pub(crate) trait BlockSource: std::fmt::Debug {
    /// The block at `handle`.
    fn load(&mut self, handle: BlockHandle) -> Result<Block>;
}

/// `outer` picks blocks, `inner` walks the one it is on.
///
/// Invariant: when `inner` is set, it is a cursor over the block named by
/// `outer`'s current value, which is `inner_handle`; the iterator is valid
/// exactly when `inner` is set and valid. The first error met stops the
/// iterator and stays in `status()`.
#[derive(Debug)]
pub(crate) struct TwoLevelIter<O, S> {
    outer: O,
    source: S,
    inner: Option<BlockIter<KeyComparator>>,
    /// The order of the inner blocks' keys.
    order: KeyComparator,
    inner_handle: Option<BlockHandle>,
    error: Option<Error>,
}

impl<O: HandleIter, S: BlockSource> TwoLevelIter<O, S> {
    /// An iterator of the blocks `outer` names, read from `source`; one
    /// that failed before it started carries `error` (and no entries). The
    /// blocks' keys are in `order`.
    pub(crate) fn new(outer: O, source: S, order: KeyComparator, error: Option<Error>) -> Self {
        TwoLevelIter {
            outer,
            source,
            inner: None,
            order,
            inner_handle: None,
            error,
        }
    }

    /// Points `inner` at the block `outer` is on (or clears it). A block
    /// already loaded is kept rather than read again, so a seek within the
    /// current block (or partition) costs no lookup.
    fn load_inner(&mut self) {
        if !self.outer.valid() {
            self.inner = None;
            self.inner_handle = None;
            return;
        }
        let loaded = self.outer.handle().and_then(|handle| {
            if self.inner_handle == Some(handle) && self.inner.is_some() {
                return Ok(None);
            }
            // Once per visit to a block, not per entry, so a scan cannot
            // promote itself into the cache's high pool.
            let block = self.source.load(handle)?;
            Ok(Some((handle, block.iter(self.order.clone()))))
        });
        match loaded {
            Ok(Some((handle, iter))) => {
                self.inner = Some(iter);
                self.inner_handle = Some(handle);
            }
            Ok(None) => {}
            Err(e) => {
                self.error.get_or_insert(e);
                self.inner = None;
                self.inner_handle = None;
            }
        }
    }

    fn failed(&self) -> bool {
        self.error.is_some() || self.inner.as_ref().is_some_and(|d| d.status().is_err())
    }

    /// Moves past exhausted (or empty) blocks, forward or backward.
    fn skip_empty(&mut self, forward: bool) {
        while !self.inner.as_ref().is_some_and(|d| d.valid()) {
            if self.failed() || !self.outer.valid() {
                self.inner = None;
                return;
            }
            if forward {
                self.outer.next();
            } else {
                self.outer.prev();
            }
            self.load_inner();
            match self.inner.as_mut() {
                Some(d) if forward => d.seek_to_first(),
                Some(d) => d.seek_to_last(),
                None => {}
            }
        }
    }

    fn current(&self) -> Option<&BlockIter<KeyComparator>> {
        self.inner.as_ref().filter(|d| d.valid())
    }
}

impl<O: HandleIter, S: BlockSource> InternalIterator for TwoLevelIter<O, S> {
    fn valid(&self) -> bool {
        self.current().is_some()
    }

    fn seek_to_first(&mut self) {
        self.outer.seek_to_first();
        self.load_inner();
        if let Some(d) = self.inner.as_mut() {
            d.seek_to_first();
        }
        self.skip_empty(true);
    }

    fn seek_to_last(&mut self) {
        self.outer.seek_to_last();
        self.load_inner();
        if let Some(d) = self.inner.as_mut() {
            d.seek_to_last();
        }
        self.skip_empty(false);
    }

    fn seek(&mut self, target: &[u8]) {
        // The first block whose separator is >= target holds the first key
        // >= target, unless every key in it is smaller (target past its last
        // key, when the separator is a shortened successor).
        self.outer.seek(target);
        self.load_inner();
        if let Some(d) = self.inner.as_mut() {
            d.seek(target);
        }
        self.skip_empty(true);
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.seek(target);
        if self.valid() {
            if self.order.compare_internal(self.key(), target) == std::cmp::Ordering::Greater {
                self.prev();
            }
        } else if !self.failed() && self.outer.status().is_ok() {
            self.seek_to_last();
        }
    }

    fn next(&mut self) {
        if let Some(d) = self.inner.as_mut() {
            d.next();
        }
        self.skip_empty(true);
    }

    fn prev(&mut self) {
        if let Some(d) = self.inner.as_mut() {
            d.prev();
        }
        self.skip_empty(false);
    }

    fn key(&self) -> &[u8] {
        self.current().map_or(&[], |d| d.key())
    }

    fn value(&self) -> &[u8] {
        self.current().map_or(&[], |d| d.value())
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        self.outer.status()?;
        match &self.inner {
            Some(d) => d.status(),
            None => Ok(()),
        }
    }
}

impl<O: HandleIter, S: BlockSource> HandleIter for TwoLevelIter<O, S> {
    fn handle(&self) -> Result<BlockHandle> {
        match self.current() {
            Some(inner) => inner.handle(),
            None => Err(Error::corruption(
                "",
                0,
                "index iterator read while not positioned",
            )),
        }
    }
}
