//! The sharded LRU cache (`cache_type=lru_cache`), in the design of RocksDB's
//! `LRUCache`: `2^num_shard_bits` shards, each behind its own mutex, with a hash
//! map from key to a slab slot and LRU lists holding only unpinned entries.
//!
//! An entry is in one of three states: pinned and in the cache (in the map, in
//! no list), unpinned and in the cache (in the map and in one list: evictable),
//! or pinned and erased (in neither; freed when its last handle goes).
//!
//! Priority pools: `high_pri_pool_ratio` of the capacity for the high pool,
//! `low_pri_pool_ratio` for the low pool, the rest is the bottom pool. An
//! unpinned entry goes to the top existing pool if it is high priority or was
//! hit again since its insert, to the next pool down if low priority, to the
//! bottom otherwise; when a pool is over its share its oldest entries move one
//! pool down; eviction takes the bottom pool's oldest first, then low, then
//! high. "Existing" matters: with a low pool but no high pool, index and filter
//! blocks go to the low pool and data blocks to the bottom, never the reverse.
//! With both ratios 0 there is one list and no moves between pools.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{Cache, CacheHandle, CacheKey, CacheValue, Priority, Release, TableIds};
use crate::error::{Error, Result};

/// Bytes an entry costs beyond its value's charge (slot, map entry, key).
pub const ENTRY_OVERHEAD: usize = 96;

const NIL: u32 = u32::MAX;

/// Hashes cache keys (two integers) with one multiply per word instead of the
/// standard library's SipHash: keys come from the engine, not from an
/// adversary, and this is on every lookup.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}
/// Pools, bottom first: list index = pool.
const BOTTOM: usize = 0;
const LOW: usize = 1;
const HIGH: usize = 2;

/// How an LRU cache is built (RocksDB's `LRUCacheOptions`).
///
/// ```
/// use std::sync::Arc;
/// use strata::cache::lru::{LruCache, LruOptions};
/// use strata::cache::{Cache, CacheKey, Priority};
/// use strata::Error;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let defaults = LruOptions::new(1 << 20);
/// assert_eq!((defaults.high_pri_pool_ratio, defaults.low_pri_pool_ratio), (0.5, 0.0));
/// let strict = LruOptions {
///     strict_capacity_limit: true,
///     num_shard_bits: Some(0),
///     ..LruOptions::new(4096)
/// };
/// let cache = LruCache::new(strict)?;
/// // While one entry is pinned, a second that would overflow is refused.
/// let key = |offset| CacheKey { table_id: 1, offset };
/// let _pinned = cache.insert(key(0), Arc::new(()), 3000, Priority::Low)?;
/// let next = cache.insert(key(1), Arc::new(()), 3000, Priority::Low);
/// assert!(matches!(next, Err(Error::CacheFull { .. })));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LruOptions {
    /// Bytes the cache may hold.
    pub capacity: usize,
    /// Shards are `2^num_shard_bits`; `None` picks the default (shards of at
    /// least [`MIN_DEFAULT_SHARD_BYTES`], at most 64 shards).
    pub num_shard_bits: Option<u32>,
    /// An insert that cannot fit fails instead of exceeding the capacity.
    pub strict_capacity_limit: bool,
    /// Share of the capacity for high-priority entries (and entries hit twice).
    pub high_pri_pool_ratio: f64,
    /// Share of the capacity for low-priority entries.
    pub low_pri_pool_ratio: f64,
}

impl LruOptions {
    /// RocksDB's defaults for a cache of `capacity` bytes: ratios 0.5 and 0.
    pub fn new(capacity: usize) -> Self {
        LruOptions {
            capacity,
            num_shard_bits: None,
            strict_capacity_limit: false,
            high_pri_pool_ratio: 0.5,
            low_pri_pool_ratio: 0.0,
        }
    }
}

/// The smallest shard the default shard count makes. RocksDB's
/// `GetDefaultCacheShardBits` uses 512 KiB; Strata uses 2 MiB, because a
/// table's index and filter blocks must fit in one shard together or reads
/// evict one to load the other, every time. A table flushed from the default
/// 64 MiB memtable has a 10-bit filter of about 520 KiB and an index of about
/// 360 KiB: with 512 KiB shards (an 8 MiB cache, 16 shards) and
/// `cache_index_and_filter_blocks`, `readrandom` fell from 201K to 21K reads/s
/// (`strata-bench`, 1M keys of 16+100 bytes); with 2 MiB shards it does not.
pub const MIN_DEFAULT_SHARD_BYTES: usize = 2 << 20;

/// One more bit per doubling above [`MIN_DEFAULT_SHARD_BYTES`] per shard, at
/// most 6 (RocksDB's rule, with a larger minimum shard).
pub fn default_shard_bits(capacity: usize) -> u32 {
    let mut shards = capacity / MIN_DEFAULT_SHARD_BYTES;
    let mut bits = 0;
    while shards > 1 && bits < 6 {
        shards >>= 1;
        bits += 1;
    }
    bits
}

#[derive(Debug)]
struct Entry {
    key: CacheKey,
    value: Option<CacheValue>,
    charge: usize,
    priority: Priority,
    refs: u32,
    in_cache: bool,
    /// Looked up again since inserted: promoted to the top pool.
    hit: bool,
    /// The list the entry is in, if any.
    pool: Option<usize>,
    prev: u32,
    next: u32,
}

/// One doubly linked list through the slab: `head` is the newest entry.
#[derive(Debug, Clone, Copy)]
struct List {
    head: u32,
    tail: u32,
    usage: usize,
}

#[derive(Debug)]
struct Shard {
    capacity: usize,
    usage: usize,
    pinned: usize,
    pool_capacity: [usize; 3],
    map: HashMap<CacheKey, u32, BuildHasherDefault<KeyHasher>>,
    slab: Vec<Entry>,
    free: Vec<u32>,
    lists: [List; 3],
}

impl Shard {
    fn new(capacity: usize, high: f64, low: f64) -> Shard {
        let mut shard = Shard {
            capacity: 0,
            usage: 0,
            pinned: 0,
            pool_capacity: [0; 3],
            map: HashMap::default(),
            slab: Vec::new(),
            free: Vec::new(),
            lists: [List {
                head: NIL,
                tail: NIL,
                usage: 0,
            }; 3],
        };
        shard.set_capacity(capacity, high, low);
        shard
    }

    fn set_capacity(&mut self, capacity: usize, high: f64, low: f64) {
        self.capacity = capacity;
        self.pool_capacity[HIGH] = (capacity as f64 * high) as usize;
        self.pool_capacity[LOW] = (capacity as f64 * low) as usize;
        self.pool_capacity[BOTTOM] = usize::MAX;
        self.rebalance();
        self.evict_to(self.capacity);
    }

    /// The top pool that exists (the bottom pool always does).
    fn pool_for(&self, e: &Entry) -> usize {
        let exists = |pool: usize| pool == BOTTOM || self.pool_capacity[pool] > 0;
        let top = [HIGH, LOW, BOTTOM]
            .into_iter()
            .find(|&p| exists(p))
            .unwrap_or(BOTTOM);
        if e.hit || e.priority == Priority::High {
            return top;
        }
        if e.priority == Priority::Bottom {
            return BOTTOM;
        }
        // Low priority: strictly below where high-priority entries go, so
        // metadata always outranks data; the low pool if that is below top.
        if top == HIGH && exists(LOW) {
            LOW
        } else {
            BOTTOM
        }
    }

    fn unlink(&mut self, id: u32) {
        let (prev, next, pool, charge) = {
            let e = &self.slab[id as usize];
            (e.prev, e.next, e.pool, e.charge)
        };
        let Some(pool) = pool else { return };
        let list = &mut self.lists[pool];
        if prev == NIL {
            list.head = next;
        } else {
            self.slab[prev as usize].next = next;
        }
        let list = &mut self.lists[pool];
        if next == NIL {
            list.tail = prev;
        } else {
            self.slab[next as usize].prev = prev;
        }
        self.lists[pool].usage -= charge;
        let e = &mut self.slab[id as usize];
        e.pool = None;
        e.prev = NIL;
        e.next = NIL;
    }

    /// Makes `id` the newest entry of `pool`.
    fn push_front(&mut self, id: u32, pool: usize) {
        let old_head = self.lists[pool].head;
        {
            let e = &mut self.slab[id as usize];
            e.pool = Some(pool);
            e.prev = NIL;
            e.next = old_head;
        }
        if old_head == NIL {
            self.lists[pool].tail = id;
        } else {
            self.slab[old_head as usize].prev = id;
        }
        self.lists[pool].head = id;
        self.lists[pool].usage += self.slab[id as usize].charge;
    }

    /// Moves the oldest entries of over-full pools one pool down.
    fn rebalance(&mut self) {
        for (pool, below) in [(HIGH, LOW), (LOW, BOTTOM)] {
            while self.lists[pool].usage > self.pool_capacity[pool] {
                let oldest = self.lists[pool].tail;
                if oldest == NIL {
                    break;
                }
                self.unlink(oldest);
                // Demoted past a missing low pool straight to the bottom.
                let target = if below == LOW && self.pool_capacity[LOW] == 0 {
                    BOTTOM
                } else {
                    below
                };
                self.push_front(oldest, target);
            }
        }
    }

    /// Evicts unpinned entries, bottom pool first, until usage <= `limit`.
    fn evict_to(&mut self, limit: usize) {
        for pool in [BOTTOM, LOW, HIGH] {
            while self.usage > limit {
                let oldest = self.lists[pool].tail;
                if oldest == NIL {
                    break;
                }
                self.unlink(oldest);
                let key = self.slab[oldest as usize].key;
                self.map.remove(&key);
                self.slab[oldest as usize].in_cache = false;
                self.free_entry(oldest);
            }
        }
    }

    fn free_entry(&mut self, id: u32) {
        let e = &mut self.slab[id as usize];
        self.usage -= e.charge;
        e.value = None;
        self.free.push(id);
    }

    /// Takes `id` out of the cache (it stays alive while pinned).
    fn detach(&mut self, id: u32) {
        self.unlink(id);
        let e = &mut self.slab[id as usize];
        e.in_cache = false;
        if e.refs == 0 {
            self.free_entry(id);
        }
    }

    fn insert(
        &mut self,
        key: CacheKey,
        value: CacheValue,
        charge: usize,
        priority: Priority,
        strict: bool,
    ) -> Result<u32> {
        if let Some(old) = self.map.remove(&key) {
            self.detach(old);
        }
        self.evict_to(self.capacity.saturating_sub(charge));
        if strict && self.usage + charge > self.capacity {
            return Err(Error::CacheFull {
                reason: format!(
                    "block cache full: {} bytes pinned of {} and an entry of {charge} bytes",
                    self.pinned, self.capacity
                ),
            });
        }
        let entry = Entry {
            key,
            value: Some(value),
            charge,
            priority,
            refs: 1,
            in_cache: true,
            hit: false,
            pool: None,
            prev: NIL,
            next: NIL,
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.slab[id as usize] = entry;
                id
            }
            None => {
                self.slab.push(entry);
                u32::try_from(self.slab.len() - 1).unwrap_or(NIL)
            }
        };
        self.map.insert(key, id);
        self.usage += charge;
        self.pinned += charge;
        Ok(id)
    }

    fn lookup(&mut self, key: &CacheKey) -> Option<(u32, CacheValue)> {
        let id = *self.map.get(key)?;
        let value = self.slab[id as usize].value.clone()?;
        if self.slab[id as usize].refs == 0 {
            self.unlink(id);
            self.pinned += self.slab[id as usize].charge;
        }
        let e = &mut self.slab[id as usize];
        e.refs += 1;
        e.hit = true;
        Some((id, value))
    }

    fn release(&mut self, id: u32) {
        let Some(e) = self.slab.get_mut(id as usize) else {
            return;
        };
        e.refs = e.refs.saturating_sub(1);
        if e.refs > 0 {
            return;
        }
        let charge = e.charge;
        self.pinned -= charge;
        if !self.slab[id as usize].in_cache {
            self.free_entry(id);
            return;
        }
        let pool = self.pool_for(&self.slab[id as usize]);
        self.push_front(id, pool);
        self.rebalance();
        self.evict_to(self.capacity);
    }
}

struct Shards {
    shards: Vec<Mutex<Shard>>,
    mask: u64,
}

impl Release for Shards {
    fn release(&self, token: u64) {
        let (shard, id) = ((token >> 32) as usize, token as u32);
        if let Some(s) = self.shards.get(shard) {
            s.lock().release(id);
        }
    }
}

/// The sharded LRU cache.
///
/// ```
/// use std::sync::Arc;
/// use strata::cache::lru::{LruCache, LruOptions};
/// use strata::cache::{Cache, CacheKey, Priority};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let cache = LruCache::new(LruOptions { num_shard_bits: Some(0), ..LruOptions::new(2000) })?;
/// let key = |offset| CacheKey { table_id: 1, offset };
/// for offset in 0..3 {
///     cache.insert(key(offset), Arc::new(offset), 800, Priority::Low)?;
/// }
/// // The third insert evicted the least recently used entry.
/// assert!(cache.lookup(&key(0)).is_none());
/// assert!(cache.lookup(&key(2)).is_some());
/// assert!(cache.usage() <= cache.capacity());
/// # Ok(())
/// # }
/// ```
pub struct LruCache {
    /// For `set_capacity` and `capacity`; inserts read `strict` instead, so
    /// no insert takes a lock shared by every shard.
    options: Mutex<LruOptions>,
    strict: bool,
    shards: Arc<Shards>,
    ids: TableIds,
}

impl std::fmt::Debug for LruCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LruCache")
            .field("options", &*self.options.lock())
            .field("shards", &self.shards.shards.len())
            .finish_non_exhaustive()
    }
}

impl LruCache {
    /// A cache as `options` say. Ratios must be within 0..=1 and sum to at
    /// most 1.
    pub fn new(options: LruOptions) -> Result<LruCache> {
        let ratio_ok = |r: f64| (0.0..=1.0).contains(&r);
        if !ratio_ok(options.high_pri_pool_ratio)
            || !ratio_ok(options.low_pri_pool_ratio)
            || options.high_pri_pool_ratio + options.low_pri_pool_ratio > 1.0
        {
            return Err(Error::invalid_argument(
                "high_pri_pool_ratio",
                format!(
                    "ratios {} and {} must be within 0..=1 and sum to at most 1",
                    options.high_pri_pool_ratio, options.low_pri_pool_ratio
                ),
            ));
        }
        let bits = options
            .num_shard_bits
            .unwrap_or_else(|| default_shard_bits(options.capacity));
        if bits > 20 {
            return Err(Error::invalid_argument(
                "num_shard_bits",
                format!("{bits} is above 20"),
            ));
        }
        let count = 1usize << bits;
        let per_shard = options.capacity.div_ceil(count);
        let shards = (0..count)
            .map(|_| {
                Mutex::new(Shard::new(
                    per_shard,
                    options.high_pri_pool_ratio,
                    options.low_pri_pool_ratio,
                ))
            })
            .collect();
        Ok(LruCache {
            strict: options.strict_capacity_limit,
            options: Mutex::new(options),
            shards: Arc::new(Shards {
                shards,
                mask: count as u64 - 1,
            }),
            ids: TableIds::default(),
        })
    }

    fn shard_of(&self, key: &CacheKey) -> usize {
        // The high bits pick the shard; the map hashes the key itself.
        ((key.hash() >> 40) & self.shards.mask) as usize
    }

    fn sum(&self, f: impl Fn(&Shard) -> usize) -> usize {
        self.shards.shards.iter().map(|s| f(&s.lock())).sum()
    }
}

impl Cache for LruCache {
    fn insert(
        &self,
        key: CacheKey,
        value: CacheValue,
        charge: usize,
        priority: Priority,
    ) -> Result<CacheHandle> {
        let shard = self.shard_of(&key);
        let charge = charge + ENTRY_OVERHEAD;
        let id = self.shards.shards[shard].lock().insert(
            key,
            value.clone(),
            charge,
            priority,
            self.strict,
        )?;
        let token = ((shard as u64) << 32) | u64::from(id);
        Ok(CacheHandle::new(value, self.shards.clone(), token))
    }

    fn lookup(&self, key: &CacheKey) -> Option<CacheHandle> {
        let shard = self.shard_of(key);
        let (id, value) = self.shards.shards[shard].lock().lookup(key)?;
        let token = ((shard as u64) << 32) | u64::from(id);
        Some(CacheHandle::new(value, self.shards.clone(), token))
    }

    fn erase(&self, key: &CacheKey) {
        let mut shard = self.shards.shards[self.shard_of(key)].lock();
        if let Some(id) = shard.map.remove(key) {
            shard.detach(id);
        }
    }

    fn capacity(&self) -> usize {
        self.options.lock().capacity
    }

    fn usage(&self) -> usize {
        self.sum(|s| s.usage)
    }

    fn pinned_usage(&self) -> usize {
        self.sum(|s| s.pinned)
    }

    fn set_capacity(&self, capacity: usize) {
        let mut options = self.options.lock();
        options.capacity = capacity;
        let per_shard = capacity.div_ceil(self.shards.shards.len());
        for s in &self.shards.shards {
            s.lock().set_capacity(
                per_shard,
                options.high_pri_pool_ratio,
                options.low_pri_pool_ratio,
            );
        }
    }

    fn new_table_id(&self) -> u64 {
        self.ids.next()
    }
}

#[cfg(test)]
#[path = "lru_tests.rs"]
mod tests;
