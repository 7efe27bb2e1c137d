//! The write controller: when compaction is far enough behind that writes
//! must slow down or stop (`stall_condition`), and how fast they may go
//! meanwhile (RocksDB's `WriteController`, with the rate rules of its
//! `SetupDelay`). `db/stall.rs` applies the conditions to each family.
//!
//! A fixed delay rate either throttles too little, so writers run on into a
//! stop, or too much, so they idle while compaction has already caught up.
//! The rate here is a feedback loop instead, recomputed every time a
//! family installs a new version or memtable (when its debt can change):
//!
//! - while writes are delayed and a family's compaction debt grew or stayed
//!   (or memtables filled), the rate drops to 0.8x;
//! - when the debt shrank, it rises by 1/0.8 (never above
//!   `delayed_write_rate`, the user's ceiling);
//! - when writes were just stopped, or a family is near a stop (L0 two files
//!   from its stop trigger, or pending bytes in the last quarter between the
//!   soft and hard limits), the rate drops to 0.6x: a stop costs more than
//!   the reward for recovering;
//! - when a family leaves the delay, the rate rises 1.4x, balancing the
//!   long-term slowdown signal.
//!
//! The rate never goes below 16 KiB/s, and persists between stalls (the
//! next stall starts where the last one settled), as RocksDB's does.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::options::{CompactionOptions, CompactionStyle};

/// What holds writes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StallCause {
    /// L0 reached a trigger.
    L0,
    /// The pending compaction bytes reached a limit.
    PendingBytes,
    /// Every memtable but the active one is full, waiting for flushes.
    Memtables,
}

/// Why writes are held back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StallCondition {
    /// Writes wait until compaction catches up: `level0_stop_writes_trigger`
    /// or `hard_pending_compaction_bytes_limit`. (Writes that find every
    /// memtable full wait for a flush where they switch memtables.)
    Stopped { cause: StallCause },
    /// Writes are held to the write controller's rate:
    /// `level0_slowdown_writes_trigger`, `soft_pending_compaction_bytes_limit`,
    /// or memtables near `max_write_buffer_number`.
    Delayed { cause: StallCause },
}

/// The condition for `l0_files` L0 files and `pending_bytes` of compaction
/// debt, in RocksDB's order: a stop before a slowdown, L0 before pending
/// bytes. None when automatic compaction is off (nothing would catch up) and
/// under FIFO, which keeps every table in L0 by design: its L0 is bounded by
/// the FIFO size limit, not by compaction.
pub(crate) fn stall_condition(
    options: &CompactionOptions,
    l0_files: usize,
    pending_bytes: u64,
) -> Option<StallCondition> {
    if options.disable_auto_compactions || options.compaction_style == CompactionStyle::Fifo {
        return None;
    }
    let over = |limit: u64| limit != 0 && pending_bytes >= limit;
    use StallCause::{PendingBytes, L0};
    use StallCondition::{Delayed, Stopped};
    if l0_files >= options.level0_stop_writes_trigger {
        Some(Stopped { cause: L0 })
    } else if over(options.hard_pending_compaction_bytes_limit) {
        Some(Stopped {
            cause: PendingBytes,
        })
    } else if l0_files >= options.level0_slowdown_writes_trigger {
        Some(Delayed { cause: L0 })
    } else if over(options.soft_pending_compaction_bytes_limit) {
        Some(Delayed {
            cause: PendingBytes,
        })
    } else {
        None
    }
}

/// The floor of the adapted rate (RocksDB's `kMinWriteRate`).
pub(crate) const MIN_WRITE_RATE: u64 = 16 << 10;

const SLOWER: f64 = 0.8;
const FASTER: f64 = 1.0 / SLOWER;
const NEAR_STOP: f64 = 0.6;
const RECOVERED: f64 = 1.4;

/// The database's write controller. Lives under the DB mutex.
#[derive(Debug)]
pub(crate) struct WriteController {
    /// Bytes per second delayed writes are held to.
    rate: u64,
    /// Families whose last condition was a delay, and a stop.
    delayed: BTreeSet<u32>,
    stopped: BTreeSet<u32>,
    /// Each family's compaction debt at its last recalculation.
    prev_pending: BTreeMap<u32, u64>,
    /// When the next delayed write may go (a token bucket at `rate`).
    next_write: Option<Instant>,
}

/// What a family's new version says about its stall condition.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FamilyStall {
    pub(crate) condition: Option<StallCondition>,
    /// Its estimated pending compaction bytes.
    pub(crate) pending_bytes: u64,
    /// It is a step from stopping (see the module comment).
    pub(crate) near_stop: bool,
    /// `delayed_write_rate`: the ceiling of the rate.
    pub(crate) max_rate: u64,
}

impl WriteController {
    /// A controller starting at `delayed_write_rate`.
    pub(crate) fn new(delayed_write_rate: u64) -> Self {
        WriteController {
            rate: delayed_write_rate.max(1),
            delayed: BTreeSet::new(),
            stopped: BTreeSet::new(),
            prev_pending: BTreeMap::new(),
            next_write: None,
        }
    }

    /// The rate delayed writes are held to now, in bytes per second.
    pub(crate) fn rate(&self) -> u64 {
        self.rate
    }

    /// The user set a new `delayed_write_rate`: it is the rate from now on
    /// (as RocksDB's `SetDBOptions` sets it), and the new ceiling.
    pub(crate) fn reset_rate(&mut self, delayed_write_rate: u64) {
        self.rate = delayed_write_rate.max(1);
    }

    /// Family `id` dropped: it holds writes back no more.
    pub(crate) fn forget(&mut self, id: u32) {
        self.delayed.remove(&id);
        self.stopped.remove(&id);
        self.prev_pending.remove(&id);
    }

    /// Adapts the rate to family `id`'s new condition.
    pub(crate) fn recalculate(&mut self, id: u32, stall: FamilyStall) {
        let (was_stopped, needed_delay) = (!self.stopped.is_empty(), !self.delayed.is_empty());
        let prev = self
            .prev_pending
            .insert(id, stall.pending_bytes)
            .unwrap_or(0);
        let ceiling = stall.max_rate.max(1);
        let scaled = |rate: u64, by: f64| (rate as f64 * by) as u64;
        match stall.condition {
            Some(StallCondition::Stopped { .. }) => {
                self.stopped.insert(id);
                self.delayed.remove(&id);
            }
            Some(StallCondition::Delayed { cause }) => {
                self.stopped.remove(&id);
                self.delayed.insert(id);
                // A user rate below the floor is taken as it is.
                if needed_delay && ceiling > MIN_WRITE_RATE {
                    let penalize =
                        was_stopped || (stall.near_stop && cause != StallCause::Memtables);
                    self.rate = if penalize {
                        scaled(self.rate, NEAR_STOP).max(MIN_WRITE_RATE)
                    } else if prev > 0 && prev <= stall.pending_bytes {
                        scaled(self.rate, SLOWER).max(MIN_WRITE_RATE)
                    } else if prev > stall.pending_bytes {
                        scaled(self.rate, FASTER).min(ceiling)
                    } else {
                        self.rate
                    };
                }
                self.rate = self.rate.min(ceiling);
            }
            None => {
                self.stopped.remove(&id);
                self.delayed.remove(&id);
                if needed_delay {
                    self.rate = scaled(self.rate, RECOVERED).min(ceiling);
                }
            }
        }
    }

    /// How long a write of `bytes` waits now while writes are delayed, and
    /// books its slot; `None` ends the delay (the bucket empties).
    pub(crate) fn delay_for(&mut self, bytes: usize, delayed: bool) -> Duration {
        if !delayed {
            self.next_write = None;
            return Duration::ZERO;
        }
        let now = Instant::now();
        let cost = Duration::from_secs_f64(bytes as f64 / self.rate.max(1) as f64);
        let start = self.next_write.filter(|t| *t > now).unwrap_or(now);
        self.next_write = Some(start + cost);
        start - now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: u64 = 16 << 20;

    fn delayed(pending: u64) -> FamilyStall {
        FamilyStall {
            condition: Some(StallCondition::Delayed {
                cause: StallCause::PendingBytes,
            }),
            pending_bytes: pending,
            near_stop: false,
            max_rate: MAX,
        }
    }

    fn normal(pending: u64) -> FamilyStall {
        FamilyStall {
            condition: None,
            ..delayed(pending)
        }
    }

    #[test]
    fn the_rate_follows_the_compaction_debt() {
        let mut c = WriteController::new(MAX);
        // The first delay starts at the user's rate.
        c.recalculate(0, delayed(100));
        assert_eq!(c.rate(), MAX);
        // Debt grows: slower; stays: slower again.
        c.recalculate(0, delayed(150));
        assert_eq!(c.rate(), (MAX as f64 * 0.8) as u64);
        c.recalculate(0, delayed(150));
        let twice = c.rate();
        assert!(twice < (MAX as f64 * 0.8) as u64);
        // Debt shrinks: faster, but never past the ceiling.
        c.recalculate(0, delayed(120));
        assert!(c.rate() > twice);
        for pending in (1..=20).rev() {
            c.recalculate(0, delayed(pending));
        }
        assert_eq!(c.rate(), MAX);
    }

    #[test]
    fn stops_and_near_stops_slow_harder_and_recovery_rewards() {
        let mut c = WriteController::new(MAX);
        c.recalculate(0, delayed(100));
        let near = FamilyStall {
            near_stop: true,
            ..delayed(50)
        };
        // Debt shrank, yet near a stop: 0.6x.
        c.recalculate(0, near);
        assert_eq!(c.rate(), (MAX as f64 * 0.6) as u64);
        // While another family holds writes back, a stop and then a delay
        // again: 0.6x once more. (With no delay in force, a delay starts at
        // the rate as it stands, as RocksDB's does.)
        c.recalculate(1, delayed(5));
        let stopped = FamilyStall {
            condition: Some(StallCondition::Stopped {
                cause: StallCause::L0,
            }),
            ..delayed(60)
        };
        c.recalculate(0, stopped);
        c.recalculate(0, delayed(60));
        let after_stop = (MAX as f64 * 0.6 * 0.6) as u64;
        assert!(c.rate().abs_diff(after_stop) <= 1, "{}", c.rate());
        c.recalculate(1, normal(0));
        // Leaving the delay rewards 1.4x, and the rate is kept for the next one.
        let before = c.rate();
        c.recalculate(0, normal(10));
        assert_eq!(c.rate(), (before as f64 * 1.4) as u64);
        c.recalculate(0, delayed(10));
        assert_eq!(c.rate(), (before as f64 * 1.4) as u64);
    }

    #[test]
    fn the_rate_has_a_floor_and_a_user_rate_below_it_stands() {
        let mut c = WriteController::new(MAX);
        c.recalculate(0, delayed(1));
        for pending in 2..200 {
            c.recalculate(0, delayed(pending));
        }
        assert_eq!(c.rate(), MIN_WRITE_RATE);
        let tiny = 1000;
        let mut c = WriteController::new(tiny);
        let low = |p| FamilyStall {
            max_rate: tiny,
            ..delayed(p)
        };
        c.recalculate(0, low(1));
        c.recalculate(0, low(2));
        assert_eq!(c.rate(), tiny);
    }

    #[test]
    fn a_token_bucket_spaces_writes_at_the_rate() {
        let mut c = WriteController::new(1 << 20);
        assert_eq!(c.delay_for(1 << 20, true), Duration::ZERO);
        let wait = c.delay_for(1, true);
        assert!(wait > Duration::from_millis(900), "{wait:?}");
        // The delay ends: the bucket empties.
        assert_eq!(c.delay_for(1 << 20, false), Duration::ZERO);
        assert_eq!(c.delay_for(1, true), Duration::ZERO);
    }

    #[test]
    fn stops_win_over_slowdowns_and_l0_over_pending_bytes() {
        use StallCause::{PendingBytes, L0};
        use StallCondition::*;
        let options = CompactionOptions {
            level0_slowdown_writes_trigger: 20,
            level0_stop_writes_trigger: 36,
            soft_pending_compaction_bytes_limit: 100,
            hard_pending_compaction_bytes_limit: 200,
            ..CompactionOptions::default()
        };
        let at = |l0, pending| stall_condition(&options, l0, pending);
        assert_eq!(at(19, 99), None);
        assert_eq!(at(20, 0), Some(Delayed { cause: L0 }));
        assert_eq!(at(20, 100), Some(Delayed { cause: L0 }));
        assert_eq!(
            at(0, 100),
            Some(Delayed {
                cause: PendingBytes
            })
        );
        assert_eq!(at(36, 0), Some(Stopped { cause: L0 }));
        assert_eq!(at(36, 200), Some(Stopped { cause: L0 }));
        assert_eq!(
            at(20, 200),
            Some(Stopped {
                cause: PendingBytes
            })
        );
        // A zero limit is no limit.
        let unlimited = CompactionOptions {
            soft_pending_compaction_bytes_limit: 0,
            hard_pending_compaction_bytes_limit: 0,
            ..options.clone()
        };
        assert_eq!(stall_condition(&unlimited, 0, u64::MAX), None);
        for off in [
            CompactionOptions {
                disable_auto_compactions: true,
                ..options.clone()
            },
            CompactionOptions {
                compaction_style: CompactionStyle::Fifo,
                ..options.clone()
            },
        ] {
            assert_eq!(stall_condition(&off, 100, u64::MAX), None);
        }
    }
}
