//! The block cache: decoded blocks shared between reads, by (table, offset).
//!
//! [`Cache`] is the interface the table reader uses; [`lru::LruCache`] is the
//! sharded LRU cache with high/low/bottom priority pools. A lookup returns a
//! [`CacheHandle`] that pins the entry (it cannot be evicted, and its charge
//! counts as pinned) until the handle is dropped.

pub mod clock;
pub mod lru;
mod sync;

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::Result;

/// What the cache holds: a decoded block (or any shared value).
pub type CacheValue = Arc<dyn Any + Send + Sync>;

/// Names one cached block. `table_id` comes from [`Cache::new_table_id`], so
/// keys never collide between files, reopens, or databases sharing a cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheKey {
    pub table_id: u64,
    pub offset: u64,
}

impl CacheKey {
    /// A well-mixed hash: picks the shard and the hash table bucket.
    pub fn hash(&self) -> u64 {
        let mut h = self.table_id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ self.offset;
        h ^= h >> 33;
        h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
        h ^ (h >> 33)
    }
}

/// Eviction priority: bottom entries go first, then low, then high. Index and
/// filter blocks are high, data blocks low, blob values (later) bottom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    Bottom,
    Low,
    High,
}

/// Releases a pinned entry; implemented by each cache.
pub trait Release: Send + Sync {
    /// Unpins the entry `token` names.
    fn release(&self, token: u64);
}

/// A pinned cache entry. Dropping it unpins the entry.
pub struct CacheHandle {
    value: CacheValue,
    owner: Arc<dyn Release>,
    token: u64,
}

impl CacheHandle {
    pub(crate) fn new(value: CacheValue, owner: Arc<dyn Release>, token: u64) -> Self {
        CacheHandle {
            value,
            owner,
            token,
        }
    }

    /// The cached value.
    pub fn value(&self) -> &CacheValue {
        &self.value
    }
}

impl Drop for CacheHandle {
    fn drop(&mut self) {
        self.owner.release(self.token);
    }
}

impl fmt::Debug for CacheHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CacheHandle")
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

/// A cache of blocks, shareable between tables and databases.
pub trait Cache: Send + Sync + fmt::Debug {
    /// Inserts `value` under `key` (replacing any entry there) and returns it
    /// pinned. `charge` is the value's size in bytes; the cache adds its own
    /// per-entry overhead. With a strict capacity limit, an insert that cannot
    /// fit after evicting every unpinned entry fails with `CacheFull`.
    fn insert(
        &self,
        key: CacheKey,
        value: CacheValue,
        charge: usize,
        priority: Priority,
    ) -> Result<CacheHandle>;
    /// The entry under `key`, pinned.
    fn lookup(&self, key: &CacheKey) -> Option<CacheHandle>;
    /// Removes the entry; a pinned one is freed when its last handle goes.
    fn erase(&self, key: &CacheKey);
    /// Bytes the cache may hold.
    fn capacity(&self) -> usize;
    /// Bytes held (entries in the cache plus erased ones still pinned).
    fn usage(&self) -> usize;
    /// Bytes held by pinned entries.
    fn pinned_usage(&self) -> usize;
    /// Changes the capacity, evicting unpinned entries as needed.
    fn set_capacity(&self, capacity: usize);
    /// A table id never handed out before by this cache.
    fn new_table_id(&self) -> u64;
}

/// Hands out table ids for one cache instance.
#[derive(Debug, Default)]
pub(crate) struct TableIds(AtomicU64);

impl TableIds {
    pub(crate) fn next(&self) -> u64 {
        self.0.fetch_add(1, Ordering::Relaxed) + 1
    }
}
