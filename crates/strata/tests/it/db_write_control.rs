//! Control over the write path: `flush_wal`/`sync_wal` after unsynced writes,
//! and `no_slowdown` writes during stalls.

use std::path::Path;
use std::time::Duration;

use strata::fs::sim::CrashMode;
use strata::fs::SimFs;
use strata::{Db, DbOptions, Error, WriteOptions};

use crate::util::sim_options;

/// `/db` on `fs` with at most `memtables` memtables.
fn open_with_memtables(fs: &SimFs, memtables: usize) -> Db {
    let options = DbOptions {
        max_write_buffer_number: memtables,
        ..sim_options(fs)
    };
    Db::open(Path::new("/db"), options).unwrap()
}

fn no_slowdown() -> WriteOptions {
    WriteOptions {
        no_slowdown: true,
        ..WriteOptions::default()
    }
}

#[test]
fn sync_wal_makes_unsynced_writes_survive_power_loss() {
    let fs = SimFs::new(11);
    let db = Db::open(Path::new("/db"), sim_options(&fs)).unwrap();
    for i in 0..100u32 {
        db.put(format!("k{i:03}"), "v").unwrap();
    }
    // From another thread, as a user's syncer would.
    std::thread::scope(|s| {
        s.spawn(|| db.sync_wal().unwrap());
    });
    db.flush_wal(false).unwrap();
    fs.halt();
    drop(db);
    fs.crash(CrashMode::POWER_LOSS);
    let db = Db::open(Path::new("/db"), sim_options(&fs)).unwrap();
    for i in 0..100u32 {
        assert!(
            db.get(format!("k{i:03}")).unwrap().is_some(),
            "k{i:03} lost"
        );
    }
}

#[test]
fn no_slowdown_fails_with_incomplete_during_a_stall_and_writes_nothing() {
    let fs = SimFs::new(12);
    let db = open_with_memtables(&fs, 2);
    let no_slowdown = no_slowdown();
    db.put_opt(&no_slowdown, "before", "1").unwrap();
    // Every fsync now takes a second: the flush of the first full memtable
    // outlasts filling the second one, so writes must wait for memtables.
    fs.set_sync_latency(Duration::from_secs(1));
    let value = vec![b'v'; 1024];
    let mut i = 0u32;
    let stalled = loop {
        i += 1;
        assert!(i < 1000, "no stall after {i} writes");
        match db.put_opt(&no_slowdown, format!("k{i:04}"), &value) {
            Ok(()) => {}
            Err(Error::Incomplete { reason }) => break reason,
            Err(e) => panic!("unexpected {e}"),
        }
    };
    assert!(stalled.contains("stall"), "{stalled}");
    // The refused write wrote nothing.
    assert_eq!(db.get(format!("k{i:04}")).unwrap(), None);
    // Writes that may wait go through once the flush is done.
    db.put(format!("k{i:04}"), "waited").unwrap();
    assert_eq!(
        db.get(format!("k{i:04}")).unwrap().as_deref(),
        Some(&b"waited"[..])
    );
    fs.set_sync_latency(Duration::ZERO);
}

/// With more than three memtables allowed, writes slow down (rather than
/// run on into a stop) once every memtable but the active one waits for a
/// flush: a `no_slowdown` write is refused while a memtable is still free,
/// the delayed rate shows in `rocksdb.actual-delayed-write-rate`, and the
/// slowdown is counted as `memtable_slowdown`.
#[test]
fn memtables_near_their_limit_slow_writes_before_they_stop() {
    let fs = SimFs::new(13);
    let db = open_with_memtables(&fs, 5);
    let no_slowdown = no_slowdown();
    // Flushes now take seconds, so full memtables pile up.
    fs.set_sync_latency(Duration::from_secs(1));
    let value = vec![b'v'; 1024];
    let property = |name: &str| -> u64 { db.property(name).unwrap().parse().unwrap() };
    let mut i = 0u32;
    loop {
        i += 1;
        assert!(i < 2000, "no slowdown after {i} writes");
        match db.put_opt(&no_slowdown, format!("k{i:05}"), &value) {
            Ok(()) => {}
            Err(Error::Incomplete { .. }) => break,
            Err(e) => panic!("unexpected {e}"),
        }
    }
    // Three full memtables wait and the active one still has room: a
    // slowdown, not a stop.
    assert_eq!(property("rocksdb.num-immutable-mem-table"), 3);
    let rate = property("rocksdb.actual-delayed-write-rate");
    assert!(rate > 0 && rate <= 16 << 20, "{rate}");
    // Writes that may wait go on, slowly.
    db.put(format!("k{i:05}"), &value).unwrap();
    fs.set_sync_latency(Duration::ZERO);
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    assert_eq!(property("rocksdb.actual-delayed-write-rate"), 0);
    let stats = db.property("rocksdb.stats").unwrap();
    let line = stats
        .lines()
        .find(|l| l.starts_with("Stalls(count)"))
        .unwrap();
    assert!(!line.contains(" 0 memtable_slowdown"), "{line}");
}

#[test]
fn close_through_one_clone_stops_the_others_writes_but_not_their_reads() {
    let fs = SimFs::new(13);
    let db = Db::open(Path::new("/db"), sim_options(&fs)).unwrap();
    db.put("kept", "v").unwrap();
    let other = db.clone();
    let writer = db.clone();
    // A writer on another thread stops with `Closed` once the database
    // closes, whatever it was doing, instead of waiting for a flush that
    // will never come.
    let stop = std::thread::spawn(move || loop {
        match writer.put("loop", vec![7u8; 1024]) {
            Ok(()) => continue,
            Err(e) => return e,
        }
    });
    std::thread::sleep(Duration::from_millis(20));
    db.close().unwrap();
    assert!(matches!(stop.join().unwrap(), Error::Closed));
    assert!(matches!(other.put("late", "v"), Err(Error::Closed)));
    assert!(matches!(other.flush(), Err(Error::Closed)));
    assert_eq!(other.get("kept").unwrap().as_deref(), Some(&b"v"[..]));
    // The lock goes with the last clone; then the database reopens with
    // every acknowledged write.
    assert!(matches!(
        Db::open(Path::new("/db"), sim_options(&fs)),
        Err(Error::LockHeld { .. })
    ));
    drop(other);
    let db = Db::open(Path::new("/db"), sim_options(&fs)).unwrap();
    assert_eq!(db.get("kept").unwrap().as_deref(), Some(&b"v"[..]));
    assert!(db.get("late").unwrap().is_none());
}
