//! The synchronization the clock cache uses. With the `shuttle` feature it
//! comes from the shuttle model checker, so its tests explore interleavings of
//! the real slot protocol; otherwise from std and parking_lot.

#[cfg(feature = "shuttle")]
pub(crate) use shuttle::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
#[cfg(not(feature = "shuttle"))]
pub(crate) use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// A mutex whose `lock` returns the guard directly, over either backend.
#[derive(Debug, Default)]
pub(crate) struct Mutex<T>(Inner<T>);

#[cfg(feature = "shuttle")]
type Inner<T> = shuttle::sync::Mutex<T>;
#[cfg(not(feature = "shuttle"))]
type Inner<T> = parking_lot::Mutex<T>;

#[cfg(feature = "shuttle")]
pub(crate) type MutexGuard<'a, T> = shuttle::sync::MutexGuard<'a, T>;
#[cfg(not(feature = "shuttle"))]
pub(crate) type MutexGuard<'a, T> = parking_lot::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Mutex(Inner::new(value))
    }

    #[cfg(feature = "shuttle")]
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        // A poisoned lock means a test thread panicked: shuttle reports that.
        match self.0.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    #[cfg(not(feature = "shuttle"))]
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        self.0.lock()
    }
}
