//! Waiting a few microseconds without sleeping. A writer usually waits for
//! something another writer finishes within microseconds (its turn to lead,
//! its group's memtable inserts); blocking on a condition variable and being
//! woken costs more than that. So a waiter first spins, then yields its core,
//! and only then blocks — unless the machine is oversubscribed: when a yield
//! takes long, another thread was waiting for this core, and spinning on it
//! would only slow down the thread being waited for (RocksDB's write thread
//! measures its yields for the same reason).

#[cfg(not(feature = "shuttle"))]
use std::time::{Duration, Instant};

use super::sync::{relax, yield_now};

/// Busy-wait iterations before a waiter starts yielding its core.
const BUSY_SPINS: u32 = 200;

/// How long a waiter spins and yields before it blocks.
#[cfg(not(feature = "shuttle"))]
const SPIN_BEFORE_BLOCKING: Duration = Duration::from_micros(20);

/// A yield that took at least this long gave the core to another thread.
#[cfg(not(feature = "shuttle"))]
const SLOW_YIELD: Duration = Duration::from_micros(3);

/// Slow yields after which the waiter stops spinning: the cores are busy.
#[cfg(not(feature = "shuttle"))]
const MAX_SLOW_YIELDS: u32 = 2;

/// Spins, then yields, until `done` returns true (returns true) or spinning
/// stops paying (returns false: the caller blocks). `done` must be cheap and
/// must not block.
pub(crate) fn spin_until(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..BUSY_SPINS {
        if done() {
            return true;
        }
        relax();
    }
    #[cfg(feature = "shuttle")]
    {
        // Time does not pass under the model checker: a few yields stand in
        // for the timed phase, and the caller then blocks.
        for _ in 0..2 {
            yield_now();
            if done() {
                return true;
            }
        }
        false
    }
    #[cfg(not(feature = "shuttle"))]
    {
        let start = Instant::now();
        let mut slow_yields = 0;
        while start.elapsed() < SPIN_BEFORE_BLOCKING {
            let before = Instant::now();
            yield_now();
            if done() {
                return true;
            }
            if before.elapsed() >= SLOW_YIELD {
                slow_yields += 1;
                if slow_yields >= MAX_SLOW_YIELDS {
                    return false;
                }
            }
        }
        false
    }
}

#[cfg(all(test, not(feature = "shuttle")))]
mod tests {
    use super::*;

    #[test]
    fn returns_true_once_done_and_false_when_it_never_is() {
        let mut calls = 0;
        assert!(spin_until(|| {
            calls += 1;
            calls == 3
        }));
        assert_eq!(calls, 3);
        let start = Instant::now();
        assert!(!spin_until(|| false));
        // It gave up rather than spinning forever (generous bound: the
        // spin is 20 µs plus one yield, on a loaded machine maybe more).
        assert!(start.elapsed() < Duration::from_secs(1));
    }
}
