//! A memtable switch retires the old WAL without syncing it; the new WAL
//! starts with a record of the old one's length. These tests make the crashes
//! that design has to survive: a retired WAL cut short behind a WAL that
//! kept its bytes, and a sync write made after the switch.

use std::sync::Arc;

use bytes::Bytes;
use strata::fs::sim::{CrashMode, DataLoss, OpKind};
use strata::fs::SimFs;
use strata::wal::LogReader;
use strata::{Db, WriteOptions};

use crate::util::{flush_held_at_sync, open_sim, wait_until, wals};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:04}").into_bytes()
}

/// Writes keys `0..50` into the first WAL, switches the memtable with a flush
/// that cannot finish (its table's sync is held, so no MANIFEST edit makes
/// the first WAL obsolete), then writes keys `50..60` into the second WAL, the last with
/// `sync_last`. Freezes the file system there and drops the database.
fn write_across_a_switch(fs: &SimFs, sync_last: bool) {
    let db = Arc::new(open_sim(fs));
    for i in 0..50 {
        db.put(key(i), b"v").unwrap();
    }
    let flusher = flush_held_at_sync(&db, fs, ".sst");
    for i in 50..60 {
        let options = WriteOptions {
            sync: sync_last && i == 59,
            ..WriteOptions::default()
        };
        db.put_opt(&options, key(i), b"v").unwrap();
    }
    fs.halt();
    fs.release_syncs();
    // The held table sync fails on the halted file system.
    assert!(flusher.join().unwrap().is_err());
    drop(db);
}

fn present(db: &Db) -> Vec<u32> {
    (0..60)
        .filter(|&i| db.get(key(i)).unwrap().is_some())
        .collect()
}

/// The second WAL kept every byte and the first lost its last 30 records:
/// recovery must not replay the second over the hole, so exactly keys 0..20
/// come back, and the hole is reported.
#[test]
fn a_retired_wal_cut_short_stops_recovery_at_the_hole() {
    let fs = SimFs::new(41);
    write_across_a_switch(&fs, false);
    fs.crash(CrashMode::PROCESS_KILL);
    let logs = wals(&fs);
    assert_eq!(logs.len(), 2, "{logs:?}");
    let first = &logs[0];
    let mut reader = LogReader::from_bytes(Bytes::from(fs.file_contents(first).unwrap()), first);
    for _ in 0..20 {
        reader.read_record().unwrap().unwrap();
    }
    fs.set_len(first, reader.records_end()).unwrap();
    let db = open_sim(&fs);
    assert_eq!(present(&db), (0..20).collect::<Vec<_>>());
    let damage = db.wal_damage();
    assert_eq!(damage.len(), 1, "{damage:?}");
    assert!(
        damage[0]
            .reason
            .contains("a crash lost writes that were not synced"),
        "{}",
        damage[0]
    );
    // The ten writes in the second WAL were counted as dropped.
    assert_eq!(damage[0].records_dropped, 10, "{}", damage[0]);
}

/// Without the hole (nothing lost), everything written comes back and
/// nothing is reported: the predecessor record alone is no damage.
#[test]
fn a_whole_retired_wal_replays_with_its_successor() {
    let fs = SimFs::new(42);
    write_across_a_switch(&fs, false);
    fs.crash(CrashMode::PROCESS_KILL);
    let db = open_sim(&fs);
    assert_eq!(present(&db), (0..60).collect::<Vec<_>>());
    assert!(db.wal_damage().is_empty(), "{:?}", db.wal_damage());
}

/// A sync write after the switch syncs the retired WAL before its own, so a
/// power loss that drops every unsynced byte keeps all 60 writes.
#[test]
fn a_sync_write_makes_the_retired_wal_durable_first() {
    let fs = SimFs::new(43);
    write_across_a_switch(&fs, true);
    fs.crash(CrashMode {
        data: DataLoss::DropUnsynced,
        lose_unsynced_dir_entries: true,
    });
    let db = open_sim(&fs);
    assert_eq!(present(&db), (0..60).collect::<Vec<_>>());
    assert!(db.wal_damage().is_empty(), "{:?}", db.wal_damage());
}

/// The switch itself syncs no WAL: with WAL syncs held, a flush of the only
/// family completes. A sync write made while a retired WAL is still needed
/// then syncs two WALs, the retired one and its own.
#[test]
fn a_memtable_switch_syncs_no_wal() {
    let fs = SimFs::new(44);
    let db = Arc::new(open_sim(&fs));
    db.put(b"a", b"1").unwrap();
    fs.hold_syncs_of(".log");
    db.flush().unwrap();
    assert_eq!(fs.held_syncs(), 0);
    fs.release_syncs();
    db.put(b"b", b"2").unwrap();
    let flusher = flush_held_at_sync(&db, &fs, "MANIFEST");
    let before = fs.op_count(OpKind::Sync);
    let sync = WriteOptions {
        sync: true,
        ..WriteOptions::default()
    };
    db.put_opt(&sync, b"c", b"3").unwrap();
    assert_eq!(fs.op_count(OpKind::Sync) - before, 2);
    fs.release_syncs();
    flusher.join().unwrap().unwrap();
    wait_until("the flush to finish", || db.get(b"c").unwrap().is_some());
}
