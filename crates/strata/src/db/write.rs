//! The write path: a commit pipeline.
//!
//! Writers queue up under the DB mutex. The writer at the front is the leader:
//! it makes room (switching the memtable when it is full), takes a group of
//! queued writers, numbers their batches, queues the group with the
//! [`Publisher`], and — with the mutex released — writes the whole group to
//! the WAL as one record (one `write`, at most one fsync, so sync writers
//! share it). Then it hands the group its memtables and gives up the front of
//! the queue: the next leader forms and writes the next group while this one
//! is still inserting. Every member inserts its own batch, in parallel with
//! the other members and the other groups (the skiplist takes concurrent
//! inserts), and the publisher makes each group readable in sequence order
//! once all of its members and every earlier group are in. A writer returns
//! when its own batch is readable.
//!
//! Only the leader writes the WAL, and it gives up the front only after the
//! write, so WAL records are in sequence order. A memtable switch waits until
//! no group is inserting (`Publisher::wait_idle`), so an insert never lands in
//! a memtable that is being flushed.
//!
//! A waiting writer spins, then yields, for a few microseconds before it
//! blocks (see `write/spin.rs`); only writers near the front spin, so on an
//! oversubscribed machine the others leave the cores to those doing work.
//!
//! A write is acknowledged only after its WAL bytes are handed to the OS (and
//! fsynced if `sync`). After a failed WAL write the database refuses writes: the
//! file's state is unknown, so retrying could acknowledge a write that is lost.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::MutexGuard;

use super::info_log::info;
use super::stall;
use super::stats::DbStats;
use super::{DbInner, DbState};
use crate::cf::stats::StallCounter;
use crate::cf::{CfShared, ImmMemTable};
use crate::crash_point::crash_point;
use crate::error::Result;
use crate::filename::log_file_name;
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::perf_context::PerfTimer;
use crate::statistics::{micros_since, Histogram, Ticker};
use crate::wal::meta::PredecessorWal;
use crate::wal::LogWriter;
use crate::write::commit::{stamp_group, CommitJob, FamilyMemTables, WriteRequest};
use crate::write::controller::StallCondition;
use crate::write::spin::spin_until;
use crate::write::WriteBatch;

pub(crate) fn write(inner: &DbInner, options: &WriteOptions, batch: WriteBatch) -> Result<()> {
    inner.check_writable()?;
    if batch.db_instance().is_some_and(|i| i != inner.instance) {
        return Err(crate::Error::invalid_argument(
            "column_family",
            "the batch was given column family handles of another database (or of an earlier \
             open of this one)",
        ));
    }
    if batch.is_empty() {
        return Ok(());
    }
    let Some(stats) = &inner.options.statistics else {
        return submit(inner, options, batch, None);
    };
    let start = Instant::now();
    let (keys, bytes) = (u64::from(batch.count()), batch.data().len() as u64);
    let result = submit(inner, options, batch, None);
    if result.is_ok() {
        stats.add(Ticker::NumberKeysWritten, keys);
        stats.add(Ticker::BytesWritten, bytes);
    }
    stats.record(Histogram::DbWriteMicros, micros_since(start));
    result
}

/// Switches family `cf`'s memtable (through the write queue, so it orders
/// with writes) and waits until every full memtable of it has been flushed,
/// and the WALs that made obsolete are deleted.
pub(crate) fn flush(inner: &DbInner, cf: &CfShared) -> Result<()> {
    inner.check_writable()?;
    cf.check_usable(inner.instance)?;
    submit(
        inner,
        &WriteOptions::default(),
        WriteBatch::new(),
        Some(cf.id),
    )?;
    let mut state = inner.state.lock();
    loop {
        if let Some(e) = inner.wait_error(&state) {
            return Err(e);
        }
        // A family dropped meanwhile has nothing left to flush. The flush's
        // deletion of the WALs it made obsolete counts as a sweep: once
        // none runs, the directory holds what the flush left.
        let flushed = state.cfs.get(&cf.id).is_none_or(|f| f.imm.is_empty());
        if flushed && state.jobs.sweeps_running == 0 {
            return Ok(());
        }
        inner.bg_cv.wait(&mut state);
    }
}

/// Runs `f` under the DB mutex with writes stopped: it leads the write queue
/// (so no write is numbered meanwhile) and every numbered write is in its
/// memtable and published. `f` may release the mutex (to wait for a flush)
/// and keeps the lead. Ingestion uses it to see the memtables and the last
/// sequence number hold still while it decides and installs.
pub(crate) fn with_writes_stopped<T>(
    inner: &DbInner,
    f: impl FnOnce(&mut MutexGuard<'_, DbState>) -> Result<T>,
) -> Result<T> {
    let request = Arc::new(WriteRequest::exclusive());
    let mut state = match take_turn(inner, &request) {
        Turn::Finished(result) => return result.and_then(|()| Err(lost_lead())),
        Turn::Lead(state) => state,
    };
    MutexGuard::unlocked(&mut state, || inner.publisher.wait_idle());
    let result = f(&mut state);
    state.commit.writers.pass_the_lead();
    result
}

fn lost_lead() -> crate::Error {
    crate::Error::invalid_argument(
        "write queue",
        "an exclusive request was completed as a write",
    )
}

/// Switches family `id`'s memtable if it holds anything, from a caller that
/// leads the write queue ([`with_writes_stopped`]); waits while every
/// memtable of it is full.
pub(super) fn switch_memtable_of(
    inner: &DbInner,
    state: &mut MutexGuard<'_, DbState>,
    id: u32,
) -> Result<()> {
    make_room(inner, state, Some(id), false)
}

/// How a queued request left the wait: done (as a follower, or failed by a
/// leader), or at the front of the queue with the DB mutex.
enum Turn<'a> {
    Finished(Result<()>),
    Lead(MutexGuard<'a, DbState>),
}

fn submit(
    inner: &DbInner,
    options: &WriteOptions,
    batch: WriteBatch,
    force_flush: Option<u32>,
) -> Result<()> {
    let request = Arc::new(WriteRequest::new(options, batch, force_flush));
    match take_turn(inner, &request) {
        Turn::Finished(result) => result,
        Turn::Lead(state) => lead(inner, state, &request),
    }
}

/// Queues `request` and waits until it leads or is done.
fn take_turn<'a>(inner: &'a DbInner, request: &Arc<WriteRequest>) -> Turn<'a> {
    let mut state = inner.state.lock();
    if request.no_slowdown && (state.commit.writes_stopped || stall::current(&state).is_some()) {
        return Turn::Finished(Err(stall_error()));
    }
    state.commit.writers.push(request.clone());
    // Whether this wait has spun already: spin once, re-check, then block.
    let mut spun = false;
    loop {
        if let Some(outcome) = request.outcome.lock().take() {
            return Turn::Finished(outcome);
        }
        let job = request.job.lock().take();
        if let Some(job) = job {
            // The leader removed this request from the queue: what is left
            // needs no DB mutex.
            drop(state);
            DbStats::add(&inner.stats.parallel_inserts, 1);
            return Turn::Finished(complete(inner, request, &job));
        }
        let position = state.commit.writers.position(request);
        if position == Some(0) {
            break;
        }
        // Spin only with a core to spin on: a writer further back than there
        // are cores would take one from a writer doing work.
        if !spun && position.is_some_and(|p| p < inner.spin_positions) {
            // Every change this writer waits for is made under the DB mutex,
            // so the re-check at the top of the loop decides; the spin only
            // avoids blocking when the change comes soon.
            spun = !MutexGuard::unlocked(&mut state, || {
                spin_until(|| request.signalled.swap(false, Ordering::AcqRel))
            });
            continue;
        }
        request.cv.wait(&mut state);
        spun = false;
    }
    Turn::Lead(state)
}

/// Runs with the lock held by the writer at the front of the queue.
fn lead(
    inner: &DbInner,
    mut state: MutexGuard<'_, DbState>,
    leader: &Arc<WriteRequest>,
) -> Result<()> {
    let mut result = if leader.force_flush.is_some() {
        Ok(())
    } else {
        let bytes = leader.batch.lock().approximate_size();
        stall_if_behind(inner, &mut state, bytes, leader.no_slowdown)
    };
    if result.is_ok() {
        result = make_room(inner, &mut state, leader.force_flush, leader.no_slowdown);
    }
    if result.is_ok() && leader.force_flush.is_none() {
        // A batch naming a dropped family fails whole, before any of it is
        // written; the writers behind it are not held up by it.
        result = check_families(&state, &leader.batch.lock());
    }
    if result.is_err() || leader.force_flush.is_some() {
        state.commit.writers.pass_the_lead();
        return result;
    }
    let group = state
        .commit
        .writers
        .take_group(|batch| check_families(&state, batch).is_ok());
    // Number the group and queue it for publication, in one step under the
    // DB mutex, so groups publish in the order they are numbered.
    let first_seq = state.versions.last_sequence() + 1;
    let count: u64 = group
        .iter()
        .map(|w| u64::from(w.batch.lock().count()))
        .sum();
    let last_seq = first_seq + count - 1;
    state.versions.set_last_sequence(last_seq);
    let pending = inner.publisher.enqueue(last_seq, group.len());
    // The memtables are taken while the families were checked live: a
    // family dropped while the group is in the WAL write keeps its memtable
    // here, so the group still commits whole and the dropped family's part
    // goes with the family (as in RocksDB). Taken after the write, a dropped
    // family's memtable would be missing and half the batch applied.
    let mems = FamilyMemTables::new(
        state
            .cfs
            .iter()
            .map(|(&id, family)| (id, family.mem.clone()))
            .collect(),
    );
    let timer = PerfTimer::start();
    let logged = MutexGuard::unlocked(&mut state, || write_wal(inner, &group, first_seq));
    timer.stop(|c| &mut c.write_wal_time);
    let mems = match &logged {
        Ok(()) => {
            if leader.disable_wal {
                for member in &group {
                    for id in member.batch.lock().families() {
                        if let Some(family) = state.cfs.get_mut(&id) {
                            family.mem_unlogged = true;
                        }
                    }
                }
            }
            Some(mems)
        }
        Err(e) => {
            info!(inner.info_log, "write failed, refusing further writes: {e}");
            inner.set_bg_error(&mut state, e.clone());
            None
        }
    };
    let job = Arc::new(CommitJob {
        mems,
        pending,
        logged,
    });
    state.commit.writers.hand_off(group.len(), &job);
    state.commit.writers.pass_the_lead();
    drop(state);
    // The next group may now write its WAL record while this one, already
    // in the WAL, is not yet in the memtable.
    crash_point!("write.lead_passed");
    complete(inner, leader, &job)
}

/// A member's part once its group is in the WAL: insert its batch, finish
/// its share of the group, and wait until the batch is readable. Runs without
/// the DB mutex. A panic in application code during the insert (a
/// comparator) is caught long enough to finish the member's share, so the
/// pipeline does not wedge, and to stop further writes — the batch is in the
/// WAL but only partly in the memtable, which reopening repairs — and is then
/// raised again in the writer that caused it.
fn complete(inner: &DbInner, request: &WriteRequest, job: &CommitJob) -> Result<()> {
    let Some(mems) = &job.mems else {
        inner.publisher.finish(&job.pending);
        return job.logged.clone();
    };
    crash_point!("write.before_memtable");
    let timer = PerfTimer::start();
    let inserted = catch_unwind(AssertUnwindSafe(|| mems.insert(&request.batch.lock())));
    timer.stop(|c| &mut c.write_memtable_time);
    crash_point!("write.before_publish");
    let failure = match &inserted {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e.clone()),
        Err(_) => Some(crate::Error::WriterPanicked {
            what: "a memtable insert (in application code: a comparator)".into(),
        }),
    };
    if let Some(e) = failure {
        let mut state = inner.state.lock();
        info!(
            inner.info_log,
            "memtable insert failed, refusing further writes: {e}"
        );
        inner.set_bg_error(&mut state, e);
    }
    inner.publisher.finish(&job.pending);
    match inserted {
        Ok(Ok(())) => {
            inner.publisher.wait_visible(job.pending.last_seq());
            // Readable now, and durable as far as the write asked.
            crash_point!("write.published");
            Ok(())
        }
        Ok(Err(e)) => Err(e),
        Err(panic) => resume_unwind(panic),
    }
}

/// Fails unless every family `batch` names is live, and every family it
/// merges into has a merge operator (RocksDB refuses such a merge too:
/// nothing could ever read the key back).
fn check_families(state: &DbState, batch: &WriteBatch) -> Result<()> {
    for id in batch.merge_families() {
        if let Some(family) = state.cfs.get(&id) {
            if family.options.merge_operator.is_none() {
                return Err(crate::Error::invalid_argument(
                    "merge_operator",
                    format!(
                        "merge into column family {:?}, which has no merge operator \
                         (set CfOptions::merge_operator)",
                        family.shared.name
                    ),
                ));
            }
        }
    }
    for (id, begin, end) in batch.range_deletions() {
        let Some(order) = state.versions.order(id) else {
            continue; // refused below: the family is gone
        };
        if !order.lt(begin, end) {
            return Err(crate::Error::invalid_argument(
                "delete_range",
                format!(
                    "begin key \"{}\" must sort before end key \"{}\" in the order of {}: \
                     the range is empty",
                    begin.escape_ascii(),
                    end.escape_ascii(),
                    order.name()
                ),
            ));
        }
    }
    for id in batch.named_families() {
        if !state.cfs.contains_key(&id) {
            return Err(crate::Error::invalid_argument(
                "column_family",
                format!(
                    "the batch writes to column family {id}, which was dropped or never existed"
                ),
            ));
        }
    }
    Ok(())
}

/// Stamps each member's batch with its first sequence number and writes the
/// group to the WAL as one record (`write/commit.rs` builds it). Runs without
/// the DB mutex.
fn write_wal(inner: &DbInner, group: &[Arc<WriteRequest>], first_seq: u64) -> Result<()> {
    let leader = &group[0];
    let stats = &inner.stats;
    let combined = stamp_group(group, first_seq)?;
    let (mut keys, mut bytes) = (0u64, 0u64);
    for member in group {
        let batch = member.batch.lock();
        keys += u64::from(batch.count());
        bytes += batch.data().len() as u64;
    }
    DbStats::add(&stats.bytes_written, bytes);
    DbStats::add(&stats.writes, group.len() as u64);
    DbStats::add(&stats.keys_written, keys);
    DbStats::add(&stats.write_groups, 1);
    if !leader.disable_wal {
        let mut wal = inner.wal.lock();
        let wal = wal.as_mut().ok_or_else(|| {
            // Only read-only handles have no WAL, and `write` refused them.
            crate::Error::invalid_argument("read_only", "the database was opened read-only")
        })?;
        let before = wal.len();
        crash_point!("wal.append.before");
        match &combined {
            Some(batch) => wal.add_record(batch.data())?,
            None => wal.add_record(leader.batch.lock().data())?,
        }
        if !inner.options.manual_wal_flush {
            wal.flush()?;
        }
        crash_point!("wal.append.after");
        DbStats::add(&stats.wal_bytes, wal.len() - before);
        DbStats::add(&stats.wal_writes, group.len() as u64);
        inner.tick(Ticker::WalFileBytes, wal.len() - before);
        if leader.sync {
            crash_point!("wal.sync.before");
            let start = Instant::now();
            // WALs retired unsynced hold earlier writes: durable first.
            inner.retired_wals.sync_below(u64::MAX)?;
            wal.sync()?;
            crash_point!("wal.sync.after");
            DbStats::add(&stats.wal_syncs, 1);
            inner.record_wal_sync(start);
        }
    }
    Ok(())
}

/// Write stalls: while compaction is behind, slows writes to the write
/// controller's rate (L0 at `level0_slowdown_writes_trigger` files, pending
/// compaction bytes past the soft limit, or memtables a step from their
/// limit; see `write/controller.rs` for how the rate adapts) or stops them
/// (L0 at `level0_stop_writes_trigger`, or past the hard limit) until it
/// catches up. Stopped writers wait on the background condition variable;
/// delayed ones sleep without the DB mutex.
fn stall_if_behind(
    inner: &DbInner,
    state: &mut MutexGuard<'_, DbState>,
    bytes: usize,
    no_slowdown: bool,
) -> Result<()> {
    let started = std::time::Instant::now();
    let mut stopped = false;
    let condition = loop {
        if let Some(e) = inner.wait_error(state) {
            return Err(e);
        }
        let condition = stall::current(state);
        if condition.is_some() {
            if no_slowdown {
                return Err(stall_error());
            }
            state.commit.writers.fail_no_slowdown_waiters(stall_error);
        }
        if !matches!(condition, Some(StallCondition::Stopped { .. })) {
            break condition;
        }
        if !stopped {
            info!(
                inner.info_log,
                "stopping writes: a column family's compaction is behind (L0 files or pending bytes)"
            );
            stopped = true;
        }
        state.commit.writes_stopped = true;
        inner.bg_cv.wait(state);
        state.commit.writes_stopped = false;
    };
    let slow = matches!(condition, Some(StallCondition::Delayed { .. }));
    // A token bucket at the controller's rate: each write pays for its bytes.
    let wait = state.commit.write_controller.delay_for(bytes, slow);
    if !wait.is_zero() {
        MutexGuard::unlocked(state, || std::thread::sleep(wait));
    }
    let stalled = started.elapsed();
    if !stalled.is_zero() && (stopped || slow) {
        inner.record_stall(u64::try_from(stalled.as_micros()).unwrap_or(u64::MAX));
    }
    Ok(())
}

/// The error of a `no_slowdown` write that would have waited.
fn stall_error() -> crate::Error {
    crate::Error::Incomplete {
        reason: "write stall: writes are slowed or stopped (no_slowdown was set)".into(),
    }
}

/// Makes sure every family's active memtable has room, switching the full
/// ones (and the WAL) — and family `force`'s, when it holds anything. Waits,
/// without spinning, while a family that must switch has every memtable full.
fn make_room(
    inner: &DbInner,
    state: &mut MutexGuard<'_, DbState>,
    force: Option<u32>,
    no_slowdown: bool,
) -> Result<()> {
    let mut force = force;
    let mut stalled = false;
    loop {
        if let Some(e) = inner.wait_error(state) {
            return Err(e);
        }
        let to_switch: Vec<u32> = state
            .cfs
            .iter()
            .filter(|(&id, family)| {
                let full = family.mem.memory_usage() >= family.options.write_buffer_size;
                full || (force == Some(id) && !family.mem.is_empty())
            })
            .map(|(&id, _)| id)
            .collect();
        if to_switch.is_empty() {
            return Ok(());
        }
        let waiting_family = to_switch.iter().find_map(|id| {
            let family = state.cfs.get(id)?;
            (family.imm.len() + 1 >= family.options.max_write_buffer_number).then(|| {
                (
                    family.shared.name.clone(),
                    family.options.max_write_buffer_number,
                )
            })
        });
        if let Some((name, max)) = waiting_family {
            if no_slowdown {
                return Err(stall_error());
            }
            state.commit.writers.fail_no_slowdown_waiters(stall_error);
            if !stalled {
                info!(
                    inner.info_log,
                    "stalling writes: all {max} memtables of column family {name:?} are full"
                );
                if let Some(family) = to_switch.first().and_then(|id| state.cfs.get(id)) {
                    family.shared.stats.count_stall(StallCounter::MemtableStop);
                }
                stalled = true;
            }
            let waited = std::time::Instant::now();
            state.commit.writes_stopped = true;
            inner.bg_cv.wait(state);
            state.commit.writes_stopped = false;
            let micros = u64::try_from(waited.elapsed().as_micros()).unwrap_or(u64::MAX);
            inner.record_stall(micros);
            continue;
        }
        switch_memtables(inner, state, &to_switch, true)?;
        force = None;
    }
}

/// Starts a new WAL, and a new memtable for each family in `families`, whose
/// old memtable joins its flush queue.
///
/// The old WAL is not synced here: that fsync, of up to a memtable's worth
/// of bytes, held up every writer queued behind the switch. The new WAL
/// starts with a predecessor record naming the old one and its length, so
/// recovery sees a crash that kept the new WAL's writes but lost the old
/// one's tail (see `wal/meta.rs`), and the old writer is retired
/// (`retired_wals.rs`) until a sync write, `flush_wal(true)`, close or a
/// multi-family flush syncs it. With `retire_old_wal` false (`resume`) the
/// old writer is dropped, with no predecessor record: after a failed write or
/// sync its state on disk is unknown, a second fsync could report success for
/// lost bytes, and resume flushes its memtables to tables instead of relying
/// on it.
///
/// The file work — handing the old WAL's buffer to the OS, creating the new
/// WAL, syncing the directory, writing the predecessor record — runs with the
/// DB mutex released; the caller leads the write queue (or writes are
/// refused), so nothing is written to either WAL meanwhile, and the new WAL
/// is handed over under the mutex.
pub(super) fn switch_memtables(
    inner: &DbInner,
    state: &mut MutexGuard<'_, DbState>,
    families: &[u32],
    retire_old_wal: bool,
) -> Result<()> {
    // No insert may still be running into a memtable this switch retires:
    // its flush would miss it.
    MutexGuard::unlocked(state, || inner.publisher.wait_idle());
    let number = state.versions.new_file_number();
    let path = log_file_name(&inner.dir, number);
    let (old_number, last_sequence) = (state.commit.wal_number, state.versions.last_sequence());
    let prepared: Result<_> = MutexGuard::unlocked(state, || {
        // After an error (`resume`), the old WAL's length is unknown, and
        // resume flushes every memtable so that nothing in it is needed.
        // Otherwise its buffered appends (`manual_wal_flush`) go to the OS
        // before the new WAL exists: a WAL that has a successor then never
        // ends in a partial record, for a reader (`check_consistency` from
        // another process) or after a kill.
        let old_size = if retire_old_wal {
            let mut old = inner.wal.lock();
            old.as_mut()
                .map(|old| old.flush().map(|()| old.len()))
                .transpose()?
        } else {
            None
        };
        let mut wal = LogWriter::new(inner.fs.create(&path)?);
        crash_point!("wal.switch.created");
        // The new WAL's directory entry must be durable before writes in it
        // are acknowledged as synced.
        inner.fs.sync_dir(&inner.dir)?;
        crash_point!("wal.switch.dir_synced");
        if let Some(size) = old_size {
            let predecessor = PredecessorWal {
                number: old_number,
                size,
                last_sequence,
            };
            wal.add_record(&predecessor.encode())?;
            wal.flush()?;
            crash_point!("wal.switch.predecessor_written");
        }
        Ok(wal)
    });
    let wal = match prepared {
        Ok(wal) => wal,
        Err(e) => {
            inner.set_bg_error(state, e.clone());
            return Err(e);
        }
    };
    let old = inner.wal.lock().replace(wal);
    if let (Some(old), true) = (old, retire_old_wal) {
        inner.retired_wals.retire(old_number, old);
    }
    state.commit.wal_number = number;
    for (id, family) in state.cfs.iter_mut() {
        if families.contains(id) && !family.mem.is_empty() {
            let fresh = Arc::new(MemTable::for_family(&family.options));
            let old_mem = std::mem::replace(&mut family.mem, fresh);
            family.imm.push_front(ImmMemTable {
                mem: old_mem,
                log_number: family.mem_log_number,
                next_log_number: number,
                unlogged: std::mem::take(&mut family.mem_unlogged),
            });
            family.mem_log_number = number;
        } else if family.mem.is_empty() {
            // Nothing of this family is in older WALs' unflushed writes.
            family.mem_log_number = number;
        }
    }
    for &id in families {
        inner.install_super_version(state, id);
    }
    inner.bg_cv.notify_all();
    Ok(())
}
