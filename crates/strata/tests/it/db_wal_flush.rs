//! When WAL bytes leave the process: by default every write reaches the OS
//! before it is acknowledged; with `manual_wal_flush` writes wait in the WAL
//! file's buffer until `flush_wal`, a sync write, a memtable switch or close.
//! The file system buffers appends as `StdFs` does, so a process kill loses
//! exactly what was never handed to the OS.

use std::path::Path;
use std::sync::Arc;

use strata::fs::sim::{CrashMode, DataLoss};
use strata::fs::SimFs;
use strata::{Db, DbOptions, WriteOptions};

use crate::util::{flush_held_at_sync, sim_options};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:04}").into_bytes()
}

fn open(fs: &SimFs, manual_wal_flush: bool) -> Db {
    let options = DbOptions {
        manual_wal_flush,
        ..sim_options(fs)
    };
    Db::open(Path::new("/db"), options).expect("open")
}

/// A file system whose files buffer appends until flushed.
fn buffering_fs(seed: u64) -> SimFs {
    let fs = SimFs::new(seed);
    fs.buffer_appends(true);
    fs
}

/// Kills the process: nothing more reaches the OS, not even at the drop.
fn kill(fs: &SimFs, db: Db, mode: CrashMode) {
    fs.halt();
    drop(db);
    fs.crash(mode);
}

fn present(db: &Db, n: u32) -> Vec<u32> {
    (0..n)
        .filter(|&i| db.get(key(i)).unwrap().is_some())
        .collect()
}

fn put_range(db: &Db, range: std::ops::Range<u32>) {
    for i in range {
        db.put(key(i), b"v").unwrap();
    }
}

#[test]
fn by_default_an_acknowledged_write_survives_a_process_kill() {
    let fs = buffering_fs(51);
    let db = open(&fs, false);
    put_range(&db, 0..100);
    kill(&fs, db, CrashMode::PROCESS_KILL);
    let db = open(&fs, false);
    assert_eq!(present(&db, 100), (0..100).collect::<Vec<_>>());
}

#[test]
fn manual_wal_flush_keeps_writes_in_the_process_until_flush_wal() {
    let fs = buffering_fs(52);
    let db = open(&fs, true);
    put_range(&db, 0..50);
    db.flush_wal(false).unwrap();
    put_range(&db, 50..100);
    assert_eq!(present(&db, 100).len(), 100, "reads see every write");
    kill(&fs, db, CrashMode::PROCESS_KILL);
    let db = open(&fs, true);
    assert_eq!(present(&db, 100), (0..50).collect::<Vec<_>>());
    assert!(db.wal_damage().is_empty(), "{:?}", db.wal_damage());
}

/// A sync write flushes and syncs everything before it, whatever the option.
#[test]
fn a_sync_write_under_manual_wal_flush_survives_power_loss() {
    let fs = buffering_fs(53);
    let db = open(&fs, true);
    put_range(&db, 0..50);
    let sync = WriteOptions {
        sync: true,
        ..WriteOptions::default()
    };
    db.put_opt(&sync, key(50), b"v").unwrap();
    put_range(&db, 51..100);
    kill(
        &fs,
        db,
        CrashMode {
            data: DataLoss::DropUnsynced,
            lose_unsynced_dir_entries: true,
        },
    );
    let db = open(&fs, true);
    assert_eq!(present(&db, 100), (0..51).collect::<Vec<_>>());
}

/// A memtable switch hands the retired WAL's buffer to the OS before the new
/// WAL records its length: a kill then finds the old WAL whole, and loses
/// only the writes still buffered in the new one. (Were the old WAL's bytes
/// left in the process, the kill would cut it short of the recorded length,
/// and recovery would stop at that hole with nothing.)
#[test]
fn a_memtable_switch_writes_out_the_retired_wal() {
    let fs = buffering_fs(54);
    let db = Arc::new(open(&fs, true));
    put_range(&db, 0..50);
    let flusher = flush_held_at_sync(&db, &fs, ".sst");
    put_range(&db, 50..60);
    fs.halt();
    fs.release_syncs();
    assert!(flusher.join().unwrap().is_err());
    let db = Arc::try_unwrap(db).unwrap_or_else(|_| panic!("the flusher holds no handle"));
    kill(&fs, db, CrashMode::PROCESS_KILL);
    let db = open(&fs, true);
    assert_eq!(present(&db, 60), (0..50).collect::<Vec<_>>());
    assert!(db.wal_damage().is_empty(), "{:?}", db.wal_damage());
}
