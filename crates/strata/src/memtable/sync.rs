//! The atomics the memtable uses. With the `shuttle` feature they come from the
//! shuttle model checker, so its tests explore thread interleavings of the real
//! skiplist code; otherwise they are the standard library's.

#[cfg(feature = "shuttle")]
pub(crate) use shuttle::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
#[cfg(not(feature = "shuttle"))]
pub(crate) use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
