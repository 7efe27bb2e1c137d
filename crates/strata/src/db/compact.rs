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
use std::time::{Duration, Instant};

use parking_lot::MutexGuard;

use super::events::{self, Event};
use super::info_log::info;
use super::{manifest_writer, stall};
use super::{DbInner, DbState};
use crate::compaction::blobs::BlobContext;
use crate::compaction::{fifo, job, leveled, universal, CompactionReason, CompactionTask};
use crate::crash_point::crash_point;
use crate::error::{Error, Result};
use crate::filename::{blob_file_name, parse_file_name, table_file_name, FileType};
use crate::key_order::KeyComparator;
use crate::listener::{TableFileCreationInfo, TableFileCreationReason, TableFileDeletionInfo};
use crate::options::{CfOptions, CompactionStyle};
use crate::statistics::{Histogram, Ticker};
use crate::version::{FileMetaData, Version};

/// Starts the compaction threads numbered `numbers`.
pub(super) fn spawn_compaction_threads(
    inner: &Arc<DbInner>,
    numbers: std::ops::Range<usize>,
) -> Result<Vec<JoinHandle<()>>> {
    numbers
        .map(|i| {
            let inner = inner.clone();
            std::thread::Builder::new()
                .name(format!("strata-compact-{i}"))
                .spawn(move || compaction_loop(&inner, i))
        })
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| Error::io("start a compaction thread for", &inner.dir, e))
}

/// Picks the next compaction of any family, with the family's id, if the
/// database is healthy: the most urgent one (see [`Urgency`]), the highest
/// score among equals, the lowest family id among ties. Taking the first
/// family with any work let one family that always has work (forced blob
/// garbage collection) starve the others into a permanent write stop.
pub(super) fn pick_task(inner: &DbInner, state: &DbState) -> Option<(u32, CompactionTask)> {
    if state.recovery.bg_error.is_some() {
        return None;
    }
    let mut best: Option<(Urgency, u32, CompactionTask)> = None;
    for &id in state.cfs.keys() {
        let Some(task) = pick_task_of(inner, state, id) else {
            continue;
        };
        if writes_where_one_runs(state, id, &task) {
            continue;
        }
        let urgency = urgency(state, id, &task);
        let better = best
            .as_ref()
            .is_none_or(|(u, _, b)| urgency > *u || (urgency == *u && task.score > b.score));
        if better {
            best = Some((urgency, id, task));
        }
    }
    best.map(|(_, id, task)| (id, task))
}

/// How much a compaction matters to writers, least first. RocksDB queues
/// families that need compaction and serves them by score; here a family
/// whose writes are slowed or stopped comes first, so no amount of work
/// elsewhere can hold its writers back forever.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Urgency {
    /// Work no write waits for: forced blob garbage collection, FIFO's TTL.
    Optional,
    /// A level past its target (or an L0 past its trigger).
    Due,
    /// The family's writes are slowed or stopped until it compacts.
    Stalling,
}

fn urgency(state: &DbState, id: u32, task: &CompactionTask) -> Urgency {
    let stalling = state.cfs.get(&id).is_some_and(|family| {
        let l0_files = state.versions.current(id).num_files(0);
        stall::family_condition(family, l0_files).is_some()
    });
    match task.reason {
        _ if stalling => Urgency::Stalling,
        CompactionReason::ForcedBlobGc | CompactionReason::FifoTtl => Urgency::Optional,
        _ => Urgency::Due,
    }
}

/// A running compaction: what no other may write over until it installs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RunningCompaction {
    pub(super) family: u32,
    output_level: usize,
    /// The user keys its inputs span, which its outputs stay within.
    smallest: Vec<u8>,
    largest: Vec<u8>,
}

impl RunningCompaction {
    fn of(family: u32, task: &CompactionTask, order: &KeyComparator) -> Self {
        let (smallest, largest) = input_range(task, order).unwrap_or_default();
        RunningCompaction {
            family,
            output_level: task.output_level,
            smallest: smallest.to_vec(),
            largest: largest.to_vec(),
        }
    }
}

/// The user keys `task`'s inputs span, in the family's `order`.
fn input_range<'a>(
    task: &'a CompactionTask,
    order: &KeyComparator,
) -> Option<(&'a [u8], &'a [u8])> {
    crate::compaction::key_range(task.all_inputs().map(|(_, f)| f), order)
}

/// Whether a running compaction of `family` writes into `level` within the
/// user keys `[lo, hi]` (ingestion must not put a file where one will land).
pub(super) fn compaction_writes_into(
    state: &DbState,
    family: u32,
    level: usize,
    lo: &[u8],
    hi: &[u8],
    order: &KeyComparator,
) -> bool {
    state.jobs.running_compactions.iter().any(|r| {
        r.family == family
            && r.output_level == level
            && order.le(&r.smallest, hi)
            && order.le(lo, &r.largest)
    })
}

/// Whether `task` would write into a key range of its output level that a
/// running compaction of the family writes too. The two pickers only see
/// the files installed, not the outputs under way, so two jobs could
/// otherwise both write overlapping files into one sorted level (RocksDB's
/// `RangeOverlapWithCompaction`).
fn writes_where_one_runs(state: &DbState, family: u32, task: &CompactionTask) -> bool {
    let Some(order) = state.versions.order(family) else {
        return false;
    };
    let Some((smallest, largest)) = input_range(task, order) else {
        return false;
    };
    compaction_writes_into(state, family, task.output_level, smallest, largest, order)
}

/// Picks the next due compaction of family `id`, if automatic compaction is
/// on for it and the database is healthy.
pub(super) fn pick_task_of(inner: &DbInner, state: &DbState, id: u32) -> Option<CompactionTask> {
    let family = state.cfs.get(&id)?;
    let options = &family.options.compaction;
    if options.disable_auto_compactions || state.recovery.bg_error.is_some() {
        return None;
    }
    let version = state.versions.current(id);
    let codec = family.options.table.compression;
    match options.compaction_style {
        CompactionStyle::Level => {
            let busy = &state.jobs.compacting;
            leveled::pick(&version, options, codec, busy).or_else(|| {
                let blob = &family.options.blob;
                leveled::pick_forced_blob_gc(&version, options, blob, codec, busy)
            })
        }
        CompactionStyle::Universal => {
            universal::pick(&version, options, codec, &state.jobs.compacting)
        }
        CompactionStyle::Fifo => {
            let expired = expired_tables(inner, &version, options.ttl);
            fifo::pick(&version, options, &expired, &state.jobs.compacting)
        }
    }
}

/// FIFO: the tables created more than `ttl` seconds ago (by the creation time
/// in their properties), among the open ones: this runs under the DB mutex,
/// so it opens nothing (see [`open_fifo_ttl_tables`]).
fn expired_tables(inner: &DbInner, version: &Version, ttl: u64) -> HashSet<u64> {
    if ttl == 0 {
        return HashSet::new();
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    version
        .all_files()
        .filter(|(_, f)| {
            inner
                .table_cache
                .get_if_open(f.number)
                .is_some_and(|t| t.properties().creation_time.saturating_add(ttl) <= now)
        })
        .map(|(_, f)| f.number)
        .collect()
}

/// Opens, with the DB mutex released, the tables of FIFO families with a
/// `ttl` that are not open yet, so that [`expired_tables`] sees their
/// creation times without file I/O under the mutex. The mutex may have been
/// released: the caller reads the state afresh. A table that cannot be
/// opened is left to reads to report, and one the table cache closes again
/// (`max_open_files`) waits for the next round.
fn open_fifo_ttl_tables(inner: &DbInner, state: &mut MutexGuard<'_, DbState>) {
    let closed: Vec<(Arc<FileMetaData>, usize, Arc<Version>)> = state
        .cfs
        .iter()
        .filter(|(_, family)| {
            let c = &family.options.compaction;
            c.compaction_style == CompactionStyle::Fifo && c.ttl > 0 && !c.disable_auto_compactions
        })
        .flat_map(|(&id, _)| {
            let version = state.versions.current(id);
            let files: Vec<_> = version
                .all_files()
                .filter(|(_, f)| inner.table_cache.get_if_open(f.number).is_none())
                .map(|(level, f)| (f.clone(), level, version.clone()))
                .collect();
            files
        })
        .collect();
    if closed.is_empty() {
        return;
    }
    MutexGuard::unlocked(state, || {
        for (file, level, version) in &closed {
            let _ = inner.table_cache.get(file, *level, version.order());
        }
    });
}

/// The life of compaction thread number `number`.
fn compaction_loop(inner: &Arc<DbInner>, number: usize) {
    let mut state = inner.state.lock();
    loop {
        if inner.shutting_down.load(Ordering::Acquire) {
            return;
        }
        if number >= state.jobs.compaction_threads {
            // `set_db_options` lowered max_background_jobs: idle until it
            // rises again or the database closes.
            inner.bg_cv.wait(&mut state);
            continue;
        }
        if let Some(until) = state
            .jobs
            .compaction_retry_at
            .filter(|t| *t > Instant::now())
        {
            // A job failed recently: retry after a pause, not in a hot loop.
            inner.bg_cv.wait_until(&mut state, until);
            continue;
        }
        open_fifo_ttl_tables(inner, &mut state);
        let Some((family, task)) = pick_task(inner, &state) else {
            if state.jobs.obsolete_held {
                // A reader held tables a job made obsolete; look again soon.
                let _ = inner.bg_cv.wait_for(&mut state, OBSOLETE_SWEEP_PAUSE);
                sweep_obsolete_tables(inner, &mut state);
            } else {
                // Opening FIFO tables above released the mutex: a shutdown
                // that notified meanwhile found nobody waiting. Checked under
                // the mutex, up to the wait, so no wake-up is lost.
                if inner.shutting_down.load(Ordering::Acquire) {
                    return;
                }
                inner.bg_cv.wait(&mut state);
            }
            continue;
        };
        // A failure is logged; run_task decides whether it stops writes.
        let _ = run_task(inner, &mut state, family, &task);
    }
}

/// How often an idle compaction thread sweeps tables that readers kept alive.
const OBSOLETE_SWEEP_PAUSE: Duration = Duration::from_millis(500);

/// Attempts of a compaction with its filter while snapshots taken during it
/// void the filter's work; the next runs without the filter.
const FILTER_ATTEMPTS: u32 = 3;

/// How long automatic compaction pauses after a job fails before retrying.
const RETRY_PAUSE: Duration = Duration::from_secs(1);

/// Runs `task` (whose files must not be busy) without the DB mutex, installs
/// its edit, and deletes the tables that became obsolete. Returns with the
/// mutex held.
///
/// A job that fails while reading or writing tables leaves its inputs intact
/// and has removed its outputs, so automatic compaction simply retries after
/// a pause (a full disk may have room again). Corrupt input, or a failure to
/// write the MANIFEST, becomes the background error and stops writes: the
/// data or the MANIFEST's state on disk can no longer be trusted.
fn run_task(
    inner: &DbInner,
    state: &mut MutexGuard<'_, DbState>,
    family_id: u32,
    task: &CompactionTask,
) -> Result<()> {
    let Some(family) = state.cfs.get(&family_id) else {
        return Ok(());
    };
    let (options, cf) = (family.options.clone(), family.shared.clone());
    for (_, f) in task.all_inputs() {
        state.jobs.compacting.insert(f.number);
    }
    let version = state.versions.current(family_id);
    let output_floor = state.versions.next_file_number();
    state.jobs.pending_outputs.push(output_floor);
    let running = RunningCompaction::of(family_id, task, version.order());
    state.jobs.running_compactions.push(running.clone());
    if inner.events.active() {
        let info = events::compaction_info(&inner.dir, &cf.name, task, None, None);
        inner.events.send(Event::CompactionBegin(info));
    }
    let mut attempt = 0;
    let outcome = loop {
        // Read under the DB mutex, as `Db::snapshot` registers under it.
        let snapshots = inner.snapshots.sequences();
        let newest_at_start = snapshots.iter().max().copied();
        // The last attempt runs without the filter, so a stream of new
        // snapshots cannot hold compaction back for ever.
        let filter = match attempt < FILTER_ATTEMPTS {
            true => options.compaction_filter.as_deref(),
            false => None,
        };
        let ctx = job::JobContext {
            fs: &*inner.compaction_fs,
            dir: &inner.dir,
            table_cache: &inner.table_cache,
            table_options: &options.table,
            family: (family_id, &cf.name),
            snapshots,
            version: &version,
            num_levels: options.compaction.num_levels,
            new_file_number: &|| inner.state.lock().versions.new_file_number(),
            compaction_filter: filter,
            merge_operator: options.merge_operator.as_deref(),
            max_subcompactions: options.compaction.max_subcompactions,
            blobs: BlobContext {
                source: &inner.blobs,
                options: &options.blob,
                column_family_id: family_id,
                statistics: inner.options.statistics.as_deref(),
            },
        };
        let outcome = MutexGuard::unlocked(state, || {
            crash_point!("compaction.before_job");
            job::run(task, &ctx)
        });
        // The filter changed values no snapshot saw when the job started;
        // one taken since sees them, and must not see them change. Such a
        // job is redone with that snapshot in its list.
        let taken_since = || inner.snapshots.newest() > newest_at_start;
        if outcome.as_ref().is_ok_and(|r| r.filter_changes > 0) {
            // From the check below to the install the DB mutex stays held
            // (`Db::snapshot` registers under it), so the MANIFEST's turn is
            // taken first and the edit written without releasing the mutex.
            manifest_writer::wait_for_turn(inner, state);
        }
        match outcome {
            Ok(result) if result.filter_changes > 0 && taken_since() => {
                job::discard_outputs(&result, &ctx);
                info!(
                    inner.info_log,
                    "[{}] compaction L{} -> L{} redone: a snapshot was taken while its filter ran",
                    cf.name,
                    task.start_level,
                    task.output_level
                );
                attempt += 1;
            }
            outcome => break outcome,
        }
    };
    // The job's version must not count as live below, or its inputs, obsolete
    // once the edit is installed, would stay on disk until the next job.
    drop(version);
    crash_point!("compaction.before_install");
    if outcome
        .as_ref()
        .is_ok_and(|r| !r.edit.blob_file_garbage.is_empty())
    {
        // The edit moves blob file garbage (and, with collection on,
        // relocated values) into the version.
        crash_point!("blob.gc_before_install");
    }
    let installed = match outcome {
        Ok(mut result) => {
            let filtered = result.filter_changes > 0;
            let edit = result.edit.set_column_family(family_id);
            let logged = match filtered {
                // The mutex has been held since the snapshot check (above).
                true => state.versions.log_and_apply(edit).map(|()| true),
                false => manifest_writer::log_and_apply(inner, state, edit),
            };
            match logged {
                Ok(true) => {
                    crash_point!("compaction.installed");
                    Ok(result)
                }
                // A family is dropped only once its compactions are done.
                Ok(false) => Err((
                    crate::Error::invalid_argument(
                        "column_family",
                        format!("column family {:?} was dropped while it compacted", cf.name),
                    ),
                    false,
                )),
                Err(e) => Err((e, true)),
            }
        }
        Err(e) => {
            let fatal = e.is_corruption();
            Err((e, fatal))
        }
    };
    for (_, f) in task.all_inputs() {
        state.jobs.compacting.remove(&f.number);
    }
    state.jobs.release_pending_output(output_floor);
    if let Some(i) = state
        .jobs
        .running_compactions
        .iter()
        .position(|r| *r == running)
    {
        state.jobs.running_compactions.swap_remove(i);
    }
    let outcome = match installed {
        Ok(result) => {
            inner.install_super_version(state, family_id);
            cf.stats.record_compaction(task, &result);
            inner.stats.record_compaction(&result);
            let read = result.bytes_read_start + result.bytes_read_output;
            inner.tick(Ticker::CompactReadBytes, read);
            inner.tick(Ticker::CompactWriteBytes, result.bytes_written);
            inner.tick(Ticker::BlobFileBytesWritten, result.blob_bytes_written);
            inner.tick(
                Ticker::CompactionKeyDropNewerEntry,
                result.counts.dropped_newer,
            );
            inner.tick(
                Ticker::CompactionKeyDropObsolete,
                result.counts.dropped_obsolete,
            );
            inner.tick(
                Ticker::CompactionKeyDropRangeDel,
                result.counts.dropped_range_del,
            );
            inner.tick(Ticker::CompactionKeyDropUser, result.filter_removals);
            if result.bytes_moved == 0 {
                if let Some(stats) = &inner.options.statistics {
                    stats.record(Histogram::CompactionTime, result.micros);
                }
            }
            if result.subcompactions > 0 {
                if let Some(stats) = &inner.options.statistics {
                    let n = result.subcompactions as u64;
                    stats.record(Histogram::NumSubcompactionsScheduled, n);
                }
            }
            info!(inner.info_log, "{}", event_line(&cf.name, task, &result));
            if inner.events.active() {
                send_compaction_completed(inner, &cf.name, task, &result);
            }
            Ok(())
        }
        Err((e, fatal)) => {
            if inner.events.active() {
                let info =
                    events::compaction_info(&inner.dir, &cf.name, task, None, Some(e.clone()));
                inner.events.send(Event::CompactionCompleted(info));
            }
            let (from, to) = (task.start_level, task.output_level);
            if fatal {
                info!(
                    inner.info_log,
                    "compaction L{from} -> L{to} failed, writes stop: {e}"
                );
                inner.set_bg_error(state, e.clone());
            } else if super::stall::current(state).is_some() {
                // Writers wait for this compaction: waiting on would hang
                // them with no way out. They fail with its error instead,
                // and the database resumes by itself, retrying, once
                // compaction can run again (its outputs were removed, and
                // nothing references them).
                info!(
                    inner.info_log,
                    "compaction L{from} -> L{to} failed while writes wait for it; writes fail \
                     until it can run: {e}"
                );
                inner.set_bg_error_recovering(state, e.clone(), true);
            } else {
                info!(
                    inner.info_log,
                    "compaction L{from} -> L{to} failed, retrying later: {e}"
                );
                state.jobs.compaction_retry_at = Some(Instant::now() + RETRY_PAUSE);
            }
            Err(e)
        }
    };
    inner.bg_cv.notify_all();
    sweep_obsolete_tables(inner, state);
    outcome
}

/// Manual compaction of the user keys in `[begin, end]` (unbounded where
/// `None`), after the caller flushed the memtable: compacts level by level, L0
/// into the base level and each level into the next, then rewrites the last
/// level's older files in the range so deleted data goes. Runs in the caller's
/// thread, waiting for automatic compactions that hold the files it needs.
pub(super) fn compact_range(
    inner: &DbInner,
    family_id: u32,
    begin: Option<&[u8]>,
    end: Option<&[u8]>,
) -> Result<()> {
    let mut state = inner.state.lock();
    let options = match state.cfs.get(&family_id) {
        Some(family) => family.options.clone(),
        None => {
            return Err(Error::invalid_argument(
                "column_family",
                format!("column family {family_id} was dropped"),
            ))
        }
    };
    match options.compaction.compaction_style {
        CompactionStyle::Level => {}
        // One sorted run of everything; FIFO compacts nothing (it only drops).
        CompactionStyle::Universal => {
            return compact_all_universal(inner, &mut state, family_id, &options)
        }
        CompactionStyle::Fifo => return Ok(()),
    }
    let last_level = options.compaction.num_levels - 1;
    // Files numbered from here on are this call's own outputs.
    let first_new_file = state.versions.next_file_number();
    let mut level = 0;
    while level <= last_level {
        if let Some(e) = &state.recovery.bg_error {
            return Err(e.clone());
        }
        if !state.cfs.contains_key(&family_id) {
            return Err(Error::invalid_argument(
                "column_family",
                format!("column family {family_id} was dropped"),
            ));
        }
        let task = leveled::manual_task(
            &state.versions.current(family_id),
            &options.compaction,
            options.table.compression,
            (level, first_new_file),
            begin,
            end,
        );
        let Some(task) = task else {
            level += 1;
            continue;
        };
        if task
            .all_inputs()
            .any(|(_, f)| state.jobs.compacting.contains(&f.number))
            || writes_where_one_runs(&state, family_id, &task)
        {
            // An automatic compaction holds some of these files, or writes
            // where this one would; the version will differ when it is
            // done, so pick again then.
            inner.bg_cv.wait(&mut state);
            continue;
        }
        run_task(inner, &mut state, family_id, &task)?;
        // The last level is rewritten once.
        level = if task.output_level == last_level && level == last_level {
            last_level + 1
        } else {
            task.output_level
        };
    }
    Ok(())
}

/// Universal manual compaction: every run merged into the last level, once
/// no other compaction holds a file.
fn compact_all_universal(
    inner: &DbInner,
    state: &mut MutexGuard<'_, DbState>,
    family_id: u32,
    options: &CfOptions,
) -> Result<()> {
    loop {
        if let Some(e) = &state.recovery.bg_error {
            return Err(e.clone());
        }
        if state.jobs.compacting.is_empty() {
            break;
        }
        inner.bg_cv.wait(state);
    }
    let task = universal::full_task(
        &state.versions.current(family_id),
        &options.compaction,
        options.table.compression,
    );
    match task {
        Some(task) => run_task(inner, state, family_id, &task),
        None => Ok(()),
    }
}

/// Waits until no flush or compaction is pending or running (db_bench's
/// `waitforcompaction`), or fails with the background error.
pub(super) fn wait_for_compaction(inner: &DbInner) -> Result<()> {
    if inner.read_only {
        // No background work exists to wait for.
        return Ok(());
    }
    let mut state = inner.state.lock();
    loop {
        if let Some(e) = &state.recovery.bg_error {
            return Err(e.clone());
        }
        open_fifo_ttl_tables(inner, &mut state);
        let idle = state.cfs.values().all(|f| f.imm.is_empty())
            && state.jobs.running_compactions.is_empty()
            && state.jobs.sweeps_running == 0
            && pick_task(inner, &state).is_none();
        if idle {
            return Ok(());
        }
        inner.bg_cv.wait(&mut state);
    }
}

/// A RocksDB-style `EVENT_LOG_v1` line with a JSON body.
/// Tells the listeners of a finished compaction and the tables it wrote (a
/// trivial move writes none).
fn send_compaction_completed(
    inner: &DbInner,
    cf_name: &str,
    task: &CompactionTask,
    result: &job::JobResult,
) {
    if result.bytes_moved == 0 {
        for f in &result.outputs {
            inner
                .events
                .send(Event::TableFileCreated(TableFileCreationInfo {
                    cf_name: cf_name.to_owned(),
                    file_path: table_file_name(&inner.dir, f.number),
                    file_size: f.file_size,
                    reason: TableFileCreationReason::Compaction,
                }));
        }
    }
    let info = events::compaction_info(&inner.dir, cf_name, task, Some(result), None);
    inner.events.send(Event::CompactionCompleted(info));
}

fn event_line(cf_name: &str, task: &CompactionTask, result: &job::JobResult) -> String {
    let numbers = |files: &mut dyn Iterator<Item = u64>| {
        files.map(|n| n.to_string()).collect::<Vec<_>>().join(",")
    };
    format!(
        "EVENT_LOG_v1 {{\"cf_name\": \"{cf_name}\", \"event\": \"compaction_finished\", \"reason\": \"{:?}\", \"start_level\": {}, \
         \"output_level\": {}, \"inputs_start\": [{}], \"inputs_output\": [{}], \"outputs\": [{}], \
         \"trivial_move\": {}, \"bytes_read\": {}, \"bytes_written\": {}, \"bytes_moved\": {}, \
         \"records_in\": {}, \"records_dropped\": {}, \"num_subcompactions\": {}, \"micros\": {}}}",
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
        result.subcompactions,
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
    // After a background error nothing is deleted: a MANIFEST append whose
    // sync failed may still be on disk and name files the in-memory version
    // does not have. The next open cleans up against the recovered version.
    // While a checkpoint is being made nothing is deleted either; the sweep
    // after it does the work.
    let floor = if state.recovery.bg_error.is_some() || state.jobs.deletions_held > 0 {
        0
    } else {
        state
            .jobs
            .pending_outputs
            .iter()
            .copied()
            .chain([state.versions.next_file_number()])
            .min()
            .unwrap_or(0)
    };
    let live = state.versions.live_file_numbers();
    state.jobs.obsolete_held =
        live.len() > state.versions.num_live_files() + state.versions.num_live_blob_files();
    KeepSet { live, floor }
}

/// Deletes the tables no live version needs, with the mutex released for
/// the deletions; until they are done `wait_for_compaction` keeps waiting,
/// so a caller that waited finds the obsolete files gone.
pub(super) fn sweep_obsolete_tables(inner: &DbInner, state: &mut MutexGuard<'_, DbState>) {
    let keep = keep_set(state);
    state.jobs.sweeps_running += 1;
    MutexGuard::unlocked(state, || remove_obsolete_tables(inner, &keep));
    state.jobs.sweeps_running -= 1;
    inner.bg_cv.notify_all();
}

/// Deletes the table files `keep` does not spare.
pub(super) fn remove_obsolete_tables(inner: &DbInner, keep: &KeepSet) {
    let Ok(names) = inner.fs.list(&inner.dir) else {
        return;
    };
    for name in names {
        let (n, path, kind) = match parse_file_name(&name) {
            Some(FileType::Table(n)) => (n, table_file_name(&inner.dir, n), "table"),
            Some(FileType::Blob(n)) => (n, blob_file_name(&inner.dir, n), "blob file"),
            _ => continue,
        };
        if n >= keep.floor || keep.live.contains(&n) {
            continue;
        }
        if kind == "table" {
            inner.table_cache.evict(n);
            crash_point!("table.delete_obsolete");
        } else {
            inner.blobs.evict(n);
            crash_point!("blob.delete_obsolete");
        }
        match inner.fs.remove(&path) {
            Ok(()) => {
                info!(inner.info_log, "deleted obsolete {kind} #{n}");
                if kind == "table" {
                    inner
                        .events
                        .send(Event::TableFileDeleted(TableFileDeletionInfo {
                            db_name: inner.dir.clone(),
                            file_path: path.clone(),
                        }));
                }
            }
            Err(e) => info!(inner.info_log, "could not delete obsolete {kind} #{n}: {e}"),
        }
    }
}
