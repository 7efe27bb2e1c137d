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
use super::compact::{keep_set, remove_obsolete_tables};
use super::info_log::info;
use super::write::switch_memtable;
use super::DbInner;
use crate::error::{Error, Result};

pub(super) fn resume(inner: &DbInner) -> Result<()> {
    let mut state = inner.state.lock();
    let Some(cause) = state.bg_error.clone() else {
        state.auto_recovery = None;
        // No error, but a compaction that failed may be pausing before its
        // retry: the caller says the cause is gone, so retry now.
        state.compaction_retry_at = None;
        inner.bg_cv.notify_all();
        return Ok(());
    };
    if matches!(cause, Error::Corruption { .. }) {
        return Err(cause);
    }
    // Writers queued before the error fail on it; let them leave.
    while !state.writers.is_empty() {
        MutexGuard::unlocked(&mut state, || std::thread::sleep(Duration::from_millis(1)));
    }
    info!(inner.info_log, "resume: recovering from: {cause}");
    let replaced = state.versions.write_new_manifest(None)?;
    switch_memtable(inner, &mut state, false)?;
    while !state.imm.is_empty() {
        flush_oldest(inner, &mut state)?;
    }
    state.bg_error = None;
    state.auto_recovery = None;
    state.compaction_retry_at = None;
    inner.install_super_version(&mut state);
    inner.bg_cv.notify_all();
    // Tables of jobs that failed while the error stood were kept (a failed
    // MANIFEST edit might have named them); the new MANIFEST settles that.
    let keep = keep_set(&mut state);
    drop(state);
    remove_obsolete_tables(inner, &keep);
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
