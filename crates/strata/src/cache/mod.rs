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
///
/// ```
/// use std::sync::Arc;
/// use strata::cache::lru::{LruCache, LruOptions};
/// use strata::cache::{Cache, CacheKey, CacheValue, Priority};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let cache = LruCache::new(LruOptions::new(1 << 20))?;
/// let value: CacheValue = Arc::new(String::from("a decoded block"));
/// let key = CacheKey { table_id: cache.new_table_id(), offset: 0 };
/// let handle = cache.insert(key, value, 15, Priority::Low)?;
/// let block = handle.value().downcast_ref::<String>();
/// assert_eq!(block.map(String::as_str), Some("a decoded block"));
/// # Ok(())
/// # }
/// ```
pub type CacheValue = Arc<dyn Any + Send + Sync>;

/// Names one cached block. `table_id` comes from [`Cache::new_table_id`], so
/// keys never collide between files, reopens, or databases sharing a cache.
///
/// ```
/// use strata::cache::lru::{LruCache, LruOptions};
/// use strata::cache::{Cache, CacheKey};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let cache = LruCache::new(LruOptions::new(1 << 20))?;
/// // Fresh table ids keep keys of different files apart.
/// let (t1, t2) = (cache.new_table_id(), cache.new_table_id());
/// assert_ne!(t1, t2);
/// let a = CacheKey { table_id: t1, offset: 4096 };
/// let b = CacheKey { table_id: t2, offset: 4096 };
/// assert_ne!(a, b);
/// assert_eq!(a.hash(), CacheKey { table_id: t1, offset: 4096 }.hash());
/// # Ok(())
/// # }
/// ```
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
///
/// ```
/// use std::sync::Arc;
/// use strata::cache::lru::{LruCache, LruOptions};
/// use strata::cache::{Cache, CacheKey, Priority};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// assert!(Priority::Bottom < Priority::Low && Priority::Low < Priority::High);
/// let cache = LruCache::new(LruOptions { num_shard_bits: Some(0), ..LruOptions::new(500) })?;
/// let index = CacheKey { table_id: 1, offset: 0 };
/// let data = CacheKey { table_id: 1, offset: 100 };
/// cache.insert(index, Arc::new(()), 100, Priority::High)?;
/// cache.insert(data, Arc::new(()), 100, Priority::Low)?;
/// // Shrinking evicts the low-priority entry first.
/// cache.set_capacity(250);
/// assert!(cache.lookup(&index).is_some());
/// assert!(cache.lookup(&data).is_none());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    Bottom,
    Low,
    High,
}

/// Releases a pinned entry; implemented by each cache.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use strata::cache::Release;
///
/// /// Counts unpins, as a cache's bookkeeping would.
/// struct Unpins(AtomicU64);
///
/// impl Release for Unpins {
///     fn release(&self, _token: u64) {
///         self.0.fetch_add(1, Ordering::Relaxed);
///     }
/// }
///
/// let unpins = Unpins(AtomicU64::new(0));
/// unpins.release(7);
/// assert_eq!(unpins.0.load(Ordering::Relaxed), 1);
/// ```
pub trait Release: Send + Sync {
    /// Unpins the entry `token` names.
    fn release(&self, token: u64);
}

/// A pinned cache entry. Dropping it unpins the entry.
///
/// ```
/// use std::sync::Arc;
/// use strata::cache::lru::{LruCache, LruOptions};
/// use strata::cache::{Cache, CacheKey, Priority};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let cache = LruCache::new(LruOptions::new(1 << 20))?;
/// let key = CacheKey { table_id: cache.new_table_id(), offset: 0 };
/// let handle = cache.insert(key, Arc::new(7u64), 1000, Priority::Low)?;
/// assert_eq!(handle.value().downcast_ref::<u64>(), Some(&7));
/// assert!(cache.pinned_usage() >= 1000, "pinned while the handle lives");
/// drop(handle);
/// assert_eq!(cache.pinned_usage(), 0);
/// assert!(cache.lookup(&key).is_some(), "still cached once unpinned");
/// # Ok(())
/// # }
/// ```
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
///
/// ```
/// use std::sync::Arc;
/// use strata::cache::clock::{ClockCache, ClockOptions};
/// use strata::cache::lru::{LruCache, LruOptions};
/// use strata::cache::Cache;
/// use strata::{Db, DbOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let lru = LruCache::new(LruOptions::new(8 << 20))?;
/// let clock = ClockCache::new(ClockOptions {
///     capacity: 8 << 20,
///     estimated_entry_charge: 4096,
///     strict_capacity_limit: false,
/// })?;
/// let caches: [Arc<dyn Cache>; 2] = [Arc::new(lru), Arc::new(clock)];
/// for cache in caches {
///     assert_eq!(cache.capacity(), 8 << 20);
///     # let dir = tempfile::tempdir()?;
///     let block_cache = Some(cache.clone());
///     let options = DbOptions { create_if_missing: true, block_cache, ..Default::default() };
///     let db = Db::open(dir.path(), options)?;
///     db.put("k", "v")?;
///     db.flush()?;
///     assert!(db.get("k")?.is_some());
///     assert!(cache.usage() > 0, "the table's blocks were cached");
/// }
/// # Ok(())
/// # }
/// ```
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
