//! The background flush thread: turns full memtables into L0 tables, oldest
//! first, and installs each with a MANIFEST edit.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use super::events::Event;
use super::info_log::info;
use super::manifest_writer;
use super::{DbInner, DbState};
use crate::blob::{BlobFileBuilder, BlobOutput};
use crate::crash_point::crash_point;
use crate::error::{Error, Result};
use crate::filename::{log_file_name, parse_file_name, table_file_name, FileType};
use crate::flush::{write_level0_table, TableOwner};
use crate::listener::{FlushJobInfo, TableFileCreationInfo, TableFileCreationReason};
use crate::statistics::{thread_cpu_micros, Ticker};
use crate::version::{FileMetaData, VersionEdit};
use parking_lot::MutexGuard;

pub(super) fn spawn_flush_thread(inner: Arc<DbInner>) -> Result<JoinHandle<()>> {
    let dir = inner.dir.clone();
    std::thread::Builder::new()
        .name("strata-flush".into())
        .spawn(move || flush_loop(&inner))
        .map_err(|e| Error::io("start the flush thread for", dir, e))
}

fn flush_loop(inner: &DbInner) {
    let mut state = inner.state.lock();
    loop {
        // Wait for the oldest full memtable, or for shutdown.
        if inner.shutting_down.load(Ordering::Acquire) {
            return;
        }
        if let Some(recovery) = state
            .recovery
            .auto_recovery
            .filter(|_| state.recovery.bg_error.is_some())
        {
            if Instant::now() < recovery.at {
                inner.bg_cv.wait_until(&mut state, recovery.at);
                continue;
            }
            let resumed = MutexGuard::unlocked(&mut state, || super::resume::resume(inner));
            if let Err(e) = resumed {
                info!(
                    inner.info_log,
                    "automatic recovery failed, retrying later: {e}"
                );
                state.recovery.schedule();
            }
            continue;
        }
        if state.recovery.bg_error.is_some() || family_to_flush(&state).is_none() {
            inner.bg_cv.wait(&mut state);
            continue;
        }
        if let Err(e) = flush_oldest(inner, &mut state) {
            inner.set_bg_error(&mut state, e);
        }
        inner.bg_cv.notify_all();
    }
}

/// The family whose oldest full memtable is the oldest of all (the one
/// holding up the oldest WAL).
pub(super) fn family_to_flush(state: &DbState) -> Option<u32> {
    state
        .cfs
        .iter()
        .filter_map(|(&id, family)| family.imm.back().map(|imm| (imm.log_number, id)))
        .min()
        .map(|(_, id)| id)
}

/// Writes the oldest immutable memtable of the family [`family_to_flush`]
/// names to an L0 table and installs it with a MANIFEST edit that makes its
/// WAL obsolete; the lock is released while the table is written. Used by
/// the flush thread and by `resume`.
pub(super) fn flush_oldest(inner: &DbInner, state: &mut MutexGuard<'_, DbState>) -> Result<()> {
    let Some(id) = family_to_flush(state) else {
        return Ok(());
    };
    let Some(family) = state.cfs.get(&id) else {
        return Ok(());
    };
    let Some(oldest) = family.imm.back() else {
        return Ok(());
    };
    let (imm, next_log_number) = (oldest.mem.clone(), oldest.next_log_number);
    let (table_options, cf_shared) = (family.options.l0_table_options(), family.shared.clone());
    let blob_options = family.options.blob.clone();
    let number = state.versions.new_file_number();
    // Spared by obsolete-table deletion until installed.
    state.jobs.pending_outputs.push(number);
    info!(
        inner.info_log,
        "[{}] flush: memtable of {} entries, {} bytes -> table #{number}",
        cf_shared.name,
        imm.len(),
        imm.memory_usage()
    );
    let cpu_start = thread_cpu_micros();
    let flush_info = |file: Option<&FileMetaData>, blob_bytes: u64| FlushJobInfo {
        cf_name: cf_shared.name.clone(),
        file_path: table_file_name(&inner.dir, number),
        file_number: number,
        file_size: file.map_or(0, |f| f.file_size),
        blob_bytes,
        num_entries: file.map_or(0, |_| imm.len() as u64),
        smallest_seqno: file.map_or(0, |f| f.smallest_seqno),
        largest_seqno: file.map_or(0, |f| f.largest_seqno),
    };
    if inner.events.active() {
        inner.events.send(Event::FlushBegin(flush_info(None, 0)));
    }
    // With other families, one of them may still need the WALs this
    // memtable's writes are in: those must be durable before this table
    // holds the writes, or a crash that cut them would leave this family
    // ahead of the point recovery stops at (see `retired_wals.rs`).
    let sync_wals = state.cfs.len() > 1;
    let output = MutexGuard::unlocked(state, || {
        crash_point!("flush.before_table");
        // Blob files are numbered after the table, so `number` in the
        // pending outputs spares them too.
        let new_blob_number = || inner.state.lock().versions.new_file_number();
        let blobs = blob_options.separates_at_flush().then(|| {
            let out = BlobOutput {
                fs: &*inner.flush_fs,
                dir: &inner.dir,
                new_file_number: &new_blob_number,
                column_family_id: id,
            };
            BlobFileBuilder::new(out, &blob_options, 0).with_prepopulate(&inner.blobs)
        });
        let out = write_level0_table(
            &*inner.flush_fs,
            &inner.dir,
            number,
            TableOwner {
                family_id: id,
                family_name: &cf_shared.name,
                log_number: next_log_number,
            },
            &imm,
            &table_options,
            blobs,
        )?;
        if sync_wals {
            inner.retired_wals.sync_below(next_log_number)?;
        }
        Ok(out)
    });
    crash_point!("flush.before_install");
    let installed = match output {
        Ok(out) if state.cfs.contains_key(&id) => {
            let mut edit = VersionEdit::new();
            edit.set_column_family(id)
                .set_log_number(next_log_number)
                .set_min_log_number_to_keep(logs_needed_after_flush(state, id));
            edit.blob_file_additions
                .extend(out.blob_files.iter().copied());
            if let Some(file) = &out.file {
                edit.add_file(0, file.clone());
            }
            manifest_writer::log_and_apply(inner, state, &mut edit).map(|done| done.then_some(out))
        }
        Ok(_) => Ok(None),
        Err(e) => Err(e),
    };
    state.jobs.release_pending_output(number);
    let installed = installed.inspect_err(|e| {
        info!(
            inner.info_log,
            "flush of table #{number} failed, writes stop: {e}"
        );
    })?;
    let Some(out) = installed else {
        // The family was dropped while its table was written: nothing to
        // install, and the table is obsolete (the sweep deletes it once the
        // number is released).
        info!(
            inner.info_log,
            "[{}] flush: family dropped meanwhile; table #{number} discarded", cf_shared.name
        );
        return Ok(());
    };
    if let Some(family) = state.cfs.get_mut(&id) {
        family.imm.pop_back();
    }
    state.jobs.flushes_completed += 1;
    // Blob bytes count as written, as they do in RocksDB's flush tickers.
    let bytes = out.file.as_ref().map_or(0, |f| f.file_size) + out.blob_bytes;
    inner.tick(Ticker::BlobFileBytesWritten, out.blob_bytes);
    let micros = u64::try_from(out.micros).unwrap_or(u64::MAX);
    let cpu_micros = thread_cpu_micros().saturating_sub(cpu_start);
    cf_shared
        .stats
        .record_flush(bytes, out.blob_bytes, micros, cpu_micros);
    inner.stats.record_flush(bytes);
    inner.tick(Ticker::FlushWriteBytes, bytes);
    if let Some(stats) = &inner.options.statistics {
        stats.record(crate::statistics::Histogram::FlushTime, micros);
    }
    inner.install_super_version(state, id);
    if inner.events.active() {
        let info = flush_info(out.file.as_ref(), out.blob_bytes);
        if out.file.is_some() {
            inner
                .events
                .send(Event::TableFileCreated(TableFileCreationInfo {
                    cf_name: info.cf_name.clone(),
                    file_path: info.file_path.clone(),
                    file_size: info.file_size,
                    reason: TableFileCreationReason::Flush,
                }));
        }
        inner.events.send(Event::FlushCompleted(info));
    }
    let log_number = state.versions.min_log_number_to_keep();
    crash_point!("flush.installed");
    // Counted as a sweep, so `wait_for_compaction` returns only once the
    // obsolete WALs are gone too.
    state.jobs.sweeps_running += 1;
    MutexGuard::unlocked(state, || {
        info!(
            inner.info_log,
            "[{}] flush: table #{number} done, {bytes} bytes in {micros} us; WALs below #{log_number} obsolete",
            cf_shared.name
        );
        info!(
            inner.info_log,
            "EVENT_LOG_v1 {{\"cf_name\": \"{}\", \"event\": \"flush_finished\", \"output_level\": 0, \
             \"file_number\": {number}, \"file_size\": {bytes}, \"entries\": {}, \"memtable_bytes\": {}, \
             \"micros\": {micros}}}",
            cf_shared.name,
            imm.len(),
            imm.memory_usage()
        );
        delete_obsolete_wals(inner, log_number);
    });
    state.jobs.sweeps_running -= 1;
    inner.bg_cv.notify_all();
    Ok(())
}

/// The oldest WAL any family needs once family `flushed`'s oldest full
/// memtable is in a table: every other family's oldest unflushed write, and
/// the flushed family's next memtable's.
fn logs_needed_after_flush(state: &DbState, flushed: u32) -> u64 {
    let current = state.commit.wal_number;
    state
        .cfs
        .iter()
        .map(|(&id, family)| {
            if id != flushed {
                return family.oldest_log_needed(current);
            }
            let newer = family
                .imm
                .len()
                .checked_sub(2)
                .and_then(|i| family.imm.get(i));
            match newer {
                Some(imm) => imm.log_number.min(current),
                None if family.mem.is_empty() => current,
                None => family.mem_log_number.min(current),
            }
        })
        .min()
        .unwrap_or(current)
}

/// Removes WAL files numbered below `log_number`: their memtables are in durable
/// tables named by a durable MANIFEST edit.
pub(super) fn delete_obsolete_wals(inner: &DbInner, log_number: u64) {
    inner.retired_wals.forget_below(log_number);
    if inner.state.lock().jobs.deletions_held > 0 {
        // A checkpoint is copying WALs; the next flush deletes these.
        return;
    }
    let Ok(names) = inner.fs.list(&inner.dir) else {
        return;
    };
    for name in names {
        if let Some(FileType::Log(n)) = parse_file_name(&name) {
            if n < log_number {
                crash_point!("wal.delete_obsolete");
                if let Err(e) = inner.fs.remove(&log_file_name(&inner.dir, n)) {
                    info!(inner.info_log, "could not delete obsolete WAL #{n}: {e}");
                }
            }
        }
    }
}
