//! Blocks: sorted entries with prefix-compressed keys and restart points.
//!
//! ```text
//! block (uncompressed)
//! +---------------------------------------------------------------+
//! | entry 0 | entry 1 | ... | entry n-1                           |
//! | restart[0]: fixed32 | ... | restart[r-1]: fixed32 | r: fixed32 |
//! +---------------------------------------------------------------+
//!
//! entry
//! +-----------------+-------------------+--------------------+-----------+-------+
//! | shared: varint32| unshared: varint32| value_len: varint32| key delta | value |
//! +-----------------+-------------------+--------------------+-----------+-------+
//! key = previous key[..shared] + key delta. At a restart point shared = 0, and
//! restart[i] is the offset of that entry. Restarts are strictly increasing.
//! ```
//!
//! Seek: binary search over restart keys (stored whole), then a linear scan of at
//! most one restart interval. Backward steps rescan from the previous restart.

use std::cmp::Ordering;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use crate::encoding::{decode_fixed32, Decoder};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key_order::KeyComparator;

/// The order of keys within a block.
pub trait KeyOrder: Clone + Send + Sync + 'static {
    /// Compares two keys.
    fn cmp(&self, a: &[u8], b: &[u8]) -> Ordering;
}

/// Internal-key order under the family's comparator (data and index
/// blocks): the built-in orders are a matched variant, so a seek in a
/// bytewise table makes no indirect call.
impl KeyOrder for KeyComparator {
    #[inline]
    fn cmp(&self, a: &[u8], b: &[u8]) -> Ordering {
        self.compare_internal(a, b)
    }
}

/// Plain bytewise order (metaindex and properties blocks, whose keys are
/// names whatever the family's comparator).
#[derive(Debug, Clone, Copy, Default)]
pub struct BytewiseOrder;
impl KeyOrder for BytewiseOrder {
    #[inline]
    fn cmp(&self, a: &[u8], b: &[u8]) -> Ordering {
        a.cmp(b)
    }
}

/// Where a block came from, for error messages.
#[derive(Debug, Clone)]
pub struct BlockOrigin {
    /// The table file.
    pub file: Arc<Path>,
    /// Offset of the block in the file.
    pub offset: u64,
}

/// A parsed, uncompressed block. Cheap to clone (shares the bytes).
#[derive(Debug, Clone)]
pub struct Block {
    data: Bytes,
    /// Offset of the restart array; entries occupy `data[..restarts_offset]`.
    restarts_offset: usize,
    num_restarts: usize,
    origin: BlockOrigin,
}

impl Block {
    /// Parses a block's restart array, checking that it is well formed.
    pub fn new(data: Bytes, origin: BlockOrigin) -> Result<Block> {
        let corrupt = |reason: String| Error::corruption(&origin.file, origin.offset, reason);
        let len = data.len();
        let count_at = len
            .checked_sub(4)
            .ok_or_else(|| corrupt(format!("block of {len} bytes is too short")))?;
        let num_restarts = decode_fixed32(&data[count_at..]).unwrap_or(0) as usize;
        let restarts_offset = num_restarts
            .checked_mul(4)
            .and_then(|n| count_at.checked_sub(n))
            .ok_or_else(|| {
                corrupt(format!(
                    "restart count {num_restarts} does not fit a {len}-byte block"
                ))
            })?;
        if num_restarts == 0 {
            return Err(corrupt("block has no restart points".into()));
        }
        let mut previous: Option<usize> = None;
        for i in 0..num_restarts {
            let r = decode_fixed32(&data[restarts_offset + 4 * i..]).unwrap_or(u32::MAX) as usize;
            let in_order = previous.is_none_or(|p| r > p);
            let in_range = r < restarts_offset || (r == 0 && restarts_offset == 0);
            if !in_order || !in_range || (i == 0 && r != 0) {
                return Err(corrupt(format!("restart point {i} = {r} is invalid")));
            }
            previous = Some(r);
        }
        Ok(Block {
            data,
            restarts_offset,
            num_restarts,
            origin,
        })
    }

    /// A block without entries: one restart point at 0 and the count. What a
    /// table iterator walks when its table's index could not be loaded.
    pub fn empty(origin: BlockOrigin) -> Block {
        Block {
            data: Bytes::from_static(&[0, 0, 0, 0, 1, 0, 0, 0]),
            restarts_offset: 0,
            num_restarts: 1,
            origin,
        }
    }

    /// Total bytes of the block, restart array included.
    pub fn size(&self) -> usize {
        self.data.len()
    }

    /// Where the block came from.
    pub fn origin(&self) -> &BlockOrigin {
        &self.origin
    }

    /// An iterator over the block's entries, which are sorted in `order`.
    pub fn iter<O: KeyOrder>(&self, order: O) -> BlockIter<O> {
        BlockIter {
            block: self.clone(),
            current: self.restarts_offset,
            next: self.restarts_offset,
            restart_index: 0,
            key: Vec::new(),
            value_start: 0,
            value_len: 0,
            error: None,
            order,
        }
    }

    fn restart_point(&self, i: usize) -> usize {
        decode_fixed32(&self.data[self.restarts_offset + 4 * i..]).unwrap_or(0) as usize
    }
}

/// A cursor over one block.
#[derive(Debug)]
pub struct BlockIter<O> {
    block: Block,
    /// Offset of the current entry; `restarts_offset` when invalid.
    current: usize,
    /// Offset just past the current entry.
    next: usize,
    /// Index of the restart point at or before `current`.
    restart_index: usize,
    key: Vec<u8>,
    value_start: usize,
    value_len: usize,
    error: Option<Error>,
    /// The order the block's keys are sorted in, which seeks rely on.
    order: O,
}

impl<O: KeyOrder> BlockIter<O> {
    fn set_corrupt(&mut self, reason: &str) {
        if self.error.is_none() {
            let o = &self.block.origin;
            self.error = Some(Error::corruption(
                &o.file,
                o.offset,
                format!("bad block entry at block offset {}: {reason}", self.current),
            ));
        }
        self.invalidate();
    }

    fn invalidate(&mut self) {
        self.current = self.block.restarts_offset;
        self.next = self.block.restarts_offset;
    }

    /// Where the block being walked came from.
    pub fn origin(&self) -> &BlockOrigin {
        &self.block.origin
    }

    /// The value as a shared slice of the block, without copying.
    pub fn value_bytes(&self) -> Bytes {
        self.block
            .data
            .slice(self.value_start..self.value_start + self.value_len)
    }

    /// Decodes the entry at `self.next`, making it current. Returns false at the
    /// end of the block or on corruption (then `error` is set).
    fn parse_next(&mut self) -> bool {
        self.current = self.next;
        if self.current >= self.block.restarts_offset {
            self.invalidate();
            return false;
        }
        let entries = &self.block.data[..self.block.restarts_offset];
        let mut d = Decoder::new(&entries[self.current..]);
        let header = (d.varint32(), d.varint32(), d.varint32());
        let (Some(shared), Some(unshared), Some(value_len)) = header else {
            self.set_corrupt("truncated entry header");
            return false;
        };
        let (shared, unshared, value_len) =
            (shared as usize, unshared as usize, value_len as usize);
        if shared > self.key.len() {
            self.set_corrupt("shared prefix longer than the previous key");
            return false;
        }
        let Some(delta) = d.bytes(unshared) else {
            self.set_corrupt("key runs past the entries");
            return false;
        };
        let value_start = self.current + d.position();
        if d.bytes(value_len).is_none() {
            self.set_corrupt("value runs past the entries");
            return false;
        }
        // Restart points must fall on entry boundaries, and entries there must
        // hold whole keys: otherwise forward and backward iteration (which
        // restarts from them) would decode different entries.
        while self.restart_index + 1 < self.block.num_restarts
            && self.block.restart_point(self.restart_index + 1) <= self.current
        {
            self.restart_index += 1;
            if self.block.restart_point(self.restart_index) != self.current {
                self.set_corrupt("restart point inside an entry");
                return false;
            }
        }
        if shared != 0 && self.block.restart_point(self.restart_index) == self.current {
            self.set_corrupt("entry at a restart point shares a prefix");
            return false;
        }
        self.key.truncate(shared);
        self.key.extend_from_slice(delta);
        self.value_start = value_start;
        self.value_len = value_len;
        self.next = value_start + value_len;
        true
    }

    fn seek_to_restart(&mut self, index: usize) {
        self.key.clear();
        self.restart_index = index;
        self.next = self.block.restart_point(index);
    }

    /// The whole key stored at restart point `index`, borrowed from the block.
    fn restart_key(&self, index: usize) -> Option<&[u8]> {
        let entries = &self.block.data[..self.block.restarts_offset];
        let mut d = Decoder::new(entries.get(self.block.restart_point(index)..)?);
        let shared = d.varint32()?;
        let unshared = d.varint32()? as usize;
        d.varint32()?;
        if shared != 0 {
            return None;
        }
        d.bytes(unshared)
    }

    /// Finds the last restart whose key is < `target` (or 0). Returns None on
    /// corruption, after recording it.
    fn find_restart_before(&mut self, target: &[u8]) -> Option<usize> {
        let (mut left, mut right) = (0usize, self.block.num_restarts - 1);
        while left < right {
            let mid = (left + right).div_ceil(2);
            let Some(key) = self.restart_key(mid) else {
                self.current = self.block.restart_point(mid);
                self.set_corrupt("restart entry is not a whole key");
                return None;
            };
            if self.order.cmp(key, target) == Ordering::Less {
                left = mid;
            } else {
                right = mid - 1;
            }
        }
        Some(left)
    }
}

impl<O: KeyOrder> InternalIterator for BlockIter<O> {
    #[inline]
    fn valid(&self) -> bool {
        self.current < self.block.restarts_offset
    }

    fn seek_to_first(&mut self) {
        self.seek_to_restart(0);
        self.parse_next();
    }

    fn seek_to_last(&mut self) {
        self.seek_to_restart(self.block.num_restarts - 1);
        while self.parse_next() && self.next < self.block.restarts_offset {}
    }

    fn seek(&mut self, target: &[u8]) {
        let Some(start) = self.find_restart_before(target) else {
            return;
        };
        self.seek_to_restart(start);
        while self.parse_next() {
            if self.order.cmp(&self.key, target) != Ordering::Less {
                return;
            }
        }
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.seek(target);
        if !self.valid() {
            if self.error.is_none() {
                self.seek_to_last();
            }
            return;
        }
        if self.order.cmp(&self.key, target) == Ordering::Greater {
            self.prev();
        }
    }

    #[inline]
    fn next(&mut self) {
        debug_assert!(self.valid());
        self.parse_next();
    }

    fn prev(&mut self) {
        debug_assert!(self.valid());
        let original = self.current;
        // Step back to a restart point strictly before the current entry.
        while self.block.restart_point(self.restart_index) >= original {
            if self.restart_index == 0 {
                self.invalidate();
                return;
            }
            self.restart_index -= 1;
        }
        self.seek_to_restart(self.restart_index);
        while self.parse_next() && self.next < original {}
        if self.valid() && self.next != original {
            self.set_corrupt("entries do not end where the next one starts");
        }
    }

    #[inline]
    fn key(&self) -> &[u8] {
        &self.key
    }

    #[inline]
    fn value(&self) -> &[u8] {
        &self.block.data[self.value_start..self.value_start + self.value_len]
    }

    fn status(&self) -> Result<()> {
        match &self.error {
            None => Ok(()),
            Some(e) => Err(e.clone()),
        }
    }
}

#[cfg(test)]
#[path = "block_tests.rs"]
mod tests;
