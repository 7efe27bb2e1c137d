//! Background compaction threads: pick a task under the DB mutex, run it
//! without the mutex, install its edit, then delete the files no live version
//! needs.
//!
//! Files of a running task are marked busy so that concurrent compactions take
//! disjoint inputs; the task's version is held for the whole job, so its input
//! files stay on disk even after a newer version drops them.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

use super::info_log::info;
use super::{DbInner, DbState};
use crate::compaction::{job, leveled, CompactionTask};
use crate::error::{Error, Result};
use crate::filename::{parse_file_name, table_file_name, FileType};

pub(super) fn spawn_compaction_threads(inner: &Arc<DbInner>) -> Result<Vec<JoinHandle<()>>> {
    let threads = inner.options.compaction.max_background_jobs - 1;
    (0..threads)
        .map(|i| {
            let inner = inner.clone();
            std::thread::Builder::new()
                .name(format!("strata-compact-{i}"))
                .spawn(move || compaction_loop(&inner))
        })
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| Error::io("start a compaction thread for", &inner.dir, e))
}

/// Picks the next due compaction, if automatic compaction is on and the
/// database is healthy.
pub(super) fn pick_task(inner: &DbInner, state: &DbState) -> Option<CompactionTask> {
    if inner.options.compaction.disable_auto_compactions || state.bg_error.is_some() {
        return None;
    }
    leveled::pick(
        state.versions.current(),
        &inner.options.compaction,
        inner.options.table.compression,
        &state.compacting,
    )
}

fn compaction_loop(inner: &Arc<DbInner>) {
    let mut state = inner.state.lock();
    loop {
        if inner.shutting_down.load(Ordering::Acquire) {
            return;
        }
        let Some(task) = pick_task(inner, &state) else {
            inner.bg_cv.wait(&mut state);
            continue;
        };
        for (_, f) in task.all_inputs() {
            state.compacting.insert(f.number);
        }
        let version = state.versions.current().clone();
        let snapshots = inner.snapshots.sequences();
        let output_floor = state.versions.next_file_number();
        state.pending_outputs.push(output_floor);
        state.running_compactions += 1;
        let outcome = parking_lot::MutexGuard::unlocked(&mut state, || {
            let ctx = job::JobContext {
                fs: &*inner.fs,
                dir: &inner.dir,
                table_cache: &inner.table_cache,
                table_options: &inner.options.table,
                snapshots,
                version: &version,
                num_levels: inner.options.compaction.num_levels,
                new_file_number: &|| inner.state.lock().versions.new_file_number(),
            };
            job::run(&task, &ctx)
        });
        let installed = outcome.and_then(|mut result| {
            state.versions.log_and_apply(&mut result.edit)?;
            Ok(result)
        });
        for (_, f) in task.all_inputs() {
            state.compacting.remove(&f.number);
        }
        state.pending_outputs.retain(|&n| n != output_floor);
        state.running_compactions -= 1;
        match installed {
            Ok(result) => {
                inner.install_super_version(&mut state);
                inner.stats.record_compaction(&task, &result);
                info!(inner.info_log, "{}", event_line(&task, &result));
            }
            Err(e) => {
                info!(
                    inner.info_log,
                    "compaction L{} -> L{} failed, writes stop: {e}",
                    task.start_level,
                    task.output_level
                );
                state.bg_error.get_or_insert(e);
            }
        }
        inner.bg_cv.notify_all();
        let keep = keep_set(&mut state);
        parking_lot::MutexGuard::unlocked(&mut state, || remove_obsolete_tables(inner, &keep));
    }
}

/// A RocksDB-style `EVENT_LOG_v1` line with a JSON body.
fn event_line(task: &CompactionTask, result: &job::JobResult) -> String {
    let numbers = |files: &mut dyn Iterator<Item = u64>| {
        files.map(|n| n.to_string()).collect::<Vec<_>>().join(",")
    };
    format!(
        "EVENT_LOG_v1 {{\"event\": \"compaction_finished\", \"reason\": \"{:?}\", \"start_level\": {}, \
         \"output_level\": {}, \"inputs_start\": [{}], \"inputs_output\": [{}], \"outputs\": [{}], \
         \"trivial_move\": {}, \"bytes_read\": {}, \"bytes_written\": {}, \"bytes_moved\": {}, \
         \"records_in\": {}, \"records_dropped\": {}, \"micros\": {}}}",
        task.reason,
        task.start_level,
        task.output_level,
        numbers(&mut task.inputs.iter().map(|f| f.number)),
        numbers(&mut task.output_level_inputs.iter().map(|f| f.number)),
        numbers(&mut result.outputs.iter().map(|f| f.number)),
        task.trivial_move,
        result.bytes_read_start + result.bytes_read_output,
        result.bytes_written,
        result.bytes_moved,
        result.counts.keys_in,
        result.counts.keys_dropped,
        result.micros,
    )
}

/// What deleting obsolete tables must spare: the tables of every live version,
/// and every number at or above the floor (outputs of running jobs, and of jobs
/// started later, are numbered there). Take it under the DB mutex; use it with
/// [`remove_obsolete_tables`] after releasing the mutex.
pub(super) struct KeepSet {
    live: HashSet<u64>,
    floor: u64,
}

pub(super) fn keep_set(state: &mut DbState) -> KeepSet {
    let floor = state
        .pending_outputs
        .iter()
        .copied()
        .chain([state.versions.next_file_number()])
        .min()
        .unwrap_or(0);
    KeepSet {
        live: state.versions.live_table_numbers(),
        floor,
    }
}

/// Deletes the table files `keep` does not spare.
pub(super) fn remove_obsolete_tables(inner: &DbInner, keep: &KeepSet) {
    let Ok(names) = inner.fs.list(&inner.dir) else {
        return;
    };
    for name in names {
        let Some(FileType::Table(n)) = parse_file_name(&name) else {
            continue;
        };
        if n >= keep.floor || keep.live.contains(&n) {
            continue;
        }
        inner.table_cache.evict(n);
        match inner.fs.remove(&table_file_name(&inner.dir, n)) {
            Ok(()) => info!(inner.info_log, "deleted obsolete table #{n}"),
            Err(e) => info!(inner.info_log, "could not delete obsolete table #{n}: {e}"),
        }
    }
}
