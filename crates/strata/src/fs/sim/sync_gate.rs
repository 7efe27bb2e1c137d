//! Holding file syncs for [`SimFs::hold_syncs`](super::SimFs::hold_syncs):
//! a test parks writers inside their fsync and lines others up behind them
//! without relying on timing.

use std::path::Path;

use parking_lot::{Condvar, Mutex};

/// Holds file syncs for [`SimFs::hold_syncs`](super::SimFs::hold_syncs). Its own lock, so a held sync
/// does not block the rest of the file system.
#[derive(Default)]
pub(super) struct SyncGate {
    pub(super) state: Mutex<SyncGateState>,
    pub(super) opened: Condvar,
}

#[derive(Default)]
pub(super) struct SyncGateState {
    pub(super) held: bool,
    /// While held, only syncs of files whose name contains this are held.
    pub(super) only: Option<String>,
    /// Syncs waiting for the gate to open.
    pub(super) waiting: usize,
}

impl SyncGate {
    /// Returns at once while the gate is open (or holds only other files),
    /// else when it opens.
    pub(super) fn pass(&self, path: &Path) {
        let mut state = self.state.lock();
        let name = path.file_name().map(|n| n.to_string_lossy());
        let held_here = match (&state.only, &name) {
            (None, _) => true,
            (Some(part), Some(name)) => name.contains(part.as_str()),
            (Some(_), None) => false,
        };
        if !state.held || !held_here {
            return;
        }
        state.waiting += 1;
        while state.held {
            self.opened.wait(&mut state);
        }
        state.waiting -= 1;
    }
}
