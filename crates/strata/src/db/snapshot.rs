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
        Snapshot(Arc::new(Held {
            seq,
            list: self.clone(),
        }))
    }

    /// Sequence numbers of every live snapshot, ascending.
    pub fn sequences(&self) -> Vec<SequenceNumber> {
        self.live.lock().keys().copied().collect()
    }

    /// The newest live snapshot's sequence number.
    pub fn newest(&self) -> Option<SequenceNumber> {
        self.live.lock().keys().next_back().copied()
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

/// A consistent point-in-time view of the database: reads with it in
/// `ReadOptions::snapshot` see the state when it was taken. Cheap to clone;
/// released when the last clone (the ones inside read options too) is
/// dropped. A snapshot of one database is refused by another.
///
/// ```
/// use strata::{Db, DbOptions, ReadOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let db = Db::open(dir.path(), DbOptions { create_if_missing: true, ..Default::default() })?;
/// db.put("k", "v1")?;
/// let snapshot = db.snapshot();
/// db.put("k", "v2")?;
/// assert!(snapshot.sequence() < db.latest_sequence_number());
/// let then = ReadOptions { snapshot: Some(snapshot.clone()), ..Default::default() };
/// assert_eq!(db.get_opt(&then, "k")?.as_deref(), Some(&b"v1"[..]));
/// assert_eq!(db.get("k")?.as_deref(), Some(&b"v2"[..]));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Snapshot(Arc<Held>);

/// One registration in the snapshot list, released on drop.
struct Held {
    seq: SequenceNumber,
    list: Arc<SnapshotList>,
}

impl Snapshot {
    /// The sequence number the snapshot reads at.
    pub fn sequence(&self) -> SequenceNumber {
        self.0.seq
    }

    /// True when the snapshot was taken from the database whose snapshot
    /// list is `list`.
    pub(crate) fn belongs_to(&self, list: &Arc<SnapshotList>) -> bool {
        Arc::ptr_eq(&self.0.list, list)
    }
}

impl PartialEq for Snapshot {
    fn eq(&self, other: &Self) -> bool {
        self.0.seq == other.0.seq && Arc::ptr_eq(&self.0.list, &other.0.list)
    }
}

impl Eq for Snapshot {}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("sequence", &self.0.seq)
            .finish()
    }
}

impl Drop for Held {
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

/// Snapshot registration against compaction's reading of the snapshot list,
/// under shuttle's randomized scheduler. The model keeps the versions of one
/// key (each written with its sequence number as the value), a writer that
/// publishes sequence numbers under the DB mutex, and a compaction that reads
/// the live snapshots under the mutex, decides without it which versions no
/// snapshot and no latest read can see, and installs the result under the
/// mutex again. A snapshot registered as `Db::snapshot` does (under the
/// mutex) must always find the version it sees; registered outside the
/// mutex, the model finds the lost version.
#[cfg(all(test, feature = "shuttle"))]
mod shuttle_model {
    use super::*;
    use shuttle::sync::atomic::{AtomicU64, Ordering};
    use shuttle::sync::Mutex as ModelMutex;

    /// Versions of the key (sequence numbers, ascending) in tables.
    struct Model {
        versions: ModelMutex<Vec<SequenceNumber>>,
        visible: AtomicU64,
        snapshots: Arc<SnapshotList>,
    }

    /// Which versions a compaction keeps: for each snapshot, the newest it
    /// sees, and the newest of all (what later reads and snapshots see).
    fn compact(versions: &[SequenceNumber], snapshots: &[SequenceNumber]) -> Vec<SequenceNumber> {
        let mut keep: Vec<SequenceNumber> = snapshots
            .iter()
            .filter_map(|&s| versions.iter().copied().filter(|&v| v <= s).max())
            .chain(versions.last().copied())
            .collect();
        keep.sort_unstable();
        keep.dedup();
        keep
    }

    fn run(register_under_mutex: bool) {
        let model = Arc::new(Model {
            versions: ModelMutex::new(vec![1]),
            visible: AtomicU64::new(1),
            snapshots: Arc::new(SnapshotList::default()),
        });
        let writer = {
            let model = model.clone();
            shuttle::thread::spawn(move || {
                for seq in 2..=3 {
                    let mut versions = model.versions.lock().unwrap();
                    versions.push(seq);
                    model.visible.store(seq, Ordering::Release);
                }
            })
        };
        let compaction = {
            let model = model.clone();
            shuttle::thread::spawn(move || {
                for _ in 0..2 {
                    let (input, snapshots) = {
                        let versions = model.versions.lock().unwrap();
                        (versions.clone(), model.snapshots.sequences())
                    };
                    let kept = compact(&input, &snapshots);
                    let mut versions = model.versions.lock().unwrap();
                    // Versions written while the job ran were not its input.
                    let newer: Vec<_> = versions
                        .iter()
                        .copied()
                        .filter(|v| !input.contains(v))
                        .collect();
                    *versions = kept.into_iter().chain(newer).collect();
                }
            })
        };
        let reader = {
            let model = model.clone();
            shuttle::thread::spawn(move || {
                let snapshot = if register_under_mutex {
                    let _held = model.versions.lock().unwrap();
                    model
                        .snapshots
                        .acquire(model.visible.load(Ordering::Acquire))
                } else {
                    let seq = model.visible.load(Ordering::Acquire);
                    shuttle::thread::yield_now();
                    model.snapshots.acquire(seq)
                };
                shuttle::thread::yield_now();
                let seen = {
                    let versions = model.versions.lock().unwrap();
                    versions
                        .iter()
                        .copied()
                        .filter(|&v| v <= snapshot.sequence())
                        .max()
                };
                assert_eq!(
                    seen,
                    Some(snapshot.sequence()),
                    "the snapshot lost the version it sees"
                );
            })
        };
        writer.join().unwrap();
        compaction.join().unwrap();
        reader.join().unwrap();
    }

    #[test]
    fn shuttle_snapshots_registered_under_the_mutex_keep_their_versions() {
        shuttle::check_random(|| run(true), 5000);
    }

    #[test]
    fn shuttle_finds_the_race_when_snapshots_register_outside_the_mutex() {
        let found = std::panic::catch_unwind(|| {
            shuttle::check_random(|| run(false), 5000);
        });
        assert!(found.is_err(), "the model must be able to find the race");
    }
}
