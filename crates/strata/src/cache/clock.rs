//! The clock cache (`cache_type=clock_cache`), in the idea of RocksDB's
//! HyperClockCache: a fixed table of slots, each with one atomic meta word
//! (state, reference count, clock countdown), so that lookups and releases
//! take no lock. Inserts, erases and evictions (the clock sweep) serialize on
//! one mutex; values they free are dropped after it is released.
//!
//! An entry lives within `PROBE` slots of its home slot (linear probing).
//! Each slot counts the entries stored past it whose probe passed over it
//! (`displacements`), so a lookup stops at the first slot that neither holds
//! its key nor was passed over: a miss usually costs one or two slots, not
//! the whole window. A lookup racing a writer may stop early and miss; a
//! cache may always miss.
//!
//! Slot protocol (the meta word is the only synchronization of a slot):
//! - a lookup adds a reference with one `fetch_add`; if the word it replaced
//!   was not `VISIBLE` it takes the reference back and moves on. With a
//!   reference held on a visible slot, the slot cannot be freed: the sweep and
//!   erase free only slots whose word shows zero references (a compare and
//!   swap), so key and value stay put until the reference is released;
//! - stray references (taken from a slot that was not visible) are tolerated
//!   everywhere: the writer changes state with read-modify-write operations
//!   that keep the reference bits;
//! - a slot's key, charge and value are written only in state `CONSTRUCTING`,
//!   by the mutex holder, and published `VISIBLE` with release ordering;
//! - erase marks a referenced entry `INVISIBLE`; the release that takes its
//!   count to zero frees it (under the mutex).
//!
//! Priorities are initial clock counts: the sweep frees an unreferenced entry
//! whose count is zero and decrements the others, so high-priority entries
//! survive three sweeps, low two, bottom one. A hit resets the count.

use std::cell::UnsafeCell;
use std::sync::Arc;

use super::sync::{AtomicU64, AtomicUsize, Mutex, Ordering};
use super::{Cache, CacheHandle, CacheKey, CacheValue, Priority, Release, TableIds};
use crate::error::{Error, Result};

const REFS: u64 = 0xFFFF_FFFF;
const ONE_REF: u64 = 1;
const STATE_SHIFT: u32 = 32;
const STATE_MASK: u64 = 0b11 << STATE_SHIFT;
const EMPTY: u64 = 0;
const CONSTRUCTING: u64 = 1 << STATE_SHIFT;
const VISIBLE: u64 = 2 << STATE_SHIFT;
const INVISIBLE: u64 = 3 << STATE_SHIFT;
const CLOCK_SHIFT: u32 = 34;
const CLOCK_MASK: u64 = 0b11 << CLOCK_SHIFT;
const PRIO_SHIFT: u32 = 36;
const PRIO_MASK: u64 = 0b11 << PRIO_SHIFT;

/// Slots an entry may be placed in, from its home slot on.
const PROBE: usize = 16;
/// Token of a handle whose value could not be placed in the table.
const DETACHED: u64 = u64::MAX;

fn state(meta: u64) -> u64 {
    meta & STATE_MASK
}

fn refs(meta: u64) -> u64 {
    meta & REFS
}

fn clock_for(priority: Priority) -> u64 {
    match priority {
        Priority::High => 3,
        Priority::Low => 2,
        Priority::Bottom => 1,
    }
}

struct Slot {
    meta: AtomicU64,
    /// Entries stored past this slot whose probe passed over it. Changed
    /// only by the mutex holder.
    displacements: AtomicUsize,
    table_id: AtomicU64,
    offset: AtomicU64,
    charge: AtomicUsize,
    /// Written only in state `CONSTRUCTING` by the mutex holder; read only
    /// by a thread holding a reference taken while the slot was `VISIBLE`.
    value: UnsafeCell<Option<CacheValue>>,
}

// SAFETY: every field but `value` is atomic. `value` is written (set when an
// entry is constructed, taken when it is freed) only by the writer-mutex
// holder after it moved the meta word to `CONSTRUCTING` with a compare and
// swap that required zero references, and the entry is published `VISIBLE`
// with a release store. It is read only by a lookup that added a reference
// with an acquire-release `fetch_add` that saw `VISIBLE`: that reference
// orders the read after the publication, and while it is held no writer can
// move the slot back to `CONSTRUCTING` (its compare and swap would see the
// reference), so reads and writes of `value` never overlap.
unsafe impl Sync for Slot {}

impl Slot {
    fn new() -> Slot {
        Slot {
            meta: AtomicU64::new(EMPTY),
            displacements: AtomicUsize::new(0),
            table_id: AtomicU64::new(0),
            offset: AtomicU64::new(0),
            charge: AtomicUsize::new(0),
            value: UnsafeCell::new(None),
        }
    }

    fn holds(&self, key: &CacheKey) -> bool {
        self.table_id.load(Ordering::Relaxed) == key.table_id
            && self.offset.load(Ordering::Relaxed) == key.offset
    }

    fn key(&self) -> CacheKey {
        CacheKey {
            table_id: self.table_id.load(Ordering::Relaxed),
            offset: self.offset.load(Ordering::Relaxed),
        }
    }
}

/// Values freed under the writer mutex, dropped once it is released so
/// that deallocating them does not hold up other writers.
type Freed = Vec<CacheValue>;

struct Table {
    slots: Vec<Slot>,
    mask: usize,
    usage: AtomicUsize,
    /// Serializes inserts, erases and frees; holds the clock hand.
    writer: Mutex<usize>,
    capacity: AtomicUsize,
}

impl Table {
    fn home(&self, key: &CacheKey) -> usize {
        (key.hash() as usize) & self.mask
    }

    fn window(&self, key: &CacheKey) -> impl Iterator<Item = usize> + '_ {
        let home = self.home(key);
        (0..PROBE.min(self.slots.len())).map(move |i| (home + i) & self.mask)
    }

    fn lookup(&self, key: &CacheKey) -> Option<(usize, CacheValue)> {
        for i in self.window(key) {
            let slot = &self.slots[i];
            let seen = slot.meta.load(Ordering::Acquire);
            // Check the key before taking a reference, so lookups do not
            // write to the slots of other keys.
            if state(seen) == VISIBLE && slot.holds(key) {
                let before = slot.meta.fetch_add(ONE_REF, Ordering::AcqRel);
                if state(before) == VISIBLE && slot.holds(key) {
                    // SAFETY: this thread holds a reference taken while the
                    // slot was VISIBLE; see `impl Sync for Slot`.
                    let value = unsafe { (*slot.value.get()).clone() };
                    if let Some(value) = value {
                        self.refresh_clock(slot, before);
                        return Some((i, value));
                    }
                }
                self.release(i);
            }
            if slot.displacements.load(Ordering::Acquire) == 0 {
                return None;
            }
        }
        None
    }

    /// A hit resets the countdown to the entry's priority; hot entries are
    /// already there, so most hits write nothing more.
    fn refresh_clock(&self, slot: &Slot, meta: u64) {
        let prio = (meta & PRIO_MASK) >> PRIO_SHIFT;
        if (meta & CLOCK_MASK) >> CLOCK_SHIFT != prio {
            let _ = slot
                .meta
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |m| {
                    Some((m & !CLOCK_MASK) | (prio << CLOCK_SHIFT))
                });
        }
    }

    fn release(&self, i: usize) {
        let Some(slot) = self.slots.get(i) else {
            return;
        };
        let before = slot.meta.fetch_sub(ONE_REF, Ordering::AcqRel);
        if refs(before) == 1 && state(before) == INVISIBLE {
            let mut freed = Freed::new();
            let writer = self.writer.lock();
            self.try_free(i, INVISIBLE, &mut freed);
            drop(writer);
        }
    }

    /// Frees slot `i` if it is in `from` state with no references, moving
    /// its value to `freed`. Call with the writer lock held.
    fn try_free(&self, i: usize, from: u64, freed: &mut Freed) -> bool {
        let slot = &self.slots[i];
        let m = slot.meta.load(Ordering::Acquire);
        if state(m) != from || refs(m) != 0 {
            return false;
        }
        if slot
            .meta
            .compare_exchange(m, CONSTRUCTING, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return false;
        }
        // SAFETY: the slot is CONSTRUCTING, taken from zero references, and
        // this thread holds the writer mutex; see `impl Sync for Slot`.
        if let Some(value) = unsafe { (*slot.value.get()).take() } {
            freed.push(value);
        }
        self.usage
            .fetch_sub(slot.charge.load(Ordering::Relaxed), Ordering::Relaxed);
        // The probe from the entry's home passed over every slot before it.
        let home = self.home(&slot.key());
        let mut j = home;
        while j != i {
            self.slots[j].displacements.fetch_sub(1, Ordering::Release);
            j = (j + 1) & self.mask;
        }
        // Keep any stray references a racing lookup took meanwhile.
        let _ = slot
            .meta
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |m| {
                Some((m & REFS) | EMPTY)
            });
        true
    }

    /// Runs the clock hand until `needed` more bytes fit, or a full turn and
    /// a half found nothing more to free. Call with the writer lock held.
    fn sweep(&self, hand: &mut usize, needed: usize, freed: &mut Freed) {
        let capacity = self.capacity.load(Ordering::Relaxed);
        let mut steps = 0;
        while self.usage.load(Ordering::Relaxed) + needed > capacity && steps < 3 * self.slots.len()
        {
            let i = *hand & self.mask;
            *hand = hand.wrapping_add(1);
            steps += 1;
            let slot = &self.slots[i];
            let m = slot.meta.load(Ordering::Acquire);
            if state(m) != VISIBLE || refs(m) != 0 {
                continue;
            }
            let clock = (m & CLOCK_MASK) >> CLOCK_SHIFT;
            if clock > 0 {
                let lower = (m & !CLOCK_MASK) | ((clock - 1) << CLOCK_SHIFT);
                let _ = slot
                    .meta
                    .compare_exchange(m, lower, Ordering::AcqRel, Ordering::Acquire);
            } else {
                self.try_free(i, VISIBLE, freed);
            }
        }
    }

    /// Removes `key`'s entry (with the writer lock held): freed now if
    /// unreferenced, else hidden and freed by its last release.
    fn erase_locked(&self, key: &CacheKey, freed: &mut Freed) {
        for i in self.window(key) {
            let slot = &self.slots[i];
            if state(slot.meta.load(Ordering::Acquire)) == VISIBLE && slot.holds(key) {
                if !self.try_free(i, VISIBLE, freed) {
                    let _ = slot
                        .meta
                        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |m| {
                            (state(m) == VISIBLE).then_some((m & !STATE_MASK) | INVISIBLE)
                        });
                    // Released between the two steps: free it here.
                    self.try_free(i, INVISIBLE, freed);
                }
                return;
            }
            if slot.displacements.load(Ordering::Relaxed) == 0 {
                return;
            }
        }
    }

    /// Places `key` in the first empty slot of its window (freeing an
    /// unreferenced entry there if none is empty) and counts the probe on the
    /// slots it passed. Returns the slot, now `CONSTRUCTING`. Call with the
    /// writer lock held.
    fn claim_slot(&self, key: &CacheKey, freed: &mut Freed) -> Option<usize> {
        let is_empty = |i: usize| state(self.slots[i].meta.load(Ordering::Acquire)) == EMPTY;
        let i = self
            .window(key)
            .find(|&i| is_empty(i))
            .or_else(|| self.window(key).find(|&i| self.try_free(i, VISIBLE, freed)))?;
        self.slots[i]
            .meta
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |m| {
                (state(m) == EMPTY).then_some((m & REFS) | CONSTRUCTING)
            })
            .ok()?;
        let mut j = self.home(key);
        while j != i {
            self.slots[j].displacements.fetch_add(1, Ordering::Release);
            j = (j + 1) & self.mask;
        }
        Some(i)
    }
}

impl Release for Table {
    fn release(&self, token: u64) {
        if token != DETACHED {
            Table::release(self, token as usize);
        }
    }
}

/// How a clock cache is built.
///
/// ```
/// use std::sync::Arc;
/// use strata::cache::clock::{ClockCache, ClockOptions};
/// use strata::cache::{Cache, CacheKey, Priority};
/// use strata::Error;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let options = ClockOptions {
///     capacity: 4096,
///     estimated_entry_charge: 1024,
///     strict_capacity_limit: true,
/// };
/// let cache = ClockCache::new(options)?;
/// let key = CacheKey { table_id: cache.new_table_id(), offset: 0 };
/// // With a strict limit, an entry that cannot fit is refused.
/// let too_big = cache.insert(key, Arc::new(()), 1 << 20, Priority::Low);
/// assert!(matches!(too_big, Err(Error::CacheFull { .. })));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockOptions {
    pub capacity: usize,
    /// The typical charge of an entry (the block size for a block cache):
    /// sizes the slot table, which never grows.
    pub estimated_entry_charge: usize,
    pub strict_capacity_limit: bool,
}

/// The clock cache.
///
/// ```
/// use std::sync::Arc;
/// use strata::cache::clock::{ClockCache, ClockOptions};
/// use strata::cache::{Cache, CacheKey, Priority};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let cache = ClockCache::new(ClockOptions {
///     capacity: 1 << 20,
///     estimated_entry_charge: 4096,
///     strict_capacity_limit: false,
/// })?;
/// let key = CacheKey { table_id: cache.new_table_id(), offset: 0 };
/// drop(cache.insert(key, Arc::new(vec![0u8; 4096]), 4096, Priority::Low)?);
/// assert!(cache.lookup(&key).is_some());
/// cache.erase(&key);
/// assert!(cache.lookup(&key).is_none());
/// # Ok(())
/// # }
/// ```
pub struct ClockCache {
    table: Arc<Table>,
    strict: bool,
    ids: TableIds,
}

impl std::fmt::Debug for ClockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClockCache")
            .field("slots", &self.table.slots.len())
            .field("capacity", &self.table.capacity.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl ClockCache {
    pub fn new(options: ClockOptions) -> Result<ClockCache> {
        if options.estimated_entry_charge == 0 {
            return Err(Error::invalid_argument(
                "estimated_entry_charge",
                "must be at least 1",
            ));
        }
        // Room for the expected entries at a load factor of about 0.7.
        let wanted = (options.capacity / options.estimated_entry_charge).saturating_mul(3) / 2;
        let slots = wanted.clamp(PROBE, 1 << 26).next_power_of_two();
        Ok(ClockCache {
            table: Arc::new(Table {
                slots: (0..slots).map(|_| Slot::new()).collect(),
                mask: slots - 1,
                usage: AtomicUsize::new(0),
                writer: Mutex::new(0),
                capacity: AtomicUsize::new(options.capacity),
            }),
            strict: options.strict_capacity_limit,
            ids: TableIds::default(),
        })
    }
}

impl Cache for ClockCache {
    fn insert(
        &self,
        key: CacheKey,
        value: CacheValue,
        charge: usize,
        priority: Priority,
    ) -> Result<CacheHandle> {
        let t = &self.table;
        let mut freed = Freed::new();
        let mut hand = t.writer.lock();
        t.erase_locked(&key, &mut freed);
        t.sweep(&mut hand, charge, &mut freed);
        if self.strict
            && t.usage.load(Ordering::Relaxed) + charge > t.capacity.load(Ordering::Relaxed)
        {
            drop(hand);
            return Err(Error::CacheFull {
                reason: format!("clock cache full: an entry of {charge} bytes does not fit"),
            });
        }
        let Some(i) = t.claim_slot(&key, &mut freed) else {
            // The window is all pinned: the value is returned, not cached.
            return Ok(CacheHandle::new(value, t.clone(), DETACHED));
        };
        let slot = &t.slots[i];
        slot.table_id.store(key.table_id, Ordering::Relaxed);
        slot.offset.store(key.offset, Ordering::Relaxed);
        slot.charge.store(charge, Ordering::Relaxed);
        // SAFETY: `claim_slot` made the slot CONSTRUCTING and this thread
        // holds the writer mutex; see `impl Sync for Slot`.
        unsafe { *slot.value.get() = Some(value.clone()) };
        t.usage.fetch_add(charge, Ordering::Relaxed);
        let clock = clock_for(priority);
        // Publish with the handle's reference, keeping stray ones.
        let _ = slot
            .meta
            .fetch_update(Ordering::Release, Ordering::Acquire, |m| {
                Some(
                    ((m & REFS) + ONE_REF)
                        | VISIBLE
                        | (clock << CLOCK_SHIFT)
                        | (clock << PRIO_SHIFT),
                )
            });
        drop(hand);
        Ok(CacheHandle::new(value, t.clone(), i as u64))
    }

    fn lookup(&self, key: &CacheKey) -> Option<CacheHandle> {
        let (i, value) = self.table.lookup(key)?;
        Some(CacheHandle::new(value, self.table.clone(), i as u64))
    }

    fn erase(&self, key: &CacheKey) {
        let mut freed = Freed::new();
        let writer = self.table.writer.lock();
        self.table.erase_locked(key, &mut freed);
        drop(writer);
    }

    fn capacity(&self) -> usize {
        self.table.capacity.load(Ordering::Relaxed)
    }

    fn usage(&self) -> usize {
        self.table.usage.load(Ordering::Relaxed)
    }

    /// Sums the referenced entries: rarely asked, so not kept up to date on
    /// the lookup path.
    fn pinned_usage(&self) -> usize {
        self.table
            .slots
            .iter()
            .filter(|s| {
                let m = s.meta.load(Ordering::Acquire);
                refs(m) > 0 && matches!(state(m), VISIBLE | INVISIBLE)
            })
            .map(|s| s.charge.load(Ordering::Relaxed))
            .sum()
    }

    fn set_capacity(&self, capacity: usize) {
        let t = &self.table;
        let mut freed = Freed::new();
        let mut hand = t.writer.lock();
        t.capacity.store(capacity, Ordering::Relaxed);
        t.sweep(&mut hand, 0, &mut freed);
        drop(hand);
    }

    fn new_table_id(&self) -> u64 {
        self.ids.next()
    }
}

#[cfg(test)]
#[path = "clock_tests.rs"]
mod tests;
