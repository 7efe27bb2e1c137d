//! The one operation whose reads race with writes: a second thread writes
//! (and flushes, so flushes and compactions install new versions meanwhile)
//! while this thread reads the keys being written, at the latest state and
//! at snapshots it takes as it goes.
//!
//! What a read may return is not one value but a window: any value its key
//! held from before the first write to after the last. A read that returns
//! something outside it (typically "not found" for a key present all along)
//! means a compaction dropped a version the read still needed. Reads at one
//! snapshot must also agree with one another, however many flushes and
//! compactions ran between them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use strata::{Db, ReadOptions, WriteOptions};

use super::ops::{describe_value, Key, Value, WriteFlags};
use super::render;

/// Values a key may be read as during the window, `None` for absent.
pub type Windows = HashMap<Vec<u8>, Vec<Option<Vec<u8>>>>;

fn show(v: &Option<Vec<u8>>) -> String {
    v.as_deref().map_or("not found".into(), describe_value)
}

/// Why `got` for `key` is outside its window, if it is.
fn outside(windows: &Windows, key: &[u8], got: &Option<Vec<u8>>, how: &str) -> Option<String> {
    let allowed = &windows[key];
    if allowed.contains(got) {
        return None;
    }
    let allowed: Vec<String> = allowed.iter().map(show).collect();
    Some(format!(
        "{how} read of {} got {}, outside the window {}",
        render::key(key),
        show(got),
        render::list(&allowed)
    ))
}

fn read(db: &Db, ro: &ReadOptions, key: &[u8]) -> Result<Option<Vec<u8>>, String> {
    db.get_opt(ro, key)
        .map(|v| v.map(|v| v.to_vec()))
        .map_err(|e| format!("read of {} failed: {e}", render::key(key)))
}

/// One round of reads: each key at the latest state, then at a new snapshot
/// twice (flushes and compactions may finish between the two).
fn round(db: &Db, reads: &[Key], windows: &Windows) -> Result<(), String> {
    let latest = ReadOptions::default();
    for key in reads {
        let got = read(db, &latest, &key.0)?;
        if let Some(why) = outside(windows, &key.0, &got, "a latest") {
            return Err(why);
        }
    }
    let snapshot = db.snapshot();
    let at_snapshot = ReadOptions {
        snapshot: Some(snapshot.clone()),
        ..ReadOptions::default()
    };
    let first: Vec<Option<Vec<u8>>> = reads
        .iter()
        .map(|key| read(db, &at_snapshot, &key.0))
        .collect::<Result<_, _>>()?;
    for (key, got) in reads.iter().zip(&first) {
        if let Some(why) = outside(windows, &key.0, got, "a snapshot") {
            return Err(why);
        }
    }
    for (key, earlier) in reads.iter().zip(&first) {
        let again = read(db, &at_snapshot, &key.0)?;
        if again != *earlier {
            return Err(format!(
                "snapshot {} read {} as {}, then as {}",
                snapshot.sequence(),
                render::key(&key.0),
                show(earlier),
                show(&again)
            ));
        }
    }
    Ok(())
}

fn write_all(
    db: &Db,
    writes: &[(Key, Option<Value>, WriteFlags)],
    flush_every: usize,
    write_options: fn(WriteFlags) -> WriteOptions,
) -> Result<(), String> {
    for (i, (key, value, flags)) in writes.iter().enumerate() {
        let wo = write_options(*flags);
        match value {
            Some(v) => db.put_opt(&wo, &key.0, &v.0),
            None => db.delete_opt(&wo, &key.0),
        }
        .map_err(|e| format!("write {i} failed: {e}"))?;
        if (i + 1) % flush_every == 0 {
            db.flush().map_err(|e| format!("flush failed: {e}"))?;
        }
    }
    Ok(())
}

/// Runs the writes on a second thread and rounds of reads on this one until
/// the writes are done, then one more round.
pub fn run(
    db: &Db,
    writes: &[(Key, Option<Value>, WriteFlags)],
    flush_every: usize,
    reads: &[Key],
    windows: &Windows,
    write_options: fn(WriteFlags) -> WriteOptions,
) -> String {
    if reads.is_empty() {
        return match write_all(db, writes, flush_every, write_options) {
            Ok(()) => render::OK.into(),
            Err(why) => why,
        };
    }
    let done = AtomicBool::new(false);
    let (written, read) = std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let result = write_all(db, writes, flush_every, write_options);
            done.store(true, Ordering::Release);
            result
        });
        let read = loop {
            // Loaded before the round, so the last round starts after the
            // last write.
            let finished = done.load(Ordering::Acquire);
            let read = round(db, reads, windows);
            if finished || read.is_err() {
                break read;
            }
        };
        (writer.join().expect("writer thread"), read)
    });
    match written.and(read) {
        Ok(()) => render::OK.into(),
        Err(why) => why,
    }
}
