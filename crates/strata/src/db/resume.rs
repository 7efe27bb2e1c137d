//! `Db::resume`: leaving the read-only error state once its cause is gone
//! (RocksDB's `DB::Resume`), for example after ENOSPC when space is back.
//!
//! A background error means the state of some file on disk is unknown: a
//! WAL append or sync that failed may have left a torn record or lost bytes,
//! a MANIFEST edit whose sync failed may or may not be on disk. So resume
//! relies on none of them: it writes a whole new MANIFEST from the in-memory
//! version (a half-written edit in the old one is then never read), starts a
//! new WAL without syncing the old one, and flushes every memtable into
//! tables, so that no WAL written before the error is needed by recovery.
//! Only when all of that is durable does it clear the error; until then
//! writes stay refused, and a step that fails leaves the database as it was.

use std::time::Duration;

use parking_lot::MutexGuard;

use super::background::flush_oldest;
use super::compact::sweep_obsolete_tables;
use super::info_log::info;
use super::manifest_writer;
use super::write::switch_memtables;
use super::{DbInner, DbState};
use crate::error::{Error, Result};

pub(super) fn resume(inner: &DbInner) -> Result<()> {
    let mut state = inner.state.lock();
    if state.recovery.resuming {
        // Another resume runs (it releases the mutex while it writes tables):
        // its outcome is this one's.
        while state.recovery.resuming {
            inner.bg_cv.wait(&mut state);
        }
        return state.recovery.bg_error.clone().map_or(Ok(()), Err);
    }
    state.recovery.resuming = true;
    let result = resume_locked(inner, &mut state);
    state.recovery.resuming = false;
    inner.bg_cv.notify_all();
    drop(state);
    let Some(replaced) = result? else {
        return Ok(());
    };
    if replaced != 0 {
        let old = crate::filename::manifest_file_name(&inner.dir, replaced);
        if let Err(e) = inner.fs.remove(&old) {
            info!(
                inner.info_log,
                "resume: could not delete old MANIFEST #{replaced}: {e}"
            );
        }
    }
    info!(inner.info_log, "resume: writes accepted again");
    Ok(())
}

/// The steps of [`resume`], with the mutex held except while tables are
/// written; returns the number of the MANIFEST it replaced (0 if none), or
/// `None` when there was no error to leave.
fn resume_locked(inner: &DbInner, state: &mut MutexGuard<'_, DbState>) -> Result<Option<u64>> {
    let Some(cause) = state.recovery.bg_error.clone() else {
        state.recovery.auto_recovery = None;
        // No error, but a compaction that failed may be pausing before its
        // retry: the caller says the cause is gone, so retry now.
        state.jobs.compaction_retry_at = None;
        inner.bg_cv.notify_all();
        return Ok(None);
    };
    if matches!(
        cause,
        Error::Corruption { .. } | Error::WriterPanicked { .. }
    ) {
        return Err(cause);
    }
    // Writers queued before the error fail on it; let them leave.
    while !state.commit.writers.is_empty() {
        MutexGuard::unlocked(state, || std::thread::sleep(Duration::from_millis(1)));
    }
    info!(inner.info_log, "resume: recovering from: {cause}");
    manifest_writer::wait_for_turn(inner, state);
    let replaced = state.versions.write_new_manifest(None)?;
    let families: Vec<u32> = state.cfs.keys().copied().collect();
    switch_memtables(inner, state, &families, false)?;
    while state.cfs.values().any(|f| !f.imm.is_empty()) {
        flush_oldest(inner, state)?;
    }
    state.recovery.bg_error = None;
    state.recovery.auto_recovery = None;
    state.jobs.compaction_retry_at = None;
    inner.install_all_super_versions(state);
    inner.bg_cv.notify_all();
    // Tables of jobs that failed while the error stood were kept (a failed
    // MANIFEST edit might have named them); the new MANIFEST settles that.
    sweep_obsolete_tables(inner, state);
    Ok(Some(replaced))
}
