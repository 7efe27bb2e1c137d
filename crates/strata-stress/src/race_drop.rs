//! Race mode's family drops: a family is created, written by two threads in
//! batches that also write a family that stays (`anchor`; the default
//! family's keys are the race's own), and dropped while they write, round
//! after round, beside the rest of the race (flushes, compactions,
//! ingestion, checkpoints, readers).
//!
//! Every batch must be all or nothing. One acknowledged must have its
//! anchor half readable at once; one refused (the family was dropped) must
//! have left nothing, and its error must say the family is gone. After each
//! drop the database must still take writes: a drop once half-applied the
//! batch caught in its WAL write and refused every write after it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use strata::{CfOptions, ColumnFamily, Db, Error, WriteBatch, WriteOptions};

/// Writer threads per dropped family.
const WRITERS: u64 = 2;

/// The pause between drop rounds.
const ROUND_PAUSE: Duration = Duration::from_millis(50);

/// What the drop rounds did, for the run's report.
#[derive(Debug, Default)]
pub struct DropCounts {
    pub families: AtomicU64,
    pub acknowledged: AtomicU64,
    pub refused: AtomicU64,
}

/// Creates, writes across and drops families until `done`, reporting each
/// broken promise to `violate`.
pub fn run(
    db: &Db,
    options: &CfOptions,
    seed: u64,
    done: &AtomicBool,
    violate: &(dyn Fn(String) + Sync),
    counts: &DropCounts,
) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let anchor = match db.create_column_family("anchor", options.clone()) {
        Ok(anchor) => anchor,
        Err(e) => return violate(format!("create_column_family anchor: {e}")),
    };
    let anchor = &anchor;
    let mut round = 0u64;
    while !done.load(Ordering::Relaxed) {
        round += 1;
        let name = format!("victim{round}");
        let family = match db.create_column_family(&name, options.clone()) {
            Ok(family) => family,
            Err(e) => return violate(format!("create_column_family {name}: {e}")),
        };
        counts.families.fetch_add(1, Ordering::Relaxed);
        let delay = Duration::from_micros(rng.gen_range(0..10_000));
        let flush_too = rng.gen_bool(0.25);
        std::thread::scope(|s| {
            for writer in 0..WRITERS {
                let family = &family;
                s.spawn(move || {
                    let pair = Pair { db, anchor, family };
                    pair.write_until_refused(round, writer, violate, counts);
                });
            }
            std::thread::sleep(delay);
            if flush_too {
                // A flush of the family racing its drop may fail, saying so.
                s.spawn(|| {
                    if let Err(e) = db.flush_cf(&family) {
                        if !names_a_dropped_family(&e) {
                            violate(format!("flush of {name} racing its drop: {e}"));
                        }
                    }
                });
            }
            if let Err(e) = db.drop_column_family(&family) {
                violate(format!("drop_column_family {name}: {e}"));
            }
        });
        let after = format!("drop{round}-after");
        if let Err(e) = db.put_cf(anchor, after.as_bytes(), b"1") {
            return violate(format!("a write after dropping {name} failed: {e}"));
        }
        // Each round syncs a MANIFEST and an OPTIONS file twice: paced, so
        // the rest of the race keeps the disk.
        std::thread::sleep(ROUND_PAUSE);
    }
}

/// The family that stays and the one that is dropped.
struct Pair<'a> {
    db: &'a Db,
    anchor: &'a ColumnFamily,
    family: &'a ColumnFamily,
}

impl Pair<'_> {
    /// Writes batches across the anchor and the family until one is
    /// refused because the family was dropped; checks each batch's outcome.
    fn write_until_refused(
        &self,
        round: u64,
        writer: u64,
        violate: &(dyn Fn(String) + Sync),
        counts: &DropCounts,
    ) {
        let Pair { db, anchor, family } = *self;
        for i in 0u64.. {
            let key = format!("drop{round}-{writer}-{i}");
            let mut batch = WriteBatch::new();
            let built = batch
                .put_cf(anchor, key.as_bytes(), b"1")
                .and_then(|()| batch.put_cf(family, key.as_bytes(), b"1"))
                .and_then(|()| batch.merge_cf(family, b"count", 1u64.to_le_bytes()))
                .and_then(|()| {
                    if i % 8 == 0 {
                        batch.delete_range_cf(family, b"drop", b"dropz")
                    } else {
                        Ok(())
                    }
                });
            if let Err(e) = built {
                // The handle is refused once the family is dropped.
                if !names_a_dropped_family(&e) {
                    violate(format!("building batch {key}: {e}"));
                }
                return;
            }
            let options = WriteOptions {
                sync: i % 4 == 0,
                ..WriteOptions::default()
            };
            let written = db.write(&options, batch);
            let half = match db.get_cf(anchor, key.as_bytes()) {
                Ok(found) => found.is_some(),
                Err(e) => return violate(format!("reading back {key}: {e}")),
            };
            match written {
                Ok(()) if half => {
                    counts.acknowledged.fetch_add(1, Ordering::Relaxed);
                }
                Ok(()) => {
                    return violate(format!("batch {key} acknowledged, its anchor half missing"))
                }
                Err(e) if !names_a_dropped_family(&e) => {
                    return violate(format!("batch {key} failed: {e}"))
                }
                Err(e) if half => {
                    return violate(format!(
                        "batch {key} was refused ({e}), yet its anchor half is readable"
                    ))
                }
                Err(_) => {
                    counts.refused.fetch_add(1, Ordering::Relaxed);
                    return;
                }
            }
        }
    }
}

/// Whether `e` is the error of an operation on a dropped family.
fn names_a_dropped_family(e: &Error) -> bool {
    matches!(
        e,
        Error::InvalidArgument {
            field: "column_family",
            ..
        }
    ) && e.to_string().contains("dropped")
}
