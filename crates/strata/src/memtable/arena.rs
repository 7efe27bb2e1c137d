//! A concurrent bump allocator: the memory of one memtable.
//!
//! One contiguous region of `capacity` bytes is reserved up front; the operating
//! system backs it with pages only as they are touched, so an idle memtable costs
//! little resident memory. Allocation is a single `fetch_add` on the offset, lock
//! free. An allocation that does not fit (the region is exhausted, or a huge
//! entry) falls back to its own heap block under a mutex. Nothing is freed before
//! the arena drops, which is what lets skiplist readers follow pointers without
//! any reclamation scheme.

use std::alloc::{alloc, dealloc, Layout};
use std::ptr::NonNull;

use parking_lot::Mutex;

use super::sync::{AtomicUsize, Ordering};

/// Every allocation is aligned to this (the alignment of the skiplist node).
pub const ARENA_ALIGN: usize = 8;

/// Bytes handed out by an [`Arena`].
#[derive(Debug)]
pub struct Arena {
    base: NonNull<u8>,
    /// Layout of the region at `base`; its size is the capacity.
    layout: Layout,
    capacity: usize,
    /// Bytes reserved from the region; may exceed `capacity` once it is exhausted
    /// (every later allocation then overflows).
    offset: AtomicUsize,
    overflow: Mutex<Vec<(NonNull<u8>, Layout)>>,
    overflow_bytes: AtomicUsize,
}

// SAFETY: the arena hands out disjoint byte ranges (each `fetch_add` reserves a
// range no other caller gets, and overflow blocks are separate heap allocations),
// so threads never share a range through the arena itself. The raw pointers are
// owned by the arena and freed only in `drop`, which needs `&mut self`.
unsafe impl Send for Arena {}
// SAFETY: see `Send`; all shared-state mutation goes through atomics or the mutex.
unsafe impl Sync for Arena {}

impl Arena {
    /// Reserves a region of `capacity` bytes (at least one alignment unit).
    pub fn new(capacity: usize) -> Arena {
        let capacity = capacity.max(ARENA_ALIGN).next_multiple_of(ARENA_ALIGN);
        // An impossible size (beyond isize::MAX) degrades to a one-word region:
        // every allocation then overflows to the heap.
        let layout = Layout::from_size_align(capacity, ARENA_ALIGN).unwrap_or(Layout::new::<u64>());
        // SAFETY: `layout` has a nonzero size.
        let base = unsafe { alloc(layout) };
        let base = NonNull::new(base).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        Arena {
            base,
            layout,
            capacity: layout.size(),
            offset: AtomicUsize::new(0),
            overflow: Mutex::new(Vec::new()),
            overflow_bytes: AtomicUsize::new(0),
        }
    }

    /// Returns `size` bytes aligned to [`ARENA_ALIGN`], uninitialised, valid until
    /// the arena drops. Never returns the same bytes twice.
    pub fn allocate(&self, size: usize) -> NonNull<u8> {
        let rounded = size.max(1).next_multiple_of(ARENA_ALIGN);
        // A large entry gets its own block: taken from the region it could use up
        // the rest at once and push every later small node to the heap.
        if rounded > self.capacity / 8 {
            return self.allocate_overflow(rounded);
        }
        let start = self.offset.fetch_add(rounded, Ordering::Relaxed);
        if start
            .checked_add(rounded)
            .is_some_and(|end| end <= self.capacity)
        {
            // SAFETY: `start + rounded <= capacity`, so the range lies inside the
            // region allocated in `new`, and the fetch_add gave it to us alone.
            return unsafe { NonNull::new_unchecked(self.base.as_ptr().add(start)) };
        }
        self.allocate_overflow(rounded)
    }

    #[cold]
    fn allocate_overflow(&self, size: usize) -> NonNull<u8> {
        let layout = Layout::from_size_align(size, ARENA_ALIGN)
            .unwrap_or_else(|_| std::alloc::handle_alloc_error(Layout::new::<u64>()));
        // SAFETY: `size` is at least ARENA_ALIGN, so the layout is nonzero.
        let ptr = unsafe { alloc(layout) };
        let ptr = NonNull::new(ptr).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        self.overflow.lock().push((ptr, layout));
        self.overflow_bytes.fetch_add(size, Ordering::Relaxed);
        ptr
    }

    /// Bytes handed out so far: the memtable's exact memory use. Once the region is
    /// exhausted its unused tail counts too, since nothing can use it any more.
    pub fn memory_usage(&self) -> usize {
        self.offset.load(Ordering::Relaxed).min(self.capacity)
            + self.overflow_bytes.load(Ordering::Relaxed)
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        for (ptr, layout) in self.overflow.get_mut().drain(..) {
            // SAFETY: each pair came from `alloc(layout)` in `allocate_overflow`
            // and is freed once, here.
            unsafe { dealloc(ptr.as_ptr(), layout) };
        }
        // SAFETY: `base` came from `alloc(self.layout)` in `new`.
        unsafe { dealloc(self.base.as_ptr(), self.layout) };
    }
}

#[cfg(all(test, not(feature = "shuttle")))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn allocations_are_aligned_disjoint_and_counted() {
        let arena = Arena::new(1024);
        let a = arena.allocate(3);
        let b = arena.allocate(16);
        assert_eq!(a.as_ptr() as usize % ARENA_ALIGN, 0);
        assert_eq!(b.as_ptr() as usize - a.as_ptr() as usize, 8);
        assert_eq!(arena.memory_usage(), 24);
        // Past capacity: overflow blocks, still counted.
        let big = arena.allocate(4096);
        // SAFETY: `big` points to 4096 writable bytes owned by the arena.
        unsafe { big.as_ptr().write_bytes(0xab, 4096) };
        assert_eq!(arena.memory_usage(), 24 + 4096);
    }

    #[test]
    fn concurrent_allocations_never_overlap() {
        let arena = Arc::new(Arena::new(64 * 1024));
        let threads: Vec<_> = (0..4u8)
            .map(|t| {
                let arena = arena.clone();
                std::thread::spawn(move || {
                    let mut mine = Vec::new();
                    for i in 0..2000usize {
                        let size = 1 + (i % 40);
                        let p = arena.allocate(size);
                        // SAFETY: `p` has `size` bytes reserved for this thread.
                        unsafe { p.as_ptr().write_bytes(t, size) };
                        mine.push((p.as_ptr() as usize, size));
                    }
                    (t, mine)
                })
            })
            .collect();
        let results: Vec<_> = threads.into_iter().map(|h| h.join().unwrap()).collect();
        for (t, ranges) in &results {
            for &(addr, size) in ranges {
                // SAFETY: the range is live (the arena outlives this loop) and was
                // written by thread `t` only, if allocations are disjoint.
                let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, size) };
                assert!(
                    bytes.iter().all(|b| b == t),
                    "range overwritten by another thread"
                );
            }
        }
    }
}
