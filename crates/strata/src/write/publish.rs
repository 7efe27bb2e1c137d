//! Publishing committed writes in sequence order.
//!
//! The commit leader numbers a group of batches and writes them to the WAL in
//! order; then every member inserts its own batch into the memtable, in
//! parallel with the members of its group and of the groups committed after
//! it. Readers read at the *visible* sequence number, so a batch becomes
//! readable only when the visible number passes it — and it may pass a group
//! only when every earlier group is in the memtable too, or a reader could see
//! a later batch without an earlier one. Groups queue here in sequence order;
//! the member that finishes a group's last insert publishes every finished
//! group at the front of the queue (Pebble's commit pipeline works the same
//! way).
//!
//! Invariant: `visible` is the last sequence number of the newest published
//! group, every group in `queue` has a larger last sequence number than the
//! groups before it, and none of them is visible.

use std::collections::VecDeque;
use std::sync::Arc;

use super::spin::spin_until;
use super::sync::{lock, wait, AtomicU64, AtomicUsize, Condvar, Mutex, Ordering};

/// A group of batches between its WAL write and its publication.
#[derive(Debug)]
pub(crate) struct PendingGroup {
    last_seq: u64,
    /// Members whose memtable insert has not finished.
    unfinished: AtomicUsize,
}

impl PendingGroup {
    /// The last sequence number of the group's batches.
    pub(crate) fn last_seq(&self) -> u64 {
        self.last_seq
    }
}

/// The visible sequence number, and the groups waiting to pass it.
#[derive(Debug)]
pub(crate) struct Publisher {
    visible: AtomicU64,
    queue: Mutex<Queue>,
    /// Signalled, under `queue`'s lock, whenever `visible` moves or the queue
    /// empties, if anyone waits on it.
    published: Condvar,
}

#[derive(Debug, Default)]
struct Queue {
    groups: VecDeque<Arc<PendingGroup>>,
    /// Threads blocked on `published`. A notification costs a system call
    /// even when nobody waits, so publishing skips it when this is zero: with
    /// one writer, that is every write.
    waiters: usize,
}

impl Publisher {
    /// A publisher with everything up to `visible` already readable.
    pub(crate) fn new(visible: u64) -> Publisher {
        Publisher {
            visible: AtomicU64::new(visible),
            queue: Mutex::new(Queue::default()),
            published: Condvar::new(),
        }
    }

    /// The highest sequence number whose batch, and every batch before it, is
    /// in the memtable.
    pub(crate) fn visible(&self) -> u64 {
        self.visible.load(Ordering::Acquire)
    }

    /// Queues a group of `members` batches ending at `last_seq`. The caller
    /// numbers groups under one lock and queues them in that order, so
    /// `last_seq` is above every queued group's.
    pub(crate) fn enqueue(&self, last_seq: u64, members: usize) -> Arc<PendingGroup> {
        let group = Arc::new(PendingGroup {
            last_seq,
            unfinished: AtomicUsize::new(members),
        });
        let mut queue = lock(&self.queue);
        debug_assert!(queue.groups.back().is_none_or(|g| g.last_seq < last_seq));
        queue.groups.push_back(group.clone());
        group
    }

    /// One member of `group` is done with the memtable (inserted, or gave
    /// up). The member that finishes the group last publishes it, with every
    /// finished group behind it, if no unfinished group is ahead. Each member
    /// calls this exactly once.
    pub(crate) fn finish(&self, group: &PendingGroup) {
        // AcqRel: the last member's acquire sees every member's inserts, and
        // its release below (through `visible`) hands them to readers.
        if group.unfinished.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        let mut queue = lock(&self.queue);
        let mut moved = false;
        while let Some(front) = queue.groups.front() {
            if front.unfinished.load(Ordering::Acquire) != 0 {
                break;
            }
            self.visible.store(front.last_seq, Ordering::Release);
            queue.groups.pop_front();
            moved = true;
        }
        if moved && queue.waiters > 0 {
            self.published.notify_all();
        }
    }

    /// Returns once `seq` is visible. A writer returns only then, so its own
    /// write is readable when it is acknowledged.
    pub(crate) fn wait_visible(&self, seq: u64) {
        if spin_until(|| self.visible() >= seq) {
            return;
        }
        let mut queue = lock(&self.queue);
        while self.visible() < seq {
            queue.waiters += 1;
            queue = wait(&self.published, queue);
            queue.waiters -= 1;
        }
    }

    /// Returns once every queued group is published: nothing is being
    /// inserted into a memtable. A memtable switch waits for this, so no
    /// insert lands in a memtable that is already being flushed.
    pub(crate) fn wait_idle(&self) {
        let mut queue = lock(&self.queue);
        while !queue.groups.is_empty() {
            queue.waiters += 1;
            queue = wait(&self.published, queue);
            queue.waiters -= 1;
        }
    }
}

#[cfg(all(test, not(feature = "shuttle")))]
mod tests {
    use super::*;

    #[test]
    fn a_finished_group_waits_for_the_unfinished_one_before_it() {
        let publisher = Publisher::new(10);
        let first = publisher.enqueue(12, 2);
        let second = publisher.enqueue(13, 1);
        publisher.finish(&second);
        assert_eq!(publisher.visible(), 10, "13 must not pass 11-12");
        publisher.finish(&first);
        assert_eq!(
            publisher.visible(),
            10,
            "one member of 11-12 is still inserting"
        );
        publisher.finish(&first);
        assert_eq!(publisher.visible(), 13, "both groups publish together");
        publisher.wait_idle();
        publisher.wait_visible(13);
    }

    #[test]
    fn waiters_wake_when_their_group_publishes() {
        let publisher = Arc::new(Publisher::new(0));
        let group = publisher.enqueue(5, 1);
        let waiter = {
            let publisher = publisher.clone();
            std::thread::spawn(move || {
                publisher.wait_visible(5);
                publisher.visible()
            })
        };
        let idle = {
            let publisher = publisher.clone();
            std::thread::spawn(move || publisher.wait_idle())
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        publisher.finish(&group);
        assert_eq!(waiter.join().ok(), Some(5));
        assert!(idle.join().is_ok());
    }
}

/// The publish protocol under shuttle's randomized scheduler: writers number
/// groups under a lock (as the commit leader does under the DB mutex), insert
/// each member's entries into a shared "memtable" in parallel, and publish; a
/// reader checks at every visible number it observes that every entry up to it
/// is present (no later batch without an earlier one), and every writer checks
/// its own entries are visible when it returns.
#[cfg(all(test, feature = "shuttle"))]
mod shuttle_model {
    use super::*;
    use shuttle::sync::atomic::AtomicBool;

    const SEQS: usize = 8;

    #[test]
    fn groups_publish_in_sequence_order() {
        shuttle::check_random(
            || {
                let publisher = Arc::new(Publisher::new(0));
                let next_seq = Arc::new(Mutex::new(1u64));
                let memtable: Arc<Vec<AtomicBool>> =
                    Arc::new((0..=SEQS).map(|_| AtomicBool::new(false)).collect());
                let mut threads = Vec::new();
                // Three writers; each commits groups of one or two batches.
                for writer in 0..3u64 {
                    let (publisher, next_seq, memtable) =
                        (publisher.clone(), next_seq.clone(), memtable.clone());
                    threads.push(shuttle::thread::spawn(move || {
                        let members = 1 + (writer % 2) as usize;
                        let (first, group) = {
                            let mut next = lock(&next_seq);
                            let first = *next;
                            *next += members as u64;
                            (
                                first,
                                publisher.enqueue(first + members as u64 - 1, members),
                            )
                        };
                        let inserters: Vec<_> = (0..members as u64)
                            .map(|m| {
                                let (publisher, memtable, group) =
                                    (publisher.clone(), memtable.clone(), group.clone());
                                shuttle::thread::spawn(move || {
                                    memtable[(first + m) as usize].store(true, Ordering::Release);
                                    publisher.finish(&group);
                                    publisher.wait_visible(group.last_seq());
                                    for seq in 1..=group.last_seq() {
                                        assert!(memtable[seq as usize].load(Ordering::Acquire));
                                    }
                                })
                            })
                            .collect();
                        for inserter in inserters {
                            assert!(inserter.join().is_ok());
                        }
                    }));
                }
                let reader = {
                    let (publisher, memtable) = (publisher.clone(), memtable.clone());
                    shuttle::thread::spawn(move || {
                        for _ in 0..6 {
                            let visible = publisher.visible();
                            for seq in 1..=visible {
                                assert!(
                                    memtable[seq as usize].load(Ordering::Acquire),
                                    "sequence {seq} is visible (at {visible}) but not inserted"
                                );
                            }
                            shuttle::thread::yield_now();
                        }
                    })
                };
                for t in threads {
                    assert!(t.join().is_ok());
                }
                assert!(reader.join().is_ok());
                publisher.wait_idle();
                assert_eq!(publisher.visible(), 4);
            },
            2000,
        );
    }
}
