//! MANIFEST writes without the DB mutex. Appending an edit and fsyncing the
//! MANIFEST takes milliseconds; held under the DB mutex, it would hold up
//! every writer (each takes the mutex to lead a commit group) behind a
//! background job's fsync. So, as LevelDB's `LogAndApply` does, the edit is
//! prepared under the mutex, written and synced with it released, and
//! installed under it again. MANIFEST writes take turns (`JobState::
//! manifest_busy`): each computes its change from the versions the one
//! before it installed, and records land in the file in the order they are
//! installed.
//!
//! A compaction whose filter changed values writes with the mutex held, as
//! before: `Db::snapshot` registers under the mutex, and a snapshot taken
//! between the job's check for new snapshots and the install would see the
//! filter's changes appear (see `compact.rs`).
//!
//! What other threads see during the write: the old versions (the job's
//! inputs stay marked as compacting and its outputs as pending, so nothing
//! picks or deletes them), and counters that move on (file numbers and
//! sequence numbers handed out meanwhile are above the ones the record
//! carries; recovery marks every file it finds as used, and takes the
//! sequence from the WALs).

use parking_lot::MutexGuard;

use super::{DbInner, DbState};
use crate::crash_point::crash_point;
use crate::error::Result;
use crate::version::VersionEdit;

/// Waits, under the DB mutex, until no MANIFEST write is in flight. A caller
/// that then writes with the mutex held throughout (creating or dropping a
/// family, `resume`) needs no turn of its own: nobody can start one.
pub(super) fn wait_for_turn(inner: &DbInner, state: &mut MutexGuard<'_, DbState>) {
    while state.jobs.manifest_busy {
        inner.bg_cv.wait(state);
    }
}

/// Appends `edit` to the MANIFEST, syncs it, and installs it, with the DB
/// mutex released for the write and sync. Returns `Ok(false)`, writing
/// nothing, when the family the edit names was dropped while this waited for
/// its turn. On error nothing is installed (the caller stops the database).
pub(super) fn log_and_apply(
    inner: &DbInner,
    state: &mut MutexGuard<'_, DbState>,
    edit: &mut VersionEdit,
) -> Result<bool> {
    wait_for_turn(inner, state);
    if !state.cfs.contains_key(&edit.column_family) {
        return Ok(false);
    }
    let write = state.versions.begin_log(edit)?;
    state.jobs.manifest_busy = true;
    let written = MutexGuard::unlocked(state, || {
        let written = write.write();
        // The edit is in the MANIFEST but not installed: recovery applies
        // it, while the running database still shows the old version.
        crash_point!("manifest.written.before_install");
        written
    });
    let result = state.versions.finish_log(write, written);
    state.jobs.manifest_busy = false;
    inner.bg_cv.notify_all();
    result.map(|()| true)
}
