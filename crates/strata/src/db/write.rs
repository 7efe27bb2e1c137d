//! The write path: group commit.
//!
//! Writers queue up under the DB mutex. The writer at the front is the leader: it
//! makes room (switching the memtable when it is full), takes a group of queued
//! writers, assigns their sequence numbers, and — with the mutex released —
//! writes the whole group to the WAL as one record (one `write`, at most one
//! fsync) and inserts it into the memtable. It then publishes the new visible
//! sequence number, so the group becomes readable at once, and wakes the group.
//! Waiting writers block on a condition variable; nobody spins.
//!
//! A write is acknowledged only after its WAL bytes are handed to the OS (and
//! fsynced if `sync`). After a failed WAL write the database refuses writes: the
//! file's state is unknown, so retrying could acknowledge a write that is lost.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::{Condvar, Mutex, MutexGuard};

use super::info_log::info;
use super::{DbInner, DbState, ImmMemTable};
use crate::error::Result;
use crate::filename::log_file_name;
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::wal::LogWriter;
use crate::write::WriteBatch;

/// Largest group a leader assembles (bytes of batches), as RocksDB's 1 MiB.
const MAX_GROUP_BYTES: usize = 1 << 20;

/// One queued write (or, with `force_flush`, a request to switch the memtable).
#[derive(Debug)]
pub(crate) struct WriteRequest {
    /// The leader stamps the sequence number into its own batch in place.
    batch: Mutex<WriteBatch>,
    sync: bool,
    disable_wal: bool,
    force_flush: bool,
    /// Set by the leader that completes this request.
    outcome: Mutex<Option<Result<()>>>,
    cv: Condvar,
}

pub(crate) fn write(inner: &DbInner, options: &WriteOptions, batch: WriteBatch) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    submit(inner, options, batch, false)
}

/// Switches the memtable (through the write queue, so it orders with writes) and
/// waits until every full memtable has been flushed.
pub(crate) fn flush(inner: &DbInner) -> Result<()> {
    submit(inner, &WriteOptions::default(), WriteBatch::new(), true)?;
    let mut state = inner.state.lock();
    loop {
        if let Some(e) = &state.bg_error {
            return Err(e.clone());
        }
        if state.imm.is_empty() {
            return Ok(());
        }
        inner.bg_cv.wait(&mut state);
    }
}

fn submit(
    inner: &DbInner,
    options: &WriteOptions,
    batch: WriteBatch,
    force_flush: bool,
) -> Result<()> {
    let request = Arc::new(WriteRequest {
        batch: Mutex::new(batch),
        sync: options.sync,
        disable_wal: options.disable_wal,
        force_flush,
        outcome: Mutex::new(None),
        cv: Condvar::new(),
    });
    let mut state = inner.state.lock();
    state.writers.push_back(request.clone());
    loop {
        if let Some(outcome) = request.outcome.lock().take() {
            return outcome;
        }
        if state
            .writers
            .front()
            .is_some_and(|f| Arc::ptr_eq(f, &request))
        {
            break;
        }
        request.cv.wait(&mut state);
    }
    lead(inner, &mut state, &request)
}

/// Runs with the lock held by the writer at the front of the queue.
fn lead(
    inner: &DbInner,
    state: &mut MutexGuard<'_, DbState>,
    leader: &Arc<WriteRequest>,
) -> Result<()> {
    let mut result = make_room(inner, state, leader.force_flush);
    let mut group_len = 1;
    if result.is_ok() && !leader.force_flush {
        let group = take_group(state, leader);
        group_len = group.len();
        let first_seq = state.versions.last_sequence() + 1;
        let mem = state.mem.clone();
        let committed = MutexGuard::unlocked(state, || commit(inner, &group, first_seq, &mem));
        match committed {
            Ok(last_seq) => {
                state.versions.set_last_sequence(last_seq);
                inner.visible_seq.store(last_seq, Ordering::Release);
                if leader.disable_wal {
                    state.unpersisted_writes = true;
                }
            }
            Err(e) => {
                info!(inner.info_log, "write failed, refusing further writes: {e}");
                state.bg_error.get_or_insert(e.clone());
                result = Err(e);
            }
        }
    }
    // Complete the group: followers get the leader's outcome.
    for _ in 1..group_len {
        if let Some(follower) = state.writers.get(1).cloned() {
            *follower.outcome.lock() = Some(result.clone());
            state.writers.remove(1);
            follower.cv.notify_one();
        }
    }
    state.writers.pop_front();
    if let Some(next) = state.writers.front() {
        next.cv.notify_one();
    }
    result
}

/// The leader plus followers that can share its WAL record: same `disable_wal`,
/// not a sync write under a non-sync leader, no flush requests, bounded size.
fn take_group(state: &DbState, leader: &Arc<WriteRequest>) -> Vec<Arc<WriteRequest>> {
    let mut group = vec![leader.clone()];
    let mut bytes = leader.batch.lock().approximate_size();
    for w in state.writers.iter().skip(1) {
        let compatible =
            !w.force_flush && w.disable_wal == leader.disable_wal && (leader.sync || !w.sync);
        bytes += w.batch.lock().approximate_size();
        if !compatible || bytes > MAX_GROUP_BYTES {
            break;
        }
        group.push(w.clone());
    }
    group
}

/// Writes the group to the WAL and the memtable; returns the last sequence
/// number used. Runs without the DB mutex.
fn commit(
    inner: &DbInner,
    group: &[Arc<WriteRequest>],
    first_seq: u64,
    mem: &MemTable,
) -> Result<u64> {
    let leader = &group[0];
    let mut own = leader.batch.lock();
    let mut combined;
    let batch = if group.len() == 1 {
        own.set_sequence(first_seq);
        &*own
    } else {
        combined = WriteBatch::new();
        combined.append(&own)?;
        for w in &group[1..] {
            combined.append(&w.batch.lock())?;
        }
        combined.set_sequence(first_seq);
        &combined
    };
    if !leader.disable_wal {
        let mut wal = inner.wal.lock();
        let wal = wal.as_mut().ok_or_else(|| crate::Error::Busy {
            reason: "the WAL is closed".into(),
        })?;
        wal.add_record(batch.data())?;
        wal.flush()?;
        if leader.sync {
            wal.sync()?;
        }
    }
    batch.insert_into(mem)?;
    Ok(first_seq + u64::from(batch.count()) - 1)
}

/// Makes sure the active memtable has room, switching it (and the WAL) when it
/// is full or `force` asks. Waits, without spinning, while every memtable is full.
fn make_room(inner: &DbInner, state: &mut MutexGuard<'_, DbState>, force: bool) -> Result<()> {
    let mut force = force;
    let mut stalled = false;
    loop {
        if let Some(e) = &state.bg_error {
            return Err(e.clone());
        }
        let full = state.mem.memory_usage() >= inner.options.write_buffer_size;
        if !(full || force) || (force && state.mem.is_empty()) {
            return Ok(());
        }
        if state.imm.len() + 1 >= inner.options.max_write_buffer_number {
            if !stalled {
                info!(
                    inner.info_log,
                    "stalling writes: all {} memtables are full",
                    inner.options.max_write_buffer_number
                );
                stalled = true;
            }
            inner.bg_cv.wait(state);
            continue;
        }
        switch_memtable(inner, state)?;
        force = false;
    }
}

/// Starts a new WAL and memtable; the old memtable joins the flush queue.
fn switch_memtable(inner: &DbInner, state: &mut DbState) -> Result<()> {
    let number = state.versions.new_file_number();
    let path = log_file_name(&inner.dir, number);
    let created = inner.fs.create(&path).and_then(|file| {
        // The new WAL's directory entry must be durable before writes in it are
        // acknowledged as synced.
        inner.fs.sync_dir(&inner.dir)?;
        Ok(file)
    });
    let file = match created {
        Ok(file) => file,
        Err(e) => {
            state.bg_error.get_or_insert(e.clone());
            return Err(e);
        }
    };
    let old_wal = inner.wal.lock().replace(LogWriter::new(file));
    if let Some(mut old) = old_wal {
        // Every acknowledged write already reached the OS; the sync makes the
        // finished WAL durable while its memtable waits to be flushed.
        if let Err(e) = old.sync() {
            state.bg_error.get_or_insert(e.clone());
            return Err(e);
        }
    }
    let old_mem = std::mem::replace(
        &mut state.mem,
        Arc::new(MemTable::new(inner.memtable_arena_bytes())),
    );
    state.imm.push_front(ImmMemTable {
        mem: old_mem,
        next_log_number: number,
    });
    inner.install_super_version(state);
    inner.bg_cv.notify_all();
    Ok(())
}
