//! The memtable: recent writes, sorted, in memory.
//!
//! [`skiplist`] is the concurrent sorted structure (the only `unsafe` code of the
//! engine outside the file system); [`arena`] is its memory.

pub mod arena;
pub mod skiplist;
mod sync;
