//! Snapshots: a sequence number the database promises to keep readable.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::key::SequenceNumber;

/// Sequence numbers of live snapshots, with counts (two snapshots may share one).
/// Compaction asks it which versions must be kept.
#[derive(Debug, Default)]
pub struct SnapshotList {
    live: Mutex<BTreeMap<SequenceNumber, usize>>,
}

impl SnapshotList {
    /// Registers a snapshot at `seq`.
    pub fn acquire(self: &Arc<Self>, seq: SequenceNumber) -> Snapshot {
        *self.live.lock().entry(seq).or_insert(0) += 1;
        Snapshot {
            seq,
            list: self.clone(),
        }
    }

    /// Sequence numbers of every live snapshot, ascending.
    pub fn sequences(&self) -> Vec<SequenceNumber> {
        self.live.lock().keys().copied().collect()
    }

    /// Whether a live snapshot holds `seq`.
    pub fn is_live(&self, seq: SequenceNumber) -> bool {
        self.live.lock().contains_key(&seq)
    }

    fn release(&self, seq: SequenceNumber) {
        let mut live = self.live.lock();
        if let Some(count) = live.get_mut(&seq) {
            *count -= 1;
            if *count == 0 {
                live.remove(&seq);
            }
        }
    }
}

/// A consistent point-in-time view of the database, released on drop. Pass its
/// [`sequence`](Self::sequence) in `ReadOptions::snapshot`.
#[derive(Debug)]
pub struct Snapshot {
    seq: SequenceNumber,
    list: Arc<SnapshotList>,
}

impl Snapshot {
    /// The sequence number the snapshot reads at.
    pub fn sequence(&self) -> SequenceNumber {
        self.seq
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.list.release(self.seq);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_are_counted_and_released() {
        let list = Arc::new(SnapshotList::default());
        let a = list.acquire(5);
        let b = list.acquire(5);
        let c = list.acquire(9);
        assert_eq!(list.sequences(), vec![5, 9]);
        drop(a);
        assert_eq!(list.sequences(), vec![5, 9]);
        drop(b);
        drop(c);
        assert!(list.sequences().is_empty());
    }
}
