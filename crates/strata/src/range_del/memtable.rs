//! The memtable's range tombstones: concurrent appends, cached fragmented views.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;
use parking_lot::Mutex;

use super::{FragmentedRangeTombstones, RangeTombstone};
use crate::error::Result;
use crate::key::SequenceNumber;
use crate::key_order::KeyComparator;

/// Bookkeeping charged per tombstone on top of its keys: the entry in the
/// append list and its share of a fragmented view.
const PER_TOMBSTONE_OVERHEAD_BYTES: usize = 2 * std::mem::size_of::<RangeTombstone>();

/// The range tombstones of one memtable.
///
/// Writers append from several threads at once (the write path inserts a
/// group's batches in parallel); each append takes a mutex for a push and
/// bumps a count. Readers call [`fragmented`](Self::fragmented) on every get
/// and iterator creation: it returns the view cached for the current count,
/// and fragments again only when tombstones arrived since the view was built.
///
/// Consistency: the tombstones form an append-only list, and a view of count
/// `c` holds exactly its first `c` entries. A writer bumps the count inside the
/// mutex after its push, and the commit pipeline publishes a sequence number
/// only after every insert at or below it returned; so a reader that loaded a
/// published sequence number before asking for a view sees every tombstone
/// at or below it. Tombstones above its sequence number may be in the view too;
/// the queries' `read_seq` hides them.
#[derive(Debug)]
pub struct RangeDelMemTable {
    order: KeyComparator,
    tombstones: Mutex<Vec<RangeTombstone>>,
    /// Length of `tombstones`, readable without the mutex.
    count: AtomicUsize,
    memory_bytes: AtomicUsize,
    cached: ArcSwap<CachedView>,
}

#[derive(Debug, Default)]
struct CachedView {
    /// How many tombstones (a prefix of the list) the view was built from.
    count: usize,
    view: Arc<FragmentedRangeTombstones>,
}

impl Default for RangeDelMemTable {
    fn default() -> Self {
        RangeDelMemTable::new(&KeyComparator::Bytewise)
    }
}

impl RangeDelMemTable {
    /// An empty table for keys in `order`.
    pub fn new(order: &KeyComparator) -> Self {
        RangeDelMemTable {
            order: order.clone(),
            tombstones: Mutex::new(Vec::new()),
            count: AtomicUsize::new(0),
            memory_bytes: AtomicUsize::new(0),
            cached: ArcSwap::from_pointee(CachedView {
                count: 0,
                view: Arc::new(FragmentedRangeTombstones::empty(order)),
            }),
        }
    }

    /// Adds `[start, end)@seq`; an empty range is
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming
    /// `delete_range`. Safe to call from several threads at once.
    pub fn add(&self, seq: SequenceNumber, start: &[u8], end: &[u8]) -> Result<()> {
        let t = RangeTombstone::new(start.to_vec(), end.to_vec(), seq, &self.order)?;
        self.insert(t);
        Ok(())
    }

    /// Adds a tombstone. Safe to call from several threads at once.
    pub fn insert(&self, tombstone: RangeTombstone) {
        let bytes = tombstone.start.len() + tombstone.end.len() + PER_TOMBSTONE_OVERHEAD_BYTES;
        let mut list = self.tombstones.lock();
        list.push(tombstone);
        // Inside the mutex, so counts and list prefixes always agree.
        self.count.store(list.len(), Ordering::Release);
        drop(list);
        self.memory_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Number of tombstones added.
    pub fn len(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// True when no tombstone was added.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the tombstones take, to count toward the memtable's size.
    pub fn memory_usage(&self) -> usize {
        self.memory_bytes.load(Ordering::Relaxed)
    }

    /// The tombstones added so far, fragmented. Cheap when none arrived
    /// since the last call (one atomic load and an `Arc` clone); otherwise
    /// this call fragments them and caches the result for the next readers.
    pub fn fragmented(&self) -> Arc<FragmentedRangeTombstones> {
        let count = self.count.load(Ordering::Acquire);
        let cached = self.cached.load();
        if cached.count >= count {
            return cached.view.clone();
        }
        // Copy the list (cheap: keys are shared `Bytes`) so writers wait only
        // for the copy, not for the fragmenting.
        let prefix: Vec<RangeTombstone> = self.tombstones.lock().clone();
        let built = Arc::new(CachedView {
            count: prefix.len(),
            view: Arc::new(FragmentedRangeTombstones::new(prefix, &self.order)),
        });
        // Publish unless a reader already published a view at least as new.
        self.cached.rcu(|current| {
            if current.count >= built.count {
                current.clone()
            } else {
                built.clone()
            }
        });
        built.view.clone()
    }
}
