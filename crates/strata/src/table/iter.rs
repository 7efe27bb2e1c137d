//! Iterator over a table: the index picks data blocks, a block cursor walks
//! inside the current one. With a two-level index the index is itself a
//! two-level walk (top level, then index partition), so a scan crosses
//! partition boundaries as it crosses block boundaries.
//!
//! An ingested table read at a global seqno stores every entry at sequence
//! number 0 and shows it at the global one: the iterator rewrites the
//! current key's tag into a buffer, and seeks by user key (each user key is
//! in such a table once), then steps past the one entry the rewrite may put
//! on the wrong side of the target.

use std::sync::Arc;

use crate::error::Result;
use crate::iter::InternalIterator;
use crate::key::{pack_tag, seek_key, user_key, SequenceNumber, MAX_SEQUENCE_NUMBER, TAG_LEN};
use crate::options::{PrefixExtractor, ReadOptions};
use crate::table::block::{Block, BlockOrigin};
use crate::table::format::BlockHandle;
use crate::table::partitioned_index::IndexIter;
use crate::table::prefetch::Prefetcher;
use crate::table::reader::TableReader;
use crate::table::two_level::{BlockSource, TwoLevelIter};

/// Iterates a table's entries in internal-key order, in both directions.
#[derive(Debug)]
pub struct TableIterator {
    inner: TwoLevelIter<IndexIter<Arc<TableReader>>, DataBlocks>,
    table: Arc<TableReader>,
    /// The last seek was confined to a prefix the table's filter proved
    /// absent: invalid until the next positioning call.
    skipped: bool,
    /// The table's global seqno, copied here: `key` asks on every call,
    /// and a scan must not chase the table pointer for it.
    global_seqno: Option<SequenceNumber>,
    /// With a global seqno, the current key with its sequence number
    /// rewritten (empty when not valid); unused otherwise.
    patched: Vec<u8>,
}

/// Data blocks read for an iterator: from the cache, else through its
/// readahead.
#[derive(Debug)]
struct DataBlocks {
    table: Arc<TableReader>,
    verify_checksums: bool,
    /// Insert blocks read on a cache miss (`ReadOptions::fill_cache`).
    fill_cache: bool,
    /// Readahead for the blocks the cache misses.
    prefetch: Prefetcher,
}

impl BlockSource for DataBlocks {
    fn load(&mut self, handle: BlockHandle) -> Result<Block> {
        self.table.read_data_block_with(
            handle,
            self.verify_checksums,
            self.fill_cache,
            Some(&mut self.prefetch),
        )
    }
}

impl TableIterator {
    pub(crate) fn new(table: Arc<TableReader>, options: &ReadOptions) -> Self {
        // An index that cannot be loaded leaves the iterator empty, with the
        // error in `status()`.
        let (index, error) = match IndexIter::new(table.clone(), options.fill_cache) {
            Ok(index) => (index, None),
            Err(e) => {
                let origin = BlockOrigin {
                    file: Arc::from(table.path()),
                    offset: 0,
                };
                (
                    IndexIter::Block(Block::empty(origin).iter(table.order.clone())),
                    Some(e),
                )
            }
        };
        let data = DataBlocks {
            table: table.clone(),
            verify_checksums: options.verify_checksums,
            fill_cache: options.fill_cache,
            prefetch: Prefetcher::new(options.readahead_size),
        };
        TableIterator {
            inner: TwoLevelIter::new(index, data, table.order.clone(), error),
            global_seqno: table.global_seqno,
            table,
            skipped: false,
            patched: Vec::new(),
        }
    }

    /// Rewrites the current key's sequence number to the table's global
    /// seqno, if it has one. A key too short for a tag is copied as it is,
    /// for whoever parses it to report.
    #[inline]
    fn patch(&mut self) {
        let Some(seq) = self.global_seqno else {
            return;
        };
        self.patched.clear();
        if !self.inner.valid() {
            return;
        }
        let key = self.inner.key();
        match key.len().checked_sub(TAG_LEN) {
            Some(at) => {
                let type_code = key[at];
                self.patched.extend_from_slice(&key[..at]);
                self.patched
                    .extend_from_slice(&pack_tag(seq, type_code).to_le_bytes());
            }
            None => self.patched.extend_from_slice(key),
        }
    }

    fn seek_any(&mut self, target: &[u8]) {
        if self.global_seqno.is_none() {
            return self.inner.seek(target);
        }
        // The stored keys are at 0, below any target of their user key:
        // land on the user key, then step over it if its global seqno puts
        // it before the target.
        self.inner
            .seek(&seek_key(user_key(target), MAX_SEQUENCE_NUMBER));
        self.patch();
        if self.inner.valid()
            && self
                .table
                .order
                .compare_internal(&self.patched, target)
                .is_lt()
        {
            self.inner.next();
        }
        self.patch();
    }
}

impl InternalIterator for TableIterator {
    fn valid(&self) -> bool {
        !self.skipped && self.inner.valid()
    }

    fn seek_to_first(&mut self) {
        self.skipped = false;
        self.inner.seek_to_first();
        self.patch();
    }

    fn seek_to_last(&mut self) {
        self.skipped = false;
        self.inner.seek_to_last();
        self.patch();
    }

    fn seek(&mut self, target: &[u8]) {
        self.skipped = false;
        self.seek_any(target);
    }

    fn seek_in_prefix(&mut self, target: &[u8], extractor: &PrefixExtractor, prefix: &[u8]) {
        // No key of the prefix at or after the target here: the caller
        // reads nothing past the prefix, so the table has nothing for it.
        self.skipped =
            !self
                .table
                .prefix_may_match(extractor, crate::key::user_key(target), prefix);
        if !self.skipped {
            self.seek_any(target);
        }
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.skipped = false;
        if self.global_seqno.is_none() {
            return self.inner.seek_for_prev(target);
        }
        // The last stored entry at or before the target's user key (tag 0
        // sorts last among its versions), stepped back over if its global
        // seqno puts it after the target.
        let mut last_of_user_key = user_key(target).to_vec();
        last_of_user_key.extend_from_slice(&[0; TAG_LEN]);
        self.inner.seek_for_prev(&last_of_user_key);
        self.patch();
        if self.inner.valid()
            && self
                .table
                .order
                .compare_internal(&self.patched, target)
                .is_gt()
        {
            self.inner.prev();
        }
        self.patch();
    }

    fn next(&mut self) {
        self.inner.next();
        self.patch();
    }

    fn prev(&mut self) {
        self.inner.prev();
        self.patch();
    }

    fn key(&self) -> &[u8] {
        if self.global_seqno.is_some() {
            return &self.patched;
        }
        self.inner.key()
    }

    fn value(&self) -> &[u8] {
        self.inner.value()
    }

    fn status(&self) -> Result<()> {
        self.inner.status()
    }
}
