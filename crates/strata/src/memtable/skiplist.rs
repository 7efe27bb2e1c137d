//! A concurrent skiplist of internal keys whose nodes live in an [`Arena`]
//! (the idea of RocksDB's InlineSkipList).
//!
//! ```text
//! node (8-byte aligned, in the arena)
//! +-----------+--------------------------+----------------------+-----+-------+
//! | value_len | key_len (24) | height (8) | next[0..height]      | key | value |
//! | u32       | u32, key_len in low bits | AtomicPtr<Node> each |     |       |
//! +-----------+--------------------------+----------------------+-----+-------+
//! ```
//!
//! Concurrency: readers never lock. Writers insert concurrently: a node is fully
//! written (key, value, its own links) before a release compare-and-swap links it
//! into level 0, then into each higher level; a failed CAS recomputes the splice
//! for that level only. Readers load links with acquire, so any node they reach
//! is fully initialised. Nodes are never removed or freed before the list drops,
//! so a pointer, once read, stays valid for as long as the list lives.
//!
//! Invariant: at every level, following links visits keys in strictly increasing
//! internal-key order (keys are unique: every write has its own sequence number).

use std::cell::Cell;
use std::cmp::Ordering as KeyOrdering;
use std::mem::{align_of, size_of};
use std::ptr::{self, NonNull};
use std::sync::Arc;

use super::arena::{Arena, ARENA_ALIGN};
use super::sync::{AtomicPtr, AtomicUsize, Ordering};
use crate::error::{Error, Result};
use crate::key_order::KeyComparator;

/// Tallest tower; with branching 4 this serves 4^12 = 16M entries well.
pub const MAX_HEIGHT: usize = 12;
const BRANCHING: u32 = 4;

/// A node's header; its links, key and value follow it in the arena.
///
/// Eight bytes, not sixteen: with 16-byte keys and 100-byte values that is 5%
/// more entries per memtable, so fewer, larger flushes and fewer compactions.
#[repr(C)]
struct Node {
    value_len: u32,
    /// The key's length in the low [`KEY_LEN_BITS`] bits, the node's height
    /// (at most [`MAX_HEIGHT`]) in the bits above.
    key_len_and_height: u32,
}

/// Bits of [`Node::key_len_and_height`] that hold the key length: internal keys
/// are at most `MAX_KEY_SIZE` (8 MiB) plus an 8-byte trailer, below 16 MiB.
const KEY_LEN_BITS: u32 = 24;
const KEY_LEN_MASK: u32 = (1 << KEY_LEN_BITS) - 1;
const _: () = assert!(MAX_HEIGHT < 1 << (32 - KEY_LEN_BITS));

impl Node {
    #[inline]
    fn key_len(&self) -> usize {
        (self.key_len_and_height & KEY_LEN_MASK) as usize
    }

    #[inline]
    fn height(&self) -> usize {
        (self.key_len_and_height >> KEY_LEN_BITS) as usize
    }
}

const HEADER: usize = size_of::<Node>();
const LINK: usize = size_of::<AtomicPtr<Node>>();
const _: () = assert!(align_of::<AtomicPtr<Node>>() <= ARENA_ALIGN);
const _: () = assert!(align_of::<Node>() <= ARENA_ALIGN && HEADER % ARENA_ALIGN == 0);

/// The level-`level` link of `node`.
///
/// # Safety
/// `node` must be a node of a live list with `height > level`; the reference
/// must not outlive the list.
#[inline]
unsafe fn link<'a>(node: NonNull<Node>, level: usize) -> &'a AtomicPtr<Node> {
    // SAFETY: links start right after the header; the caller guarantees the link
    // exists and was initialised by `allocate_node`.
    unsafe {
        &*node
            .as_ptr()
            .cast::<u8>()
            .add(HEADER + level * LINK)
            .cast::<AtomicPtr<Node>>()
    }
}

/// The key stored in `node`.
///
/// # Safety
/// `node` must be a published node of a live list; the slice must not outlive it.
#[inline]
unsafe fn node_key<'a>(node: NonNull<Node>) -> &'a [u8] {
    // SAFETY: the header and key bytes were written before the node was published
    // and are never modified afterwards.
    unsafe {
        let h = &*node.as_ptr();
        let start = node.as_ptr().cast::<u8>().add(HEADER + h.height() * LINK);
        std::slice::from_raw_parts(start, h.key_len())
    }
}

/// The value stored in `node`. Same contract as [`node_key`].
#[inline]
unsafe fn node_value<'a>(node: NonNull<Node>) -> &'a [u8] {
    // SAFETY: as for `node_key`; the value follows the key.
    unsafe {
        let h = &*node.as_ptr();
        let start = node
            .as_ptr()
            .cast::<u8>()
            .add(HEADER + h.height() * LINK + h.key_len());
        std::slice::from_raw_parts(start, h.value_len as usize)
    }
}

thread_local! {
    static HEIGHT_RNG: Cell<u32> = const { Cell::new(0) };
}

/// A tower height with P(height > h) = 4^-h (xorshift32 per thread).
fn random_height() -> usize {
    HEIGHT_RNG.with(|cell| {
        let mut x = cell.get();
        if x == 0 {
            // Seed from the cell's address: distinct per thread, never zero.
            x = (cell as *const Cell<u32> as usize as u32) | 1;
        }
        let mut height = 1;
        loop {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            if height >= MAX_HEIGHT || x % BRANCHING != 0 {
                break;
            }
            height += 1;
        }
        cell.set(x);
        height
    })
}

/// A sorted set of unique internal keys, each with a value.
#[derive(Debug)]
pub struct SkipList {
    /// The order of the keys; fixed for the list's life.
    order: KeyComparator,
    arena: Arena,
    head: NonNull<Node>,
    max_height: AtomicUsize,
    len: AtomicUsize,
}

// SAFETY: all shared mutable state is in atomics (links, max_height, len) or the
// arena (itself Sync); node contents are immutable once published; nodes are
// freed only when the list drops, which requires exclusive ownership.
unsafe impl Send for SkipList {}
// SAFETY: see `Send`.
unsafe impl Sync for SkipList {}

impl SkipList {
    /// An empty list in bytewise order whose arena reserves
    /// `arena_capacity` bytes up front.
    pub fn new(arena_capacity: usize) -> SkipList {
        SkipList::with_order(arena_capacity, KeyComparator::Bytewise)
    }

    /// The order of the keys.
    pub(crate) fn order(&self) -> &KeyComparator {
        &self.order
    }

    /// An empty list in `order` whose arena reserves `arena_capacity` bytes.
    pub(crate) fn with_order(arena_capacity: usize, order: KeyComparator) -> SkipList {
        let arena = Arena::new(arena_capacity);
        let head = allocate_node(&arena, MAX_HEIGHT, 0, 0);
        SkipList {
            order,
            arena,
            head,
            max_height: AtomicUsize::new(1),
            len: AtomicUsize::new(0),
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// True when nothing was inserted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of memory the list holds (exact, from the arena).
    pub fn memory_usage(&self) -> usize {
        self.arena.memory_usage()
    }

    /// Inserts an entry of `key_len` key bytes and `value_len` value bytes, which
    /// `fill` writes in place (no intermediate copy). The key must not be present.
    /// Safe to call from many threads at once.
    pub fn insert_with(
        &self,
        key_len: usize,
        value_len: usize,
        fill: impl FnOnce(&mut [u8], &mut [u8]),
    ) -> Result<()> {
        if key_len > KEY_LEN_MASK as usize {
            return Err(Error::invalid_argument(
                "key",
                "memtable keys must be shorter than 16 MiB",
            ));
        }
        if u32::try_from(value_len).is_err() {
            return Err(Error::invalid_argument(
                "value",
                "values must be shorter than 4 GiB",
            ));
        }
        let height = random_height();
        let node = allocate_node(&self.arena, height, key_len, value_len);
        // SAFETY: the node was just allocated with room for `height` links, the key
        // and the value; nobody else can see it until it is linked below.
        let (key_buf, value_buf) = unsafe {
            let start = node.as_ptr().cast::<u8>().add(HEADER + height * LINK);
            (
                std::slice::from_raw_parts_mut(start, key_len),
                std::slice::from_raw_parts_mut(start.add(key_len), value_len),
            )
        };
        fill(key_buf, value_buf);
        // SAFETY: the key is fully written; the node stays alive with the list.
        let key = unsafe { node_key(node) };

        let mut max = self.max_height.load(Ordering::Relaxed);
        while height > max {
            match self.max_height.compare_exchange_weak(
                max,
                height,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => max = height,
                Err(current) => max = current,
            }
        }

        let mut prev = [self.head; MAX_HEIGHT];
        let mut next = [ptr::null_mut::<Node>(); MAX_HEIGHT];
        let mut before = self.head;
        for level in (0..max).rev() {
            let (p, n) = self.find_splice(key, before, level);
            prev[level] = p;
            next[level] = n;
            before = p;
        }
        for level in 0..height {
            loop {
                // SAFETY: `node` has `height > level` links; `prev[level]` is the
                // head or a published node taller than `level` (it was reached at
                // this level).
                let (own, prev_link) = unsafe { (link(node, level), link(prev[level], level)) };
                own.store(next[level], Ordering::Relaxed);
                match prev_link.compare_exchange(
                    next[level],
                    node.as_ptr(),
                    Ordering::Release,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => break,
                    Err(_) => {
                        // Another writer linked a node here first: redo this level
                        // from the old predecessor, which is still before `key`.
                        let (p, n) = self.find_splice(key, prev[level], level);
                        prev[level] = p;
                        next[level] = n;
                    }
                }
            }
        }
        self.len.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// At `level`, starting from `before` (whose key is < `key`), the last node
    /// with key < `key` and its successor (null at the end).
    fn find_splice(
        &self,
        key: &[u8],
        mut before: NonNull<Node>,
        level: usize,
    ) -> (NonNull<Node>, *mut Node) {
        loop {
            // SAFETY: `before` is the head or a node reached at this level.
            let next = unsafe { link(before, level) }.load(Ordering::Acquire);
            let Some(n) = NonNull::new(next) else {
                return (before, next);
            };
            // Start loading the node after `n` while `n`'s key is compared:
            // in a memtable larger than the CPU caches each step is a cache
            // miss, and this overlaps two of them (RocksDB's skiplist does the
            // same). Relaxed: the pointer is only a hint, never dereferenced.
            // SAFETY: `n` was reached at `level`, so it has a link there.
            prefetch(unsafe { link(n, level) }.load(Ordering::Relaxed));
            // SAFETY: `n` was published with release before we acquired it.
            if self.order.compare_internal(unsafe { node_key(n) }, key) != KeyOrdering::Less {
                return (before, next);
            }
            before = n;
        }
    }

    /// The first node with key >= `key` (null if none).
    ///
    /// Returns the successor observed *during* the search. Re-reading the
    /// predecessor's link afterwards would be wrong: a concurrent insert may have
    /// linked a node with a smaller key there in the meantime.
    fn find_greater_or_equal(&self, key: &[u8]) -> *mut Node {
        let mut x = self.head;
        let mut next = ptr::null_mut();
        for level in (0..self.max_height.load(Ordering::Relaxed)).rev() {
            (x, next) = self.find_splice(key, x, level);
        }
        next
    }

    /// The last node with key < `key` (the head if none).
    fn find_less_than(&self, key: &[u8]) -> NonNull<Node> {
        let mut x = self.head;
        for level in (0..self.max_height.load(Ordering::Relaxed)).rev() {
            x = self.find_splice(key, x, level).0;
        }
        x
    }

    /// The last node (the head if the list is empty).
    fn find_last(&self) -> NonNull<Node> {
        let mut x = self.head;
        for level in (0..self.max_height.load(Ordering::Relaxed)).rev() {
            // SAFETY: `x` is the head or a node reached at a level >= `level`.
            while let Some(n) = NonNull::new(unsafe { link(x, level) }.load(Ordering::Acquire)) {
                x = n;
            }
        }
        x
    }

    fn non_head(&self, node: NonNull<Node>) -> Option<NonNull<Node>> {
        (node != self.head).then_some(node)
    }
}

/// Hints the CPU to load the cache line at `node` (null or not); a no-op
/// where no stable prefetch instruction is available.
#[inline(always)]
fn prefetch(node: *const Node) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and has no effect the program can
    // observe, whatever the address (null included).
    unsafe {
        std::arch::x86_64::_mm_prefetch(node.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = node;
}

fn allocate_node(arena: &Arena, height: usize, key_len: usize, value_len: usize) -> NonNull<Node> {
    let size = HEADER + height * LINK + key_len + value_len;
    let node = arena.allocate(size).cast::<Node>();
    // SAFETY: the arena returned `size` writable bytes aligned for `Node` and its
    // links, reserved for this node alone.
    unsafe {
        // Lossless: the caller checked both lengths, and height <= MAX_HEIGHT.
        node.as_ptr().write(Node {
            value_len: value_len as u32,
            key_len_and_height: key_len as u32 | (height as u32) << KEY_LEN_BITS,
        });
        for level in 0..height {
            let slot = node.as_ptr().cast::<u8>().add(HEADER + level * LINK);
            slot.cast::<AtomicPtr<Node>>()
                .write(AtomicPtr::new(ptr::null_mut()));
        }
    }
    node
}

impl SkipList {
    /// The first entry with key >= `key`, as `(key, value)` borrowed from the list.
    pub fn seek_entry(&self, key: &[u8]) -> Option<(&[u8], &[u8])> {
        let node = NonNull::new(self.find_greater_or_equal(key))?;
        // SAFETY: a published node of this list, kept alive by `&self`.
        Some(unsafe { (node_key(node), node_value(node)) })
    }
}

/// A cursor over a shared [`SkipList`]. It owns an `Arc` of the list, so the node
/// it stands on can never be freed under it; a node pointer is only ever set
/// from this list's own links.
#[derive(Debug, Clone)]
pub struct Cursor {
    list: Arc<SkipList>,
    node: Option<NonNull<Node>>,
}

// SAFETY: the cursor reads nodes only through the list it keeps alive, and the
// list is Send + Sync.
unsafe impl Send for Cursor {}
// SAFETY: see `Send`; `&Cursor` only reads immutable node contents.
unsafe impl Sync for Cursor {}

impl Cursor {
    /// An unpositioned cursor over `list`.
    pub fn new(list: Arc<SkipList>) -> Cursor {
        Cursor { list, node: None }
    }

    /// True when on an entry.
    pub fn valid(&self) -> bool {
        self.node.is_some()
    }

    /// Moves to the first entry.
    pub fn seek_to_first(&mut self) {
        // SAFETY: the head has MAX_HEIGHT links.
        self.node = NonNull::new(unsafe { link(self.list.head, 0) }.load(Ordering::Acquire));
    }

    /// Moves to the last entry.
    pub fn seek_to_last(&mut self) {
        self.node = self.list.non_head(self.list.find_last());
    }

    /// Moves to the first entry with key >= `key`.
    pub fn seek(&mut self, key: &[u8]) {
        self.node = NonNull::new(self.list.find_greater_or_equal(key));
    }

    /// Moves to the last entry with key <= `key`.
    pub fn seek_for_prev(&mut self, key: &[u8]) {
        self.seek(key);
        match self.node {
            Some(_) if self.list.order.compare_internal(self.key(), key) == KeyOrdering::Equal => {}
            Some(_) => self.prev(),
            None => self.seek_to_last(),
        }
    }

    /// Moves to the next entry (invalid past the end).
    pub fn next(&mut self) {
        if let Some(n) = self.node {
            // SAFETY: `n` is a published node of `self.list`.
            self.node = NonNull::new(unsafe { link(n, 0) }.load(Ordering::Acquire));
        }
    }

    /// Moves to the previous entry: a search from the head, O(log n).
    pub fn prev(&mut self) {
        if self.node.is_some() {
            let before = self.list.find_less_than(self.key());
            self.node = self.list.non_head(before);
        }
    }

    /// The current key (empty when invalid).
    pub fn key(&self) -> &[u8] {
        match self.node {
            // SAFETY: a published node of `self.list`, alive while `self` is.
            Some(n) => unsafe { node_key(n) },
            None => &[],
        }
    }

    /// The current value (empty when invalid).
    pub fn value(&self) -> &[u8] {
        match self.node {
            // SAFETY: as for `key`.
            Some(n) => unsafe { node_value(n) },
            None => &[],
        }
    }
}

#[cfg(test)]
#[path = "skiplist_tests.rs"]
mod tests;
