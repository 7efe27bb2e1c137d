//! What the DB mutex guards, split by what it is for (Pebble's `DB.mu` with
//! its `versions`, `mem` and `compact` parts is the model): the write queue
//! and stalls, the versions and the families' memtables, the background
//! jobs, and the background error with recovery from it. Each part is plain
//! data; the code that changes it lives with the job it does (`write.rs`,
//! `background.rs`, `compact.rs`, `resume.rs`). Never held across file I/O:
//! see "Locks" in `docs/architecture.md`.

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use super::compact::RunningCompaction;
use crate::cf::CfState;
use crate::version::VersionSet;
use crate::write::commit::WriteQueue;
use crate::write::controller::WriteController;

/// Everything the DB mutex guards.
#[derive(Debug)]
pub(crate) struct DbState {
    /// The write queue, the WAL taking writes, and write stalls.
    pub(super) commit: CommitState,
    /// Every family's versions, and the MANIFEST.
    pub(super) versions: VersionSet,
    /// The live column families by id (memtables, flush queues, options);
    /// the default family (0) is always here.
    pub(super) cfs: BTreeMap<u32, CfState>,
    /// Flushes, compactions and file deletions under way.
    pub(super) jobs: JobState,
    /// The background error, and getting out of it.
    pub(super) recovery: RecoveryState,
}

/// The write queue and what holds writers back.
#[derive(Debug)]
pub(crate) struct CommitState {
    /// Writers waiting to commit; the front one leads.
    pub(super) writers: WriteQueue,
    /// The WAL taking writes now (0 on a read-only handle).
    pub(super) wal_number: u64,
    /// How fast writes may go while compaction is behind.
    pub(super) write_controller: WriteController,
    /// Writers are stopped until compaction catches up.
    pub(super) writes_stopped: bool,
}

impl CommitState {
    pub(super) fn new(wal_number: u64, delayed_write_rate: u64) -> CommitState {
        CommitState {
            writers: WriteQueue::default(),
            wal_number,
            write_controller: WriteController::new(delayed_write_rate),
            writes_stopped: false,
        }
    }
}

/// Background jobs: what they hold, so that no two take the same file and
/// nothing deletes a file a job reads or writes.
#[derive(Debug)]
pub(crate) struct JobState {
    /// Files that running compactions read: no other compaction may take them.
    pub(super) compacting: HashSet<u64>,
    /// The lowest file number each running flush or compaction may write.
    pub(super) pending_outputs: Vec<u64>,
    /// Each running compaction: its family, and the level and key range it
    /// writes.
    pub(super) running_compactions: Vec<RunningCompaction>,
    /// Compaction threads that may pick work (`max_background_jobs` - 1, at least 1);
    /// threads numbered past it idle after `set_db_options` lowers it.
    pub(super) compaction_threads: usize,
    /// Deletions of obsolete tables and WALs under way (with the mutex released).
    pub(super) sweeps_running: usize,
    /// After a compaction job failed: no automatic compaction before then.
    pub(super) compaction_retry_at: Option<Instant>,
    /// Obsolete tables an older version still held at the last cleanup: the
    /// compaction thread sweeps again once readers let go of it.
    pub(super) obsolete_held: bool,
    pub(super) flushes_completed: u64,
    /// A MANIFEST write is in flight with the mutex released; other MANIFEST
    /// writers wait for their turn (see `manifest_writer.rs`).
    pub(super) manifest_busy: bool,
    /// Checkpoints being made: while any is, no obsolete table, blob file or
    /// WAL is deleted (see `checkpoint.rs`).
    pub(super) deletions_held: u32,
}

impl JobState {
    pub(super) fn new(compaction_threads: usize) -> JobState {
        JobState {
            compacting: HashSet::new(),
            pending_outputs: Vec::new(),
            running_compactions: Vec::new(),
            compaction_threads,
            sweeps_running: 0,
            compaction_retry_at: None,
            obsolete_held: false,
            flushes_completed: 0,
            deletions_held: 0,
            manifest_busy: false,
        }
    }

    /// Drops one registration of `floor` from the pending outputs. A flush and
    /// a compaction can register the same number (the compaction takes the
    /// next file number as its floor, then the flush allocates that number),
    /// so only one entry may go.
    pub(super) fn release_pending_output(&mut self, floor: u64) {
        if let Some(i) = self.pending_outputs.iter().position(|&n| n == floor) {
            self.pending_outputs.swap_remove(i);
        }
    }
}

/// The background error and the way out of it.
#[derive(Debug, Default)]
pub(crate) struct RecoveryState {
    /// Set on a failed WAL or MANIFEST write: the database stops taking writes.
    pub(super) bg_error: Option<crate::Error>,
    /// When the flush thread next tries to leave the background error by
    /// itself (a `resume`), and the pause after that attempt; set for errors
    /// that space or time can cure: a full disk, or a compaction that failed
    /// while writes waited for it.
    pub(super) auto_recovery: Option<AutoRecovery>,
    /// A `resume` is running (the user's, or the flush thread's automatic
    /// one): a second must wait for it, or both would flush one memtable.
    pub(super) resuming: bool,
}

/// The schedule of automatic recovery from a background error.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AutoRecovery {
    pub(super) at: Instant,
    pub(super) pause: Duration,
}

/// First pause before automatic recovery; it doubles after each failed
/// attempt, up to [`MAX_RECOVERY_PAUSE`].
const FIRST_RECOVERY_PAUSE: Duration = Duration::from_millis(200);
const MAX_RECOVERY_PAUSE: Duration = Duration::from_secs(5);

impl RecoveryState {
    /// Schedules (or, after a failed attempt, postpones with a longer pause)
    /// automatic recovery from the background error.
    pub(super) fn schedule(&mut self) {
        let pause = self.auto_recovery.map_or(FIRST_RECOVERY_PAUSE, |r| {
            (r.pause * 2).min(MAX_RECOVERY_PAUSE)
        });
        self.auto_recovery = Some(AutoRecovery {
            at: Instant::now() + pause,
            pause,
        });
    }
}
