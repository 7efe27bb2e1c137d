//! The commit queue: writers waiting to commit, the groups their leader
//! forms, and what it hands each member once the group is in the WAL.
//!
//! This is the part of group commit that does not depend on the database's
//! state. The queue lives under the DB mutex (`DbState::commit`), and every
//! change to it and to what a queued writer waits for is made with that
//! mutex held. The leader's steps that need the database (stalls, memtable
//! switches, the WAL, publishing) are `db/write.rs`.
//!
//! A request is in the queue from `push` until the leader either fails it
//! (`outcome`), hands it a [`CommitJob`] (removing it), or — for the leader
//! itself — passes the lead. Each of those wakes the writer.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use super::publish::PendingGroup;
use super::WriteBatch;
use crate::error::{Error, Result};
use crate::memtable::MemTable;
use crate::options::WriteOptions;

/// Largest group a leader assembles (bytes of batches), as RocksDB's 1 MiB.
const MAX_GROUP_BYTES: usize = 1 << 20;

/// One queued write (or, with `force_flush`, a request to switch the memtable).
#[derive(Debug)]
pub(crate) struct WriteRequest {
    /// The leader stamps the sequence number into its own batch in place.
    pub(crate) batch: Mutex<WriteBatch>,
    pub(crate) sync: bool,
    pub(crate) disable_wal: bool,
    /// Fail with `Incomplete` rather than wait out a write stall.
    pub(crate) no_slowdown: bool,
    /// A request to switch this family's memtable, carrying no batch.
    pub(crate) force_flush: Option<u32>,
    /// A request to hold the lead, carrying no batch: while it leads, no
    /// write is numbered (ingestion; see `db::write::with_writes_stopped`).
    pub(crate) exclusive: bool,
    /// Set by a leader that fails this request before it is numbered.
    pub(crate) outcome: Mutex<Option<Result<()>>>,
    /// Set by the leader once this request's group is in the WAL.
    pub(crate) job: Mutex<Option<Arc<CommitJob>>>,
    pub(crate) cv: Condvar,
    /// Raised with every notification, so a spinning writer sees it without
    /// the DB mutex. A hint only: the writer re-checks under the mutex.
    pub(crate) signalled: AtomicBool,
}

impl WriteRequest {
    /// A request to write `batch` as `options` say, or, with `force_flush`,
    /// to switch that family's memtable.
    pub(crate) fn new(
        options: &WriteOptions,
        batch: WriteBatch,
        force_flush: Option<u32>,
    ) -> WriteRequest {
        WriteRequest {
            batch: Mutex::new(batch),
            sync: options.sync,
            disable_wal: options.disable_wal,
            no_slowdown: options.no_slowdown,
            force_flush,
            exclusive: false,
            outcome: Mutex::new(None),
            job: Mutex::new(None),
            cv: Condvar::new(),
            signalled: AtomicBool::new(false),
        }
    }

    /// A request that stops writes while it leads.
    pub(crate) fn exclusive() -> WriteRequest {
        WriteRequest {
            exclusive: true,
            ..WriteRequest::new(&WriteOptions::default(), WriteBatch::new(), None)
        }
    }

    /// Wakes this writer, spinning or blocked. Called with the DB mutex held,
    /// after changing what the writer waits for.
    pub(crate) fn wake(&self) {
        self.signalled.store(true, Ordering::Release);
        self.cv.notify_one();
    }
}

/// What the leader hands every member of its group once the group's WAL
/// record is written (or failed).
#[derive(Debug)]
pub(crate) struct CommitJob {
    /// The memtables to insert into; `None` when the WAL write failed and
    /// nothing is inserted.
    pub(crate) mems: Option<FamilyMemTables>,
    /// The group's place in the publish queue.
    pub(crate) pending: Arc<PendingGroup>,
    /// The WAL write's outcome.
    pub(crate) logged: Result<()>,
}

/// The active memtable of every family, as the group's leader saw them: a
/// memtable switch waits until no group inserts, so they stay active until
/// every member is done.
#[derive(Debug)]
pub(crate) struct FamilyMemTables {
    /// By family id, ascending.
    mems: Vec<(u32, Arc<MemTable>)>,
}

impl FamilyMemTables {
    /// The memtables of families `(id, memtable)`, in ascending id order.
    pub(crate) fn new(mems: Vec<(u32, Arc<MemTable>)>) -> FamilyMemTables {
        debug_assert!(mems.windows(2).all(|w| w[0].0 < w[1].0));
        FamilyMemTables { mems }
    }

    /// Inserts `batch` into its families' memtables. Every family the batch
    /// names was checked live under the DB mutex when these memtables were
    /// taken, in the same critical section (a family dropped since keeps its
    /// memtable here), so a missing one is a bug; fail rather than drop the
    /// records.
    pub(crate) fn insert(&self, batch: &WriteBatch) -> Result<()> {
        batch.insert_into(
            &|cf| match self.mems.binary_search_by_key(&cf, |(id, _)| *id) {
                Ok(i) => Ok(self.mems.get(i).map(|(_, mem)| &**mem)),
                Err(_) => Err(Error::invalid_argument(
                    "column_family",
                    format!("no memtable for column family {cf}"),
                )),
            },
        )
    }
}

/// Writers waiting to commit, in arrival order; the front one leads.
#[derive(Debug, Default)]
pub(crate) struct WriteQueue {
    writers: VecDeque<Arc<WriteRequest>>,
}

impl WriteQueue {
    pub(crate) fn push(&mut self, request: Arc<WriteRequest>) {
        self.writers.push_back(request);
    }

    pub(crate) fn len(&self) -> usize {
        self.writers.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.writers.is_empty()
    }

    /// Where `request` is in the queue (0: it leads), or `None` once it left.
    pub(crate) fn position(&self, request: &Arc<WriteRequest>) -> Option<usize> {
        self.writers.iter().position(|w| Arc::ptr_eq(w, request))
    }

    /// The leader plus the writers behind it that can share its WAL record:
    /// same `disable_wal`, not a sync write under a non-sync leader, no flush
    /// or exclusive requests, `batch_ok` (its families are live), at most
    /// `MAX_GROUP_BYTES` in all. Stops at the first writer that cannot join,
    /// so records stay in queue order. The leader must be at the front.
    pub(crate) fn take_group(
        &self,
        batch_ok: impl Fn(&WriteBatch) -> bool,
    ) -> Vec<Arc<WriteRequest>> {
        let Some(leader) = self.writers.front() else {
            return Vec::new();
        };
        let mut group = vec![leader.clone()];
        let mut bytes = leader.batch.lock().approximate_size();
        for w in self.writers.iter().skip(1) {
            let compatible = w.force_flush.is_none()
                && !w.exclusive
                && w.disable_wal == leader.disable_wal
                && (leader.sync || !w.sync)
                && batch_ok(&w.batch.lock());
            bytes += w.batch.lock().approximate_size();
            if !compatible || bytes > MAX_GROUP_BYTES {
                break;
            }
            group.push(w.clone());
        }
        group
    }

    /// Hands `job` to the `members - 1` writers behind the leader (the rest
    /// of its group), removing them from the queue, and wakes them.
    pub(crate) fn hand_off(&mut self, members: usize, job: &Arc<CommitJob>) {
        for _ in 1..members {
            if let Some(follower) = self.writers.remove(1) {
                *follower.job.lock() = Some(job.clone());
                follower.wake();
            }
        }
    }

    /// Removes the leader from the queue and wakes the next one.
    pub(crate) fn pass_the_lead(&mut self) {
        self.writers.pop_front();
        if let Some(next) = self.writers.front() {
            next.wake();
        }
    }

    /// Fails every writer behind the leader that asked not to wait, with
    /// `error()`: a stall is starting, and they would wait through it.
    pub(crate) fn fail_no_slowdown_waiters(&mut self, error: impl Fn() -> Error) {
        let mut i = 1;
        while i < self.writers.len() {
            match self.writers.get(i).cloned() {
                Some(w) if w.no_slowdown => {
                    *w.outcome.lock() = Some(Err(error()));
                    self.writers.remove(i);
                    w.wake();
                }
                _ => i += 1,
            }
        }
    }
}

/// Stamps each of `group`'s batches with its first sequence number, counting
/// from `first_seq`, and returns the group as one batch for the WAL: `None`
/// for a group of one, whose own batch is the record.
pub(crate) fn stamp_group(
    group: &[Arc<WriteRequest>],
    first_seq: u64,
) -> Result<Option<WriteBatch>> {
    let mut next_seq = first_seq;
    let mut combined: Option<WriteBatch> = None;
    for member in group {
        let mut batch = member.batch.lock();
        batch.set_sequence(next_seq);
        next_seq += u64::from(batch.count());
        if group.len() > 1 {
            combined
                .get_or_insert_with(WriteBatch::new)
                .append(&batch)?;
        }
    }
    if let Some(combined) = &mut combined {
        combined.set_sequence(first_seq);
    }
    Ok(combined)
}

#[cfg(all(test, not(feature = "shuttle")))]
mod tests {
    use super::*;

    fn request(sync: bool, disable_wal: bool, key: &[u8]) -> Arc<WriteRequest> {
        let mut batch = WriteBatch::new();
        assert!(batch.put(key, b"v").is_ok());
        let options = WriteOptions {
            sync,
            disable_wal,
            ..WriteOptions::default()
        };
        Arc::new(WriteRequest::new(&options, batch, None))
    }

    #[test]
    fn a_group_stops_at_the_first_writer_that_cannot_join() {
        let mut queue = WriteQueue::default();
        queue.push(request(false, false, b"a"));
        queue.push(request(false, false, b"b"));
        // A sync write cannot ride a leader that does not sync.
        queue.push(request(true, false, b"c"));
        queue.push(request(false, false, b"d"));
        assert_eq!(queue.take_group(|_| true).len(), 2);
        // A failing family check ends the group there too.
        assert_eq!(queue.take_group(|b| b.count() == 0).len(), 1);
    }

    #[test]
    fn a_sync_leader_takes_writers_that_do_not_sync_but_not_unlogged_ones() {
        let mut queue = WriteQueue::default();
        queue.push(request(true, false, b"a"));
        queue.push(request(false, false, b"b"));
        queue.push(request(false, true, b"c"));
        assert_eq!(queue.take_group(|_| true).len(), 2);
    }

    #[test]
    fn hand_off_removes_the_followers_and_passing_the_lead_the_leader() {
        let mut queue = WriteQueue::default();
        let all: Vec<_> = [b"a", b"b", b"c", b"d"]
            .iter()
            .map(|k| request(false, false, *k))
            .collect();
        for r in &all {
            queue.push(r.clone());
        }
        let job = Arc::new(CommitJob {
            mems: None,
            pending: super::super::publish::Publisher::new(0).enqueue(3, 3),
            logged: Ok(()),
        });
        queue.hand_off(3, &job);
        assert!(all[1].job.lock().is_some() && all[2].job.lock().is_some());
        assert!(all[3].job.lock().is_none());
        assert_eq!(queue.position(&all[0]), Some(0));
        assert_eq!(queue.position(&all[3]), Some(1));
        queue.pass_the_lead();
        assert_eq!(queue.position(&all[3]), Some(0));
        assert!(all[3].signalled.load(Ordering::Acquire));
        assert_eq!(queue.len(), 1);
    }

    #[test]
    fn stamping_numbers_members_in_queue_order() {
        let group = vec![request(false, false, b"a"), request(false, false, b"b")];
        let combined = stamp_group(&group, 10).unwrap().unwrap();
        assert_eq!(combined.sequence(), 10);
        assert_eq!(combined.count(), 2);
        assert_eq!(group[1].batch.lock().sequence(), 11);
        let alone = vec![request(false, false, b"c")];
        assert!(stamp_group(&alone, 12).unwrap().is_none());
        assert_eq!(alone[0].batch.lock().sequence(), 12);
    }
}
