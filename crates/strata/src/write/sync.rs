//! The synchronization the commit pipeline uses. With the `shuttle` feature it
//! comes from the shuttle model checker, so its tests explore interleavings of
//! the real publish protocol; otherwise from the standard library (whose
//! `Mutex` and `Condvar` have the same interface as shuttle's).

#[cfg(feature = "shuttle")]
pub(crate) use shuttle::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
#[cfg(feature = "shuttle")]
pub(crate) use shuttle::sync::{Condvar, Mutex, MutexGuard};
#[cfg(not(feature = "shuttle"))]
pub(crate) use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
#[cfg(not(feature = "shuttle"))]
pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};

/// Locks `mutex`, ignoring poisoning: the data it guards (a queue of
/// sequence numbers) is updated in single steps that a panic cannot tear.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Waits on `cv`, ignoring poisoning as [`lock`] does.
pub(crate) fn wait<'a, T>(cv: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    match cv.wait(guard) {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Gives up the core for a moment inside a spin loop. Under shuttle a spin
/// must yield to the model's scheduler, or the loop would never end.
pub(crate) fn relax() {
    #[cfg(feature = "shuttle")]
    shuttle::thread::yield_now();
    #[cfg(not(feature = "shuttle"))]
    std::hint::spin_loop();
}

/// Lets another thread run; under shuttle, the model's scheduler decides which.
pub(crate) fn yield_now() {
    #[cfg(feature = "shuttle")]
    shuttle::thread::yield_now();
    #[cfg(not(feature = "shuttle"))]
    std::thread::yield_now();
}
